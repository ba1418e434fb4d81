//! Rows for a person to look at: prices that are far from what other registrars ask,
//! renewals below the first year, prices that jumped between two dated versions, and
//! conversions at an old rate.
//!
//! A flag changes no price. Flags exist so that a parse error (a thousands separator
//! read as a decimal point, cents read as dollars) cannot hide among tens of thousands
//! of rows: such an error shows up as a price 100× or 1/100 of everybody else's, or as a
//! jump between two versions of one feed. The rules:
//!
//! - **far from the median**: a first-year or renewal price more than 5× or less than
//!   1/5 of the median of that price for that TLD across registrars. The median is taken
//!   over the current `prices.csv` rows (USD) that have the price, and only when at
//!   least three registrars have it (with two, "the median" is just the other one).
//! - **renewal below first year**: a renewal price lower than the first-year price
//!   (promotions go the other way).
//! - **moved**: a price that moved by more than 50% between two consecutive dated
//!   versions of one feed (the last version of each day), compared in the currency the
//!   feed quotes, so an exchange rate alone never raises it.
//! - **old rate**: a price converted at a reference rate more than 30 days older than
//!   the price (the table ends before the price's date).

use std::collections::BTreeMap;

use super::{Offer, PriceRow};
use crate::price::cents_to_decimal;
use crate::time;

/// A converted price is flagged when its rate is older than this many days.
pub const MAX_RATE_AGE_DAYS: i64 = 30;
/// Far from the median: above `FACTOR ×` or below `1 / FACTOR ×`.
pub const MEDIAN_FACTOR: u64 = 5;
/// Fewest registrars with a price for a median to be meaningful.
pub const MIN_FOR_MEDIAN: usize = 3;

/// Which of an offer's prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Price {
    /// First year.
    Register,
    /// Renewal.
    Renew,
    /// Transfer.
    Transfer,
}

impl Price {
    fn label(self) -> &'static str {
        match self {
            Price::Register => "first-year",
            Price::Renew => "renewal",
            Price::Transfer => "transfer",
        }
    }

    fn of(self, o: &Offer) -> Option<u32> {
        match self {
            Price::Register => o.register,
            Price::Renew => o.renew,
            Price::Transfer => o.transfer,
        }
    }
}

/// Why a row is flagged.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Flag {
    /// More than 5× or less than 1/5 of the TLD's median across registrars (USD).
    FarFromMedian {
        /// Which price.
        price: Price,
        /// The price, USD cents.
        cents: u32,
        /// Twice the median, USD cents (exact for an even count).
        median_x2: u64,
        /// How many registrars the median is over.
        over: usize,
    },
    /// Renewal lower than the first year.
    RenewBelowRegister {
        /// First year, USD cents.
        register: u32,
        /// Renewal, USD cents.
        renew: u32,
    },
    /// Moved by more than 50% between two consecutive versions.
    Moved {
        /// Which price.
        price: Price,
        /// Day of the earlier version.
        from_day: i64,
        /// Day of the later version.
        to_day: i64,
        /// Earlier price, minor units of `currency`.
        from: u32,
        /// Later price.
        to: u32,
        /// The currency the feed quotes.
        currency: String,
    },
    /// Converted at a rate more than 30 days older than the price.
    OldRate {
        /// The price's date.
        price_day: i64,
        /// The rate's date.
        rate_day: i64,
    },
}

impl Flag {
    /// Short stable label of the kind of flag (report order).
    pub fn kind(&self) -> &'static str {
        match self {
            Flag::FarFromMedian { .. } => "far from the median",
            Flag::RenewBelowRegister { .. } => "renewal below first year",
            Flag::Moved { .. } => "moved more than 50%",
            Flag::OldRate { .. } => "rate older than 30 days",
        }
    }
}

/// A flag on one (registrar, TLD).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flagged {
    /// Registrar key.
    pub registrar: &'static str,
    /// Canonical TLD.
    pub tld: String,
    /// Why.
    pub flag: Flag,
}

