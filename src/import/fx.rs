//! Other currencies: the European Central Bank's reference rate table -> USD cents.
//!
//! The table is `eurofxref-hist.csv` as the ECB publishes it (`snapshots/fx/`): a header
//! `Date,USD,JPY,...,` (it ends with a comma), one row per TARGET business day, newest
//! first, each value the units of that currency for 1 EUR, `N/A` where a currency was
//! not quoted that day. It is an input like the feeds: a newer copy changes the
//! conversions of the next import, with no code change.
//!
//! A price of `amount` in currency `C` dated `d` becomes
//!
//! - `C = EUR`: `amount × USD[r]`,
//! - otherwise: `amount × USD[r] / C[r]` (the ECB quotes every currency against the euro
//!   only, so the dollar rate goes through it),
//!
//! where `r` is the last row dated on or before `d` that quotes both currencies. The
//! arithmetic is exact (the rates are read as decimal fractions into integers) and the
//! result is rounded to the cent, ties to the even cent. A price dated before the first
//! row cannot be converted ([`FxError::BeforeTable`]); a price dated after the last row
//! uses the last row, and the caller reports the rate's age.

use std::path::Path;

use super::ImportError;
use crate::source::RateRow;
use crate::time;

/// File name of the rate table inside the rate directory.
pub const RATES_FILE: &str = "eurofxref-hist.csv";

/// A reference rate as the exact decimal `mantissa / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rate {
    mantissa: u64,
    scale: u32,
}

impl Rate {
    /// `1.1684` -> 11684 / 10^4. `None` for `N/A`, empty, zero or anything else.
    fn parse(s: &str) -> Option<Rate> {
        let (mantissa, scale) = RateRow::parse_rate(s)?;
        Some(Rate { mantissa, scale })
    }
}

/// Why a price could not be converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FxError {
    /// The currency is not a column of the table (nor EUR or USD), or never quoted.
    UnknownCurrency,
    /// The price is dated before the first row quoting the currency.
    BeforeTable,
    /// The converted price does not fit in the price range.
    TooLarge,
}

/// A converted price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Converted {
    /// USD cents, rounded half to even.
    pub cents: u32,
    /// The day of the table row used (days since 1970-01-01).
    pub rate_day: i64,
}

/// The rate table: rows in date order, each currency's rate per row.
#[derive(Debug, Default)]
pub struct Rates {
    /// Currency codes, in column order.
    currencies: Vec<String>,
    /// Days of the rows, ascending.
    days: Vec<i64>,
    /// `rates[row * currencies.len() + column]`.
    rates: Vec<Option<Rate>>,
}

impl Rates {
    /// Reads `dir/eurofxref-hist.csv`.
    pub fn load(dir: &Path) -> Result<Rates, ImportError> {
        let path = dir.join(RATES_FILE);
        let bytes = std::fs::read(&path).map_err(|e| ImportError::new(&path, e.to_string()))?;
        Rates::parse(&bytes).map_err(|what| ImportError::new(&path, what))
    }

