//! Prices as of a day (`at=YYYY-MM-DD`), computed from the history.
//!
//! For each (TLD, registrar) the state in effect on day `at` is its last change on or
//! before `at`; a state with neither a register nor a renew price (the feed stopped
//! listing the name) is no offer. A TLD is known on `at` when its history has a change
//! on or before `at`. The `last_updated` of a record is the timestamp of the
//! registrar's feed version in effect on `at` ([`version_at`]), as `prices.csv` dates a
//! row by its feed file. A state that is a registrar's current one carries the current
//! offer's terms (promotion, ICANN fee); an older state has none, as the history keeps
//! only prices. Together these are exactly what a snapshot built from the price
//! source as it stood that day answers, which `tests/history_at.rs` checks on the real
//! data.
//!
//! Cost: one TLD's changes are scanned once (they are grouped by registrar and date, so
//! each registrar's state is a binary search in its run), and its offers of that day
//! (at most one per registrar) are sorted by `(register, renew, registrar key)` — the
//! builder's order — per request. That sort of a few dozen small structs is cheaper
//! than storing a ranking for every day of the history.

use super::Sight;
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::render;
use crate::snapshot::schema::{ArchivedTld, ArchivedVersion, NONE, OfferTerms};

/// One registrar's offer for one TLD on a day.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DayOffer<'s> {
    pub registrar: u32,
    pub register: u32,
    pub renew: u32,
    pub transfer: u32,
    /// The current offer's terms when the day's state is the current one (its last
    /// change, with the current prices); the history keeps prices only, so an older
    /// state has none.
    pub terms: OfferTerms<'s>,
}

/// The registrar's feed version in effect on `day`, if its data had started.
pub(crate) fn version_at(
    snap: &ArchivedSnapshotData,
    registrar: usize,
    day: i64,
) -> Option<&ArchivedVersion> {
    let r = &snap.registrars[registrar];
    let first = r.first_version.to_native() as usize;
    let versions = &snap.versions[first..first + r.versions.to_native() as usize];
    let k = versions.partition_point(|v| v.date.to_native() as i64 <= day);
    k.checked_sub(1).map(|k| &versions[k])
}

/// The data date of the snapshot, in days.
pub(crate) fn data_day(snap: &ArchivedSnapshotData) -> i64 {
    snap.data_updated_ms
        .to_native()
        .div_euclid(crate::time::MS_PER_DAY)
}

/// Fills `offers` with the TLD's offers on `day` in the builder's order (sellers by
/// register, renew, registrar key; then renewal-only ones the same way) and returns how
/// many sell it, or `None` when the TLD had no history yet on that day.
pub(crate) fn offers_at<'s>(
    snap: &'s ArchivedSnapshotData,
    t: &ArchivedTld,
    day: i64,
    offers: &mut Vec<DayOffer<'s>>,
) -> Option<usize> {
    offers.clear();
    let first = t.first_change.to_native() as usize;
    let changes = &snap.history[first..first + t.changes.to_native() as usize];
    let mut known = false;
    let mut i = 0;
    while i < changes.len() {
        let r = changes[i].registrar;
        let run_len = changes[i..].iter().take_while(|c| c.registrar == r).count();
        let run = &changes[i..i + run_len];
        i += run_len;
        let k = run.partition_point(|c| c.date.to_native() as i64 <= day);
        let Some(c) = k.checked_sub(1).map(|k| &run[k]) else {
            continue;
        };
        known = true;
        let (register, renew) = (c.register.to_native(), c.renew.to_native());
        if register == NONE && renew == NONE {
            continue;
        }
        let transfer = c.transfer.to_native();
        let terms = match super::row_of(snap, t, r.to_native() as usize) {
            Some((_, o))
                if k == run.len()
                    && (
                        o.register.to_native(),
                        o.renew.to_native(),
                        o.transfer.to_native(),
                    ) == (register, renew, transfer) =>
            {
                snap.terms(o)
            }
            _ => OfferTerms::NONE,
        };
        offers.push(DayOffer {
            registrar: r.to_native(),
            register,
            renew,
            transfer,
            terms,
        });
    }
    if !known {
        return None;
    }
    // Registrar positions are in key order: the builder's key tie-break.
    offers.sort_unstable_by_key(|o| (o.register == NONE, o.register, o.renew, o.registrar));
    Some(offers.iter().take_while(|o| o.register != NONE).count())
}

/// Of the day's `sellers` (ranked first in `offers`), the positions `sight` shows: the
/// offers of registrars whose offer of today it sees (or who have none today: nothing
/// of today is hidden by showing them), at most [`Sight::shown`] of them; then, for a
/// viewer that sees every seller, the renewal-only rows. A registrar it does not see
/// today is left out of every past day too, since its price then may be its price now.
pub(crate) fn seen(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    sight: Sight,
    offers: &[DayOffer],
    sellers: usize,
) -> Vec<usize> {
    let tld = snap.span_str(&t.name);
    let most = sight.shown(tld, sellers);
    let mut out: Vec<usize> = (0..sellers)
        .filter(|&i| super::registrar_seen(snap, t, sight, offers[i].registrar as usize))
        .take(most)
        .collect();
    if sight.every_seller() && sight.price_shown(tld) {
        out.extend(sellers..offers.len());
    }
    out
}

/// The averages of the sellers (register, renew, transfer), as the builder computes them.
pub(crate) fn averages(sellers: &[DayOffer]) -> (u32, u32, u32) {
    (
        render::avg(sellers.iter().map(|o| o.register)),
        render::avg(sellers.iter().map(|o| o.renew)),
        render::avg(sellers.iter().map(|o| o.transfer)),
    )
}

/// The latest feed timestamp among the registrars that offered anything on `day`: the
/// data date a snapshot built that day would carry.
pub(crate) fn data_updated_at(snap: &ArchivedSnapshotData, day: i64) -> i64 {
    (0..snap.registrars.len())
        .filter_map(|r| version_at(snap, r, day))
        .filter(|v| v.live.to_native() > 0)
        .map(|v| v.ms.to_native())
        .max()
        .unwrap_or(0)
}