impl Flagged {
    /// One line for a person: `registrar tld: what`.
    pub fn describe(&self) -> String {
        let what = match &self.flag {
            Flag::FarFromMedian {
                price,
                cents,
                median_x2,
                over,
            } => {
                // The median to the cent, half a cent up.
                let median = median_x2.div_ceil(2).min(u32::MAX as u64 - 1) as u32;
                let dir = if (*cents as u64) * 2 > *median_x2 {
                    "above"
                } else {
                    "below"
                };
                format!(
                    "{} price {} USD is far {dir} the median {} of {over} registrars",
                    price.label(),
                    cents_to_decimal(*cents),
                    cents_to_decimal(median),
                )
            }
            Flag::RenewBelowRegister { register, renew } => format!(
                "renewal {} USD is below the first-year price {} USD",
                cents_to_decimal(*renew),
                cents_to_decimal(*register)
            ),
            Flag::Moved {
                price,
                from_day,
                to_day,
                from,
                to,
                currency,
            } => format!(
                "{} price moved from {} to {} {currency} between {} and {}",
                price.label(),
                cents_to_decimal(*from),
                cents_to_decimal(*to),
                time::date_string(*from_day),
                time::date_string(*to_day)
            ),
            Flag::OldRate {
                price_day,
                rate_day,
            } => format!(
                "price of {} converted at the rate of {} ({} days older)",
                time::date_string(*price_day),
                time::date_string(*rate_day),
                price_day - rate_day
            ),
        };
        format!("{} {}: {what}", self.registrar, self.tld)
    }
}

/// One dated version of a feed: canonical TLD -> (prices in the feed's currency, that
/// currency).
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Days since 1970-01-01.
    pub day: i64,
    /// The kept rows.
    pub rows: BTreeMap<String, (Offer, String)>,
}

/// Prices of one registrar that moved by more than 50% between consecutive versions
/// (`states` in time order; the last state of each day counts).
pub fn moves(registrar: &'static str, states: &[State]) -> Vec<Flagged> {
    let mut days: Vec<&State> = Vec::new();
    for s in states {
        match days.last_mut() {
            Some(last) if last.day == s.day => *last = s,
            _ => days.push(s),
        }
    }
    let mut out = Vec::new();
    for pair in days.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        for (tld, (now, currency)) in &after.rows {
            let Some((then, old_currency)) = before.rows.get(tld) else {
                continue;
            };
            if currency != old_currency {
                continue;
            }
            for price in [Price::Register, Price::Renew, Price::Transfer] {
                let (Some(from), Some(to)) = (price.of(then), price.of(now)) else {
                    continue;
                };
                // |to - from| > from / 2, exactly.
                if from > 0 && 2 * (from as u64).abs_diff(to as u64) > from as u64 {
                    out.push(Flagged {
                        registrar,
                        tld: tld.clone(),
                        flag: Flag::Moved {
                            price,
                            from_day: before.day,
                            to_day: after.day,
                            from,
                            to,
                            currency: currency.clone(),
                        },
                    });
                }
            }
        }
    }
    out
}

/// The flag of a price converted at a rate more than [`MAX_RATE_AGE_DAYS`] older.
pub fn stale_rate(
    registrar: &'static str,
    tld: &str,
    price_day: i64,
    rate_day: i64,
) -> Option<Flagged> {
    (price_day - rate_day > MAX_RATE_AGE_DAYS).then(|| Flagged {
        registrar,
        tld: tld.to_string(),
        flag: Flag::OldRate {
            price_day,
            rate_day,
        },
    })
}

/// Twice the median of sorted values (exact for an even count).
fn median_x2(sorted: &[u32]) -> u64 {
    let n = sorted.len();
    if n % 2 == 1 {
        2 * sorted[n / 2] as u64
    } else {
        sorted[n / 2 - 1] as u64 + sorted[n / 2] as u64
    }
}

/// The flags that compare registrars: far from the median, renewal below first year.
/// `prices` sorted by TLD.
pub fn across_registrars(prices: &[PriceRow]) -> Vec<Flagged> {
    let mut out = Vec::new();
    for row in prices {
        if let (Some(register), Some(renew)) = (row.offer.register, row.offer.renew)
            && renew < register
        {
            out.push(Flagged {
                registrar: row.registrar,
                tld: row.tld.clone(),
                flag: Flag::RenewBelowRegister { register, renew },
            });
        }
    }
    for group in prices.chunk_by(|a, b| a.tld == b.tld) {
        for price in [Price::Register, Price::Renew] {
            let mut values: Vec<u32> = group.iter().filter_map(|r| price.of(&r.offer)).collect();
            if values.len() < MIN_FOR_MEDIAN {
                continue;
            }
            values.sort_unstable();
            let m2 = median_x2(&values);
            for row in group {
                let Some(cents) = price.of(&row.offer) else {
                    continue;
                };
                // cents > 5 × m  ⇔  2·cents > 5·m2;  cents < m / 5  ⇔  10·cents < m2.
                let c = cents as u64;
                if 2 * c > MEDIAN_FACTOR * m2 || 2 * MEDIAN_FACTOR * c < m2 {
                    out.push(Flagged {
                        registrar: row.registrar,
                        tld: row.tld.clone(),
                        flag: Flag::FarFromMedian {
                            price,
                            cents,
                            median_x2: m2,
                            over: values.len(),
                        },
                    });
                }
            }
        }
    }
    out
}

