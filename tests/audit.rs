//! Portfolio audit, bulk lookup and domain search on the shipped real data, checked
//! against an independent recomputation from `snapshots/source/*.csv` (read here with a
//! plain CSV reader, prices parsed here, the documented rules of `docs/AUDIT.md` applied
//! here), for a portfolio of several hundred real-looking names: second-level suffixes,
//! IDNs, invalid names, unknown TLDs, duplicates, renewal traps, stated prices and dates.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde_json::Value;
use tldsnap::access::plans::{Plans, is_free_tld};
use tldsnap::audit::portfolio::{self, InputError};
use tldsnap::audit::search::{self, SearchRequest};
use tldsnap::audit::{Names, lookup};
use tldsnap::snapshot::Snapshot;

/// The shipped data date, 2026-08-22, as "today" with no age limit: what the portfolio
/// tests count `expires_soon` from, unless a test says otherwise.
const TODAY: tldsnap::query::Freshness = tldsnap::query::Freshness {
    cutoff_ms: i64::MIN,
    today: 20687,
    include_stale: false,
};

const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots/source");
const PSL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/snapshots/tlds/public_suffix_list.dat"
);

fn snapshot() -> &'static Snapshot {
    static S: OnceLock<Snapshot> = OnceLock::new();
    S.get_or_init(|| tldsnap::build::default_snapshot().unwrap())
}

fn names() -> &'static Names {
    static N: OnceLock<Names> = OnceLock::new();
    N.get_or_init(Names::embedded)
}

// ------------------------------------------------------------ the independent model

/// One price row as the source file has it.
#[derive(Clone, Debug)]
struct Row {
    registrar: String,
    register: Option<u64>,
    renew: Option<u64>,
    transfer: Option<u64>,
}

struct Model {
    /// Rows per TLD, sorted by registrar key.
    by_tld: BTreeMap<String, Vec<Row>>,
    registrar_names: HashMap<String, String>,
    data_day: i64,
}

/// "10.88" -> 1088, "" -> None (written here, not borrowed from the crate).
fn cents(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (w, f) = s.split_once('.').unwrap_or((s, ""));
    let f = format!("{f:0<2}");
    Some(w.parse::<u64>().unwrap() * 100 + f.parse::<u64>().unwrap())
}

/// Days since 1970-01-01 of "YYYY-MM-DD..." (civil-from-days, independently).
fn day_of(s: &str) -> i64 {
    let (y, m, d): (i64, i64, i64) = (
        s[0..4].parse().unwrap(),
        s[5..7].parse().unwrap(),
        s[8..10].parse().unwrap(),
    );
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn model() -> &'static Model {
    static M: OnceLock<Model> = OnceLock::new();
    M.get_or_init(|| {
        let mut by_tld: BTreeMap<String, Vec<Row>> = BTreeMap::new();
        let mut latest = String::new();
        let mut r = csv::Reader::from_path(format!("{SOURCE}/prices.csv")).unwrap();
        for rec in r.records() {
            let rec = rec.unwrap();
            by_tld.entry(rec[0].to_string()).or_default().push(Row {
                registrar: rec[1].to_string(),
                register: cents(&rec[2]),
                renew: cents(&rec[3]),
                transfer: cents(&rec[4]),
            });
            if rec[6] > *latest {
                latest = rec[6].to_string();
            }
        }
        for rows in by_tld.values_mut() {
            rows.sort_by(|a, b| a.registrar.cmp(&b.registrar));
        }
        let mut registrar_names = HashMap::new();
        let mut r = csv::Reader::from_path(format!("{SOURCE}/registrars.csv")).unwrap();
        for rec in r.records() {
            let rec = rec.unwrap();
            registrar_names.insert(rec[0].to_string(), rec[1].to_string());
        }
        Model {
            by_tld,
            registrar_names,
            data_day: day_of(&latest),
        }
    })
}

/// The documented rule (docs/AUDIT.md): renewal at least twice the first year, and more.
fn trap(register: u64, renew: u64) -> bool {
    renew >= 2 * register && renew > register
}

