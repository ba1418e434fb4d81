//! The quality gate: whether a collected version may replace the previous one.
//!
//! | rule | fails when |
//! |---|---|
//! | parses completely | the parser refuses the document, or any row is malformed or has an unreadable price |
//! | keeps the TLDs | fewer than `min_kept_share` (0.8) of the previous version's TLDs are still listed |
//! | few big moves | more than `max_moved_share` (0.1) of the prices present in both moved by more than `moved_by` (0.5, i.e. 50%) |
//! | no lost price | a price is zero or negative where the previous version had a price above zero |
//! | one currency | a TLD's currency differs from the previous version's |
//!
//! Names are compared in canonical form ([`crate::tld::normalize`]); Handshake names are
//! left out on both sides.

use std::collections::BTreeMap;

use crate::import::feeds::{Field, Parsed};

/// The gate's settings (`[gate]` in the collectors' configuration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Least share of the previous version's TLDs the new one must keep.
    pub min_kept_share: f64,
    /// Largest share of prices allowed to move by more than `moved_by`.
    pub max_moved_share: f64,
    /// A move larger than this share of the old price counts as a big move.
    pub moved_by: f64,
    /// The ECB's rates: largest factor a rate may move by from one day to the next
    /// (`2.0`: to double or to halve is refused); see [`crate::collect::ecb`].
    pub max_rate_factor: f64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            min_kept_share: 0.8,
            max_moved_share: 0.1,
            moved_by: 0.5,
            max_rate_factor: 2.0,
        }
    }
}

/// One rule that failed, with the rows that made it fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    /// The rule, in words, with the numbers.
    pub rule: String,
    /// The rows concerned, one line each.
    pub rows: Vec<String>,
}

/// A parsed version reduced to what the gate compares: canonical name -> (register,
/// renew, transfer, currency).
pub type Rows = BTreeMap<String, ([Field; 3], String)>;

/// The comparable rows of a parsed version, and the lines of the rows that did not parse.
pub fn rows_of(parsed: &Parsed) -> (Rows, Vec<String>) {
    let mut rows = Rows::new();
    let mut bad = Vec::new();
    for r in &parsed.rows {
        if r.handshake {
            continue;
        }
        if r.malformed {
            bad.push(format!("{:?}: not of the expected shape", r.key));
            continue;
        }
        let fields = [r.register, r.renew, r.transfer];
        if fields.contains(&Field::Bad) {
            bad.push(format!("{:?}: unreadable price", r.key));
        }
        let Ok(name) = crate::tld::normalize(&r.key) else {
            continue; // the import drops it as a malformed name
        };
        rows.entry(name.into_owned())
            .or_insert((fields, r.currency.clone()));
    }
    (rows, bad)
}

const ACTIONS: [&str; 3] = ["register", "renew", "transfer"];

fn money(c: u32) -> String {
    format!("{}.{:02}", c / 100, c % 100)
}

/// The rules `new` fails against `previous` (none: it passes).
pub fn check(new: &Rows, bad: &[String], previous: Option<&Rows>, t: &Thresholds) -> Vec<Failed> {
    let mut failed = Vec::new();
    if !bad.is_empty() {
        failed.push(Failed {
            rule: format!("parses completely: {} rows did not parse", bad.len()),
            rows: bad.to_vec(),
        });
    }
    if new.is_empty() {
        failed.push(Failed {
            rule: "parses completely: the list has no TLD".to_string(),
            rows: Vec::new(),
        });
    }
    let Some(prev) = previous.filter(|p| !p.is_empty()) else {
        return failed;
    };
    let lost: Vec<String> = prev
        .keys()
        .filter(|k| !new.contains_key(*k))
        .cloned()
        .collect();
    let kept = prev.len() - lost.len();
    let share = kept as f64 / prev.len() as f64;
    if share < t.min_kept_share {
        failed.push(Failed {
            rule: format!(
                "keeps the TLDs: {kept} of the previous {} TLDs are still listed ({:.1}%, at least {:.1}% needed)",
                prev.len(),
                share * 100.0,
                t.min_kept_share * 100.0
            ),
            rows: lost.iter().map(|k| format!("{k}: no longer listed")).collect(),
        });
    }
    let mut compared = 0usize;
    let mut moved = Vec::new();
    let mut zeroed = Vec::new();
    let mut currency = Vec::new();
    for (name, (old, old_cur)) in prev {
        let Some((now, cur)) = new.get(name) else {
            continue;
        };
        if cur != old_cur {
            currency.push(format!("{name}: {old_cur} -> {cur}"));
            continue;
        }
        for (i, action) in ACTIONS.iter().enumerate() {
            match (old[i], now[i]) {
                (Field::Cents(o), Field::Cents(n)) if o > 0 && n > 0 => {
                    compared += 1;
                    let change = (f64::from(n) - f64::from(o)).abs() / f64::from(o);
                    if change > t.moved_by {
                        moved.push(format!("{name} {action}: {} -> {}", money(o), money(n)));
                    }
                }
                (Field::Cents(o), Field::Cents(0)) if o > 0 => {
                    zeroed.push(format!("{name} {action}: {} -> 0.00", money(o)));
                }
                (Field::Cents(o), Field::Bad) if o > 0 => {
                    zeroed.push(format!(
                        "{name} {action}: {} -> unreadable or negative",
                        money(o)
                    ));
                }
                _ => {}
            }
        }
    }
    if compared > 0 {
        let share = moved.len() as f64 / compared as f64;
        if share > t.max_moved_share {
            failed.push(Failed {
                rule: format!(
                    "few big moves: {} of {compared} prices moved by more than {:.0}% ({:.1}%, at most {:.1}% allowed)",
                    moved.len(),
                    t.moved_by * 100.0,
                    share * 100.0,
                    t.max_moved_share * 100.0
                ),
                rows: moved,
            });
        }
    }
    if !zeroed.is_empty() {
        failed.push(Failed {
            rule: format!(
                "no lost price: {} prices are zero or negative where the previous version had one",
                zeroed.len()
            ),
            rows: zeroed,
        });
    }
    if !currency.is_empty() {
        failed.push(Failed {
            rule: format!("one currency: {} TLDs changed currency", currency.len()),
            rows: currency,
        });
    }
    failed
}

