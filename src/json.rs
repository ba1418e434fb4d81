//! Writing JSON by hand: [`Out`], where every writer of the crate writes; string
//! escaping; and the bytes of the two values the request path writes most, prices
//! ([`cents_bytes`]) and timestamps ([`iso_millis_bytes`]).
//!
//! Bodies are assembled from pre-rendered fragments, so the only JSON the request path
//! writes itself is punctuation, numbers and the few strings that come from a request
//! (echoed TLD names, unknown registrar keys). Those go through [`write_str`], which
//! escapes exactly as RFC 8259 requires.
//!
//! This is the base of the writers: [`crate::price`] and [`crate::time`] write through
//! [`Out`] with the renderings here, and this module imports neither. The calendar step
//! a date needs ([`civil_from_days`], [`split_day`]) is here for that reason;
//! [`crate::time`] re-exports it beside the rest of its calendar arithmetic.

/// Where JSON is written: a buffer (`Vec<u8>`: the builder, every request), or at a
/// snapshot's open the checker's reused buffer, whose fragment is then compared with the
/// bytes already written. The writers of this crate ([`write_str`], [`crate::price::write_cents`],
/// [`crate::time::write_iso_millis`], the fragments of [`crate::snapshot::render`], ...)
/// write through it, so each shape is described once and can be both written and
/// checked.
pub trait Out {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Appends one byte.
    #[inline]
    fn put_byte(&mut self, b: u8) {
        self.put(&[b]);
    }

    /// Makes room for `n` more bytes (a buffer reserves; a checker has nothing to do).
    #[inline]
    fn reserve_for(&mut self, n: usize) {
        let _ = n;
    }

    /// Appends `s` as a quoted JSON string (see [`write_str`]); a checker may remember
    /// the strings it has seen.
    #[inline]
    fn put_str(&mut self, s: &str) {
        escape_str(s, self);
    }

    /// Appends an unsigned integer as a JSON number (see [`write_int`]); a checker may
    /// write small ones from a table.
    #[inline]
    fn put_uint(&mut self, v: u64) {
        self.put(itoa::Buffer::new().format(v).as_bytes());
    }

    /// Appends a price in cents as a JSON number (see [`cents_bytes`]); a checker may
    /// remember the numbers it has rendered.
    #[inline]
    fn put_cents(&mut self, cents: u64) {
        let (buf, at) = cents_bytes(cents);
        self.put(&buf[at..]);
    }

    /// Appends `YYYY-MM-DDTHH:MM:SS.mmmZ` (see [`iso_millis_bytes`]); a checker may
    /// remember the dates it has rendered.
    #[inline]
    fn put_iso_millis(&mut self, ms: i64) {
        self.put(&iso_millis_bytes(ms));
    }
}

impl Out for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline]
    fn put_byte(&mut self, b: u8) {
        self.push(b);
    }

    #[inline]
    fn reserve_for(&mut self, n: usize) {
        self.reserve(n);
    }
}

/// Appends `s` as a quoted JSON string.
#[inline]
pub fn write_str(s: &str, out: &mut impl Out) {
    out.put_str(s);
}

/// [`write_str`]'s escaping: the default of [`Out::put_str`].
pub fn escape_str<O: Out + ?Sized>(s: &str, out: &mut O) {
    let bytes = s.as_bytes();
    if !bytes.iter().any(|&b| needs_escape(b)) {
        // The common case (registrar names, plan names, TLDs): one copy.
        out.reserve_for(bytes.len() + 2);
        out.put_byte(b'"');
        out.put(bytes);
        out.put_byte(b'"');
        return;
    }
    out.put_byte(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f | 0x7f => b"",
            _ => continue,
        };
        out.put(&bytes[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.put(b"\\u00");
            out.put_byte(HEX[(b >> 4) as usize]);
            out.put_byte(HEX[(b & 0xf) as usize]);
        } else {
            out.put(esc);
        }
        start = i + 1;
    }
    out.put(&bytes[start..]);
    out.put_byte(b'"');
}

/// Whether `b` is written escaped: quote, backslash and the control characters.
fn needs_escape(b: u8) -> bool {
    ESCAPED[b as usize]
}

/// [`needs_escape`] as a table: one load per byte instead of three comparisons.
static ESCAPED: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(b as u8, b'"' | b'\\' | 0..=0x1f | 0x7f);
        b += 1;
    }
    t
};

/// Writes an unsigned integer as a JSON number.
pub fn write_int(v: u64, out: &mut impl Out) {
    out.put_uint(v);
}

/// Writes a JSON string, or `null` for `None`.
pub fn write_opt_str(s: Option<&str>, out: &mut impl Out) {
    match s {
        Some(s) => write_str(s, out),
        None => out.put(b"null"),
    }
}

/// `s` as a quoted JSON string.
pub fn quoted(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_str(s, &mut out);
    String::from_utf8(out).expect("escaping keeps UTF-8")
}