/// What the audit of one distinct domain must say, by the documented rules.
#[derive(Debug, Default, PartialEq)]
struct Expected {
    domain: String,
    suffix: String,
    count: u64,
    current: Option<u64>,
    cheapest_renewal: Option<(String, u64)>,
    best_transfer: Option<(String, u64)>,
    recommendation: Option<&'static str>,
    optimal: Option<u64>,
    savings: Option<(u64, u64)>,
    flags: Vec<&'static str>,
}

#[derive(Clone, Debug, Default)]
struct Entry {
    input: String,
    registrar: Option<String>,
    renew_price: Option<u64>,
    expires: Option<String>,
}

fn expect(e: &Entry, domain: &str, suffix: &str, free_only: bool) -> Expected {
    let m = model();
    let mut x = Expected {
        domain: domain.into(),
        suffix: suffix.into(),
        current: e.renew_price,
        ..Expected::default()
    };
    let mut flags = Vec::new();
    let expires_soon = e
        .expires
        .as_deref()
        .is_some_and(|d| day_of(d) <= m.data_day + 30);
    let finish = |mut flags: Vec<&'static str>, mut x: Expected| {
        if expires_soon {
            flags.push("expires_soon");
        }
        x.flags = flags;
        x
    };
    if free_only && !is_free_tld(suffix) {
        return finish(vec!["tld_not_in_plan"], x);
    }
    let Some(rows) = m.by_tld.get(suffix) else {
        return finish(vec!["unknown_tld"], x);
    };
    let sellers: Vec<&Row> = rows.iter().filter(|r| r.register.is_some()).collect();
    if sellers.is_empty() {
        flags.push("no_seller");
    }
    let at_registrar = e
        .registrar
        .as_deref()
        .and_then(|k| rows.iter().find(|r| r.registrar == k));
    if e.registrar.is_some() && at_registrar.and_then(|r| r.renew).is_none() {
        flags.push("registrar_does_not_sell");
    }
    if x.current.is_none() {
        x.current = at_registrar.and_then(|r| r.renew);
    }
    x.cheapest_renewal = rows
        .iter()
        .filter_map(|r| r.renew.map(|p| (p, r.registrar.clone())))
        .min()
        .map(|(p, k)| (k, p));
    let best = rows
        .iter()
        .filter(|r| Some(&r.registrar) != e.registrar.as_ref())
        .filter_map(|r| {
            let (t, n) = (r.transfer?, r.renew?);
            if x.current.is_some_and(|c| n > c) {
                return None;
            }
            let cost = if t == 0 { 5 * n } else { t + 4 * n };
            Some((cost, n, r.registrar.clone()))
        })
        .min();
    x.best_transfer = best.as_ref().map(|(c, _, k)| (k.clone(), *c));
    if let Some(c) = x.current {
        match &best {
            Some((cost, renew, _)) if *cost < 5 * c => {
                x.recommendation = Some("transfer");
                x.optimal = Some(*renew);
                x.savings = Some((c - renew, 5 * c - cost));
            }
            _ => {
                x.recommendation = Some("stay");
                x.optimal = Some(c);
                x.savings = Some((0, 0));
            }
        }
    }
    // The cheapest seller: lowest (register, renew, key).
    let cheapest = sellers
        .iter()
        .min_by_key(|r| (r.register, r.renew, r.registrar.clone()));
    let first_year = match at_registrar.and_then(|r| r.register) {
        Some(p) => Some(p),
        None => cheapest.and_then(|r| r.register),
    };
    let yearly = x.current.or(cheapest.and_then(|r| r.renew));
    if let (Some(f), Some(y)) = (first_year, yearly)
        && trap(f, y)
    {
        flags.push("renewal_trap");
    }
    finish(flags, x)
}

// ------------------------------------------------------------ the portfolio

/// The expected (registrable domain, suffix) of an entry; `None`: not a domain name.
type Split = Option<(String, String)>;

