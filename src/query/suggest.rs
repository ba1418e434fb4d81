//! Close names: what a mistyped TLD probably meant (`cmo` → `com`).

use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::NONE;

/// Edit distance with adjacent transpositions (optimal string alignment), over chars,
/// giving up (returning `max + 1`) as soon as it must exceed `max`.
pub fn distance(a: &str, b: &str, max: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return max + 1;
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().enumerate().take(b.len() + 1) {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return max + 1;
        }
    }
    d[a.len() * w + b.len()].min(max + 1)
}

/// Up to `n` names of the catalogue close to `name` (canonical or not): at most one
/// edit away for names of up to four characters, two for longer ones; the closest
/// first, then anagrams (swapped letters: `cmo` → `com`), then the free TLDs, then the
/// most widely sold, then by name.
pub fn close_names(snap: &ArchivedSnapshotData, name: &str, n: usize) -> Vec<String> {
    let name = name.trim_start_matches('.').to_lowercase();
    let max = if name.chars().count() <= 4 { 1 } else { 2 };
    let letters = |s: &str| {
        let mut v: Vec<char> = s.chars().collect();
        v.sort_unstable();
        v
    };
    let wanted = letters(&name);
    let mut found: Vec<(usize, bool, bool, u32, &str)> = Vec::new();
    for e in snap.catalogue.iter() {
        let candidate = snap.span_str(&e.name);
        let unicode = snap.span_str(&e.unicode);
        let dist = distance(&name, candidate, max).min(distance(&name, unicode, max));
        if dist > max || candidate == name {
            continue;
        }
        let sellers = match e.tld.to_native() {
            NONE => 0,
            t => snap.tlds[t as usize].sellers.to_native(),
        };
        let anagram = letters(candidate) == wanted;
        let free = crate::tld::is_free(candidate);
        found.push((dist, !anagram, !free, u32::MAX - sellers, candidate));
    }
    found.sort_unstable();
    found
        .into_iter()
        .take(n)
        .map(|(.., s)| s.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_edits_and_swaps() {
        assert_eq!(distance("cmo", "com", 2), 1);
        assert_eq!(distance("com", "com", 2), 0);
        assert_eq!(distance("co", "com", 2), 1);
        assert_eq!(distance("cm", "com", 2), 1);
        assert_eq!(distance("kitten", "sitting", 3), 3);
        assert_eq!(distance("kitten", "sitting", 1), 2);
        assert_eq!(distance("abcdef", "a", 2), 3);
        assert_eq!(distance("рф", "фр", 2), 1);
    }
}
