//! Prices: decimal strings in, integer cents inside, JSON numbers out.
//!
//! Every price is held as whole US cents in a `u32` (at most $42,949,672.94: the top value
//! is reserved for "not offered"), so sums,
//! averages and the 5-year total are exact. On output a price is written the way
//! `serde_json` prints the `f64` of its dollar value (`9.99`, `10.5`, `12.0`); a test
//! checks that claim against `serde_json` itself.

use crate::json::Out;

use std::fmt;

/// The cents value that marks "not offered" in stored prices (the snapshot's
/// `schema::NONE`). [`parse_cents`] refuses it as a price, so the two never meet.
pub const NOT_OFFERED: u32 = u32::MAX;

/// A stored price as an amount: `None` for [`NOT_OFFERED`].
pub fn offered(cents: u32) -> Option<u64> {
    (cents != NOT_OFFERED).then_some(cents as u64)
}

/// A conversion of USD cents into hundredths of another currency at an ECB euro
/// reference rate: `amount = cents × C / USD` (both rates in units per euro, exact),
/// rounded half to even to the currency's minor unit. [`Fx::USD`] changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fx {
    /// `C`'s digits × 10^(USD's decimals).
    num: u128,
    /// `USD`'s digits × 10^(C's decimals).
    den: u128,
    /// Hundredths per minor unit: 1 for a currency with cents, 100 for one without.
    step: u64,
    /// `num` and `den × step` when both fit in 64 bits: a price whose product with `num`
    /// fits too (every price below ~$90,000 at the ECB's rates) is converted with one
    /// 64-bit division instead of a 128-bit one (~4x faster); the result is the same.
    narrow: Option<(u64, u64)>,
}

impl Fx {
    /// No conversion: USD cents as they are.
    pub const USD: Fx = Fx {
        num: 1,
        den: 1,
        step: 1,
        narrow: None,
    };

    /// The conversion at `usd` and `other` (each `(mantissa, scale)`: units per euro)
    /// into a currency whose minor unit has `minor_unit` decimals (0 or 2).
    pub fn new(usd: (u64, u32), other: (u64, u32), minor_unit: u32) -> Fx {
        let num = u128::from(other.0) * 10u128.pow(usd.1);
        let den = u128::from(usd.0) * 10u128.pow(other.1);
        let step: u64 = if minor_unit >= 2 { 1 } else { 100 };
        let narrow = match (u64::try_from(num), u64::try_from(den * u128::from(step))) {
            (Ok(n), Ok(d)) => Some((n, d)),
            _ => None,
        };
        Fx {
            num,
            den,
            step,
            narrow,
        }
    }

    /// Whether this is [`Fx::USD`].
    #[inline]
    pub fn is_usd(&self) -> bool {
        *self == Fx::USD
    }

    /// `cents` USD in hundredths of the currency, rounded to its minor unit.
    #[inline]
    pub fn amount(&self, cents: u64) -> u64 {
        if self.is_usd() {
            return cents;
        }
        if let Some((num, den)) = self.narrow
            && let Some(n) = cents.checked_mul(num)
        {
            let (q, r) = (n / den, n % den);
            // `2 * r` may not fit: compare `r` with `den - r` instead.
            let q = match r.cmp(&(den - r)) {
                std::cmp::Ordering::Less => q,
                std::cmp::Ordering::Greater => q + 1,
                std::cmp::Ordering::Equal => q + (q & 1),
            };
            return q.saturating_mul(self.step);
        }
        let den = self.den * u128::from(self.step);
        let n = u128::from(cents) * self.num;
        let (q, r) = (n / den, n % den);
        let q = match (2 * r).cmp(&den) {
            std::cmp::Ordering::Less => q,
            std::cmp::Ordering::Greater => q + 1,
            std::cmp::Ordering::Equal => q + (q & 1),
        };
        u64::try_from(q * u128::from(self.step)).unwrap_or(u64::MAX)
    }

    /// A stored price (cents or [`NOT_OFFERED`]) converted: `None` for not offered.
    #[inline]
    pub fn offered(&self, cents: u32) -> Option<u64> {
        offered(cents).map(|c| self.amount(c))
    }
}

/// The currencies of the ECB's euro reference rates (with EUR itself), as the ECB
/// publishes them today: the codes `currency=` takes when a snapshot holds the rates.
pub const ECB_CURRENCIES: [&str; 30] = [
    "AUD", "BRL", "CAD", "CHF", "CNY", "CZK", "DKK", "EUR", "GBP", "HKD", "HUF", "IDR", "ILS",
    "INR", "ISK", "JPY", "KRW", "MXN", "MYR", "NOK", "NZD", "PHP", "PLN", "RON", "SEK", "SGD",
    "THB", "TRY", "USD", "ZAR",
];

