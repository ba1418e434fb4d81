//! The canonical writer: a [`Source`] -> `registrars.csv`, `prices.csv`, `history.csv`,
//! `tlds.csv`, `rates.csv`.
//!
//! The CSV text is RFC 4180 (the `csv` crate quotes what needs quoting), with a header
//! row, prices as decimal strings with two decimals, `currency` `USD`, `updated_at` as
//! RFC 3339 with milliseconds and `Z`, history dates as `YYYY-MM-DD`.
//!
//! Publishing: all five files are first written in full to temporary names in the
//! output directory and flushed to disk; only then are they renamed over the real
//! names. A failure before the renames leaves the previous source untouched (and the
//! temporary files removed). The directory is fsynced after the renames so that the
//! new names survive a crash.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use super::{Offer, Source};
use crate::files::{Mode, Pending};
use crate::price::cents_to_decimal;
use crate::time;

/// `registrars.csv`
pub const REGISTRARS_FILE: &str = "registrars.csv";
/// `prices.csv`
pub const PRICES_FILE: &str = "prices.csv";
/// `history.csv`
pub const HISTORY_FILE: &str = "history.csv";
/// `tlds.csv`
pub const TLDS_FILE: &str = "tlds.csv";
/// `rates.csv`
pub const RATES_FILE: &str = crate::source::RATES_FILE;

fn price(c: Option<u32>) -> String {
    c.map(cents_to_decimal).unwrap_or_default()
}

fn offer_fields(o: &Offer) -> [String; 3] {
    [price(o.register), price(o.renew), price(o.transfer)]
}

fn csv_bytes<const N: usize>(header: &[&str], rows: impl Iterator<Item = [String; N]>) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing into a Vec cannot fail; the csv crate only reports I/O errors here.
    let _ = w.write_record(header);
    for row in rows {
        let _ = w.write_record(&row);
    }
    w.into_inner().unwrap_or_default()
}

/// The text of `registrars.csv`.
pub fn registrars_csv(source: &Source) -> Vec<u8> {
    csv_bytes(
        &crate::source::REGISTRARS_COLUMNS,
        source.registrars.iter().map(|r| {
            [
                r.key.to_string(),
                r.name.to_string(),
                r.homepage.to_string(),
            ]
        }),
    )
}

/// The text of `prices.csv`: the seven base columns, then the original-currency
/// columns (empty for a price the feed gave in USD).
pub fn prices_csv(source: &Source) -> Vec<u8> {
    let header: Vec<&str> = crate::source::PRICES_COLUMNS
        .iter()
        .chain(crate::source::PRICES_ORIGINAL_COLUMNS.iter())
        .chain(crate::source::PRICES_TERMS_COLUMNS.iter())
        .copied()
        .collect();
    csv_bytes(
        &header,
        source.prices.iter().map(|p| {
            let [register, renew, transfer] = offer_fields(&p.offer);
            let (currency, [o_register, o_renew, o_transfer], rate_date) = match &p.original {
                Some(o) => (
                    o.currency.clone(),
                    offer_fields(&o.offer),
                    time::date_string(o.rate_day),
                ),
                None => Default::default(),
            };
            [
                p.tld.clone(),
                p.registrar.to_string(),
                register,
                renew,
                transfer,
                "USD".to_string(),
                time::iso_millis(p.updated_ms),
                currency,
                o_register,
                o_renew,
                o_transfer,
                rate_date,
                price(p.terms.regular_register),
                price(p.terms.icann_fee),
                match p.terms.icann_fee {
                    Some(_) => p.terms.icann_fee_included.to_string(),
                    None => String::new(),
                },
                p.terms
                    .register_years
                    .iter()
                    .enumerate()
                    .filter_map(|(i, total)| Some(format!("{}:{}", i + 2, price(Some((*total)?)))))
                    .collect::<Vec<_>>()
                    .join(" "),
                p.terms.promotion.to_string(),
                p.terms
                    .coupon
                    .as_ref()
                    .map_or_else(String::new, |c| c.code.clone()),
                price(p.terms.coupon.as_ref().map(|c| c.register)),
                price(p.terms.member[0]),
                price(p.terms.member[1]),
                price(p.terms.member[2]),
            ]
        }),
    )
}

/// The text of `history.csv`.
pub fn history_csv(source: &Source) -> Vec<u8> {
    csv_bytes(
        &crate::source::HISTORY_COLUMNS,
        source.history.iter().map(|h| {
            let [register, renew, transfer] = offer_fields(&h.offer);
            [
                time::date_string(h.day),
                h.tld.clone(),
                h.registrar.to_string(),
                register,
                renew,
                transfer,
            ]
        }),
    )
}

/// The text of `tlds.csv`.
pub fn tlds_csv(source: &Source) -> Vec<u8> {
    csv_bytes(
        &crate::source::TLDS_COLUMNS,
        source
            .tlds
            .iter()
            .map(|t| [t.tld.clone(), t.kind.clone(), t.manager.clone()]),
    )
}

/// The text of `rates.csv`.
pub fn rates_csv(source: &Source) -> Vec<u8> {
    csv_bytes(
        &crate::source::RATES_COLUMNS,
        source.rates.iter().map(|r| {
            [
                r.currency.clone(),
                r.decimal(),
                time::date_string(i64::from(r.date)),
            ]
        }),
    )
}