/// A portfolio of a few hundred names and, per distinct domain, its expected
/// (domain, suffix); invalid inputs map to `None`.
fn portfolio() -> (Vec<Entry>, Vec<(usize, Split)>) {
    let m = model();
    let psl = std::fs::read_to_string(PSL).unwrap();
    let wildcard = |t: &str| psl.lines().any(|l| l.trim() == format!("*.{t}"));
    let regs = [
        Some("namecheap"),
        Some("porkbun"),
        None,
        Some("dynadot"),
        Some("godaddy"),
        Some("cloudflare"),
        Some("route53"),
        None,
        Some("openprovider"),
    ];
    let mut entries: Vec<Entry> = Vec::new();
    let mut expected: Vec<(usize, Split)> = Vec::new();
    fn push_to(entries: &mut Vec<Entry>, expected: &mut Vec<(usize, Split)>, e: Entry, exp: Split) {
        expected.push((entries.len(), exp));
        entries.push(e);
    }
    macro_rules! push {
        ($e:expr, $exp:expr $(,)?) => {
            push_to(&mut entries, &mut expected, $e, $exp)
        };
    }
    let tlds: Vec<&String> = m.by_tld.keys().filter(|t| !wildcard(t)).collect();
    // Every 7th TLD: single labels, second levels (co.uk, com.au, us.com), IDN TLDs.
    for (i, t) in tlds.iter().step_by(7).enumerate() {
        let label = format!("brand{i}");
        let registrar = regs[i % regs.len()].map(str::to_string);
        let input = match i % 4 {
            0 => format!("{label}.{t}"),
            1 => format!("www.{label}.{t}"),
            2 => format!("  {}.{}. ", label.to_uppercase(), t),
            _ => match idna::domain_to_unicode(&format!("{label}.{t}")) {
                (u, Ok(())) => u,
                _ => format!("{label}.{t}"),
            },
        };
        let renew_price = (i % 5 == 0).then_some(1_000 + i as u64 * 37);
        let expires = match i % 6 {
            0 => Some("2026-09-10".to_string()), // 19 days after the data date
            1 => Some("2026-09-21".to_string()), // 30 days after: still soon
            2 => Some("2026-09-22".to_string()), // 31 days after: not soon
            3 => Some("2024-01-01".to_string()), // expired
            _ => None,
        };
        push!(
            Entry {
                input,
                registrar,
                renew_price,
                expires,
            },
            Some((format!("{label}.{t}"), t.to_string())),
        );
    }
    // Every TLD that only has renewal-only rows (nobody sells it): flagged no_seller.
    for (i, (t, rows)) in m
        .by_tld
        .iter()
        .filter(|(_, rows)| rows.iter().all(|r| r.register.is_none()))
        .enumerate()
    {
        push!(
            Entry {
                input: format!("renewonly{i}.{t}"),
                registrar: rows.first().map(|r| r.registrar.clone()),
                renew_price: None,
                expires: None,
            },
            Some((format!("renewonly{i}.{t}"), t.to_string())),
        );
    }
    // Renewal traps and stated prices on the popular TLDs.
    for (i, t) in ["xyz", "com", "io", "co.uk", "de", "online", "site", "shop"]
        .iter()
        .enumerate()
    {
        for (j, r) in ["namecheap", "porkbun", "dynadot"].iter().enumerate() {
            let label = format!("shop{i}x{j}");
            push!(
                Entry {
                    input: format!("{label}.{t}"),
                    registrar: Some(r.to_string()),
                    renew_price: (j == 2).then_some(4_999),
                    expires: None,
                },
                Some((format!("{label}.{t}"), t.to_string())),
            );
        }
    }
    // IDN names under ASCII TLDs, private-section suffixes tldsnap prices, and a
    // private-section suffix it does not (judged by its ICANN suffix).
    let idn = [
        ("bücher.de", "xn--bcher-kva.de", "de"),
        ("www.bücher.de", "xn--bcher-kva.de", "de"),
        ("пример.рф", "xn--e1afmkfd.xn--p1ai", "xn--p1ai"),
        ("münchen.com", "xn--mnchen-3ya.com", "com"),
        ("example.us.com", "example.us.com", "us.com"),
        ("a.b.example.uk.com", "example.uk.com", "uk.com"),
        ("foo.github.io", "github.io", "io"),
        ("shop.example.co.uk", "example.co.uk", "co.uk"),
        ("x.example.com.au", "example.com.au", "com.au"),
    ];
    for (input, domain, suffix) in idn {
        push!(
            Entry {
                input: input.into(),
                registrar: Some("dynadot".into()),
                ..Entry::default()
            },
            Some((domain.into(), suffix.into())),
        );
    }
    // Unknown TLDs.
    for input in ["acme.nope", "acme.zzzzzz", "www.acme.invalidtld"] {
        let d = input.trim_start_matches("www.");
        push!(
            Entry {
                input: input.into(),
                ..Entry::default()
            },
            Some((d.into(), d.rsplit('.').next().unwrap().into())),
        );
    }
    // Not domain names (a longer field than 1,012 bytes is a broken file: a 400).
    let long = format!("{}.com", "a".repeat(600));
    for input in [
        "",
        "a..b.com",
        "-x.com",
        "x-.com",
        "exa mple.com",
        "ex\u{1}ample.com",
        "com",
        "co.uk",
        "under_score.com",
        "ünï\u{7}.de",
        long.as_str(),
        "=cmd|' /C calc'!A0",
    ] {
        push!(
            Entry {
                input: input.into(),
                ..Entry::default()
            },
            None,
        );
    }
    // Duplicates: the same domains again, differently written (the first wins).
    let dups: Vec<(Entry, Split)> = expected
        .iter()
        .step_by(9)
        .map(|(i, exp)| {
            let e = &entries[*i];
            let input = match exp {
                Some((d, _)) => format!("WWW.{}", d.to_uppercase()),
                None => e.input.clone(),
            };
            (
                Entry {
                    input,
                    registrar: Some("porkbun".into()),
                    renew_price: Some(1),
                    expires: None,
                },
                exp.clone(),
            )
        })
        .collect();
    for (e, exp) in dups {
        expected.push((entries.len(), exp));
        entries.push(e);
    }
    (entries, expected)
}

