//! The changes between two snapshots.
//!
//! Both snapshots hold their TLDs sorted by name and, per TLD, a by-registrar index
//! sorted by registrar position. Registrars are stored sorted by key, so position order
//! is key order inside each snapshot; positions themselves differ between snapshots (a
//! registrar added before `dynadot` shifts it), so the merge compares keys, never
//! positions. One pass over the TLDs and, per TLD present in both, one pass over both
//! index runs: time proportional to the two snapshots' sizes, no hashing, no sorting,
//! no allocation beyond the output.
//!
//! Order of the output: by TLD name; inside a TLD, the offer events by registrar key,
//! then the TLD's `ranking.changed`, if any.

use std::cmp::Ordering;
use std::fmt;

use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::{ArchivedOffer, ArchivedRegistrarOffer, ArchivedTld, NONE};

/// What kind of change an event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A registrar's register, renew or transfer price for a TLD changed.
    PriceChanged,
    /// A registrar has a price row for a TLD it had none for.
    OfferAdded,
    /// A registrar no longer has a price row for a TLD.
    OfferRemoved,
    /// The cheapest registrar of a TLD (rank 1 of `cheapest`) is not the same.
    RankingChanged,
}

impl Kind {
    /// Every kind, in the order of their names in the docs.
    pub const ALL: [Kind; 4] = [
        Kind::PriceChanged,
        Kind::OfferAdded,
        Kind::OfferRemoved,
        Kind::RankingChanged,
    ];

    /// The event type as it appears in payloads and the `types` filter.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::PriceChanged => "price.changed",
            Kind::OfferAdded => "offer.added",
            Kind::OfferRemoved => "offer.removed",
            Kind::RankingChanged => "ranking.changed",
        }
    }

    /// The kind named `s` (exact, lowercase).
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// A bit for sets of kinds ([`crate::events::Filter`]).
    pub fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A registrar's three prices for a TLD, in cents; [`NONE`] is "not offered".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prices {
    /// Register price.
    pub register: u32,
    /// Renew price.
    pub renew: u32,
    /// Transfer price.
    pub transfer: u32,
}

impl Prices {
    fn of(o: &ArchivedOffer) -> Prices {
        Prices {
            register: o.register.to_native(),
            renew: o.renew.to_native(),
            transfer: o.transfer.to_native(),
        }
    }

    /// Whether no price is offered at all.
    pub fn is_empty(&self) -> bool {
        self.register == NONE && self.renew == NONE && self.transfer == NONE
    }
}

/// One change between two snapshots. Names borrow from the snapshots.
///
/// | kind | `registrar` | `previous_registrar` | `old` | `new` |
/// |---|---|---|---|---|
/// | `price.changed` | the registrar | — | its old prices | its new prices |
/// | `offer.added` | the registrar | — | — | its prices |
/// | `offer.removed` | the registrar | — | its last prices | — |
/// | `ranking.changed` | the new cheapest (— if nobody sells it now) | the old cheapest (— if nobody sold it) | the old cheapest's prices | the new cheapest's prices |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change<'a> {
    /// What changed.
    pub kind: Kind,
    /// Canonical TLD name.
    pub tld: &'a str,
    /// The registrar key (see the table).
    pub registrar: Option<&'a str>,
    /// The previous cheapest registrar (`ranking.changed` only).
    pub previous_registrar: Option<&'a str>,
    /// Prices before.
    pub old: Option<Prices>,
    /// Prices after.
    pub new: Option<Prices>,
}

/// Appends to `out` every change from `old` to `new`, in the order of the module docs.
pub fn diff<'a>(
    old: &'a ArchivedSnapshotData,
    new: &'a ArchivedSnapshotData,
    out: &mut Vec<Change<'a>>,
) {
    let (mut i, mut j) = (0, 0);
    let (a, b) = (&old.tlds, &new.tlds);
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => old.span(&x.name).cmp(new.span(&y.name)),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        let (left, right) = match order {
            Ordering::Less => (Some(&a[i]), None),
            Ordering::Greater => (None, Some(&b[j])),
            Ordering::Equal => (Some(&a[i]), Some(&b[j])),
        };
        i += usize::from(left.is_some());
        j += usize::from(right.is_some());
        diff_tld(Side::new(old, left), Side::new(new, right), out);
    }
}

/// One snapshot's view of one TLD (empty when the snapshot does not have it).
struct Side<'a> {
    data: &'a ArchivedSnapshotData,
    tld: Option<&'a ArchivedTld>,
    index: &'a [ArchivedRegistrarOffer],
}