/// `00` to `99`, two ASCII digits each.
static DIGITS2: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut v = 0;
    while v < 100 {
        t[v] = [b'0' + (v / 10) as u8, b'0' + (v % 10) as u8];
        v += 1;
    }
    t
};

/// A price in cents as a JSON number, as `serde_json` prints `cents as f64 / 100.0`
/// (`9.99`, `10.5`, `12.0`): `buf[at..]` of the returned `(buf, at)`, written right to
/// left into one buffer so that they are appended (or checked) in one go.
#[inline]
pub fn cents_bytes(cents: u64) -> ([u8; 24], usize) {
    let mut buf = [0u8; 24];
    let mut at = buf.len();
    let c = (cents % 100) as u8;
    if !c.is_multiple_of(10) {
        at -= 1;
        buf[at] = b'0' + c % 10;
    }
    at -= 2;
    buf[at] = b'.';
    buf[at + 1] = b'0' + c / 10;
    // The whole part two digits at a time from a table (half the divisions).
    let mut whole = cents / 100;
    while whole >= 100 {
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGITS2[(whole % 100) as usize]);
        whole /= 100;
    }
    if whole >= 10 {
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGITS2[whole as usize]);
    } else {
        at -= 1;
        buf[at] = b'0' + whole as u8;
    }
    (buf, at)
}

/// Milliseconds in one day.
pub const MS_PER_DAY: i64 = 86_400_000;

/// The date `(year, month, day)` of a day number since 1970-01-01 (proleptic Gregorian,
/// Howard Hinnant's `civil_from_days`; [`crate::time::days_from_civil`] is its inverse).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The day number of `ms` (milliseconds since the Unix epoch) and the milliseconds into
/// that day: one division, the remainder by a multiplication (`div_euclid` and then
/// `rem_euclid` divide twice).
#[inline]
pub fn split_day(ms: i64) -> (i64, u32) {
    let day = ms.div_euclid(MS_PER_DAY);
    // In [0, MS_PER_DAY) for every `ms`; wrapping, the product may leave `i64` near its
    // ends while the difference does not.
    (day, ms.wrapping_sub(day.wrapping_mul(MS_PER_DAY)) as u32)
}

/// Two decimal digits of `v` (< 100; `99` for more) at `at`: a table's entry, where two
/// divisions by ten cost ~10 instructions more (the snapshot's open renders four such
/// pairs for every price record).
#[inline(always)]
fn put_2(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 2].copy_from_slice(&DIGITS2[(v as usize).min(99)]);
}

/// `YYYY-MM-DD` of a day number (years clamped to 0..=9999), written whole so that it
/// is appended in one copy: the snapshot's open renders one for every price record.
pub fn date_array(days: i64) -> [u8; 10] {
    let (y, m, d) = civil_from_days(days);
    let y = y.clamp(0, 9999) as u32;
    let mut buf = [0u8; 10];
    put_2(&mut buf, 0, y / 100);
    put_2(&mut buf, 2, y % 100);
    buf[4] = b'-';
    put_2(&mut buf, 5, m);
    buf[7] = b'-';
    put_2(&mut buf, 8, d);
    buf
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the Unix epoch.
pub fn iso_millis_bytes(ms: i64) -> [u8; 24] {
    let (day, of_day) = split_day(ms);
    iso_millis_of_day(date_array(day), of_day)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` given the `YYYY-MM-DD` of its day and the milliseconds
/// into it (`< MS_PER_DAY`, as [`split_day`] gives; more reads as `99` hours): a caller
/// that renders many times of few days keeps the dates.
#[inline]
pub fn iso_millis_of_day(date: [u8; 10], ms_of_day: u32) -> [u8; 24] {
    let mut buf = *b"0000-00-00T00:00:00.000Z";
    buf[..10].copy_from_slice(&date);
    let secs = ms_of_day / 1000;
    let milli = ms_of_day - secs * 1000;
    let hours = secs / 3600;
    let in_hour = secs - hours * 3600;
    let minutes = in_hour / 60;
    put_2(&mut buf, 11, hours);
    put_2(&mut buf, 14, minutes);
    put_2(&mut buf, 17, in_hour - minutes * 60);
    buf[20] = b'0' + (milli / 100) as u8;
    put_2(&mut buf, 21, milli % 100);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_serde_json_reads() {
        for s in [
            "plain",
            "Bravo \"Domains\" & Co",
            "back\\slash",
            "nl\nnul\0bell\u{7}del\u{7f}",
            "Délta 닷컴",
            "",
        ] {
            let q = quoted(s);
            let back: String = serde_json::from_str(&q).unwrap();
            assert_eq!(back, s);
        }
        assert_eq!(quoted("a\"b"), r#""a\"b""#);
        assert_eq!(quoted("\u{1}"), r#""\u0001""#);
    }
}