/// Decimals of a currency's minor unit (ISO 4217): 0 for the yen, the won and the
/// Icelandic króna among the ECB's currencies, 2 for every other.
pub fn minor_unit(code: &str) -> u32 {
    match code {
        "JPY" | "KRW" | "ISK" => 0,
        _ => 2,
    }
}

/// Why a price string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PriceError {
    /// Starts with `-`.
    Negative,
    /// Not a decimal number (`abc`, `1e3`, `1.2.3`, `$5`).
    NotANumber,
    /// More than two digits after the decimal point.
    TooPrecise,
    /// Above the largest price a `u32` of cents can hold.
    TooLarge,
}

impl fmt::Display for PriceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PriceError::Negative => "negative price",
            PriceError::NotANumber => "not a decimal number",
            PriceError::TooPrecise => "more than 2 decimals",
            PriceError::TooLarge => "price too large (over 42949672.94)",
        })
    }
}

impl std::error::Error for PriceError {}

/// Parses a decimal price (`"12"`, `"9.9"`, `"10.88"`) into cents. An empty string (after
/// trimming) is `Ok(None)`: "not offered".
pub fn parse_cents(s: &str) -> Result<Option<u32>, PriceError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    if s.starts_with('-') {
        return Err(PriceError::Negative);
    }
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) => (w, f),
        None => (s, ""),
    };
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && frac.is_empty() || !all_digits(whole) || !all_digits(frac) {
        return Err(PriceError::NotANumber);
    }
    if s.ends_with('.') {
        return Err(PriceError::NotANumber);
    }
    if frac.len() > 2 {
        return Err(PriceError::TooPrecise);
    }
    let mut cents: u64 = 0;
    for b in whole.bytes() {
        cents = cents * 10 + (b - b'0') as u64;
        if cents > u32::MAX as u64 {
            return Err(PriceError::TooLarge);
        }
    }
    let mut frac_cents = 0u64;
    for (i, b) in frac.bytes().enumerate() {
        frac_cents += (b - b'0') as u64 * if i == 0 { 10 } else { 1 };
    }
    let total = cents * 100 + frac_cents;
    match u32::try_from(total) {
        Ok(c) if c != NOT_OFFERED => Ok(Some(c)),
        _ => Err(PriceError::TooLarge),
    }
}

/// Parses a feed's decimal price into cents, rounding a price with more than two
/// decimals to the nearest cent, ties to the even cent (`26.9913` -> 2699, `19.875` ->
/// 1988, `6.685` -> 668). Every other rule is [`parse_cents`]'s. The price source itself
/// never takes more than two decimals (the price source's rule); only importers round.
pub fn parse_cents_rounded(s: &str) -> Result<Option<u32>, PriceError> {
    let t = s.trim();
    let Some((whole, frac)) = t.split_once('.') else {
        return parse_cents(t);
    };
    // Only ASCII digits go past here, so the split below falls on a char boundary.
    if frac.len() <= 2 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return parse_cents(t);
    }
    let (kept, rest) = frac.split_at(2);
    let Some(cents) = parse_cents(&format!("{whole}.{kept}"))? else {
        return Err(PriceError::NotANumber);
    };
    let first = rest.as_bytes()[0];
    let beyond_half = rest.bytes().skip(1).any(|b| b != b'0');
    let up = first > b'5' || (first == b'5' && (beyond_half || cents % 2 == 1));
    if !up {
        return Ok(Some(cents));
    }
    match cents.checked_add(1) {
        Some(c) if c != NOT_OFFERED => Ok(Some(c)),
        _ => Err(PriceError::TooLarge),
    }
}

/// A price given as a JSON number (a request body's `renew_price`) in cents. A JSON
/// number is a binary float to most clients: `115 * 0.01` prints as
/// `1.1500000000000001`, which means $1.15. So a number is taken when it is a whole
/// number of cents up to the float's own rounding, and refused as having more than two
/// decimals otherwise (`1.234`, `1e-5`); negative and too large as [`parse_cents`] says.
pub fn json_number_cents(n: &serde_json::Number) -> Result<Option<u32>, PriceError> {
    if let Some(whole) = n.as_u64() {
        return match whole.checked_mul(100).map(u32::try_from) {
            Some(Ok(c)) if c != NOT_OFFERED => Ok(Some(c)),
            _ => Err(PriceError::TooLarge),
        };
    }
    let dollars = n.as_f64().ok_or(PriceError::NotANumber)?;
    if dollars < 0.0 {
        return Err(PriceError::Negative);
    }
    let cents = dollars * 100.0;
    let rounded = cents.round();
    // The error of `dollars * 100.0` is a few units in the last place of the result.
    if (cents - rounded).abs() > (cents * 8.0 * f64::EPSILON).max(1e-6) {
        return Err(PriceError::TooPrecise);
    }
    if rounded >= NOT_OFFERED as f64 {
        return Err(PriceError::TooLarge);
    }
    Ok(Some(rounded as u32))
}

