//! How numbers and dates read on a page.

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
