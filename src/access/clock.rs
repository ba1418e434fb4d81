//! Where metering reads the time.
//!
//! Every rate-limit and credit decision asks a [`Clock`] for the current Unix time in
//! milliseconds, so tests drive time with a [`ManualClock`] (burst, refill, month
//! rollover) instead of sleeping; the server uses [`SystemClock`].

use std::sync::atomic::{AtomicI64, Ordering};

/// A source of wall-clock time.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> i64;
}

/// The operating system's wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        // A clock set before 1970 reads as the epoch rather than failing a request.
        crate::time::now_ms()
    }
}

/// A clock that only moves when told to (tests).
#[derive(Debug, Default)]
pub struct ManualClock {
    ms: AtomicI64,
}

impl ManualClock {
    /// A clock standing at `start_ms` (Unix milliseconds).
    pub fn new(start_ms: i64) -> ManualClock {
        ManualClock {
            ms: AtomicI64::new(start_ms),
        }
    }

    /// Moves the clock to `ms` (forwards or backwards).
    pub fn set(&self, ms: i64) {
        self.ms.store(ms, Ordering::SeqCst);
    }

    /// Moves the clock forward by `ms` milliseconds.
    pub fn advance(&self, ms: i64) {
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1_000);
        assert_eq!(c.now_ms(), 1_000);
        c.advance(250);
        assert_eq!(c.now_ms(), 1_250);
        c.set(5);
        assert_eq!(c.now_ms(), 5);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
