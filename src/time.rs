//! Calendar arithmetic and the timestamp formats the project speaks: RFC 3339 on
//! input, ISO 8601 UTC with milliseconds (`2025-10-25T00:00:00.000Z`) on output, and
//! the HTTP date of headers (`Sun, 06 Nov 1994 08:49:37 GMT`); and [`Stamp`], the
//! monotonic clock a request's duration is measured by.
//!
//! Hand-written on purpose: the project needs exactly three conversions, and the
//! proleptic Gregorian algorithms (Howard Hinnant's `days_from_civil` and
//! `civil_from_days`) are short, exact and allocation-free. The bytes of a date and of a
//! timestamp are [`crate::json`]'s ([`crate::json::iso_millis_bytes`]), so that
//! [`crate::json::Out`] can write them without a way back to this module.

use crate::json::{Out, date_array};

/// The calendar step every date writer needs, held with the date's bytes in
/// [`crate::json`] (the base of the crate's writers) and named here beside the rest of
/// the calendar.
pub use crate::json::{MS_PER_DAY, civil_from_days};

/// The system clock in Unix milliseconds (a clock set before 1970 reads as the epoch).
pub fn now_ms() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

/// A reading of the monotonic clock, to measure how long something took: what
/// [`std::time::Instant`] does, for a request's `stats.time_elapsed` and its latency
/// metric, in fewer instructions (nanoseconds in one integer, where `Instant::elapsed`
/// goes through a checked `timespec` subtraction: ~40 instructions a reading against
/// ~117; a request reads the clock two or three times).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(u64);

impl Stamp {
    /// Now.
    pub fn now() -> Stamp {
        Stamp(monotonic_ns())
    }

    /// The time since this reading (zero if the clock reads earlier, which a monotonic
    /// clock does not).
    pub fn elapsed(self) -> std::time::Duration {
        std::time::Duration::from_nanos(monotonic_ns().saturating_sub(self.0))
    }
}

/// Nanoseconds on `CLOCK_MONOTONIC`, the clock `Instant` reads on Linux.
#[cfg(target_os = "linux")]
fn monotonic_ns() -> u64 {
    // Both parts are non-negative on this clock, which is always there on Linux.
    let (secs, nanos) = read_clock(libc::CLOCK_MONOTONIC).unwrap_or_default();
    (secs as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(nanos as u64)
}

/// The reading of the Linux clock `clock` as (seconds, nanoseconds), or `None` when
/// `clock_gettime` fails (a clock this kernel lacks).
#[cfg(target_os = "linux")]
pub(crate) fn read_clock(clock: libc::clockid_t) -> Option<(i64, i64)> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable `timespec` that outlives the call, and
    // `clock_gettime` writes nothing else.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    // `time_t` and `c_long` are i64 on 64-bit Linux, narrower elsewhere.
    #[allow(clippy::useless_conversion)]
    let reading = (i64::from(ts.tv_sec), i64::from(ts.tv_nsec));
    (rc == 0).then_some(reading)
}

