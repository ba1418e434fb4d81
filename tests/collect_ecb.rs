//! `tldsnap collect` with an `[ecb]` table, on the real binary, against a stand-in of the
//! ECB on 127.0.0.1:0 that answers the shipped rate table's own rows as the ECB's XML.
//! The table given to the collector lacks its newest rows, so the collector must add
//! them back: the merged table must be the shipped one byte for byte. Each refused
//! answer is quarantined with a report and leaves the table byte for byte as it was.

mod collect_support;

use std::path::{Path, PathBuf};
use std::process::Output;

use collect_support::{
    ECB_90D, ECB_HIST, StandIn, Tmp, config, ecb_stand_in, ecb_xml, fx_dir, provenance, rate_lines,
    read, text,
};

fn ecb_config(tmp: &Tmp, server: &StandIn) -> PathBuf {
    config(
        tmp,
        &format!(
            "{}[ecb]\nbase_url = \"{}\"\nmin_interval_ms = 0\n",
            collect_support::FAST,
            server.base()
        ),
    )
}

fn collect(tmp: &Tmp, cfg: &Path, fx: &Path, extra: &[&str]) -> Output {
    let feeds = tmp.0.join("feeds");
    std::fs::create_dir_all(&feeds).unwrap();
    let mut args = vec!["--fx", fx.to_str().unwrap()];
    args.extend_from_slice(extra);
    collect_support::collect(cfg, &feeds, &args)
}

fn table(fx: &Path) -> Vec<u8> {
    std::fs::read(fx.join("eurofxref-hist.csv")).unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn the_newest_day_is_added_back_byte_for_byte_then_seen_again() {
    let tmp = Tmp::new("ecb-new");
    let (header, rows) = rate_lines();
    let answer = ecb_xml(&header, &rows[..64]);
    let server = ecb_stand_in(answer.clone(), Vec::new());
    let cfg = ecb_config(&tmp, &server);
    let fx = fx_dir(&tmp, 1);
    assert_ne!(table(&fx), read(collect_support::RATES));

    let o = collect(&tmp, &cfg, &fx, &[]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("ecb: 1 new day of rates added to fx/eurofxref-hist.csv (newest 2026-04-13), answer kept as fx/collected/ecb_"),
        "{t}"
    );
    assert_eq!(
        table(&fx),
        read(collect_support::RATES),
        "the merged table is the shipped one"
    );
    let kept: Vec<String> = names(&fx.join("collected"))
        .into_iter()
        .filter(|n| n.ends_with(".xml"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::read(fx.join("collected").join(&kept[0])).unwrap(),
        answer
    );
    let prov = provenance(&tmp.0, "fx", "ecb");
    assert_eq!(prov.len(), 1, "{prov:?}");
    assert_eq!(prov[0]["outcome"], "new");
    assert_eq!(prov[0]["version"], kept[0].as_str());
    assert_eq!(prov[0]["added"], serde_json::json!(["2026-04-13"]));
    assert_eq!(prov[0]["newest_day"], "2026-04-13");
    assert_eq!(prov[0]["requests"][0]["status"], 200);
    assert!(
        prov[0]["requests"][0]["url"]
            .as_str()
            .unwrap()
            .ends_with(ECB_90D),
        "{prov:?}"
    );
    let seen = server.requests();
    assert_eq!(seen.len(), 1, "only the 90 days are fetched");
    assert_eq!(seen[0].method, "GET");

    // The same answer again: nothing new, recorded as seen again.
    let o = collect(&tmp, &cfg, &fx, &[]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("ecb: unchanged, every day answered is in fx/eurofxref-hist.csv already (newest 2026-04-13)"),
        "{t}"
    );
    assert_eq!(table(&fx), read(collect_support::RATES));
    let prov = provenance(&tmp.0, "fx", "ecb");
    assert_eq!(prov.len(), 2);
    assert_eq!(prov[1]["outcome"], "unchanged");
    assert!(prov[1].get("version").is_none(), "{prov:?}");
}

#[test]
fn a_table_older_than_the_90_days_takes_the_whole_history() {
    let tmp = Tmp::new("ecb-history");
    let (header, rows) = rate_lines();
    // The 90 days start after the table's newest day; the history reaches back.
    let server = ecb_stand_in(ecb_xml(&header, &rows[..2]), ecb_xml(&header, &rows[..200]));
    let cfg = ecb_config(&tmp, &server);
    let fx = fx_dir(&tmp, 5);
    let o = collect(&tmp, &cfg, &fx, &[]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("ecb: 5 new days of rates added"), "{t}");
    assert_eq!(table(&fx), read(collect_support::RATES));
    let paths: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.path().to_string())
        .collect();
    assert_eq!(paths, [ECB_90D, ECB_HIST]);
    let prov = provenance(&tmp.0, "fx", "ecb");
    assert!(
        prov[0]["requests"][0]["url"]
            .as_str()
            .unwrap()
            .ends_with(ECB_HIST),
        "{prov:?}"
    );
}

/// `rows` (newest first) with `f` applied to the row dated `date`.
fn edit(rows: &[String], date: &str, f: impl Fn(&str) -> String) -> Vec<String> {
    rows.iter()
        .map(|r| if r.starts_with(date) { f(r) } else { r.clone() })
        .collect()
}

/// The row with the value of column `col` (1 = USD) set to `v`.
fn set(row: &str, col: usize, v: &str) -> String {
    let mut f: Vec<String> = row.split(',').map(str::to_string).collect();
    f[col] = v.to_string();
    f.join(",")
}

/// What is refused, the answer, how many of the table's newest rows are dropped, a
/// day removed from the table, and the rule the report names.
type Case<'a> = (&'a str, Vec<u8>, usize, Option<&'a str>, &'a str);

