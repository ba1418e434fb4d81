//! `tldsnap collect` against stand-ins of the registrars' APIs on 127.0.0.1:0, built from
//! the real response shapes: the shipped raw answers of Porkbun and Route 53, and the
//! other registrars' documented shapes filled with their shipped prices. Then `tldsnap
//! import` on the collected feeds.

mod collect_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use collect_support::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------- the tests

/// Porkbun's real answer (com changed) becomes a new version that import serves; the
/// same answer again writes nothing new but is recorded as seen again.
#[test]
fn porkbun_new_version_then_unchanged_and_import_serves_it() {
    let tmp = Tmp::new("porkbun");
    let feeds = feeds(&tmp, &["porkbun"]);
    let body = porkbun_body("8.11");
    let server = StandIn::start(move |req, _| {
        if req.method == "POST" && req.path() == "/api/json/v3/pricing/get" {
            Reply::Full(200, vec![], "application/json", body.clone())
        } else {
            Reply::Full(404, vec![], "text/plain", b"not found".to_vec())
        }
    });
    let cfg = config(
        &tmp,
        &format!("{FAST}[porkbun]\nbase_url = \"{}\"\n", server.base()),
    );
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("porkbun: new version porkbun/collected/porkbun_"),
        "{}",
        text(&o)
    );
    let files = collected(&feeds, "porkbun");
    assert_eq!(files.len(), 1, "{files:?}");
    // Unedited: byte for byte what the source answered.
    assert_eq!(
        std::fs::read(feeds.join("porkbun/collected").join(&files[0])).unwrap(),
        porkbun_body("8.11")
    );
    let prov = provenance(&feeds, "porkbun", "porkbun");
    assert_eq!(prov.len(), 1);
    assert_eq!(prov[0]["outcome"], "new");
    assert_eq!(prov[0]["requests"][0]["status"], 200);
    assert_eq!(
        prov[0]["requests"][0]["url"],
        format!("{}/api/json/v3/pricing/get", server.base())
    );
    assert_eq!(prov[0]["bytes"], porkbun_body("8.11").len());
    assert_eq!(prov[0]["sha256"].as_str().unwrap().len(), 64);
    assert!(prov[0]["collector"].as_str().unwrap().contains("porkbun/1"));

    let out = tmp.0.join("source");
    import(&feeds, &out);
    let p = prices(&out, "porkbun");
    assert_eq!(p["com"][0], "8.11");
    assert_eq!(p.len(), 571, "the Handshake names are still dropped");
    let first_updated = p["com"][3].clone();
    assert!(first_updated.starts_with("20"), "{first_updated}");
    let history = std::fs::read_to_string(out.join("history.csv")).unwrap();
    let com_rows: Vec<&str> = history
        .lines()
        .filter(|l| l.contains(",com,porkbun,"))
        .collect();
    assert_eq!(
        com_rows.len(),
        2,
        "the 2025 price and the collected one: {com_rows:?}"
    );

    std::thread::sleep(Duration::from_millis(1100));
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("porkbun: unchanged"), "{}", text(&o));
    assert_eq!(collected(&feeds, "porkbun").len(), 1, "no new version");
    let prov = provenance(&feeds, "porkbun", "porkbun");
    assert_eq!(prov.len(), 2);
    assert_eq!(prov[1]["outcome"], "unchanged");
    assert_eq!(prov[1]["version"], prov[0]["version"]);
    import(&feeds, &out);
    let p = prices(&out, "porkbun");
    assert_eq!(p["com"][0], "8.11");
    assert!(
        p["com"][3] > first_updated,
        "last seen moves on: {} then {}",
        first_updated,
        p["com"][3]
    );
}