/// Nanoseconds since the first reading, by `Instant` (where no monotonic clock is known
/// to `libc` here).
#[cfg(not(target_os = "linux"))]
fn monotonic_ns() -> u64 {
    static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(std::time::Instant::now);
    u64::try_from(base.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Appends `YYYY-MM-DD` for a day number.
pub fn write_date(days: i64, out: &mut impl Out) {
    out.put(&date_array(days));
}

/// Writes `"YYYY-MM-DD"` (a JSON string) for a day, or `null`.
pub fn write_opt_date(day: Option<i64>, out: &mut impl Out) {
    match day {
        Some(d) => {
            out.put_byte(b'"');
            write_date(d, out);
            out.put_byte(b'"');
        }
        None => out.put(b"null"),
    }
}

/// Appends `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the Unix epoch.
pub fn write_iso_millis(ms: i64, out: &mut impl Out) {
    out.put_iso_millis(ms);
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` as a `String`.
pub fn iso_millis(ms: i64) -> String {
    let mut out = Vec::with_capacity(24);
    write_iso_millis(ms, &mut out);
    String::from_utf8(out).expect("ASCII")
}

/// `YYYY-MM-DD` as a `String`.
pub fn date_string(days: i64) -> String {
    let mut out = Vec::with_capacity(10);
    write_date(days, &mut out);
    String::from_utf8(out).expect("ASCII")
}

/// The HTTP date (IMF-fixdate, RFC 9110) of Unix milliseconds `ms`:
/// `Sun, 06 Nov 1994 08:49:37 GMT`.
pub fn http_date(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        d,
        MONTHS[(m - 1) as usize],
        y,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, d| acc * 10 + (d - b'0') as u32))
}

/// Parses `YYYY-MM-DD` into a day number; `None` unless it is a real date.
pub fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (
        digits(&b[0..4])? as i64,
        digits(&b[5..7])?,
        digits(&b[8..10])?,
    );
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// Parses an RFC 3339 timestamp (`2025-10-25T06:46:45.031Z`, `2025-10-25T08:46:45+02:00`;
/// `t`/`z` and a space separator accepted) into milliseconds since the Unix epoch.
/// Fractions beyond milliseconds are truncated. `None` unless it is a real instant.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let days = parse_date(s.get(..10)?)?;
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, sec) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let sec = sec.min(59); // a leap second is read as :59
    let mut i = 19;
    let mut millis = 0u32;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        let frac = &b[start..i.min(start + 3)];
        millis = digits(frac)? * 10u32.pow(3 - frac.len() as u32);
    }
    let offset_min: i64 = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let oh = digits(&[*h1, *h2])? as i64;
            let om = digits(&[*m1, *m2])? as i64;
            if oh > 23 || om > 59 {
                return None;
            }
            let total = oh * 60 + om;
            if *sign == b'+' { total } else { -total }
        }
        _ => return None,
    };
    let secs = days * 86_400 + (h * 3600 + mi * 60 + sec) as i64 - offset_min * 60;
    Some(secs * 1000 + millis as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{iso_millis_bytes, iso_millis_of_day, split_day};

    #[test]
    fn a_stamp_measures_what_instant_measures() {
        use std::time::{Duration, Instant};
        // Bracketed by `Instant` readings of the same clock, at the start and the end:
        // the stamp's elapsed time lies between the shortest and the longest span they
        // allow, however long the thread waits between the readings.
        let (i0, stamp, i1) = (Instant::now(), Stamp::now(), Instant::now());
        std::thread::sleep(Duration::from_millis(5));
        let (j0, elapsed, j1) = (Instant::now(), stamp.elapsed(), Instant::now());
        assert!(elapsed >= j0.duration_since(i1), "{elapsed:?}");
        assert!(elapsed <= j1.duration_since(i0), "{elapsed:?}");
        assert!(elapsed >= Duration::from_millis(5), "{elapsed:?}");
        assert!(Stamp::now() >= stamp);
    }

    #[test]
    fn http_dates_are_imf_fixdate() {
        assert_eq!(http_date(784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    }

    #[test]
    fn civil_round_trip_over_four_centuries() {
        for z in (-200_000..200_000).step_by(7) {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn formats_milliseconds_and_z() {
        assert_eq!(iso_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_millis(1_767_284_869_638), "2026-01-01T16:27:49.638Z");
        assert_eq!(date_string(days_from_civil(2024, 2, 29)), "2024-02-29");
    }

    #[test]
    fn every_field_of_a_timestamp_round_trips() {
        // The digits come from a table: every hour, minute, second and millisecond
        // value, either side of midnight and before the epoch, parses back to itself,
        // and the form given the time of day agrees with the one given the instant.
        let day = days_from_civil(2026, 8, 22) * MS_PER_DAY;
        let mut instants = vec![0, -1, MS_PER_DAY - 1, MS_PER_DAY, day - 1, day];
        for h in 0..24 {
            instants.push(day + h * 3_600_000 + (h * 7 % 60) * 60_000);
        }
        for s in 0..60 {
            instants.push(day + (59 - s) * 60_000 + s * 1000 + s * 16 % 1000);
        }
        instants.extend((0..1000).map(|ms| day - 86_399_000 + ms));
        for ms in instants {
            let text = iso_millis(ms);
            assert_eq!(parse_rfc3339(&text), Some(ms), "{text}");
            let (day, of_day) = split_day(ms);
            assert_eq!(
                (day, i64::from(of_day)),
                (ms.div_euclid(MS_PER_DAY), ms.rem_euclid(MS_PER_DAY))
            );
            let date = date_array(day);
            assert_eq!(
                iso_millis_of_day(date, of_day),
                iso_millis_bytes(ms),
                "{ms}"
            );
        }
        for ms in [i64::MIN, i64::MIN + 1, i64::MAX] {
            let (day, of_day) = split_day(ms);
            assert_eq!(
                (day, i64::from(of_day)),
                (ms.div_euclid(MS_PER_DAY), ms.rem_euclid(MS_PER_DAY))
            );
        }
        // Out of range, the hours read 99 rather than panic.
        let past = iso_millis_of_day(*b"2026-08-22", u32::MAX);
        assert_eq!(&past[11..13], b"99");
    }

    #[test]
    fn parses_rfc3339_forms() {
        assert_eq!(
            parse_rfc3339("2026-01-01T16:27:49.638Z"),
            Some(1_767_284_869_638)
        );
        assert_eq!(
            parse_rfc3339("2026-01-01T16:27:49Z"),
            Some(1_767_284_869_000)
        );
        assert_eq!(
            parse_rfc3339("2026-01-01T18:27:49.6389+02:00"),
            Some(1_767_284_869_638)
        );
        assert_eq!(
            parse_rfc3339("2026-01-01t16:27:49.6z"),
            Some(1_767_284_869_600)
        );
        assert_eq!(
            parse_rfc3339("2026-01-01T11:27:49-05:00"),
            Some(1_767_284_869_000)
        );
    }

    #[test]
    fn refuses_malformed_timestamps() {
        for bad in [
            "",
            "2026-01-01",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00+0200",
            "2026-01-01T00:00:00Zjunk",
            "yesterday at noon, roughly",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(parse_date("2025-02-29"), None);
        assert_eq!(parse_date("2024-02-29"), Some(days_from_civil(2024, 2, 29)));
    }
}
