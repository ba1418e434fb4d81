//! The JSON fragments that the builder pre-renders and that the `at` queries render at
//! request time from history: one writer per fragment, so that an answer computed from
//! history is byte for byte what a snapshot built on that day would have stored.

use crate::json;
use crate::json::write_int;
use crate::price::{write_cents, write_opt_cents, write_triple};
use crate::snapshot::schema::NONE;
use crate::time;

use crate::price::offered as cents;

/// `,"original_prices":{"currency":..,"register":..,"renew":..,"transfer":..,"rate_date":".."}`:
/// the prices as a registrar quoted them in another currency (amounts in hundredths of
/// it, [`NONE`] for not offered), and the day of the rate they were converted at.
pub fn original_prices(
    currency: &str,
    (register, renew, transfer): (u32, u32, u32),
    rate_date: i64,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b",\"original_prices\":{\"currency\":");
    json::write_str(currency, out);
    out.extend_from_slice(b",\"register\":");
    write_opt_cents(cents(register), out);
    out.extend_from_slice(b",\"renew\":");
    write_opt_cents(cents(renew), out);
    out.extend_from_slice(b",\"transfer\":");
    write_opt_cents(cents(transfer), out);
    out.extend_from_slice(b",\"rate_date\":\"");
    time::write_date(rate_date, out);
    out.extend_from_slice(b"\"}");
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

/// A client-shape cheapest entry (`rank` from 1), without a separator:
/// `{"rank":1,"registrar_name":..,"registrar_key":..,"register_price":..,"renew_price":..,"total_cost_5_year":..}`.
pub fn client_entry(
    rank: usize,
    name_json: &[u8],
    key: &str,
    register: u32,
    renew: u32,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"{\"rank\":");
    write_int(rank as u64, out);
    out.extend_from_slice(b",\"registrar_name\":");
    out.extend_from_slice(name_json);
    out.extend_from_slice(b",\"registrar_key\":");
    json::write_str(key, out);
    out.extend_from_slice(b",\"register_price\":");
    write_cents(register as u64, out);
    out.extend_from_slice(b",\"renew_price\":");
    write_cents(renew as u64, out);
    out.extend_from_slice(b",\"total_cost_5_year\":");
    write_cents(register as u64 + 4 * renew as u64, out);
    out.push(b'}');
}

/// A public-shape cheapest entry (`rank` from 1), without a separator.
pub fn public_entry(
    rank: usize,
    name_json: &[u8],
    register: u32,
    renew: u32,
    transfer: u32,
    out: &mut Vec<u8>,
) {
    let (register, renew) = (register as u64, renew as u64);
    out.extend_from_slice(b"{\"rank\":");
    write_int(rank as u64, out);
    out.extend_from_slice(b",\"registrar_name\":");
    out.extend_from_slice(name_json);
    out.extend_from_slice(b",\"register_price\":");
    write_cents(register, out);
    out.extend_from_slice(b",\"renew_price\":");
    write_cents(renew, out);
    out.extend_from_slice(b",\"transfer_price\":");
    write_opt_cents(cents(transfer), out);
    out.extend_from_slice(b",\"total_cost_1_year\":");
    write_cents(register, out);
    out.extend_from_slice(b",\"total_cost_3_year\":");
    write_cents(register + 2 * renew, out);
    out.extend_from_slice(b",\"total_cost_5_year\":");
    write_cents(register + 4 * renew, out);
    out.push(b'}');
}

/// What closes a client-shape cheapest result: `],"registrar_count":N}`.
pub fn client_tail(sellers: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(b"],\"registrar_count\":");
    write_int(sellers as u64, out);
    out.push(b'}');
}

/// What closes a public-shape cheapest result:
/// `],"registrar_count":N,"avg_prices":{"register":..,"renew":..,"transfer":..}}`.
pub fn public_tail(sellers: usize, avg: (u32, u32, u32), out: &mut Vec<u8>) {
    out.extend_from_slice(b"],\"registrar_count\":");
    write_int(sellers as u64, out);
    out.extend_from_slice(b",\"avg_prices\":");
    write_triple(avg.0, avg.1, avg.2, out);
    out.push(b'}');
}

/// A price record:
/// `"key":{"register_price":..,"renew_price":..,"transfer_price":..,"last_updated":".."}`.
pub fn record(
    key: &str,
    register: u32,
    renew: u32,
    transfer: u32,
    updated_ms: i64,
    out: &mut Vec<u8>,
) {
    json::write_str(key, out);
    out.extend_from_slice(b":{\"register_price\":");
    write_opt_cents(cents(register), out);
    out.extend_from_slice(b",\"renew_price\":");
    write_opt_cents(cents(renew), out);
    out.extend_from_slice(b",\"transfer_price\":");
    write_opt_cents(cents(transfer), out);
    out.extend_from_slice(b",\"last_updated\":\"");
    time::write_iso_millis(updated_ms, out);
    out.extend_from_slice(b"\"}");
}
