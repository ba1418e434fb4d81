//! The JSON fragments of a snapshot's `text`: one writer per fragment, so each shape is
//! described once. The builder stores what they write, the snapshot's open writes each
//! fragment again from the integers beside it to check the stored bytes, and the queries
//! write them at request time (the public overview entries, never stored, and the `at`
//! answers from history, byte for byte what a snapshot built on that day would have
//! stored). They depend only on the writers' base ([`crate::json`], [`crate::price`],
//! [`crate::time`]) and the schema.

use super::schema::{NONE, OfferTerms};
use crate::json::write_int;
use crate::json::{self, Out};
use crate::price::{Fx, write_cents, write_opt_cents, write_triple_in};
use crate::time;

use crate::price::offered as cents;

/// What an offer's list says beside its prices, where it says anything:
/// `,"promotion":true,"regular_register_price":..` for a first-year price that is a
/// promotion (`null` where the list marks a sale without its regular price),
/// `,"icann_fee":..,"icann_fee_included":true|false` where the list states the fee
/// apart, `,"coupon":{"code":..,"register_price":..}` for a published coupon,
/// `,"member_prices":{"register":..,"renew":..,"transfer":..}` for the prices of the
/// registrar's paid membership. Nothing for an offer with none of them.
pub fn terms(t: OfferTerms<'_>, fx: Fx, out: &mut impl Out) {
    if t.promotion() {
        out.put(b",\"promotion\":true,\"regular_register_price\":");
        write_opt_cents(fx.offered(t.regular_register), out);
    }
    if t.coupon_register != NONE {
        out.put(b",\"coupon\":{\"code\":");
        json::write_str(t.coupon_code, out);
        out.put(b",\"register_price\":");
        write_opt_cents(fx.offered(t.coupon_register), out);
        out.put(b"}");
    }
    if t.has_member_prices() {
        out.put(b",\"member_prices\":{\"register\":");
        write_opt_cents(fx.offered(t.member.0), out);
        out.put(b",\"renew\":");
        write_opt_cents(fx.offered(t.member.1), out);
        out.put(b",\"transfer\":");
        write_opt_cents(fx.offered(t.member.2), out);
        out.put(b"}");
    }
    if t.icann_fee != NONE {
        out.put(b",\"icann_fee\":");
        write_opt_cents(fx.offered(t.icann_fee), out);
        out.put(if t.icann_fee_included {
            b",\"icann_fee_included\":true".as_slice()
        } else {
            b",\"icann_fee_included\":false".as_slice()
        });
    }
}

/// `,"original_prices":{"currency":..,"register":..,"renew":..,"transfer":..,"rate_date":".."}`:
/// the prices as a registrar quoted them in another currency (amounts in hundredths of
/// it, [`NONE`] for not offered), and the day of the rate they were converted at.
pub fn original_prices(
    currency: &str,
    (register, renew, transfer): (u32, u32, u32),
    rate_date: i64,
    out: &mut impl Out,
) {
    out.put(b",\"original_prices\":{\"currency\":");
    json::write_str(currency, out);
    out.put(b",\"register\":");
    write_opt_cents(cents(register), out);
    out.put(b",\"renew\":");
    write_opt_cents(cents(renew), out);
    out.put(b",\"transfer\":");
    write_opt_cents(cents(transfer), out);
    out.put(b",\"rate_date\":\"");
    time::write_date(rate_date, out);
    out.put(b"\"}");
}

/// A registrar listing's prices, after its head and `website_url`:
/// `,"prices":{"register":..,"renew":..,"transfer":..}`, then [`original_prices`] for a
/// price quoted in another currency (`original`: currency, amounts, rate day), then
/// [`terms`].
pub fn listing_prices(
    (register, renew, transfer): (u32, u32, u32),
    original: Option<(&str, (u32, u32, u32), i64)>,
    offer_terms: OfferTerms<'_>,
    fx: Fx,
    out: &mut impl Out,
) {
    out.put(b",\"prices\":");
    write_triple_in(fx, register, renew, transfer, out);
    if let Some((currency, amounts, rate_date)) = original {
        original_prices(currency, amounts, rate_date, out);
    }
    terms(offer_terms, fx, out);
}

/// The start of a registrar listing entry, up to its `website_url`'s opening quote:
/// `{"name":..,"key":..,"website_url":"` (`name_json`: the name as a JSON string).
pub fn listing_head(name_json: &[u8], key: &str, out: &mut impl Out) {
    out.put(b"{\"name\":");
    out.put(name_json);
    out.put(b",\"key\":");
    json::write_str(key, out);
    out.put(b",\"website_url\":\"");
}

/// What follows the public URL in a listing's `website_url`: `/registrars/key"`. Keys
/// are `[a-z0-9_-]`, safe in a URL path and in a JSON string as they are.
pub fn listing_path(key: &str, out: &mut impl Out) {
    out.put(b"/registrars/");
    out.put(key.as_bytes());
    out.put_byte(b'"');
}

/// The average of the offered values ([`NONE`] skipped), rounded half up to the cent;
/// [`NONE`] when there is none.
pub fn avg(values: impl Iterator<Item = u32>) -> u32 {
    let mut mean = Mean::default();
    values.for_each(|v| mean.add(v));
    mean.cents()
}

/// [`avg`] one value at a time (the snapshot's open check sums three prices in one pass).
#[derive(Debug, Default, Clone, Copy)]
pub struct Mean {
    sum: u64,
    n: u64,
}

