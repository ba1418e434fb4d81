//! `tldsnap query` (`cheapest|prices|registrars|overview|history|tlds|registrars-list|
//! registrar`, `--at` on cheapest and prices): the same bodies as the queries, the same
//! parameter rules as HTTP, from a snapshot file or from the real data built into the
//! binary.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");

fn snapshot() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tldsnap-cli-query-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("real.tldsnap");
    let status = Command::new(BIN)
        .args([
            "build",
            "--input",
            concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots/source"),
            "--output",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(status.status.success());
    out
}

fn query(snap: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .arg("query")
        .arg(args[0])
        .arg("--snapshot")
        .arg(snap)
        .args(&args[1..])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_mirrors_answer_and_refuse_like_http() {
    let snap = snapshot();
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = query(&snap, args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let h = json(&[
        "history",
        "--tld",
        "io",
        "--from",
        "2025-01-01",
        "--registrars",
        "dynadot",
    ]);
    assert_eq!(
        h["history"]["dynadot"]["price_at_from"]["date"],
        "2022-01-28"
    );
    assert_eq!(h["history"]["dynadot"]["changes"][0]["date"], "2026-01-01");
    let c = json(&[
        "cheapest",
        "--tlds",
        "com",
        "--limit",
        "2",
        "--at",
        "2025-10-01",
    ]);
    assert_eq!(
        c["results"]["com"]["cheapest_register"][1]["register_price"],
        9.99
    );
    let p = json(&[
        "prices",
        "--tlds",
        "com",
        "--registrars",
        "dynadot",
        "--at",
        "2025-10-01",
    ]);
    assert_eq!(
        p["results"]["com"]["dynadot"]["last_updated"],
        "2022-06-15T00:00:00.000Z"
    );
    let o = json(&["overview", "--tld", "museum", "--tier", "free"]);
    assert_eq!(o["members_only"][0], "cheapest_register");
    assert_eq!(o["type"], "sponsored");
    let t = json(&["tlds", "--q", "рф"]);
    assert_eq!(t["tlds"][0]["tld"], "xn--p1ai");
    let next = json(&["tlds", "--limit", "1"])["meta"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = json(&["tlds", "--limit", "1", "--cursor", &next]);
    assert_eq!(second["tlds"].as_array().unwrap().len(), 1);
    let r = json(&["registrars-list"]);
    let registrars = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/snapshots/source/registrars.csv"
    ))
    .unwrap()
    .lines()
    .skip(1)
    .filter(|l| !l.is_empty())
    .count();
    assert_eq!(r["total"], registrars);
    let one = json(&["registrar", "--key", "NIRA", "--limit", "2"]);
    assert_eq!(one["meta"]["total"], 9);
    // The HTTP parameter rules, with the problem's detail as the message.
    for (args, needle) in [
        (
            &[
                "history",
                "--tld",
                "com",
                "--from",
                "2025-02-01",
                "--to",
                "2025-01-01",
            ][..],
            "'from'",
        ),
        (
            &["cheapest", "--tlds", "com", "--at", "2099-01-01"][..],
            "at",
        ),
        (
            &["cheapest", "--tlds", "com", "--limit", "101"][..],
            "'limit'",
        ),
        (&["tlds", "--limit", "501"][..], "'limit'"),
        (&["tlds", "--type", "cc"][..], "'type'"),
        (&["tlds", "--cursor", "nope"][..], "'cursor'"),
        (&["registrar", "--key", "nobody"][..], "nobody"),
    ] {
        let (code, _, err) = query(&snap, args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// Without `--snapshot`, `tldsnap query` answers from the real data built into the binary,
/// as `serve` and `audit` do: the same bytes as the shipped source built into a file.
#[test]
fn without_a_snapshot_file_query_answers_from_the_built_in_data() {
    let snap = snapshot();
    for args in [
        &["cheapest", "--tlds", "com"][..],
        &["cheapest", "--tlds", "com,io", "--limit", "3"][..],
        &["overview", "--tld", "museum", "--tier", "free"][..],
        &["tlds", "--q", "co", "--limit", "5"][..],
        &["registrar", "--key", "porkbun", "--limit", "2"][..],
    ] {
        let (code, from_file, err) = query(&snap, args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let out = Command::new(BIN).arg("query").args(args).output().unwrap();
        let built_in = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // `stats.time_elapsed` is the one field that differs between two runs.
        let strip = |s: &str| -> serde_json::Value {
            let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
            if let Some(stats) = v.get_mut("stats").and_then(|s| s.as_object_mut()) {
                stats.remove("time_elapsed");
            }
            v
        };
        assert!(!built_in.is_empty(), "{args:?}");
        assert_eq!(strip(&built_in), strip(&from_file), "{args:?}");
    }
    let out = Command::new(BIN)
        .args(["query", "cheapest", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("real data shipped in the"), "{help}");
}