#[test]
fn each_refused_answer_is_quarantined_and_the_table_stays() {
    let (header, rows) = rate_lines();
    let last = &rows[..64];
    let usd = |v: &'static str| move |r: &str| set(r, 1, v);
    let xml = |rows: &[String]| ecb_xml(&header, rows);
    let future = {
        let mut v = vec![set(&rows[0], 0, "2099-01-05")];
        v.extend_from_slice(last);
        v
    };
    let cases: Vec<Case> = vec![
        (
            "not XML",
            br#"{"rates": {"USD": 1.17}}"#.to_vec(),
            1,
            None,
            "parses completely: not the ECB's reference rate XML",
        ),
        (
            "no USD",
            xml(&edit(last, "2026-04-13", |r| set(r, 1, "N/A"))),
            1,
            None,
            "quotes USD: 1 days have no USD rate",
        ),
        (
            "a rate of zero",
            xml(&edit(last, "2026-04-13", usd("0.0000"))),
            1,
            None,
            "parses completely: 1 entries are not of the expected shape",
        ),
        (
            "a rate that is not a number",
            xml(&edit(last, "2026-04-13", usd("1.1684x"))),
            1,
            None,
            "parses completely: 1 entries are not of the expected shape",
        ),
        (
            "a day in the future",
            xml(&future),
            0,
            None,
            "no future day: 1 days are after today",
        ),
        (
            "an older day missing from the table",
            xml(last),
            0,
            Some("2026-04-09"),
            "fills no gap: 1 days older than the table's newest day 2026-04-13 are missing from the table",
        ),
        (
            "a day that disagrees with the table",
            xml(&edit(last, "2026-04-10", usd("1.1712"))),
            1,
            None,
            "agrees with the table: 1 days the table has differ in the answer",
        ),
        (
            "a jump",
            xml(&edit(last, "2026-04-13", usd("3.5052"))),
            1,
            None,
            "no big jump: 1 rates moved by a factor above 2 from one day to the next",
        ),
        (
            "a currency the table has no column for",
            xml(last).replace_str(
                "<Cube currency=\"USD\" rate=\"1.16840\"/>",
                "<Cube currency=\"USD\" rate=\"1.16840\"/><Cube currency=\"XAU\" rate=\"0.0003\"/>",
            ),
            1,
            None,
            "known currencies: 1 currencies are not columns of eurofxref-hist.csv",
        ),
    ];
    for (what, answer, drop, hole, rule) in cases {
        let tmp = Tmp::new("ecb-refused");
        let server = ecb_stand_in(answer.clone(), Vec::new());
        let cfg = ecb_config(&tmp, &server);
        let fx = fx_dir(&tmp, drop);
        if let Some(day) = hole {
            let t = String::from_utf8(table(&fx)).unwrap();
            let t: String = t
                .split_inclusive('\n')
                .filter(|l| !l.starts_with(day))
                .collect();
            std::fs::write(fx.join("eurofxref-hist.csv"), t).unwrap();
        }
        let before = table(&fx);
        let o = collect(&tmp, &cfg, &fx, &[]);
        let t = text(&o);
        assert!(!o.status.success(), "{what}: {t}");
        assert!(
            t.contains("ecb: quarantined fx/quarantine/ecb_"),
            "{what}: {t}"
        );
        assert!(t.contains(rule), "{what}: {rule:?} not in {t}");
        assert_eq!(table(&fx), before, "{what}: the table changed");
        let q = names(&fx.join("quarantine"));
        assert_eq!(q.len(), 2, "{what}: {q:?}");
        assert_eq!(
            std::fs::read(fx.join("quarantine").join(&q[0])).unwrap(),
            answer,
            "{what}"
        );
        let report = std::fs::read_to_string(fx.join("quarantine").join(&q[1])).unwrap();
        assert!(
            report.contains(&format!("Rule failed: {rule}")),
            "{what}: {report}"
        );
        assert!(report.contains("the rate table is unchanged"), "{what}");
        let prov = provenance(&tmp.0, "fx", "ecb");
        assert_eq!(prov.last().unwrap()["outcome"], "quarantined", "{what}");
        assert!(
            !fx.join("collected").join(&q[0]).exists(),
            "{what}: the refused answer is not a collected version"
        );
    }
}

