//! Answers in another currency: the snapshot's ECB euro reference rates, a request's
//! `currency`, and the `currency` object an answer in it carries.
//!
//! Every price is stored in USD cents and every ranking is computed in USD; an answer
//! in another currency converts each price it shows at the rate of the snapshot's data
//! date (`amount = usd × C / USD`, the ECB's two rates of that day in units per euro,
//! exact), rounded half to even to the currency's minor unit, and sums totals from the
//! converted prices. Conversion never reorders a ranking: it is the same for every
//! price and never decreasing.

use crate::json::{self, write_int};
use crate::price::Fx;
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::ArchivedExchangeRate;
use crate::time;

use super::QueryError;

/// The currency of an answer.
#[derive(Debug, Clone, Copy)]
pub struct Money<'s> {
    /// How USD cents become the currency's hundredths.
    pub fx: Fx,
    /// The rate used, for the answer's `currency` object; `None` for USD.
    rate: Option<Rate<'s>>,
}

/// The rates one conversion was made at.
#[derive(Debug, Clone, Copy)]
struct Rate<'s> {
    code: &'s str,
    /// USD per euro, `(mantissa, scale)`.
    usd: (u64, u32),
    /// The currency per euro.
    other: (u64, u32),
    /// Day of the rates.
    date: i32,
}

fn parts(r: &ArchivedExchangeRate) -> (u64, u32) {
    (r.mantissa.to_native(), r.scale.to_native())
}

impl Money<'_> {
    /// Prices as stored: USD, no `currency` object.
    pub const USD: Money<'static> = Money {
        fx: Fx::USD,
        rate: None,
    };

    /// Whether the answer is in USD (stored fragments hold as they are).
    #[inline]
    pub fn is_usd(&self) -> bool {
        self.rate.is_none()
    }

    /// The ISO 4217 code.
    pub fn code(&self) -> &str {
        self.rate.map_or("USD", |r| r.code)
    }

    /// The day of the rate (days since 1970-01-01), `None` for USD.
    pub fn rate_day(&self) -> Option<i64> {
        self.rate.map(|r| i64::from(r.date))
    }

    /// Units of the currency per US dollar, rounded half to even to 6 decimals, as
    /// millionths; `None` for USD.
    pub fn per_usd_millionths(&self) -> Option<u64> {
        let r = self.rate?;
        let num = u128::from(r.other.0) * 10u128.pow(r.usd.1) * 1_000_000;
        let den = u128::from(r.usd.0) * 10u128.pow(r.other.1);
        let (q, rem) = (num / den, num % den);
        let q = match (2 * rem).cmp(&den) {
            std::cmp::Ordering::Less => q,
            std::cmp::Ordering::Greater => q + 1,
            std::cmp::Ordering::Equal => q + (q & 1),
        };
        u64::try_from(q).ok()
    }

    /// `"currency":{"code":"EUR","per_usd":0.855871,"rate_date":"2026-04-13","source":".."}`
    /// (nothing for USD), the member an answer in another currency carries.
    pub fn write_member(&self, out: &mut Vec<u8>) {
        let (Some(r), Some(micro)) = (self.rate, self.per_usd_millionths()) else {
            return;
        };
        out.extend_from_slice(b"\"currency\":{\"code\":");
        json::write_str(r.code, out);
        out.extend_from_slice(b",\"per_usd\":");
        write_int(micro / 1_000_000, out);
        let frac = format!(".{:06}", micro % 1_000_000);
        out.extend_from_slice(frac.as_bytes());
        out.extend_from_slice(b",\"rate_date\":\"");
        time::write_date(i64::from(r.date), out);
        out.extend_from_slice(b"\",\"source\":\"ECB euro foreign exchange reference rates\"}");
    }
}

/// The currencies an answer may be in: every code of the snapshot's rate table.
pub fn currencies(snap: &ArchivedSnapshotData) -> impl Iterator<Item = &str> {
    snap.rates.iter().map(|r| snap.span_str(&r.code))
}

/// The money of `code` (ISO 4217, any case): USD, or a currency of the snapshot's
/// rate table. Anything else is an `invalid_parameter` naming the currencies there are.
pub fn money<'s>(snap: &'s ArchivedSnapshotData, code: &str) -> Result<Money<'s>, QueryError> {
    let upper = code.trim().to_ascii_uppercase();
    if upper == "USD" {
        return Ok(Money::USD);
    }
    let find = |c: &str| {
        snap.rates
            .binary_search_by(|r| snap.span_str(&r.code).cmp(c))
            .ok()
            .map(|i| &snap.rates[i])
    };
    match (find("USD"), find(&upper)) {
        (Some(usd), Some(other)) => Ok(Money {
            fx: Fx::new(parts(usd), parts(other), other.minor_unit.to_native()),
            rate: Some(Rate {
                code: snap.span_str(&other.code),
                usd: parts(usd),
                other: parts(other),
                date: other.date.to_native(),
            }),
        }),
        _ => Err(QueryError::InvalidParameter {
            name: "currency",
            value: code.to_string(),
            reason: if snap.rates.is_empty() {
                "this snapshot has no exchange rates: prices are in USD only".to_string()
            } else {
                format!(
                    "not a currency of the ECB reference rates; one of: {}",
                    currencies(snap).collect::<Vec<_>>().join(", ")
                )
            },
        }),
    }
}