/// Appends a price in cents as a JSON number, as `serde_json` prints `cents as f64 / 100.0`
/// ([`crate::json::cents_bytes`]).
#[inline]
pub fn write_cents(cents: u64, out: &mut impl Out) {
    out.put_cents(cents);
}

/// Appends `write_cents` of the value or `null`.
#[inline]
pub fn write_opt_cents(cents: Option<u64>, out: &mut impl Out) {
    match cents {
        Some(c) => write_cents(c, out),
        None => out.put(b"null"),
    }
}

/// Appends `{"register":…,"renew":…,"transfer":…}` (the API's price-triple object of
/// `avg_prices` and listing `prices`), each price in cents or [`NOT_OFFERED`] for `null`.
#[inline]
pub fn write_triple(register: u32, renew: u32, transfer: u32, out: &mut impl Out) {
    write_triple_in(Fx::USD, register, renew, transfer, out)
}

/// [`write_triple`] with each price converted by `fx`.
#[inline]
pub fn write_triple_in(fx: Fx, register: u32, renew: u32, transfer: u32, out: &mut impl Out) {
    out.put(b"{\"register\":");
    write_opt_cents(fx.offered(register), out);
    out.put(b",\"renew\":");
    write_opt_cents(fx.offered(renew), out);
    out.put(b",\"transfer\":");
    write_opt_cents(fx.offered(transfer), out);
    out.put_byte(b'}');
}

/// A price in cents as the decimal string a price source holds (`12.5` -> `"12.50"`).
/// Takes `u64` so sums of prices print the same way.
pub fn cents_to_decimal(cents: impl Into<u64>) -> String {
    let mut out = Vec::with_capacity(12);
    write_decimal(cents.into(), &mut out);
    String::from_utf8(out).expect("digits and a dot")
}