impl<'a> Side<'a> {
    fn new(data: &'a ArchivedSnapshotData, tld: Option<&'a ArchivedTld>) -> Side<'a> {
        let index = tld.map_or(&[][..], |t| {
            let first = t.first_offer.to_native() as usize;
            &data.by_registrar[first..first + t.rows.to_native() as usize]
        });
        Side { data, tld, index }
    }

    fn name(&self) -> Option<&'a str> {
        self.tld.map(|t| self.data.span_str(&t.name))
    }

    fn key(&self, registrar: u32) -> &'a str {
        self.data
            .span_str(&self.data.registrars[registrar as usize].key)
    }

    fn offer(&self, e: &ArchivedRegistrarOffer) -> &'a ArchivedOffer {
        &self.data.offers[e.offer.to_native() as usize]
    }

    /// The cheapest seller: the first offer of the group, when it has sellers.
    fn cheapest(&self) -> Option<(&'a str, Prices)> {
        let t = self.tld.filter(|t| t.sellers.to_native() > 0)?;
        let o = &self.data.offers[t.first_offer.to_native() as usize];
        Some((self.key(o.registrar.to_native()), Prices::of(o)))
    }
}

fn diff_tld<'a>(old: Side<'a>, new: Side<'a>, out: &mut Vec<Change<'a>>) {
    let Some(tld) = new.name().or(old.name()) else {
        return;
    };
    let change = |kind, registrar, old, new| Change {
        kind,
        tld,
        registrar: Some(registrar),
        previous_registrar: None,
        old,
        new,
    };
    let (mut i, mut j) = (0, 0);
    while i < old.index.len() || j < new.index.len() {
        let ka = old.index.get(i).map(|e| old.key(e.registrar.to_native()));
        let kb = new.index.get(j).map(|e| new.key(e.registrar.to_native()));
        match (ka, kb) {
            (Some(x), Some(y)) if x == y => {
                let (p, q) = (
                    Prices::of(old.offer(&old.index[i])),
                    Prices::of(new.offer(&new.index[j])),
                );
                if p != q {
                    out.push(change(Kind::PriceChanged, y, Some(p), Some(q)));
                }
                i += 1;
                j += 1;
            }
            (Some(x), y) if y.is_none_or(|y| x < y) => {
                let p = Prices::of(old.offer(&old.index[i]));
                out.push(change(Kind::OfferRemoved, x, Some(p), None));
                i += 1;
            }
            (_, Some(y)) => {
                let q = Prices::of(new.offer(&new.index[j]));
                out.push(change(Kind::OfferAdded, y, None, Some(q)));
                j += 1;
            }
            (_, None) => unreachable!("the loop runs while one side has entries"),
        }
    }
    let (was, is) = (old.cheapest(), new.cheapest());
    if was.map(|w| w.0) != is.map(|n| n.0) {
        out.push(Change {
            kind: Kind::RankingChanged,
            tld,
            registrar: is.map(|n| n.0),
            previous_registrar: was.map(|w| w.0),
            old: was.map(|w| w.1),
            new: is.map(|n| n.1),
        });
    }
}

/// The change of a price in hundredths of a percent, rounded half away from zero;
/// `None` when either side is not offered or the old price is zero.
pub fn percent_hundredths(old: u32, new: u32) -> Option<i64> {
    if old == NONE || new == NONE || old == 0 {
        return None;
    }
    let num = (i64::from(new) - i64::from(old)) * 10_000;
    let den = i64::from(old);
    let q = (num.abs() + den / 2) / den;
    Some(if num < 0 { -q } else { q })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_rounds_half_away_from_zero() {
        assert_eq!(percent_hundredths(1000, 1100), Some(1000));
        assert_eq!(percent_hundredths(1000, 900), Some(-1000));
        assert_eq!(percent_hundredths(300, 301), Some(33)); // 0.333..%
        assert_eq!(percent_hundredths(300, 299), Some(-33));
        assert_eq!(percent_hundredths(200, 201), Some(50)); // exactly 0.5%
        assert_eq!(percent_hundredths(999, 1), Some(-9990));
        assert_eq!(percent_hundredths(0, 5), None);
        assert_eq!(percent_hundredths(NONE, 5), None);
        assert_eq!(percent_hundredths(5, NONE), None);
        assert_eq!(percent_hundredths(u32::MAX - 1, 1), Some(-10_000));
    }

    #[test]
    fn kinds_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        assert_eq!(Kind::parse("price"), None);
    }
}