    /// Parses the table. Refuses a table without a USD column, with an unreadable or
    /// repeated date, or with no rows.
    pub fn parse(bytes: &[u8]) -> Result<Rates, String> {
        let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
        let header = reader
            .headers()
            .map_err(|e| format!("not a CSV file: {e}"))?
            .clone();
        if header.get(0).map(str::trim) != Some("Date") {
            return Err(format!(
                "not an ECB reference rate table: the first column is {:?}, expected \"Date\"",
                header.get(0).unwrap_or("")
            ));
        }
        let currencies: Vec<String> = header.iter().skip(1).map(|h| h.trim().into()).collect();
        if !currencies.iter().any(|c| c == "USD") {
            return Err("the rate table has no USD column".into());
        }
        let mut rows: Vec<(i64, Vec<Option<Rate>>)> = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let line = i + 2;
            let record = record.map_err(|e| format!("not a CSV file: {e}"))?;
            let date = record.get(0).unwrap_or("").trim();
            if date.is_empty() && record.len() <= 1 {
                continue;
            }
            let day = time::parse_date(date)
                .ok_or_else(|| format!("line {line}: date {date:?} is not YYYY-MM-DD"))?;
            let values = (0..currencies.len())
                .map(|c| record.get(c + 1).and_then(Rate::parse))
                .collect();
            rows.push((day, values));
        }
        if rows.is_empty() {
            return Err("the rate table has no rows".into());
        }
        rows.sort_by_key(|(day, _)| *day);
        if let Some(w) = rows.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!(
                "the date {} is listed twice",
                time::date_string(w[0].0)
            ));
        }
        let days = rows.iter().map(|(d, _)| *d).collect();
        let rates = rows.into_iter().flat_map(|(_, v)| v).collect();
        Ok(Rates {
            currencies,
            days,
            rates,
        })
    }

    /// The rates of the last row dated on or before `day` that quotes USD, one per
    /// currency it quotes, with `EUR` at 1, in code order: the `rates.csv` of a price
    /// source whose data date is `day`. Empty when no such row exists.
    pub fn rows_at(&self, day: i64) -> Vec<RateRow> {
        let Some(usd) = self.column("USD") else {
            return Vec::new();
        };
        let end = self.days.partition_point(|d| *d <= day);
        let Some(row) = (0..end).rev().find(|&r| self.rate(r, usd).is_some()) else {
            return Vec::new();
        };
        let date = self.days[row] as i32;
        let mut rows: Vec<RateRow> = self
            .currencies
            .iter()
            .enumerate()
            .filter_map(|(c, code)| {
                let rate = self.rate(row, c)?;
                Some(RateRow {
                    currency: code.clone(),
                    mantissa: rate.mantissa,
                    scale: rate.scale,
                    date,
                })
            })
            .chain(std::iter::once(RateRow {
                currency: "EUR".into(),
                mantissa: 1,
                scale: 0,
                date,
            }))
            .collect();
        rows.sort_by(|a, b| a.currency.cmp(&b.currency));
        rows.dedup_by(|a, b| a.currency == b.currency);
        rows
    }

    /// First and last day of the table.
    pub fn range(&self) -> Option<(i64, i64)> {
        Some((*self.days.first()?, *self.days.last()?))
    }

    /// Whether `currency` can be converted (USD, EUR, or a column of the table).
    pub fn knows(&self, currency: &str) -> bool {
        currency == "USD" || currency == "EUR" || self.column(currency).is_some()
    }

    fn column(&self, currency: &str) -> Option<usize> {
        self.currencies.iter().position(|c| c == currency)
    }

    fn rate(&self, row: usize, column: usize) -> Option<Rate> {
        self.rates[row * self.currencies.len() + column]
    }

    /// Converts `cents` of `currency` dated `day` to USD cents (see the module docs).
    /// USD is returned as it is, with the price's own day as the rate day.
    pub fn to_usd(&self, cents: u32, currency: &str, day: i64) -> Result<Converted, FxError> {
        if currency == "USD" {
            return Ok(Converted {
                cents,
                rate_day: day,
            });
        }
        let usd = self.column("USD").ok_or(FxError::UnknownCurrency)?;
        let other = match currency {
            "EUR" => None,
            c => Some(self.column(c).ok_or(FxError::UnknownCurrency)?),
        };
        // Rows dated on or before `day`: [0, end).
        let end = self.days.partition_point(|d| *d <= day);
        for row in (0..end).rev() {
            let Some(u) = self.rate(row, usd) else {
                continue;
            };
            let (num, den) = match other {
                None => (cents as u128 * u.mantissa as u128, 10u128.pow(u.scale)),
                Some(c) => {
                    let Some(x) = self.rate(row, c) else {
                        continue;
                    };
                    (
                        cents as u128 * u.mantissa as u128 * 10u128.pow(x.scale),
                        x.mantissa as u128 * 10u128.pow(u.scale),
                    )
                }
            };
            let usd_cents = div_half_even(num, den);
            return match u32::try_from(usd_cents) {
                Ok(c) if c != crate::price::NOT_OFFERED => Ok(Converted {
                    cents: c,
                    rate_day: self.days[row],
                }),
                _ => Err(FxError::TooLarge),
            };
        }
        let quoted_ever = (0..self.days.len()).any(|row| {
            self.rate(row, usd).is_some() && other.is_none_or(|c| self.rate(row, c).is_some())
        });
        Err(if quoted_ever {
            FxError::BeforeTable
        } else {
            FxError::UnknownCurrency
        })
    }
}