fn as_json_body(entries: &[Entry]) -> Vec<u8> {
    let list: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut o = serde_json::json!({ "name": e.input });
            if let Some(r) = &e.registrar {
                o["registrar"] = r.clone().into();
            }
            if let Some(p) = e.renew_price {
                o["renew_price"] = format!("{}.{:02}", p / 100, p % 100).into();
            }
            if let Some(d) = &e.expires {
                o["expires"] = d.clone().into();
            }
            o
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({ "domains": list })).unwrap()
}

fn as_csv_body(entries: &[Entry]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["Domain", "Registrar", "Renew_Price", "Expires", "Notes"])
        .unwrap();
    for e in entries {
        let price = e
            .renew_price
            .map(|p| format!("{}.{:02}", p / 100, p % 100))
            .unwrap_or_default();
        w.write_record([
            e.input.as_str(),
            e.registrar.as_deref().unwrap_or(""),
            &price,
            e.expires.as_deref().unwrap_or(""),
            "x",
        ])
        .unwrap();
    }
    w.into_inner().unwrap()
}

/// Cents of a JSON price (`null` -> None).
fn json_cents(v: &Value) -> Option<u64> {
    v.as_f64().map(|f| (f * 100.0).round() as u64)
}

fn check_answer(answer: &Value, entries: &[Entry], expected: &[(usize, Split)], free_only: bool) {
    // Distinct domains (and distinct invalid inputs) in order of first appearance.
    let mut order: Vec<(String, usize, Split)> = Vec::new();
    let mut counts: HashMap<String, u64> = HashMap::new();
    for (i, exp) in expected {
        let key = match exp {
            Some((d, _)) => format!("domain:{d}"),
            None => format!(
                "invalid:{}",
                entries[*i].input.trim_matches(|c| c == ' ' || c == '\t')
            ),
        };
        let n = counts.entry(key.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            order.push((key, *i, exp.clone()));
        }
    }
    let rows = answer["domains"].as_array().unwrap();
    assert_eq!(rows.len(), order.len(), "distinct rows");
    let mut total = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut by_reg: BTreeMap<Option<String>, (u64, u64, u64)> = BTreeMap::new();
    let mut flag_counts: HashMap<&str, u64> = HashMap::new();
    for ((key, i, exp), row) in order.iter().zip(rows) {
        let e = &entries[*i];
        assert_eq!(row["count"], counts[key], "{key}: count");
        let Some((domain, suffix)) = exp else {
            assert_eq!(row["error"], "invalid_name", "{key}: {row}");
            assert_eq!(row["flags"], serde_json::json!(["invalid_name"]));
            assert!(row["input"].as_str().unwrap().len() <= 260);
            *flag_counts.entry("invalid_name").or_default() += 1;
            continue;
        };
        let x = expect(e, domain, suffix, free_only);
        let got = Expected {
            domain: row["domain"].as_str().unwrap().into(),
            suffix: row["suffix"].as_str().unwrap().into(),
            count: 0,
            current: json_cents(&row["current_price"]),
            cheapest_renewal: row["cheapest_renewal"].as_object().map(|o| {
                (
                    o["registrar_key"].as_str().unwrap().into(),
                    json_cents(&o["renew_price"]).unwrap(),
                )
            }),
            best_transfer: row["best_transfer"].as_object().map(|o| {
                (
                    o["registrar_key"].as_str().unwrap().into(),
                    json_cents(&o["total_cost_5_year"]).unwrap(),
                )
            }),
            recommendation: match row["recommendation"].as_str() {
                Some("stay") => Some("stay"),
                Some("transfer") => Some("transfer"),
                None => None,
                Some(other) => panic!("recommendation {other}"),
            },
            optimal: json_cents(&row["optimal_price"]),
            savings: json_cents(&row["savings_per_year"])
                .map(|y| (y, json_cents(&row["savings_5_year"]).unwrap())),
            flags: row["flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| -> &'static str {
                    Box::leak(f.as_str().unwrap().to_string().into_boxed_str())
                })
                .collect(),
        };
        let mut want = x;
        // The answer orders flags by kind; compare as sets.
        let mut gf = got.flags.clone();
        let mut wf = want.flags.clone();
        gf.sort_unstable();
        wf.sort_unstable();
        assert_eq!(gf, wf, "{key}: flags of {row}");
        want.flags = got.flags.clone();
        assert_eq!(got, want, "{key}: {row}");
        for f in &got.flags {
            *flag_counts.entry(f).or_default() += 1;
        }
        if let Some(k) = &got.best_transfer {
            assert!(model().registrar_names.contains_key(&k.0));
            assert_eq!(
                row["best_transfer"]["registrar_name"],
                model().registrar_names[&k.0]
            );
        }
        let reg = row["registrar_key"].as_str().map(str::to_string);
        assert_eq!(reg, e.registrar, "{key}: registrar");
        let group = by_reg.entry(reg).or_default();
        group.0 += 1;
        total.0 += 1;
        if let (Some(c), Some(o), Some((y, f))) = (got.current, got.optimal, got.savings) {
            total.1 += c;
            total.2 += o;
            total.3 += y;
            total.4 += f;
            group.1 += c;
            group.2 += o;
        }
    }
    let t = &answer["totals"];
    assert_eq!(t["domains"], total.0);
    assert_eq!(json_cents(&t["current_yearly"]), Some(total.1));
    assert_eq!(json_cents(&t["optimal_yearly"]), Some(total.2));
    assert_eq!(json_cents(&t["savings_per_year"]), Some(total.3));
    assert_eq!(json_cents(&t["savings_5_year"]), Some(total.4));
    assert_eq!(total.1 - total.2, total.3, "yearly savings add up");
    let groups = answer["by_registrar"].as_array().unwrap();
    assert_eq!(groups.len(), by_reg.len());
    for g in groups {
        let key = g["registrar_key"].as_str().map(str::to_string);
        let (n, c, o) = by_reg[&key];
        assert_eq!(g["domains"], n, "{key:?}");
        assert_eq!(json_cents(&g["current_yearly"]), Some(c), "{key:?}");
        assert_eq!(json_cents(&g["optimal_yearly"]), Some(o), "{key:?}");
    }
    for (flag, n) in answer["flags"].as_object().unwrap() {
        assert_eq!(
            n.as_u64().unwrap(),
            flag_counts.get(flag.as_str()).copied().unwrap_or(0),
            "flag count {flag}"
        );
    }
    assert_eq!(answer["meta"]["entries"], entries.len());
    assert_eq!(answer["meta"]["data_date"], "2026-08-22");
}