/// Appends [`cents_to_decimal`]'s text (`12.50`) to `out`, without a `String`.
pub fn write_decimal(cents: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(itoa::Buffer::new().format(cents / 100).as_bytes());
    let c = (cents % 100) as u8;
    out.extend_from_slice(&[b'.', b'0' + c / 10, b'0' + c % 10]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ecb_currencies_are_those_of_the_shipped_rates() {
        let source = crate::build::embedded_source().unwrap();
        let mut codes: Vec<&str> = source.rates.iter().map(|r| r.currency.as_str()).collect();
        codes.sort_unstable();
        assert_eq!(codes, ECB_CURRENCIES);
    }

    #[test]
    fn the_narrow_conversion_is_the_wide_one() {
        // JPY (no minor unit), GBP, IDR (large rate), CHF at the ECB's 2026-04-13 rates.
        let usd = (11_684, 4);
        for (other, minor) in [
            ((18_675, 2), 0),
            ((87_058, 5), 2),
            ((2_008_205, 2), 2),
            ((9_242, 4), 2),
        ] {
            let fx = Fx::new(usd, other, minor);
            let wide = Fx { narrow: None, ..fx };
            for cents in (0..200_000u64)
                .step_by(7)
                .chain([u32::MAX as u64 - 1, 1 << 40])
            {
                assert_eq!(fx.amount(cents), wide.amount(cents), "{other:?} {cents}");
            }
        }
    }

    fn render(c: u64) -> String {
        let mut v = Vec::new();
        write_cents(c, &mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn feed_prices_round_half_even() {
        let r = |s: &str| parse_cents_rounded(s);
        assert_eq!(r("26.9913"), Ok(Some(2699)));
        assert_eq!(r("6.681"), Ok(Some(668)));
        assert_eq!(r("19.876"), Ok(Some(1988)));
        assert_eq!(r("19.875"), Ok(Some(1988)));
        assert_eq!(r("6.685"), Ok(Some(668)));
        assert_eq!(r("6.68500001"), Ok(Some(669)));
        assert_eq!(r("0.005"), Ok(Some(0)));
        assert_eq!(r("0.015"), Ok(Some(2)));
        assert_eq!(r("9.995"), Ok(Some(1000)));
        assert_eq!(r("10.88"), Ok(Some(1088)));
        assert_eq!(r("12"), Ok(Some(1200)));
        assert_eq!(r(""), Ok(None));
        assert_eq!(r("-1.001"), Err(PriceError::Negative));
        assert_eq!(r("1.00x"), Err(PriceError::NotANumber));
        assert_eq!(r("1.0e1"), Err(PriceError::NotANumber));
        assert_eq!(r("42949672.949"), Err(PriceError::TooLarge));
        // Found by tools/fuzz (feeds): a multi-byte char at the third decimal used to
        // panic in the split ("12.9ǽ", "1.00é").
        assert_eq!(r("12.9\u{1fd}2"), Err(PriceError::NotANumber));
        assert_eq!(r("1.00\u{e9}"), Err(PriceError::NotANumber));
        assert_eq!(r("1.\u{e9}"), Err(PriceError::NotANumber));
    }

    #[test]
    fn json_numbers_are_whole_cents_within_float_noise() {
        let cents = |text: &str| json_number_cents(&serde_json::from_str(text).unwrap());
        assert_eq!(cents("18.48"), Ok(Some(1848)));
        assert_eq!(cents("1.1500000000000001"), Ok(Some(115)));
        assert_eq!(cents("0.07"), Ok(Some(7)));
        assert_eq!(cents("12"), Ok(Some(1200)));
        assert_eq!(cents("1e2"), Ok(Some(10000)));
        assert_eq!(cents("0"), Ok(Some(0)));
        assert_eq!(cents("1.234"), Err(PriceError::TooPrecise));
        assert_eq!(cents("1e-5"), Err(PriceError::TooPrecise));
        assert_eq!(cents("-1"), Err(PriceError::Negative));
        assert_eq!(cents("-0.5"), Err(PriceError::Negative));
        assert_eq!(cents("42949672.94"), Ok(Some(4_294_967_294)));
        assert_eq!(cents("42949672.95"), Err(PriceError::TooLarge));
        assert_eq!(cents("42949673"), Err(PriceError::TooLarge));
        assert_eq!(cents("1e300"), Err(PriceError::TooLarge));
    }

    #[test]
    fn rendering_matches_serde_json_f64() {
        let mut values: Vec<u64> = (0..100_000).collect();
        values.extend((0..2000).map(|i| (u32::MAX as u64) - i * 7919));
        values.extend([4 * u32::MAX as u64 + u32::MAX as u64, 12_345_678_901]);
        for c in values {
            let expected = serde_json::to_string(&(c as f64 / 100.0)).unwrap();
            assert_eq!(render(c), expected, "{c} cents");
        }
    }

    #[test]
    fn decimals_have_two_digits() {
        assert_eq!(cents_to_decimal(1250u32), "12.50");
        assert_eq!(cents_to_decimal(5u32), "0.05");
        assert_eq!(cents_to_decimal(0u32), "0.00");
        assert_eq!(cents_to_decimal(u64::MAX), "184467440737095516.15");
    }

    #[test]
    fn parses_decimals() {
        assert_eq!(parse_cents("10.88"), Ok(Some(1088)));
        assert_eq!(parse_cents("9.9"), Ok(Some(990)));
        assert_eq!(parse_cents("12"), Ok(Some(1200)));
        assert_eq!(parse_cents(".5"), Ok(Some(50)));
        assert_eq!(parse_cents("0"), Ok(Some(0)));
        assert_eq!(parse_cents(" 7.00 "), Ok(Some(700)));
        assert_eq!(parse_cents(""), Ok(None));
        assert_eq!(parse_cents("42949672.94"), Ok(Some(u32::MAX - 1)));
    }

    #[test]
    fn refuses_bad_prices() {
        assert_eq!(parse_cents("-1"), Err(PriceError::Negative));
        assert_eq!(parse_cents("-0.01"), Err(PriceError::Negative));
        assert_eq!(parse_cents("1.999"), Err(PriceError::TooPrecise));
        assert_eq!(parse_cents("abc"), Err(PriceError::NotANumber));
        assert_eq!(parse_cents("1e3"), Err(PriceError::NotANumber));
        assert_eq!(parse_cents("1.2.3"), Err(PriceError::NotANumber));
        assert_eq!(parse_cents("$5"), Err(PriceError::NotANumber));
        assert_eq!(parse_cents("1,000.00"), Err(PriceError::NotANumber));
        assert_eq!(parse_cents("5."), Err(PriceError::NotANumber));
        assert_eq!(parse_cents("."), Err(PriceError::NotANumber));
        assert_eq!(parse_cents("+5"), Err(PriceError::NotANumber));
        assert_eq!(parse_cents("42949672.95"), Err(PriceError::TooLarge));
        assert_eq!(parse_cents("42949672.96"), Err(PriceError::TooLarge));
        assert_eq!(
            parse_cents("99999999999999999999"),
            Err(PriceError::TooLarge)
        );
    }
}
