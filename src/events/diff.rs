//! The changes between two snapshots.
//!
//! Both snapshots hold their TLDs sorted by name and, per TLD, a by-registrar index
//! sorted by registrar position. Registrars are stored sorted by key, so position order
//! is key order inside each snapshot; positions themselves differ between snapshots (a
//! registrar added before `dynadot` shifts it), so the merge compares keys, never
//! positions: one merge of the two registrar arrays first gives every registrar its
//! rank in the combined key order, and the per-offer merge compares those integers.
//! One pass over the TLDs and, per TLD present in both, one pass over both
//! index runs: time proportional to the two snapshots' sizes, no hashing, no sorting,
//! no allocation beyond the output and the two rank arrays (one `u32` per registrar).
//!
//! Order of the output: by TLD name; inside a TLD, the offer events by registrar key,
//! then the TLD's `ranking.changed`, if any.

use std::cmp::Ordering;
use std::fmt;

use crate::price::offered;
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::{ArchivedOffer, ArchivedRegistrarOffer, ArchivedTld};

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

/// A registrar's three prices for a TLD, in cents; [`crate::price::NOT_OFFERED`] is "not
/// offered".
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
    let (rank_old, rank_new) = ranks(old, new);
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
        diff_tld(
            Side::new(old, left, &rank_old),
            Side::new(new, right, &rank_new),
            out,
        );
    }
}

/// Each registrar's place in the merged key order of both snapshots: equal ranks are
/// the same key, and rank order is key order. One merge of the two sorted registrar
/// arrays, so that the per-offer merge compares integers, not strings.
fn ranks(old: &ArchivedSnapshotData, new: &ArchivedSnapshotData) -> (Vec<u32>, Vec<u32>) {
    fn key(d: &ArchivedSnapshotData, i: usize) -> &[u8] {
        d.span(&d.registrars[i].key)
    }
    let (n, m) = (old.registrars.len(), new.registrars.len());
    let (mut ro, mut rn) = (vec![0; n], vec![0; m]);
    let (mut i, mut j, mut rank) = (0, 0, 0u32);
    while i < n || j < m {
        let order = match (i < n, j < m) {
            (true, true) => key(old, i).cmp(key(new, j)),
            (true, false) => Ordering::Less,
            _ => Ordering::Greater,
        };
        if order != Ordering::Greater {
            ro[i] = rank;
            i += 1;
        }
        if order != Ordering::Less {
            rn[j] = rank;
            j += 1;
        }
        rank += 1;
    }
    (ro, rn)
}

/// One snapshot's view of one TLD (empty when the snapshot does not have it).
struct Side<'a, 'r> {
    data: &'a ArchivedSnapshotData,
    tld: Option<&'a ArchivedTld>,
    index: &'a [ArchivedRegistrarOffer],
    rank: &'r [u32],
}

impl<'a, 'r> Side<'a, 'r> {
    fn new(
        data: &'a ArchivedSnapshotData,
        tld: Option<&'a ArchivedTld>,
        rank: &'r [u32],
    ) -> Side<'a, 'r> {
        let index = tld.map_or(&[][..], |t| {
            let first = t.first_offer.to_native() as usize;
            &data.by_registrar[first..first + t.rows.to_native() as usize]
        });
        Side {
            data,
            tld,
            index,
            rank,
        }
    }

    /// The merged rank of the registrar of index entry `k`, if there is one.
    fn rank_at(&self, k: usize) -> Option<u32> {
        let e = self.index.get(k)?;
        Some(self.rank[e.registrar.to_native() as usize])
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

fn diff_tld<'a>(old: Side<'a, '_>, new: Side<'a, '_>, out: &mut Vec<Change<'a>>) {
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
    loop {
        let (ra, rb) = (old.rank_at(i), new.rank_at(j));
        match (ra, rb) {
            (None, None) => break,
            (Some(x), Some(y)) if x == y => {
                let (a, b) = (&old.index[i], &new.index[j]);
                let (p, q) = (Prices::of(old.offer(a)), Prices::of(new.offer(b)));
                if p != q {
                    let key = new.key(b.registrar.to_native());
                    out.push(change(Kind::PriceChanged, key, Some(p), Some(q)));
                }
                i += 1;
                j += 1;
            }
            (Some(x), y) if y.is_none_or(|y| x < y) => {
                let a = &old.index[i];
                let key = old.key(a.registrar.to_native());
                out.push(change(
                    Kind::OfferRemoved,
                    key,
                    Some(Prices::of(old.offer(a))),
                    None,
                ));
                i += 1;
            }
            _ => {
                let b = &new.index[j];
                let key = new.key(b.registrar.to_native());
                out.push(change(
                    Kind::OfferAdded,
                    key,
                    None,
                    Some(Prices::of(new.offer(b))),
                ));
                j += 1;
            }
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
    let (old, new) = (offered(old)?, offered(new)?);
    if old == 0 {
        return None;
    }
    let (old, new) = (old as i64, new as i64);
    let num = (new - old) * 10_000;
    let den = old;
    let q = (num.abs() + den / 2) / den;
    Some(if num < 0 { -q } else { q })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::price::NOT_OFFERED as NONE;

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
