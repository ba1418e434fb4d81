//! How numbers and dates read on a page.

use crate::query::money::Money;

/// `$1,234.50` from cents; `whole` drops `.00` (axis labels).
pub fn usd_cents(cents: u64, whole: bool) -> String {
    let dollars = cents / 100;
    let mut out = String::from("$");
    let digits = dollars.to_string();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if !(whole && cents.is_multiple_of(100)) {
        out.push_str(&format!(".{:02}", cents % 100));
    }
    out
}

/// A dollar amount as the query layer writes it, in cents.
pub fn to_cents(dollars: f64) -> u64 {
    (dollars * 100.0).round().max(0.0) as u64
}

/// An amount in another currency: `£7.49`, `EUR 7.49`.
pub fn money(currency: &str, amount: f64) -> String {
    let cents = to_cents(amount);
    let number = &usd_cents(cents, false)[1..];
    match currency {
        "USD" => format!("${number}"),
        "GBP" => format!("£{number}"),
        "EUR" => format!("€{number}"),
        other => format!("{other} {number}"),
    }
}

/// How a page writes prices: in the currency of the viewer's choice, converted from the
/// stored USD cents by the API's rule ([`crate::price::Fx::amount`]: the ECB rates of
/// the snapshot, rounded to the currency's minor unit), with its symbol or code.
#[derive(Debug, Clone, Copy)]
pub struct Cash<'s> {
    /// The currency and its conversion.
    pub money: Money<'s>,
}

impl Cash<'static> {
    /// Prices as stored, in US dollars.
    pub const USD: Cash<'static> = Cash { money: Money::USD };
}

impl<'s> Cash<'s> {
    /// Prices in `money`.
    pub fn new(money: Money<'s>) -> Cash<'s> {
        Cash { money }
    }

    /// The ISO 4217 code.
    pub fn code(&self) -> &str {
        self.money.code()
    }

    /// Whether the prices are shown as stored (USD).
    pub fn is_usd(&self) -> bool {
        self.money.is_usd()
    }

    /// `usd_cents` in hundredths of the currency.
    pub fn convert(&self, usd_cents: u64) -> u64 {
        self.money.fx.amount(usd_cents)
    }

    /// The first year and `renewals` renewals, in hundredths of the currency: the sum
    /// of the converted prices, as the API writes its totals in a currency.
    pub fn total(&self, register: Option<u64>, renew: Option<u64>, renewals: u64) -> Option<u64> {
        Some(self.convert(register?) + renewals * self.convert(renew?))
    }

    /// A USD price, converted and written: `$9.08`, `€8.45`, `¥1,451`, `CHF 7.80`.
    pub fn price(&self, usd_cents: u64) -> String {
        self.amount(self.convert(usd_cents), false)
    }

    /// An amount already in hundredths of the currency, written with its symbol or
    /// code and its minor unit (none for JPY, KRW and ISK); `whole` drops `.00` (axis
    /// labels).
    pub fn amount(&self, hundredths: u64, whole: bool) -> String {
        let code = self.code();
        let no_minor = crate::price::minor_unit(code) == 0;
        let number = if no_minor {
            count((hundredths + 50) / 100)
        } else {
            usd_cents(hundredths, whole)[1..].to_owned()
        };
        match code {
            "USD" => format!("${number}"),
            "EUR" => format!("€{number}"),
            "GBP" => format!("£{number}"),
            "JPY" => format!("¥{number}"),
            other => format!("{other}\u{a0}{number}"),
        }
    }
}

impl Cash<'_> {
    /// An axis label: the amount with the currency's symbol where it has one of a
    /// character, the bare number otherwise (the chart's title names the currency).
    pub fn axis_label(&self, hundredths: u64, whole: bool) -> String {
        let text = self.amount(hundredths, whole);
        match text.split_once('\u{a0}') {
            Some((_, number)) => number.to_owned(),
            None => text,
        }
    }
}

/// A number with thousands separators.
pub fn count(n: u64) -> String {
    usd_cents(n * 100, true)[1..].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `$9.08` from dollars.
    fn usd(dollars: f64) -> String {
        usd_cents(to_cents(dollars), false)
    }

    #[test]
    fn dollars_read_like_prices() {
        assert_eq!(usd(9.08), "$9.08");
        assert_eq!(usd(12.0), "$12.00");
        assert_eq!(usd(1234.5), "$1,234.50");
        assert_eq!(usd_cents(100_000_000, true), "$1,000,000");
        assert_eq!(usd_cents(1050, true), "$10.50");
        assert_eq!(usd(0.29), "$0.29");
        assert_eq!(money("GBP", 7.49), "£7.49");
        assert_eq!(money("CHF", 1000.0), "CHF 1,000.00");
        assert_eq!(count(3428), "3,428");
        assert_eq!(Cash::USD.price(908), "$9.08");
        assert_eq!(Cash::USD.total(Some(499), Some(1999), 2), Some(4497));
        assert_eq!(Cash::USD.amount(150_000, true), "$1,500");
        assert_eq!(count(17), "17");
    }
}

/// Percent-encodes a query-string value (everything but unreserved characters).
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod encode_tests {
    #[test]
    fn query_values_keep_only_safe_bytes() {
        assert_eq!(super::query_value("/tld/com"), "/tld/com");
        assert_eq!(super::query_value("a b&c=рф"), "a%20b%26c%3D%D1%80%D1%84");
    }
}
