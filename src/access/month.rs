//! Calendar months in UTC and a lock-free counter that resets when the month turns.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::time::{MS_PER_DAY, civil_from_days, days_from_civil};

/// Months since year 0 (`year * 12 + month - 1`) of a Unix time in milliseconds.
///
/// Every request asks, and the answer changes once a day at most: the last day seen and
/// its month are kept in one atomic word (day in the high half, month in the low), so
/// the calendar arithmetic runs once per day instead of once per request.
pub fn month_of(ms: i64) -> u32 {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static LAST_DAY: AtomicU64 = AtomicU64::new(u64::MAX);
    let day = ms.div_euclid(MS_PER_DAY);
    let last = LAST_DAY.load(Relaxed);
    if u32::try_from(day).is_ok_and(|d| u64::from(d) == last >> 32) {
        return last as u32;
    }
    let (y, m, _) = civil_from_days(day);
    let month = (y.clamp(0, 999_999) * 12 + i64::from(m) - 1) as u32;
    if let Ok(d) = u32::try_from(day) {
        LAST_DAY.store(u64::from(d) << 32 | u64::from(month), Relaxed);
    }
    month
}

/// Unix milliseconds at which `month` begins (00:00 UTC on its first day).
pub fn month_start_ms(month: u32) -> i64 {
    let y = i64::from(month / 12);
    let m = month % 12 + 1;
    days_from_civil(y, m, 1) * MS_PER_DAY
}

/// Whole seconds (rounded up, at least 1) from `now_ms` until the next UTC month begins.
pub fn secs_until_next_month(now_ms: i64) -> u64 {
    let next = month_start_ms(month_of(now_ms) + 1);
    let ms = (next - now_ms).max(1) as u64;
    ms.div_ceil(1000).max(1)
}

/// `YYYY-MM` of a month number.
pub fn month_label(month: u32) -> String {
    format!("{:04}-{:02}", month / 12, month % 12 + 1)
}

/// The month number of a `YYYY-MM` label.
pub fn parse_month_label(s: &str) -> Option<u32> {
    let (y, m) = s.split_once('-')?;
    if y.len() != 4 || m.len() != 2 {
        return None;
    }
    let y: u32 = y.parse().ok()?;
    let m: u32 = m.parse().ok()?;
    if !(1..=12).contains(&m) {
        return None;
    }
    Some(y * 12 + m - 1)
}

const COUNT_BITS: u32 = 40;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
/// Largest count a [`MonthCounter`] holds (about 1.1e12); larger limits act as unlimited.
pub const MAX_COUNT: u64 = COUNT_MASK;

/// A count that belongs to one month, in one `AtomicU64` (24 bits of month, 40 of count),
/// so that "is this still the current month" and "take one if below the limit" are a
/// single compare-and-swap: exact under any number of concurrent callers, without a lock.
/// A count from an older month reads as 0; the month never moves backwards (a clock set
/// back keeps counting in the newest month seen).
#[derive(Debug, Default)]
pub struct MonthCounter(AtomicU64);

fn pack(month: u32, count: u64) -> u64 {
    (u64::from(month) << COUNT_BITS) | count.min(COUNT_MASK)
}

fn unpack(v: u64) -> (u32, u64) {
    ((v >> COUNT_BITS) as u32, v & COUNT_MASK)
}

impl MonthCounter {
    /// A counter holding `count` for `month`.
    pub fn new(month: u32, count: u64) -> MonthCounter {
        MonthCounter(AtomicU64::new(pack(month, count)))
    }

    /// The count for `month` (0 when the stored count is from an older month).
    pub fn get(&self, month: u32) -> u64 {
        let (m, c) = unpack(self.0.load(Ordering::Acquire));
        if m >= month { c } else { 0 }
    }

    /// The stored month and count, as they are.
    pub fn raw(&self) -> (u32, u64) {
        unpack(self.0.load(Ordering::Acquire))
    }

    /// Adds `n` to the count of `month` unless that would pass `limit`; returns the new
    /// count, or the count that stopped it.
    pub fn try_add(&self, month: u32, n: u64, limit: Option<u64>) -> Result<u64, u64> {
        let limit = limit.unwrap_or(MAX_COUNT).min(MAX_COUNT);
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            let (m, c) = unpack(cur);
            let (m, c) = if m >= month { (m, c) } else { (month, 0) };
            let next = c.saturating_add(n);
            if next > limit {
                return Err(c);
            }
            match self.0.compare_exchange_weak(
                cur,
                pack(m, next),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(next),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Takes up to `n` from the count of `month` (for leases); returns what it took.
    pub fn take_up_to(&self, month: u32, n: u64) -> u64 {
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            let (m, c) = unpack(cur);
            if m != month || c == 0 {
                return 0;
            }
            let took = c.min(n);
            match self.0.compare_exchange_weak(
                cur,
                pack(m, c - took),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return took,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Replaces the stored value with `count` for `month`.
    pub fn set(&self, month: u32, count: u64) {
        self.0.store(pack(month, count), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(y: i64, m: u32, d: u32) -> i64 {
        days_from_civil(y, m, d) * MS_PER_DAY
    }

    #[test]
    fn months_and_their_ends() {
        let nov = month_of(ms(2026, 11, 21) + 5);
        assert_eq!(month_label(nov), "2026-11");
        assert_eq!(parse_month_label("2026-11"), Some(nov));
        assert_eq!(month_start_ms(nov), ms(2026, 11, 1));
        assert_eq!(
            month_label(month_of(ms(2026, 12, 31) + MS_PER_DAY - 1)),
            "2026-12"
        );
        assert_eq!(month_label(month_of(ms(2027, 1, 1))), "2027-01");
        assert_eq!(
            secs_until_next_month(ms(2026, 12, 31) + MS_PER_DAY - 1500),
            2
        );
        assert_eq!(secs_until_next_month(ms(2027, 2, 1)), 28 * 86_400);
        assert_eq!(parse_month_label("2026-13"), None);
        assert_eq!(parse_month_label("26-1"), None);
    }

    #[test]
    fn counter_resets_with_the_month_and_respects_limits() {
        let c = MonthCounter::new(100, 0);
        assert_eq!(c.try_add(100, 1, Some(2)), Ok(1));
        assert_eq!(c.try_add(100, 1, Some(2)), Ok(2));
        assert_eq!(c.try_add(100, 1, Some(2)), Err(2));
        assert_eq!(c.get(101), 0);
        assert_eq!(c.try_add(101, 1, Some(2)), Ok(1));
        // The month never moves backwards.
        assert_eq!(c.try_add(100, 1, Some(2)), Ok(2));
        assert_eq!(c.raw(), (101, 2));
        assert_eq!(c.take_up_to(101, 5), 2);
        assert_eq!(c.take_up_to(101, 5), 0);
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    #[test]
    fn the_day_cache_never_answers_for_another_day() {
        // Alternate between days far apart and across month ends: each answer must be
        // the one the calendar gives, whatever the cache held before.
        let days = [0i64, 20_413, 20_424, 20_454, 20_455, -1, 20_423, 2_932_896];
        for _ in 0..3 {
            for &d in &days {
                for ms in [d * MS_PER_DAY, d * MS_PER_DAY + MS_PER_DAY - 1] {
                    let (y, m, _) = civil_from_days(d);
                    let want = (y.clamp(0, 999_999) * 12 + i64::from(m) - 1) as u32;
                    assert_eq!(month_of(ms), want, "day {d}");
                }
            }
        }
    }
}