#[test]
fn audit_equals_the_independent_recomputation() {
    let (entries, expected) = portfolio();
    assert!(entries.len() >= 300, "{} entries", entries.len());
    let snap = snapshot().data();
    for (body, parse) in [
        (
            as_json_body(&entries),
            portfolio::parse_json as fn(&[u8], usize) -> Result<_, _>,
        ),
        (as_csv_body(&entries), portfolio::parse_csv),
    ] {
        let p = parse(&body, 10_000).unwrap();
        assert_eq!(p.holdings.len(), entries.len());
        let audit = portfolio::audit(snap, names(), &p, TODAY, tldsnap::sight::Sight::ALL);
        let mut out = Vec::new();
        portfolio::write_json(snap, &audit, Some("pro"), &mut out);
        let answer: Value = serde_json::from_slice(&out).unwrap();
        check_answer(&answer, &entries, &expected, false);
        // The CSV answer has the same rows, in the same order.
        portfolio::write_csv(snap, &audit, &mut out);
        let mut r = csv::Reader::from_reader(&out[..]);
        let csv_rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        let json_rows = answer["domains"].as_array().unwrap();
        assert_eq!(csv_rows.len(), json_rows.len());
        for (c, j) in csv_rows.iter().zip(json_rows) {
            assert_eq!(&c[1], j["domain"].as_str().unwrap_or(""));
            let flags: Vec<&str> = j["flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            assert_eq!(&c[18], flags.join(";"));
            assert_eq!(
                c[16].parse::<f64>().ok(),
                j["savings_per_year"].as_f64(),
                "{c:?}"
            );
            assert!(!c[0].starts_with('='), "formula in {c:?}");
        }
    }
    // Every kind of line occurs.
    let p = portfolio::parse_json(&as_json_body(&entries), 10_000).unwrap();
    let audit = portfolio::audit(snap, names(), &p, TODAY, tldsnap::sight::Sight::ALL);
    for (i, f) in portfolio::Flag::ALL.iter().enumerate() {
        if *f != portfolio::Flag::TldNotInPlan {
            assert!(audit.flag_counts[i] > 0, "no domain flagged {}", f.as_str());
        }
    }
    assert!(audit.rows.iter().any(|r| r.count > 1));
    assert!(audit.totals.savings_5_year > 0);
}

#[test]
fn free_plan_sees_only_free_tlds_and_audits_500() {
    let (entries, expected) = portfolio();
    let snap = snapshot().data();
    let free = Plans::default().get("free").unwrap().clone();
    let limit = free.audit_limit as usize;
    assert_eq!(limit, 500);
    let p = portfolio::parse_json(&as_json_body(&entries), limit).unwrap();
    let audit = portfolio::audit(
        snap,
        names(),
        &p,
        TODAY,
        tldsnap::sight::Sight::new(false, None),
    );
    let mut out = Vec::new();
    portfolio::write_json(snap, &audit, Some("free"), &mut out);
    let answer: Value = serde_json::from_slice(&out).unwrap();
    check_answer(&answer, &entries, &expected, true);
    // The limit edge: 500 entries are audited, 501 are refused before any work.
    let many: Vec<Entry> = (0..501)
        .map(|i| Entry {
            input: format!("n{i}.com"),
            ..Entry::default()
        })
        .collect();
    let ok = portfolio::parse_json(&as_json_body(&many[..500]), limit).unwrap();
    assert_eq!(ok.holdings.len(), 500);
    assert_eq!(
        portfolio::parse_json(&as_json_body(&many), limit),
        Err(InputError::TooMany { limit: 500 })
    );
    assert_eq!(
        portfolio::parse_csv(&as_csv_body(&many), limit),
        Err(InputError::TooMany { limit: 500 })
    );
    assert_eq!(
        portfolio::parse_csv(&as_csv_body(&many[..500]), limit)
            .unwrap()
            .holdings
            .len(),
        500
    );
}

#[test]
fn lookup_copies_the_cheapest_entries_and_marks_what_it_cannot_answer() {
    let snap = snapshot().data();
    let names_in = vec![
        "shop.example.co.uk".to_string(),
        "EXAMPLE.co.uk".to_string(),
        "bücher.de".to_string(),
        "x.museum".to_string(),
        "acme.nope".to_string(),
        "a..b".to_string(),
    ];
    for (free_only, tier) in [(false, "pro"), (true, "free")] {
        let req = lookup::LookupRequest {
            fresh: tldsnap::query::Freshness::ANY_AGE,
            names: &names_in,
            limit: 3,
            tier: Some(tier),
        };
        let mut out = Vec::new();
        lookup::lookup(
            snap,
            names(),
            &req,
            tldsnap::sight::Sight::new(!free_only, None),
            &mut out,
        );
        let v: Value = serde_json::from_slice(&out).unwrap();
        let results = v["results"].as_array().unwrap();
        // The duplicate (example.co.uk twice) is answered once.
        assert_eq!(results.len(), 5, "{v}");
        assert_eq!(v["meta"]["total"], 5);
        assert_eq!(v["meta"]["tier"], tier);
        let by_domain = |d: &str| {
            results
                .iter()
                .find(|r| r["domain"] == d)
                .unwrap_or_else(|| panic!("{d} in {v}"))
        };
        // The same entries as the cheapest endpoint.
        let mut cheapest = Vec::new();
        for (domain, suffix) in [("example.co.uk", "co.uk"), ("xn--bcher-kva.de", "de")] {
            let r = by_domain(domain);
            assert_eq!(r["suffix"], suffix);
            if free_only && suffix == "co.uk" {
                assert_eq!(r["error"], "tld_not_in_plan");
                continue;
            }
            tldsnap::query::cheapest(
                snap,
                &tldsnap::query::CheapestRequest {
                    fresh: tldsnap::query::Freshness::ANY_AGE,
                    sight: tldsnap::sight::Sight::ALL,
                    tlds: &[suffix],
                    limit: 3,
                    shape: tldsnap::query::Shape::Client,
                    tier: None,
                },
                &mut cheapest,
            )
            .unwrap();
            let c: Value = serde_json::from_slice(&cheapest).unwrap();
            assert_eq!(
                r["cheapest_register"],
                c["results"][suffix]["cheapest_register"]
            );
            assert_eq!(
                r["registrar_count"],
                c["results"][suffix]["registrar_count"]
            );
            assert_eq!(r["cheapest_register"].as_array().unwrap().len(), 3);
        }
        // museum is priced, but not on the free plan.
        let museum = by_domain("x.museum");
        if free_only {
            assert_eq!(museum["error"], "tld_not_in_plan");
        } else {
            assert!(museum["cheapest_register"].is_array(), "{museum}");
        }
        assert_eq!(
            by_domain("acme.nope")["error"],
            if free_only {
                "tld_not_in_plan"
            } else {
                "unknown_tld"
            }
        );
        let bad = results.iter().find(|r| r["input"] == "a..b").unwrap();
        assert_eq!(bad["error"], "invalid_name");
    }
}

#[test]
fn search_ranks_by_first_year_price_with_filters() {
    let snap = snapshot().data();
    let m = model();
    // Independently: every TLD with a seller, its cheapest seller by (register, renew,
    // key), ranked by (first-year price, TLD name).
    let mut all: Vec<(u64, String, u64, String)> = m
        .by_tld
        .iter()
        .filter_map(|(t, rows)| {
            rows.iter()
                .filter_map(|r| Some((r.register?, r.renew.unwrap(), r.registrar.clone())))
                .min()
                .map(|(reg, ren, k)| (reg, t.clone(), ren, k))
        })
        .collect();
    all.sort();
    // The IANA type of each top-level label, from the source's tlds.csv.
    let mut types: HashMap<String, String> = HashMap::new();
    let mut r = csv::Reader::from_path(format!("{SOURCE}/tlds.csv")).unwrap();
    for rec in r.records() {
        let rec = rec.unwrap();
        types.insert(rec[0].to_string(), rec[1].to_string());
    }
    let type_of = |t: &str| types.get(t.rsplit('.').next().unwrap()).cloned();
    let run = |q: &str, max_price: Option<u32>, types: &[&str], limit: usize, free: bool| {
        let mut out = Vec::new();
        search::search(
            snap,
            names(),
            &SearchRequest {
                fresh: tldsnap::query::Freshness::ANY_AGE,
                q,
                max_price,
                types,
                limit,
                tier: None,
            },
            tldsnap::sight::Sight::new(!free, None),
            &mut out,
        )
        .map(|()| serde_json::from_slice::<Value>(&out).unwrap())
    };
    let v = run("best shop", None, &[], 100, false).unwrap();
    assert_eq!(v["name"], "bestshop");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 100);
    for (r, (reg, t, ren, k)) in results.iter().zip(&all) {
        assert_eq!(r["type"].as_str().map(str::to_string), type_of(t), "{t}");
        assert_eq!(r["domain"], format!("bestshop.{t}"));
        assert_eq!(r["tld"], *t);
        assert_eq!(r["registrar_key"], *k);
        assert_eq!(json_cents(&r["register_price"]), Some(*reg));
        assert_eq!(json_cents(&r["renew_price"]), Some(*ren));
        assert_eq!(json_cents(&r["total_cost_5_year"]), Some(reg + 4 * ren));
        assert_eq!(r["renewal_trap"], trap(*reg, *ren));
        assert_eq!(r["availability"], "unknown");
    }
    // max_price and types filter; the requested suffix comes first, unfiltered.
    let v = run("bestshop.io", Some(500), &["country-code"], 100, false).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results[0]["domain"], "bestshop.io");
    assert_eq!(results[0]["requested"], true);
    let want: Vec<&String> = all
        .iter()
        .filter(|(reg, t, _, _)| {
            *reg <= 500 && t != "io" && type_of(t).as_deref() == Some("country-code")
        })
        .map(|(_, t, _, _)| t)
        .take(99)
        .collect();
    assert!(!want.is_empty());
    let got: Vec<&str> = results[1..]
        .iter()
        .map(|r| r["tld"].as_str().unwrap())
        .collect();
    assert_eq!(got, want);
    assert!(results[1..].iter().all(|r| r["type"] == "country-code"));
    // The free plan sees its 22 TLDs only; a paid suffix in q is reported, not shown.
    let v = run("bestshop.museum", None, &[], 100, true).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 22);
    assert!(
        results
            .iter()
            .all(|r| is_free_tld(r["tld"].as_str().unwrap()))
    );
    assert_eq!(v["meta"]["requested_suffix"]["error"], "tld_not_in_plan");
    // Unicode words become xn--; bad queries are errors.
    let v = run("Bücher", None, &[], 1, false).unwrap();
    assert_eq!(v["name"], "xn--bcher-kva");
    for bad in ["", "   ", "a_b", "a..b", &"x".repeat(64), "co.uk", "-ab"] {
        assert!(run(bad, None, &[], 5, false).is_err(), "{bad:?}");
    }
}