impl Mean {
    /// Counts `v` unless it is [`NONE`].
    #[inline]
    pub fn add(&mut self, v: u32) {
        if v != NONE {
            self.sum += u64::from(v);
            self.n += 1;
        }
    }

    /// The average so far, rounded half up; [`NONE`] when nothing was counted.
    pub fn cents(&self) -> u32 {
        // An average of u32 values fits a u32.
        (self.sum + self.n / 2)
            .checked_div(self.n)
            .map_or(NONE, |a| a as u32)
    }
}

/// What closes every entry that shows an offer: `,"last_updated":".."}`, with
/// `,"stale":true` before the brace for a price older than the request's cut-off.
pub fn age(updated_ms: i64, stale: bool, out: &mut impl Out) {
    out.put(b",\"last_updated\":\"");
    time::write_iso_millis(updated_ms, out);
    out.put_byte(b'"');
    if stale {
        out.put(b",\"stale\":true");
    }
    out.put_byte(b'}');
}

/// A client-shape cheapest entry (`rank` from 1), without a separator:
/// `{"rank":1,"registrar_name":..,"registrar_key":..,"register_price":..,"renew_price":..,"total_cost_5_year":..,"last_updated":".."}`
/// (and `"stale":true` when `stale`).
/// [`terms`] come before `last_updated`. Prices are converted by `fx`, and the total is
/// the sum of the converted prices.
#[allow(clippy::too_many_arguments)]
pub fn client_entry(
    rank: usize,
    name_json: &[u8],
    key: &str,
    (register, renew): (u32, u32),
    offer_terms: OfferTerms<'_>,
    updated_ms: i64,
    stale: bool,
    fx: Fx,
    out: &mut impl Out,
) {
    let (register, renew) = (fx.amount(register as u64), fx.amount(renew as u64));
    out.put(b"{\"rank\":");
    write_int(rank as u64, out);
    out.put(b",\"registrar_name\":");
    out.put(name_json);
    out.put(b",\"registrar_key\":");
    json::write_str(key, out);
    out.put(b",\"register_price\":");
    write_cents(register, out);
    out.put(b",\"renew_price\":");
    write_cents(renew, out);
    out.put(b",\"total_cost_5_year\":");
    write_cents(register + 4 * renew, out);
    terms(offer_terms, fx, out);
    age(updated_ms, stale, out);
}

/// A public-shape cheapest entry (`rank` from 1), without a separator, [`terms`] before
/// [`age`]; prices converted by `fx`, totals summed from the converted prices.
#[allow(clippy::too_many_arguments)]
pub fn public_entry(
    rank: usize,
    name_json: &[u8],
    (register, renew, transfer): (u32, u32, u32),
    offer_terms: OfferTerms<'_>,
    updated_ms: i64,
    stale: bool,
    fx: Fx,
    out: &mut impl Out,
) {
    let (register, renew) = (fx.amount(register as u64), fx.amount(renew as u64));
    out.put(b"{\"rank\":");
    write_int(rank as u64, out);
    out.put(b",\"registrar_name\":");
    out.put(name_json);
    out.put(b",\"register_price\":");
    write_cents(register, out);
    out.put(b",\"renew_price\":");
    write_cents(renew, out);
    out.put(b",\"transfer_price\":");
    write_opt_cents(fx.offered(transfer), out);
    out.put(b",\"total_cost_1_year\":");
    write_cents(register, out);
    out.put(b",\"total_cost_3_year\":");
    write_cents(register + 2 * renew, out);
    out.put(b",\"total_cost_5_year\":");
    write_cents(register + 4 * renew, out);
    terms(offer_terms, fx, out);
    age(updated_ms, stale, out);
}

/// What closes a client-shape cheapest result: `],"registrar_count":N}`.
pub fn client_tail(sellers: usize, out: &mut impl Out) {
    out.put(b"],\"registrar_count\":");
    write_int(sellers as u64, out);
    out.put_byte(b'}');
}

/// What closes a public-shape cheapest result:
/// `],"registrar_count":N,"avg_prices":{"register":..,"renew":..,"transfer":..}}`.
pub fn public_tail(sellers: usize, avg: (u32, u32, u32), fx: Fx, out: &mut impl Out) {
    out.put(b"],\"registrar_count\":");
    write_int(sellers as u64, out);
    out.put(b",\"avg_prices\":");
    write_triple_in(fx, avg.0, avg.1, avg.2, out);
    out.put_byte(b'}');
}

/// A price record:
/// `"key":{"register_price":..,"renew_price":..,"transfer_price":..,"last_updated":".."}`,
/// [`terms`] before `last_updated`, prices converted by `fx`.
pub fn record(
    key: &str,
    (register, renew, transfer): (u32, u32, u32),
    offer_terms: OfferTerms<'_>,
    updated_ms: i64,
    fx: Fx,
    out: &mut impl Out,
) {
    json::write_str(key, out);
    out.put(b":{\"register_price\":");
    write_opt_cents(fx.offered(register), out);
    out.put(b",\"renew_price\":");
    write_opt_cents(fx.offered(renew), out);
    out.put(b",\"transfer_price\":");
    write_opt_cents(fx.offered(transfer), out);
    terms(offer_terms, fx, out);
    out.put(b",\"last_updated\":\"");
    time::write_iso_millis(updated_ms, out);
    out.put(b"\"}");
}