/// `num / den` rounded to the nearest integer, ties to even.
fn div_half_even(num: u128, den: u128) -> u128 {
    let (q, r) = (num / den, num % den);
    match (2 * r).cmp(&den) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "Date,USD,JPY,GBP,NGN,\n\
        2026-04-13,1.1684,186.75,0.87058,N/A,\n\
        2026-04-10,1.1711,186.43,0.87105,N/A,\n\
        2026-04-08,1.25,N/A,0.8,N/A,\n";

    fn day(s: &str) -> i64 {
        time::parse_date(s).unwrap()
    }

    #[test]
    fn converts_at_the_last_rate_on_or_before_the_day() {
        let r = Rates::parse(TABLE.as_bytes()).unwrap();
        assert_eq!(r.range(), Some((day("2026-04-08"), day("2026-04-13"))));
        // 9.17 GBP on 2026-04-11 (a Saturday): the row of 2026-04-10.
        // 917 * 1.1711 / 0.87105 = 1232.887...
        assert_eq!(
            r.to_usd(917, "GBP", day("2026-04-11")),
            Ok(Converted {
                cents: 1233,
                rate_day: day("2026-04-10")
            })
        );
        // After the last row: the last row.
        assert_eq!(
            r.to_usd(917, "GBP", day("2026-07-08")).unwrap().rate_day,
            day("2026-04-13")
        );
        // EUR: amount * USD; 10.00 EUR * 1.25 = 12.50.
        assert_eq!(
            r.to_usd(1000, "EUR", day("2026-04-09")).unwrap().cents,
            1250
        );
        // JPY not quoted on 2026-04-08: no earlier row quotes it.
        assert_eq!(
            r.to_usd(1000, "JPY", day("2026-04-09")),
            Err(FxError::BeforeTable)
        );
        assert_eq!(
            r.to_usd(1000, "GBP", day("2026-04-07")),
            Err(FxError::BeforeTable)
        );
        // A column that never has a rate is no better than no column.
        assert_eq!(
            r.to_usd(1000, "NGN", day("2026-04-13")),
            Err(FxError::UnknownCurrency)
        );
        assert_eq!(
            r.to_usd(1000, "XYZ", day("2026-04-13")),
            Err(FxError::UnknownCurrency)
        );
        assert_eq!(r.to_usd(1000, "USD", 5).unwrap().cents, 1000);
        assert!(r.knows("GBP") && r.knows("EUR") && !r.knows("XYZ"));
    }

    #[test]
    fn ties_go_to_the_even_cent() {
        // 1 cent * 1.5 = 1.5 -> 2; 3 cents * 1.5 = 4.5 -> 4; 5 * 1.5 = 7.5 -> 8.
        let r = Rates::parse(b"Date,USD,\n2020-01-01,1.5,\n").unwrap();
        let c = |n| r.to_usd(n, "EUR", day("2020-01-02")).unwrap().cents;
        assert_eq!((c(1), c(3), c(5), c(2)), (2, 4, 8, 3));
        assert_eq!(div_half_even(7, 2), 4);
        assert_eq!(div_half_even(5, 2), 2);
        assert_eq!(div_half_even(11, 4), 3);
        assert_eq!(div_half_even(9, 4), 2);
    }

    #[test]
    fn bad_tables_are_refused() {
        assert!(Rates::parse(b"").is_err());
        assert!(Rates::parse(b"Date,USD,\n").is_err());
        assert!(Rates::parse(b"Date,GBP,\n2020-01-01,1,\n").is_err());
        assert!(Rates::parse(b"Day,USD,\n2020-01-01,1,\n").is_err());
        assert!(Rates::parse(b"Date,USD,\n2020-13-01,1,\n").is_err());
        assert!(Rates::parse(b"Date,USD,\n2020-01-01,1,\n2020-01-01,2,\n").is_err());
        assert_eq!(Rate::parse("N/A"), None);
        assert_eq!(Rate::parse("0"), None);
        assert_eq!(
            Rate::parse("20082.05"),
            Some(Rate {
                mantissa: 2_008_205,
                scale: 2
            })
        );
    }
}