/// Report order: by kind, then registrar, TLD and the flag's own fields.
pub fn sort(flags: &mut [Flagged]) {
    fn rank(f: &Flag) -> u8 {
        match f {
            Flag::FarFromMedian { .. } => 0,
            Flag::RenewBelowRegister { .. } => 1,
            Flag::Moved { .. } => 2,
            Flag::OldRate { .. } => 3,
        }
    }
    flags.sort_by(|a, b| {
        (rank(&a.flag), a.registrar, &a.tld, &a.flag).cmp(&(
            rank(&b.flag),
            b.registrar,
            &b.tld,
            &b.flag,
        ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(register: Option<u32>, renew: Option<u32>) -> Offer {
        Offer {
            register,
            renew,
            transfer: None,
        }
    }

    fn row(tld: &str, registrar: &'static str, register: u32, renew: u32) -> PriceRow {
        PriceRow {
            tld: tld.into(),
            registrar,
            offer: offer(Some(register), Some(renew)),
            original: None,
            updated_ms: 0,
            terms: Default::default(),
        }
    }

    #[test]
    fn median_outliers_and_cheap_renewals() {
        let prices = vec![
            row("com", "a", 1000, 1000),
            row("com", "b", 1100, 1200),
            row("com", "c", 1200, 1100),
            // 10.99 read as 1099.00: 100× the others.
            row("com", "d", 109_900, 109_900),
            // Two sellers only: no median.
            row("net", "a", 100, 100),
            row("net", "b", 10_000, 10_000),
        ];
        let flags = across_registrars(&prices);
        let described: Vec<String> = flags.iter().map(Flagged::describe).collect();
        assert_eq!(
            described,
            [
                "c com: renewal 11.00 USD is below the first-year price 12.00 USD",
                "d com: first-year price 1099.00 USD is far above the median 11.50 of 4 registrars",
                "d com: renewal price 1099.00 USD is far above the median 11.50 of 4 registrars",
            ]
        );
        // Exactly 5× and exactly 1/5 are not flagged; just beyond is.
        let edge = vec![
            row("x", "a", 100, 100),
            row("x", "b", 100, 100),
            row("x", "c", 500, 500),
            row("x", "d", 20, 20),
            row("x", "e", 100, 100),
        ];
        assert!(across_registrars(&edge).is_empty());
        let beyond = vec![
            row("x", "a", 100, 100),
            row("x", "b", 100, 100),
            row("x", "c", 501, 100),
            row("x", "d", 19, 100),
        ];
        let f = across_registrars(&beyond);
        assert_eq!(f.len(), 3, "{f:?}"); // c above, d below, c renewal < register
    }

    #[test]
    fn moves_in_the_feed_currency() {
        let state = |day, p: u32, c: &str| State {
            day,
            rows: [("uk".to_string(), (offer(Some(p), Some(p)), c.to_string()))].into(),
        };
        let f = moves(
            "g",
            &[
                state(1, 1000, "GBP"),
                state(2, 1500, "GBP"), // +50%: not more than 50%
                state(2, 1499, "GBP"),
                state(3, 2300, "GBP"), // +53%
                state(4, 1100, "GBP"), // -52%
                state(5, 100, "USD"),  // currency changed: not compared
            ],
        );
        let d: Vec<(i64, i64, u32, u32)> = f
            .iter()
            .filter_map(|x| match &x.flag {
                Flag::Moved {
                    price: Price::Register,
                    from_day,
                    to_day,
                    from,
                    to,
                    ..
                } => Some((*from_day, *to_day, *from, *to)),
                _ => None,
            })
            .collect();
        assert_eq!(d, [(2, 3, 1499, 2300), (3, 4, 2300, 1100)]);
        assert_eq!(stale_rate("g", "uk", 100, 70), None);
        assert!(stale_rate("g", "uk", 100, 69).is_some());
    }
}
