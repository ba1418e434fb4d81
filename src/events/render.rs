//! The JSON of an event, written once when the event is recorded and then copied to
//! every reader as it is.
//!
//! ```json
//! {"id":17,"type":"price.changed","timestamp":"2026-11-21T12:00:00.000Z",
//!  "snapshot":{"from":"<32 hex>","to":"<32 hex>"},
//!  "data":{"tld":"com","registrar":"dynadot","old":{"register":9.99,"renew":12.99,"transfer":9.99},
//!          "new":{"register":10.99,"renew":12.99,"transfer":9.99},
//!          "percent_change":{"register":10.01,"renew":0.0,"transfer":0.0}}}
//! ```
//!
//! Prices are dollars written like every other price of the API ([`crate::price`]);
//! `null` is "not offered". `percent_change` (price.changed only) is in percent with
//! two decimals, `null` when either side is not offered or the old price is zero.
//! `ranking.changed` has `previous_registrar` too. `docs/EVENTS.md` has every shape.

use super::diff::{Change, Kind, Prices, percent_hundredths};
use crate::json;
use crate::price::{write_cents, write_triple};
use crate::time::write_iso_millis;

/// Appends the `data` object of `c`.
pub fn write_data(c: &Change<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"tld\":");
    json::write_str(c.tld, out);
    out.extend_from_slice(b",\"registrar\":");
    json::write_opt_str(c.registrar, out);
    if c.kind == Kind::RankingChanged {
        out.extend_from_slice(b",\"previous_registrar\":");
        json::write_opt_str(c.previous_registrar, out);
    }
    out.extend_from_slice(b",\"old\":");
    write_opt_prices(c.old, out);
    out.extend_from_slice(b",\"new\":");
    write_opt_prices(c.new, out);
    if let (Kind::PriceChanged, Some(o), Some(n)) = (c.kind, c.old, c.new) {
        out.extend_from_slice(b",\"percent_change\":{\"register\":");
        write_percent(percent_hundredths(o.register, n.register), out);
        out.extend_from_slice(b",\"renew\":");
        write_percent(percent_hundredths(o.renew, n.renew), out);
        out.extend_from_slice(b",\"transfer\":");
        write_percent(percent_hundredths(o.transfer, n.transfer), out);
        out.push(b'}');
    }
    out.push(b'}');
}

/// Appends `{"type":…,"data":…}`: an event without a log position (`tldsnap diff`).
pub fn write_change(c: &Change<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(c.kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"data\":");
    write_data(c, out);
    out.push(b'}');
}

/// Where an event sits in the log: its id, when it was recorded, the swap it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    /// The event id.
    pub id: u64,
    /// When the swap was recorded, Unix ms.
    pub at_ms: i64,
    /// Content hash of the snapshot swapped out.
    pub from: u128,
    /// Content hash of the snapshot swapped in.
    pub to: u128,
}

/// Appends the whole event: `{"id":…,"type":…,"timestamp":…,"snapshot":{…},"data":{…}}`.
pub fn write_event(env: &Envelope, c: &Change<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"id\":");
    crate::json::write_int(env.id, out);
    out.extend_from_slice(b",\"type\":\"");
    out.extend_from_slice(c.kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"timestamp\":\"");
    write_iso_millis(env.at_ms, out);
    out.extend_from_slice(b"\",\"snapshot\":{\"from\":\"");
    write_hash(env.from, out);
    out.extend_from_slice(b"\",\"to\":\"");
    write_hash(env.to, out);
    out.extend_from_slice(b"\"},\"data\":");
    write_data(c, out);
    out.push(b'}');
}

/// Appends a content hash as 32 lowercase hex digits (as `Header::hash_hex`).
pub fn write_hash(h: u128, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for i in (0..32).rev() {
        out.push(HEX[((h >> (i * 4)) & 0xf) as usize]);
    }
}

fn write_opt_prices(p: Option<Prices>, out: &mut Vec<u8>) {
    match p {
        Some(p) => write_triple(p.register, p.renew, p.transfer, out),
        None => out.extend_from_slice(b"null"),
    }
}

/// Hundredths of a percent as a JSON number (`-5.25`, `10.0`), or `null`.
fn write_percent(h: Option<i64>, out: &mut Vec<u8>) {
    match h {
        Some(h) => {
            if h < 0 {
                out.push(b'-');
            }
            write_cents(h.unsigned_abs(), out);
        }
        None => out.extend_from_slice(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::schema::NONE;

    fn render(c: &Change<'_>) -> serde_json::Value {
        let mut out = Vec::new();
        write_event(
            &Envelope {
                id: 7,
                at_ms: 1_795_262_400_000,
                from: 0xab,
                to: u128::MAX,
            },
            c,
            &mut out,
        );
        serde_json::from_slice(&out).expect("valid JSON")
    }

    #[test]
    fn shapes() {
        let p = |a, b, c| Prices {
            register: a,
            renew: b,
            transfer: c,
        };
        let v = render(&Change {
            kind: Kind::PriceChanged,
            tld: "com",
            registrar: Some("alpha"),
            previous_registrar: None,
            old: Some(p(999, 1299, NONE)),
            new: Some(p(1099, 1299, 800)),
        });
        assert_eq!(
            v,
            serde_json::json!({"id":7,"type":"price.changed","timestamp":"2026-11-21T12:00:00.000Z",
                "snapshot":{"from":"000000000000000000000000000000ab","to":"ffffffffffffffffffffffffffffffff"},
                "data":{"tld":"com","registrar":"alpha",
                    "old":{"register":9.99,"renew":12.99,"transfer":null},
                    "new":{"register":10.99,"renew":12.99,"transfer":8.0},
                    "percent_change":{"register":10.01,"renew":0.0,"transfer":null}}})
        );
        let v = render(&Change {
            kind: Kind::RankingChanged,
            tld: "co.uk",
            registrar: None,
            previous_registrar: Some("bravo"),
            old: Some(p(500, 600, NONE)),
            new: None,
        });
        assert_eq!(
            v["data"],
            serde_json::json!({"tld":"co.uk","registrar":null,"previous_registrar":"bravo",
                "old":{"register":5.0,"renew":6.0,"transfer":null},"new":null})
        );
        let v = render(&Change {
            kind: Kind::PriceChanged,
            tld: "x",
            registrar: Some("a"),
            previous_registrar: None,
            old: Some(p(1000, 1000, 1000)),
            new: Some(p(900, 1, 1000)),
        });
        assert_eq!(
            v["data"]["percent_change"],
            serde_json::json!({"register":-10.0,"renew":-99.9,"transfer":0.0})
        );
    }
}