/// Writes the five files into `dir` (created if missing), all or nothing.
pub fn write_source(dir: &Path, source: &Source) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let files = [
        (REGISTRARS_FILE, registrars_csv(source)),
        (PRICES_FILE, prices_csv(source)),
        (HISTORY_FILE, history_csv(source)),
        (TLDS_FILE, tlds_csv(source)),
        (RATES_FILE, rates_csv(source)),
    ];
    // Every file written and synced under a temporary name first (the one atomic-write
    // helper, `files::Pending`); only then is each renamed into place, so a failure
    // leaves the previous source whole and no temporary file behind.
    let mut staged = Vec::with_capacity(files.len());
    for (name, bytes) in &files {
        let mut pending = Pending::create(&dir.join(name), Mode::Shared)?;
        pending.write_all(bytes)?;
        pending.sync()?;
        staged.push(pending);
    }
    for pending in staged {
        pending.publish()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{HistoryRow, Original, PriceRow, Registrar, Terms};
    use super::*;

    fn source() -> Source {
        Source {
            registrars: vec![Registrar {
                key: "route53",
                name: "Amazon Route 53",
                homepage: "https://a, b",
            }],
            prices: vec![
                PriceRow {
                    tld: "co.uk".into(),
                    registrar: "route53",
                    offer: Offer {
                        register: None,
                        renew: Some(1250),
                        transfer: Some(0),
                    },
                    original: None,
                    updated_ms: 1_767_284_869_638,
                    terms: Terms::default(),
                },
                PriceRow {
                    tld: "uk".into(),
                    registrar: "route53",
                    offer: Offer {
                        register: Some(1233),
                        renew: Some(1233),
                        transfer: Some(0),
                    },
                    original: Some(Original {
                        currency: "GBP".into(),
                        offer: Offer {
                            register: Some(917),
                            renew: Some(917),
                            transfer: Some(0),
                        },
                        price_day: 20_000,
                        rate_day: 19_999,
                    }),
                    updated_ms: 1_767_284_869_638,
                    terms: Terms {
                        regular_register: Some(1499),
                        icann_fee: Some(20),
                        icann_fee_included: false,
                        register_years: [
                            Some(2466),
                            None,
                            None,
                            None,
                            None,
                            None,
                            None,
                            None,
                            Some(12330),
                        ],
                        promotion: true,
                        coupon: Some(crate::source::Coupon {
                            code: "SAVE1".into(),
                            register: 1133,
                        }),
                        member: [Some(1100), Some(1150), None],
                    },
                },
            ],
            history: vec![HistoryRow {
                day: 20_000,
                tld: "co.uk".into(),
                registrar: "route53",
                offer: Offer::default(),
            }],
            tlds: vec![super::super::tlds::TldInfo {
                tld: "uk".into(),
                kind: "country-code".into(),
                manager: "Nominet UK".into(),
            }],
            rates: vec![
                crate::source::RateRow {
                    currency: "EUR".into(),
                    mantissa: 1,
                    scale: 0,
                    date: 20_556,
                },
                crate::source::RateRow {
                    currency: "USD".into(),
                    mantissa: 11_690,
                    scale: 4,
                    date: 20_556,
                },
            ],
        }
    }

    #[test]
    fn csv_text() {
        let s = source();
        // Rates as the ECB writes them: trailing zeros kept, EUR at 1.
        assert_eq!(
            String::from_utf8(rates_csv(&s)).unwrap(),
            "currency,per_eur,date\nEUR,1,2026-04-13\nUSD,1.1690,2026-04-13\n"
        );
        let read = crate::source::read_rates(&rates_csv(&s)[..]).unwrap();
        assert_eq!(read, s.rates);
        assert_eq!(
            String::from_utf8(registrars_csv(&s)).unwrap(),
            "key,name,homepage\nroute53,Amazon Route 53,\"https://a, b\"\n"
        );
        assert_eq!(
            String::from_utf8(prices_csv(&s)).unwrap(),
            "tld,registrar,register,renew,transfer,currency,updated_at,original_currency,original_register,original_renew,original_transfer,rate_date,regular_register,icann_fee,icann_fee_included,register_years,promotion,coupon_code,coupon_register,member_register,member_renew,member_transfer\n\
             co.uk,route53,,12.50,0.00,USD,2026-01-01T16:27:49.638Z,,,,,,,,,,false,,,,,\n\
             uk,route53,12.33,12.33,0.00,USD,2026-01-01T16:27:49.638Z,GBP,9.17,9.17,0.00,2024-10-03,14.99,0.20,false,2:24.66 10:123.30,true,SAVE1,11.33,11.00,11.50,\n"
        );
        assert_eq!(
            String::from_utf8(history_csv(&s)).unwrap(),
            "date,tld,registrar,register,renew,transfer\n2024-10-04,co.uk,route53,,,\n"
        );
        assert_eq!(
            String::from_utf8(tlds_csv(&s)).unwrap(),
            "tld,type,manager\nuk,country-code,Nominet UK\n"
        );
    }
}