/// The report a person reads before `--accept`: every failed rule and its rows.
pub fn report(registrar: &str, file: &str, previous: &str, failed: &[Failed]) -> String {
    let mut out = format!(
        "Quarantined: {registrar} {file}\nCompared with: {previous}\n\nThe version is kept aside and the previous one stays in use.\nAfter checking it, take it with: tldsnap collect --config FILE --feeds DIR --accept {registrar}\n"
    );
    push_rules(&mut out, failed);
    out
}

/// Appends every failed rule and its rows to a report.
pub fn push_rules(out: &mut String, failed: &[Failed]) {
    for f in failed {
        out.push_str(&format!("\nRule failed: {}\n", f.rule));
        for r in &f.rows {
            out.push_str("  ");
            out.push_str(r);
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(list: &[(&str, u32, &str)]) -> Rows {
        list.iter()
            .map(|(k, c, cur)| {
                (
                    k.to_string(),
                    (
                        [Field::Cents(*c), Field::Cents(*c), Field::Missing],
                        cur.to_string(),
                    ),
                )
            })
            .collect()
    }

    #[test]
    fn each_rule() {
        let t = Thresholds::default();
        let prev = rows(&[
            ("com", 1000, "USD"),
            ("net", 1200, "USD"),
            ("org", 900, "USD"),
            ("io", 3000, "USD"),
            ("xyz", 100, "USD"),
        ]);
        assert!(check(&prev, &[], Some(&prev), &t).is_empty());
        let half = rows(&[("com", 1000, "USD"), ("net", 1200, "USD")]);
        let f = check(&half, &[], Some(&prev), &t);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].rule.starts_with("keeps the TLDs: 2 of the previous 5"),
            "{}",
            f[0].rule
        );
        assert_eq!(f[0].rows.len(), 3);
        let moved = rows(&[
            ("com", 3000, "USD"),
            ("net", 1200, "USD"),
            ("org", 900, "USD"),
            ("io", 3000, "USD"),
            ("xyz", 100, "USD"),
        ]);
        let f = check(&moved, &[], Some(&prev), &t);
        assert!(
            f[0].rule.starts_with("few big moves: 2 of 10"),
            "{}",
            f[0].rule
        );
        let zero = rows(&[
            ("com", 0, "USD"),
            ("net", 1200, "USD"),
            ("org", 900, "USD"),
            ("io", 3000, "USD"),
            ("xyz", 100, "USD"),
        ]);
        assert!(
            check(&zero, &[], Some(&prev), &t)
                .iter()
                .any(|f| f.rule.starts_with("no lost price"))
        );
        let eur = rows(&[
            ("com", 1000, "EUR"),
            ("net", 1200, "USD"),
            ("org", 900, "USD"),
            ("io", 3000, "USD"),
            ("xyz", 100, "USD"),
        ]);
        assert!(
            check(&eur, &[], Some(&prev), &t)
                .iter()
                .any(|f| f.rule.starts_with("one currency"))
        );
        assert!(
            !check(
                &prev,
                &["\"x\": not of the expected shape".into()],
                None,
                &t
            )
            .is_empty()
        );
    }
}
