//! Price history: the dated versions of one feed -> one row per observed change.
//!
//! Rules:
//! - Versions are taken in time order and dated by their UTC day. When several versions
//!   fall on one day, the last one of that day is the state of the day (a change that
//!   was undone the same day is not a change).
//! - The first day a (tld, registrar) is seen with an offer gives a row; after that,
//!   a row is written on each day its (register, renew, transfer) differ from the
//!   previous day's.
//! - A disappearance (the feed stops listing the name, or lists it as not offered) is a
//!   change too: it is written as a row with all three prices empty, dated by the first
//!   version without it. A later reappearance is a change again. Without that row the
//!   history would keep showing the last price of a name the registrar no longer sells.

use std::collections::{BTreeMap, BTreeSet};

use super::{HistoryRow, Offer};

/// The state of a feed on one day: canonical TLD -> offer (only kept rows).
#[derive(Debug, Clone, Default)]
pub struct Day {
    /// Days since 1970-01-01, UTC.
    pub day: i64,
    /// The offers of that day.
    pub rows: BTreeMap<String, Offer>,
}

/// Turns one registrar's versions (already in time order) into change rows, sorted by
/// (tld, day).
pub fn changes(registrar: &'static str, versions: Vec<Day>) -> Vec<HistoryRow> {
    // Last version of each day wins.
    let mut days: Vec<Day> = Vec::with_capacity(versions.len());
    for v in versions {
        match days.last_mut() {
            Some(last) if last.day == v.day => *last = v,
            _ => days.push(v),
        }
    }
    let names: BTreeSet<&String> = days.iter().flat_map(|d| d.rows.keys()).collect();
    let mut out = Vec::new();
    for name in names {
        let mut previous: Option<Offer> = None;
        for d in &days {
            let now = d.rows.get(name).copied();
            if now == previous {
                continue;
            }
            out.push(HistoryRow {
                day: d.day,
                tld: name.clone(),
                registrar,
                offer: now.unwrap_or_default(),
            });
            previous = now;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(r: u32) -> Offer {
        Offer {
            register: Some(r),
            renew: Some(r),
            transfer: None,
        }
    }

    fn day(day: i64, rows: &[(&str, Offer)]) -> Day {
        Day {
            day,
            rows: rows.iter().map(|(k, o)| (k.to_string(), *o)).collect(),
        }
    }

    fn summary(rows: &[HistoryRow]) -> Vec<(String, i64, Option<u32>)> {
        rows.iter()
            .map(|r| (r.tld.clone(), r.day, r.offer.register))
            .collect()
    }

    #[test]
    fn first_sight_changes_and_disappearance() {
        let rows = changes(
            "x",
            vec![
                day(1, &[("com", offer(100)), ("net", offer(50))]),
                day(2, &[("com", offer(100)), ("net", offer(50))]),
                day(3, &[("com", offer(120)), ("org", offer(70))]),
                day(
                    4,
                    &[("com", offer(120)), ("net", offer(50)), ("org", offer(70))],
                ),
            ],
        );
        assert_eq!(
            summary(&rows),
            vec![
                ("com".into(), 1, Some(100)),
                ("com".into(), 3, Some(120)),
                ("net".into(), 1, Some(50)),
                ("net".into(), 3, None),
                ("net".into(), 4, Some(50)),
                ("org".into(), 3, Some(70)),
            ]
        );
        assert_eq!(rows[3].offer, Offer::default());
    }

    #[test]
    fn the_last_version_of_a_day_wins() {
        let rows = changes(
            "x",
            vec![
                day(1, &[("com", offer(100))]),
                day(2, &[("com", offer(999))]),
                day(2, &[("com", offer(100))]),
                day(3, &[("com", offer(100))]),
            ],
        );
        assert_eq!(summary(&rows), vec![("com".into(), 1, Some(100))]);
    }

    #[test]
    fn a_transfer_price_appearing_is_a_change() {
        let with = Offer {
            transfer: Some(5),
            ..offer(100)
        };
        let rows = changes(
            "x",
            vec![day(1, &[("ng", offer(100))]), day(2, &[("ng", with)])],
        );
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].offer.transfer, Some(5));
    }
}