#[test]
fn the_audit_counts_from_today_and_recommends_only_fresh_prices() {
    let snap = snapshot().data();
    let body = br#"{"domains":[{"name":"brand.com","renew_price":30,"expires":"2026-12-20"}]}"#;
    let p = portfolio::parse_json(body, 10).unwrap();
    let run = |fresh| {
        let audit = portfolio::audit(snap, names(), &p, fresh, tldsnap::sight::Sight::ALL);
        let mut out = Vec::new();
        portfolio::write_json(snap, &audit, Some("pro"), &mut out);
        let v: Value = serde_json::from_slice(&out).unwrap();
        v["domains"][0].clone()
    };
    let flags = |d: &Value| d["flags"].as_array().unwrap().clone();
    // 2026-12-01 (the default age limit): the name expires in 19 days.
    let today = tldsnap::query::Freshness::new(1_796_083_200_000, 365, false);
    let d = run(today);
    assert!(flags(&d).contains(&Value::from("expires_soon")), "{d}");
    // Cloudflare's renewal of 2024-01-07 is the lowest there is, but years old: never
    // the recommendation.
    assert_ne!(d["cheapest_renewal"]["registrar_key"], "cloudflare", "{d}");
    assert_ne!(d["best_transfer"]["registrar_key"], "cloudflare", "{d}");
    // Counted from the data date (2026-08-22) the same name would be 120 days away,
    // and with no age limit the old price is the cheapest renewal.
    let d = run(TODAY);
    assert!(!flags(&d).contains(&Value::from("expires_soon")), "{d}");
    assert_eq!(d["cheapest_renewal"]["registrar_key"], "cloudflare", "{d}");
}