/// Every collector against its stand-in, with pagination where the source pages; import
/// then serves each registrar's collected prices; no secret of the configuration is in
/// any output or file.
#[test]
fn every_collector_then_import_and_no_secret_leaks() {
    let tmp = Tmp::new("all");
    let feeds = feeds(&tmp, &EVERY_FEED);
    let server = every_source();
    let secrets = EVERY_SECRET;
    let cfg = every_source_config(&tmp, &server);
    let o = collect(&cfg, &feeds, &[]);
    let out_text = text(&o);
    assert!(o.status.success(), "{out_text}");
    for key in [
        "dynadot",
        "namecheap",
        "namecom",
        "namesilo",
        "openprovider",
        "porkbun",
        "route53",
    ] {
        assert!(
            out_text.contains(&format!("{key}: new version ")),
            "{key}: {out_text}"
        );
    }
    // Pagination to the end.
    let reqs = server.requests();
    let count = |p: &str| reqs.iter().filter(|r| r.path() == p).count();
    assert_eq!(count("/"), 4, "351 Route 53 prices in pages of 100");
    assert_eq!(
        count("/restful/v1/domains/get_tld_price"),
        3,
        "809 Dynadot TLDs in pages of 300"
    );
    assert_eq!(
        count("/core/v1/tldpricing"),
        3,
        "563 Name.com TLDs in pages of 200"
    );
    assert_eq!(
        count("/v1beta/tlds"),
        4,
        "1835 Openprovider TLDs in pages of 500"
    );
    assert_eq!(count("/v1beta/auth/login"), 1);

    let src = tmp.0.join("source");
    let imp = import(&feeds, &src);
    for (registrar, com) in [
        ("porkbun", "8.12"),
        ("route53", "8.13"),
        // Namecheap's stated ICANN fee (0.18) is added, as the price is charged.
        ("namecheap", "8.32"),
        ("namesilo", "8.15"),
        ("dynadot", "8.16"),
        ("namecom", "8.17"),
        ("openprovider", "8.18"),
    ] {
        let p = prices(&src, registrar);
        assert_eq!(p["com"][0], com, "{registrar}");
        let today = tldsnap::time::date_string(
            tldsnap::time::now_ms().div_euclid(tldsnap::time::MS_PER_DAY),
        );
        assert!(
            p["com"][3].starts_with(&today),
            "{registrar} dated today: {}",
            p["com"][3]
        );
    }
    // Namecheap's terms reach the price source: its regular first-year price beside the
    // stand-in's 8.14, the ICANN fee charged on top (and added to each price, as every
    // other list includes it), two years at 10.88 a year plus two fees.
    let csv = std::fs::read_to_string(src.join("prices.csv")).unwrap();
    let com = csv
        .lines()
        .find(|l| l.starts_with("com,namecheap,"))
        .unwrap();
    let f: Vec<&str> = com.split(',').collect();
    assert_eq!(
        &f[12..17],
        ["15.16", "0.18", "true", "2:22.12", "true"],
        "{com}"
    );
    // Porkbun's registration coupon: its code and the first year with it (a dollar off
    // the 8.12 ranked); Dynadot's com `onSale`: a promotion without a regular price.
    let row = |registrar: &str| -> Vec<String> {
        let prefix = format!("com,{registrar},");
        let line = csv.lines().find(|l| l.starts_with(&prefix)).unwrap();
        line.split(',').map(String::from).collect()
    };
    let porkbun = row("porkbun");
    assert_eq!(
        &porkbun[16..19],
        ["false", "AWESOMENESS", "7.12"],
        "{porkbun:?}"
    );
    let dynadot = row("dynadot");
    assert_eq!((&*dynadot[12], &*dynadot[16]), ("", "true"), "{dynadot:?}");
    assert!(
        csv.lines()
            .filter(|l| l.contains(",dynadot,") && !l.starts_with("com,"))
            .all(|l| l.split(',').nth(16) == Some("false")),
        "only com is on sale at the Dynadot stand-in"
    );
    // The whole lists came through, not only com.
    assert_eq!(prices(&src, "route53").len(), 351);
    assert_eq!(prices(&src, "namesilo").len(), 459);
    assert_eq!(prices(&src, "namecom").len(), 563);
    assert_eq!(prices(&src, "dynadot").len(), 802);
    assert_eq!(prices(&src, "openprovider").len(), 1784);
    assert_eq!(prices(&src, "namecheap").len(), 563);
    let shipped = tmp_import_shipped(&tmp);
    for registrar in [
        "route53",
        "namesilo",
        "dynadot",
        "openprovider",
        "namecheap",
        "namecom",
        "porkbun",
    ] {
        let (now, then) = (prices(&src, registrar), prices(&shipped, registrar));
        // The shipped Namecheap list states no ICANN fee; its API adds 0.18 a year.
        let fee = if registrar == "namecheap" { 18 } else { 0 };
        let plus_fee = |v: &String| {
            let cents: u64 = v.replace('.', "").parse().unwrap();
            format!("{}.{:02}", (cents + fee) / 100, (cents + fee) % 100)
        };
        let then_net: Vec<String> = then["net"][..2].iter().map(plus_fee).collect();
        assert_eq!(now["net"][..2], then_net[..], "{registrar} net as shipped");
    }

    // No secret anywhere: outputs, --help, every file written.
    let help = Command::new(BIN)
        .args(["collect", "--help"])
        .output()
        .unwrap();
    let mut haystacks = vec![
        ("collect output".to_string(), out_text.into_bytes()),
        ("import output".into(), text(&imp).into_bytes()),
        ("help".into(), help.stdout),
    ];
    for f in files_under(&feeds).into_iter().chain(files_under(&src)) {
        haystacks.push((f.display().to_string(), std::fs::read(&f).unwrap()));
    }
    for (what, bytes) in &haystacks {
        let s = String::from_utf8_lossy(bytes);
        for secret in secrets {
            assert!(!s.contains(secret), "{secret} appears in {what}");
        }
    }
}