/// Byte-string replace for the fixtures.
trait ReplaceStr {
    fn replace_str(self, from: &str, to: &str) -> Vec<u8>;
}

impl ReplaceStr for Vec<u8> {
    fn replace_str(self, from: &str, to: &str) -> Vec<u8> {
        let s = String::from_utf8(self).unwrap();
        assert!(s.contains(from), "{from} not in the fixture");
        s.replacen(from, to, 1).into_bytes()
    }
}

#[test]
fn a_disagreeing_day_is_taken_only_when_accepted() {
    let tmp = Tmp::new("ecb-accept");
    let (header, rows) = rate_lines();
    let answer = ecb_xml(
        &header,
        &edit(&rows[..64], "2026-04-10", |r| set(r, 1, "1.1712")),
    );
    let server = ecb_stand_in(answer, Vec::new());
    let cfg = ecb_config(&tmp, &server);
    let fx = fx_dir(&tmp, 1);
    let o = collect(&tmp, &cfg, &fx, &[]);
    assert!(!o.status.success(), "{}", text(&o));

    let o = collect(&tmp, &cfg, &fx, &["--accept", "ecb"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("ecb: accepted fx/collected/ecb_"), "{t}");
    assert_eq!(server.requests().len(), 1, "accepting fetches nothing");
    let expected: String = String::from_utf8(read(collect_support::RATES))
        .unwrap()
        .split_inclusive('\n')
        .map(|l| {
            if l.starts_with("2026-04-10,") {
                l.replacen("2026-04-10,1.1711,", "2026-04-10,1.1712,", 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_eq!(String::from_utf8(table(&fx)).unwrap(), expected);
    assert!(names(&fx.join("quarantine")).is_empty());
    let prov = provenance(&tmp.0, "fx", "ecb");
    let last = prov.last().unwrap();
    assert_eq!(last["outcome"], "accepted");
    assert_eq!(last["added"], serde_json::json!(["2026-04-13"]));
    assert_eq!(last["replaced"], serde_json::json!(["2026-04-10"]));

    // Nothing left to accept.
    let o = collect(&tmp, &cfg, &fx, &["--accept", "ecb"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("nothing quarantined to accept"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_failed_fetch_is_recorded_and_the_table_stays() {
    let tmp = Tmp::new("ecb-failed");
    let server = StandIn::start(|_, _| {
        collect_support::Reply::Full(503, vec![], "text/plain", b"maintenance".to_vec())
    });
    let cfg = ecb_config(&tmp, &server);
    let fx = fx_dir(&tmp, 1);
    let before = table(&fx);
    let o = collect(&tmp, &cfg, &fx, &[]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("ecb: failed: HTTP 503"), "{t}");
    assert_eq!(table(&fx), before);
    let prov = provenance(&tmp.0, "fx", "ecb");
    assert_eq!(prov[0]["outcome"], "failed");
}