/// The shipped feeds imported as they are (for comparing unchanged rows).
fn tmp_import_shipped(tmp: &Tmp) -> PathBuf {
    let out = tmp.0.join("shipped-source");
    if !out.join("prices.csv").exists() {
        import(&root("snapshots/feeds"), &out);
    }
    out
}

fn namesilo_setup(
    tag: &str,
    handler: impl Fn(&Req, usize) -> Reply + Send + Sync + 'static,
    settings: &str,
) -> (Tmp, PathBuf, PathBuf, StandIn) {
    let tmp = Tmp::new(tag);
    let feeds = feeds(&tmp, &["domainpricing"]);
    let server = StandIn::start(handler);
    let cfg = config(
        &tmp,
        &format!(
            "{settings}[namesilo]\nbase_url = \"{}\"\napi_key = \"ns-key-SECRET-55\"\nmin_interval_ms = 0\n",
            server.base()
        ),
    );
    (tmp, feeds, cfg, server)
}

fn assert_failed(o: &Output, feeds: &Path, needle: &str) {
    let t = text(o);
    assert!(!o.status.success(), "exit 0: {t}");
    assert!(t.contains("namesilo: failed: "), "{t}");
    assert!(t.contains(needle), "{needle:?} not in: {t}");
    assert!(!t.contains("ns-key-SECRET-55"), "{t}");
    assert!(
        collected(feeds, "domainpricing").is_empty(),
        "nothing written"
    );
}

#[test]
fn refused_credentials_401_and_403_fail() {
    for status in [401u16, 403] {
        let (_tmp, feeds, cfg, server) = namesilo_setup(
            "auth",
            move |_, _| {
                Reply::Full(
                    status,
                    vec![],
                    "application/json",
                    br#"{"error":"denied"}"#.to_vec(),
                )
            },
            FAST,
        );
        let o = collect(&cfg, &feeds, &[]);
        assert_failed(
            &o,
            &feeds,
            &format!("HTTP {status}: the credentials were refused"),
        );
        assert_eq!(
            server.requests().len(),
            1,
            "no retry of refused credentials"
        );
    }
}

#[test]
fn rate_limited_429_waits_for_retry_after_then_succeeds() {
    let (_tmp, feeds, cfg, server) = namesilo_setup(
        "429",
        |_, n| {
            if n == 1 {
                Reply::Full(
                    429,
                    vec![("retry-after", "1".to_string())],
                    "application/json",
                    b"{}".to_vec(),
                )
            } else {
                json_reply(&namesilo_body("8.15"))
            }
        },
        FAST,
    );
    let started = std::time::Instant::now();
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("namesilo: new version"), "{}", text(&o));
    assert_eq!(server.requests().len(), 2);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After: 1 was honoured"
    );
    // A Retry-After longer than allowed fails at once.
    let (_tmp, feeds, cfg, _server) = namesilo_setup(
        "429b",
        |_, _| {
            Reply::Full(
                429,
                vec![("retry-after", "3600".to_string())],
                "application/json",
                b"{}".to_vec(),
            )
        },
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "Retry-After of 3600 s");
}

#[test]
fn server_errors_are_retried_then_fail() {
    let (_tmp, feeds, cfg, server) = namesilo_setup(
        "5xx",
        |_, n| {
            if n <= 2 {
                Reply::Full(503, vec![], "text/plain", b"busy".to_vec())
            } else {
                json_reply(&namesilo_body("8.15"))
            }
        },
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(server.requests().len(), 3);
    let (_tmp, feeds, cfg, server) = namesilo_setup(
        "5xxb",
        |_, _| Reply::Full(502, vec![], "text/plain", b"bad gateway".to_vec()),
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "HTTP 502");
    assert_eq!(
        server.requests().len(),
        3,
        "the first attempt and two retries"
    );
}

#[test]
fn a_source_that_never_answers_times_out() {
    let (_tmp, feeds, cfg, _server) = namesilo_setup(
        "hang",
        |_, _| Reply::Hang,
        "[collect]\ntimeout_secs = 0.5\nretries = 1\nbackoff_ms = 10\n\n",
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "no complete answer within 0.5 s");
}

#[test]
fn a_truncated_body_fails() {
    let (_tmp, feeds, cfg, server) = namesilo_setup(
        "trunc",
        |_, _| Reply::Truncated(br#"{"request":{},"reply":{"code":300,"#.to_vec()),
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "cut short");
    assert_eq!(server.requests().len(), 3, "a broken body is retried");
}

#[test]
fn an_html_page_with_200_fails() {
    let (_tmp, feeds, cfg, _server) = namesilo_setup(
        "html",
        |_, _| {
            Reply::Full(
                200,
                vec![],
                "text/html; charset=utf-8",
                b"<!DOCTYPE html><html><body>Maintenance</body></html>".to_vec(),
            )
        },
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "is an HTML page, not the API's JSON");
}

#[test]
fn an_error_inside_a_200_body_fails() {
    let (_tmp, feeds, cfg, _server) = namesilo_setup(
        "err200",
        |_, _| {
            json_reply(
                &json!({"request": {"operation": "getPrices"}, "reply": {"code": 110, "detail": "Invalid API Key"}}),
            )
        },
        FAST,
    );
    let o = collect(&cfg, &feeds, &[]);
    assert_failed(&o, &feeds, "NameSilo reply code 110 (\"Invalid API Key\")");
    // Porkbun's form of it.
    let tmp = Tmp::new("err200p");
    let feeds = self::feeds(&tmp, &["porkbun"]);
    let server = StandIn::start(|_, _| {
        json_reply(&json!({"status": "ERROR", "message": "Invalid API key. (002)"}))
    });
    let cfg = config(
        &tmp,
        &format!("{FAST}[porkbun]\nbase_url = \"{}\"\n", server.base()),
    );
    let o = collect(&cfg, &feeds, &[]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("porkbun: failed: Porkbun status ERROR: Invalid API key. (002)"),
        "{}",
        text(&o)
    );
}

/// A list that lost half its TLDs is quarantined with a report, the previous version
/// stays in use, and `--accept` takes it.
#[test]
fn a_list_that_lost_half_its_tlds_is_quarantined_until_accepted() {
    let tmp = Tmp::new("half");
    let feeds = feeds(&tmp, &["porkbun"]);
    let mut v: Value = serde_json::from_slice(&porkbun_body("8.19")).unwrap();
    let pricing = v["pricing"].as_object_mut().unwrap();
    let keys: Vec<String> = pricing.keys().cloned().collect();
    for (i, k) in keys.iter().enumerate() {
        if i % 2 == 1 && k != "com" {
            pricing.remove(k);
        }
    }
    let half = serde_json::to_vec(&v).unwrap();
    let server =
        StandIn::start(move |_, _| Reply::Full(200, vec![], "application/json", half.clone()));
    let cfg = config(
        &tmp,
        &format!("{FAST}[porkbun]\nbase_url = \"{}\"\n", server.base()),
    );
    let src = tmp.0.join("source");
    import(&feeds, &src);
    let before = prices(&src, "porkbun");

    let o = collect(&cfg, &feeds, &[]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("porkbun: quarantined porkbun/quarantine/porkbun_"),
        "{t}"
    );
    assert!(t.contains("keeps the TLDs"), "{t}");
    assert!(collected(&feeds, "porkbun").is_empty());
    let reports: Vec<PathBuf> = files_under(&feeds.join("porkbun/quarantine"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".report.txt"))
        .collect();
    assert_eq!(reports.len(), 1);
    let report = std::fs::read_to_string(&reports[0]).unwrap();
    assert!(report.contains("Rule failed: keeps the TLDs"), "{report}");
    assert!(report.contains("--accept porkbun"), "{report}");
    assert!(report.contains(": no longer listed"), "{report}");

    import(&feeds, &src);
    assert_eq!(
        prices(&src, "porkbun"),
        before,
        "the previous version is still served"
    );

    let o = collect(&cfg, &feeds, &["--accept", "porkbun"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("porkbun: accepted porkbun/collected/porkbun_"),
        "{}",
        text(&o)
    );
    assert_eq!(server.requests().len(), 1, "accepting fetches nothing");
    import(&feeds, &src);
    let after = prices(&src, "porkbun");
    assert!(
        after.len() < before.len() * 6 / 10,
        "{} then {}",
        before.len(),
        after.len()
    );
    assert_eq!(after["com"][0], "8.19");
    let prov = provenance(&feeds, "porkbun", "porkbun");
    assert_eq!(
        prov.iter()
            .map(|p| p["outcome"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["quarantined", "accepted"]
    );
}

#[test]
fn a_configuration_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = Tmp::new("perm");
    let cfg = config(&tmp, "[namesilo]\napi_key = \"ns-key-SECRET-55\"\n");
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = collect(&cfg, &tmp.0, &[]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("chmod 600"), "{t}");
    assert!(!t.contains("ns-key-SECRET-55"), "{t}");
    // Unknown tables and a broken file name no secret either.
    let cfg = config(&tmp, "[namesilo]\napi_key = \"ns-key-SECRET-55\n");
    let o = collect(&cfg, &tmp.0, &[]);
    assert!(!o.status.success());
    assert!(!text(&o).contains("ns-key-SECRET-55"), "{}", text(&o));
}

/// The source answering exactly the shipped list writes nothing, but its prices are
/// dated by when they were seen again.
#[test]
fn the_shipped_list_answered_again_is_seen_again() {
    let tmp = Tmp::new("again");
    let feeds = feeds(&tmp, &["porkbun"]);
    let body = read("snapshots/feeds/porkbun/porkbun-pricing.json");
    let server =
        StandIn::start(move |_, _| Reply::Full(200, vec![], "application/json", body.clone()));
    let cfg = config(
        &tmp,
        &format!("{FAST}[porkbun]\nbase_url = \"{}\"\n", server.base()),
    );
    let src = tmp.0.join("source");
    import(&feeds, &src);
    assert!(prices(&src, "porkbun")["com"][3].starts_with("2025-03-22"));
    let o = collect(&cfg, &feeds, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("porkbun: unchanged, same list as porkbun/porkbun-pricing.json"),
        "{}",
        text(&o)
    );
    assert!(collected(&feeds, "porkbun").is_empty());
    import(&feeds, &src);
    let today =
        tldsnap::time::date_string(tldsnap::time::now_ms().div_euclid(tldsnap::time::MS_PER_DAY));
    let p = prices(&src, "porkbun");
    assert!(p["com"][3].starts_with(&today), "{}", p["com"][3]);
    let history = std::fs::read_to_string(src.join("history.csv")).unwrap();
    assert_eq!(
        history
            .lines()
            .filter(|l| l.contains(",com,porkbun,"))
            .count(),
        1,
        "no change, no history"
    );
}

/// A page that fails in the middle of a paginated list leaves nothing written; an error
/// answer inside a 200 XML body (Namecheap) and a JSON error (Route 53) fail too.
#[test]
fn a_failing_page_or_error_answer_writes_nothing() {
    let tmp = Tmp::new("midpage");
    let feeds = feeds(&tmp, &["aws-route53", "namecheap", "dynadot"]);
    let r53 = route53_pages(8.13);
    let dyn_list = dynadot_list(8.16);
    let server = StandIn::start(move |req, _| {
        match req.path() {
        "/" => match req.json()["Marker"].as_str() {
            None => json_reply(&r53[0]),
            Some(_) => Reply::Full(400, vec![], "application/x-amz-json-1.1", br#"{"__type":"InvalidInput","message":"marker expired"}"#.to_vec()),
        },
        "/xml.response" => Reply::Full(200, vec![], "text/xml", br#"<?xml version="1.0" encoding="utf-8"?><ApiResponse Status="ERROR" xmlns="http://api.namecheap.com/xml.response"><Errors><Error Number="1011150">Parameter RequestIP is invalid</Error></Errors></ApiResponse>"#.to_vec()),
        _ => {
            let index: usize = req.query("page_index").unwrap().parse().unwrap();
            if index == 2 {
                return json_reply(&json!({"code": 429, "message": "too many requests"}));
            }
            let list: Vec<Value> = dyn_list.iter().take(300).cloned().collect();
            json_reply(&json!({"code": 200, "message": "Success", "data": {"tldPriceList": list}}))
        }
    }
    });
    let b = server.base();
    let cfg = config(
        &tmp,
        &format!(
            "{FAST}[route53]\nbase_url = \"{b}\"\naccess_key_id = \"AKIDSTANDIN7\"\nsecret_access_key = \"r53-secret-SECRET-44\"\npage_size = 100\nmin_interval_ms = 0\n\n[namecheap]\nbase_url = \"{b}\"\napi_user = \"u\"\napi_key = \"nc-key-SECRET-77\"\nclient_ip = \"203.0.113.77\"\nmin_interval_ms = 0\n\n[dynadot]\nbase_url = \"{b}\"\napi_key = \"dd-key-SECRET-33\"\npage_size = 300\nmin_interval_ms = 0\n"
        ),
    );
    let o = collect(&cfg, &feeds, &[]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("route53: failed: HTTP 400 from ") && t.contains("marker expired"),
        "{t}"
    );
    assert!(
        t.contains("namecheap: failed: ") && t.contains("Parameter RequestIP is invalid"),
        "{t}"
    );
    assert!(
        t.contains("dynadot: failed: ")
            && t.contains("Dynadot page 2: code 429 (too many requests), not 200"),
        "{t}"
    );
    assert!(
        t.contains("3 of 3 registrars failed or were quarantined"),
        "{t}"
    );
    for folder in ["aws-route53", "namecheap", "dynadot"] {
        assert!(collected(&feeds, folder).is_empty(), "{folder}");
        assert!(!feeds.join(folder).join("quarantine").exists(), "{folder}");
    }
    for secret in [
        "r53-secret-SECRET-44",
        "nc-key-SECRET-77",
        "dd-key-SECRET-33",
        "203.0.113.77",
    ] {
        assert!(!t.contains(secret), "{secret} in {t}");
    }
}
