//! The request examples of README.md and docs/*.md, run against the real binary on the
//! built-in snapshot and compared with the output the docs show, so that an example the
//! program no longer prints fails here.
//!
//! Two forms are examples: a `console` block, where each `$ COMMAND` line (with its `\`
//! continuations) is followed by the output it prints; and a `sh` block of `curl`
//! commands followed at once by a block of their output (README.md's form). Each `curl`
//! command runs through `sh -c` with `http://127.0.0.1:8080` replaced by the server's
//! address and `$PRO_KEY`, `$FREE_KEY` and `$KEY` set to keys of the `pro`, `free` and
//! `basic` plans, in the order the files and examples come, on a server run with
//! `--today 2026-12-01` (the day the docs' examples are made on). What differs from one run to another is normalised
//! on both sides: the `date`, `ratelimit-remaining`, `ratelimit-reset`, `retry-after` and
//! `x-credits-remaining` headers (which depend on the requests before), `stats.time_elapsed`,
//! creation and load times, webhook ids and secrets, event ids, and the snapshot's load
//! time in `/metrics`. Commands that are not a `curl`
//! to this server (a second server with other plans, loops over rate limits, a raw
//! socket) are listed in [`NOT_RUN`], and so are the `sh` blocks of `curl` commands
//! without an output block after them (their answers abbreviated in comments or prose);
//! any other command, or such a block not listed, fails the test until it is run here or
//! listed.
//!
//! `UPDATE_DOCS=1 cargo test --test doc_examples` writes what each differing example
//! prints into its doc in place of what the doc showed (check the diff, and the prose
//! around it, before committing).

mod http_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use http_support::{Binary, TempDir};
use tldsnap::access::keys::KeysFile;

/// Commands of the docs that this test does not run, by their beginning, with the reason.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "printf 'GET /healthz\\r\\n\\r\\n' | nc",
        "a raw HTTP/1.0 request (tests/http_malformed.rs covers it)",
    ),
    (
        "for i in 1 2 3 4 5 6; do curl",
        "the free plan's burst, timing-dependent (tests/http_burst.rs)",
    ),
    (
        "echo '{\"free\": {",
        "writes a plans file for a second server",
    ),
    (
        "tldsnap serve --keys keys.json --plans plans.json",
        "a second server",
    ),
    ("for i in 1 2; do curl", "the second server's credit limit"),
    (
        "tldsnap audit portfolio.csv",
        "the CLI audit of a file the page shows (tests/audit.rs)",
    ),
    (
        "curl -X POST -H \"X-API-Key: $PRO_KEY\" -H 'Content-Type: text/csv' \\\n     --data-binary @portfolio.csv",
        "the audit of the page's portfolio file through the API; the page shows the first \
         entry of its answer, which the CLI example above prints whole (tests/http_domains.rs \
         checks the endpoint)",
    ),
    (
        "curl http://127.0.0.1:8080/healthz   # ",
        "the operational endpoints, each answer abbreviated in a comment (tests/http_api.rs \
         and tests/openapi_schema.rs check them)",
    ),
    (
        "curl -s -H \"X-API-Key: $KEY\" 'http://127.0.0.1:8080/api/v1/client/events?after=0",
        "the events a snapshot swap records, shown abbreviated (tests/http_events.rs)",
    ),
    (
        "curl -s -X POST http://127.0.0.1:8080/api/v1/client/webhooks",
        "a subscription to an outside URL, its answer abbreviated in a comment \
         (tests/http_webhooks.rs)",
    ),
];

/// One example: where it is, the command, and the output the docs show.
struct Example {
    place: String,
    command: String,
    shown: String,
    /// Whether an output block follows the command (a `sh` block with `curl` and no
    /// output after it is an example this test cannot compare: it fails unless listed
    /// in [`NOT_RUN`]).
    has_output: bool,
}

fn doc_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The examples of one Markdown file, in order.
fn examples(path: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let name = path.file_name().unwrap().to_string_lossy();
    let fence = |l: &str| l.starts_with("```");
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with("```console") {
            let mut j = i + 1;
            while j < lines.len() && !fence(lines[j]) {
                let Some(first) = lines[j].strip_prefix("$ ") else {
                    j += 1;
                    continue;
                };
                let start = j;
                let mut command = first.to_owned();
                while command.ends_with('\\') && j + 1 < lines.len() {
                    j += 1;
                    command.push('\n');
                    command.push_str(lines[j]);
                }
                j += 1;
                let mut shown = Vec::new();
                while j < lines.len() && !fence(lines[j]) && !lines[j].starts_with("$ ") {
                    shown.push(lines[j]);
                    j += 1;
                }
                out.push(Example {
                    place: format!("{name}:{}", start + 1),
                    command,
                    shown: shown.join("\n"),
                    has_output: true,
                });
            }
            i = j + 1;
        } else if lines[i].starts_with("```sh") {
            let mut j = i + 1;
            while j < lines.len() && !fence(lines[j]) {
                j += 1;
            }
            let body = &lines[i + 1..j];
            let has_curl = body.iter().any(|l| l.starts_with("curl "));
            if has_curl && j + 1 < lines.len() && fence(lines[j + 1]) {
                let mut k = j + 2;
                while k < lines.len() && !fence(lines[k]) {
                    k += 1;
                }
                out.push(Example {
                    place: format!("{name}:{}", i + 2),
                    command: body.join("\n"),
                    shown: lines[j + 2..k].join("\n"),
                    has_output: true,
                });
                i = k + 1;
            } else {
                if has_curl {
                    out.push(Example {
                        place: format!("{name}:{}", i + 2),
                        command: body.join("\n"),
                        shown: String::new(),
                        has_output: false,
                    });
                }
                i = j + 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Replaces the value of each `"field":` in `s` (a JSON string or a bare number) with `X`.
fn mask_field(s: &str, field: &str) -> String {
    let needle = format!("\"{field}\":");
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find(&needle) {
        let after = at + needle.len();
        out.push_str(&rest[..after]);
        let tail = &rest[after..];
        let end = if let Some(quoted) = tail.strip_prefix('"') {
            quoted.find('"').map_or(tail.len(), |e| e + 2)
        } else if tail.starts_with("null") {
            0
        } else {
            tail.find([',', '}', ']']).unwrap_or(tail.len())
        };
        if end > 0 {
            out.push('X');
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// What may differ between two runs, masked; line ends and trailing blanks dropped.
fn normalise(s: &str) -> String {
    const HEADERS: [&str; 5] = [
        "date: ",
        "ratelimit-remaining: ",
        "ratelimit-reset: ",
        "retry-after: ",
        "x-credits-remaining: ",
    ];
    const METRICS: [&str; 1] = ["tldsnap_snapshot_loaded_timestamp_seconds "];
    let lines: Vec<String> = s
        .replace('\r', "")
        .lines()
        .map(|l| {
            let l = l.trim_end();
            for p in HEADERS.iter().chain(&METRICS) {
                if l.to_ascii_lowercase().starts_with(p) {
                    return format!("{p}X");
                }
            }
            l.to_owned()
        })
        .collect();
    let mut s = lines.join("\n").trim().to_owned();
    for field in [
        "time_elapsed",
        "created_at",
        "updated_at",
        "loaded_at",
        "id",
        "secret",
        "last_event_id",
        "previous_secret_expires_at",
    ] {
        s = mask_field(&s, field);
    }
    s
}

#[test]
fn mask_field_masks_strings_numbers_and_leaves_null() {
    assert_eq!(
        mask_field(
            r#"{"id":"wh_1","n":{"last_event_id":14},"x":null,"secret":null}"#,
            "id"
        ),
        r#"{"id":X,"n":{"last_event_id":14},"x":null,"secret":null}"#
    );
    assert_eq!(
        mask_field(r#"{"last_event_id":14,"a":1}"#, "last_event_id"),
        r#"{"last_event_id":X,"a":1}"#
    );
    assert_eq!(
        normalise("HTTP/1.1 200 OK\r\ndate: Tue, 01 Dec 2026 22:39:45 GMT\r\n\r\n{}"),
        "HTTP/1.1 200 OK\ndate: X\n\n{}"
    );
}

#[test]
fn every_request_example_of_the_docs_prints_what_the_docs_show() {
    let curl = Command::new("curl").arg("--version").output();
    assert!(
        curl.is_ok_and(|o| o.status.success()),
        "this test runs the docs' curl commands: install curl"
    );
    let dir = TempDir::new("doc-examples");
    let keys = dir.path("keys.json");
    let mut file = KeysFile::default();
    let mut add = |plan: &str| file.add(plan, "docs' examples").unwrap().0;
    let (pro, free, basic) = (add("pro"), add("free"), add("basic"));
    file.save(&keys).unwrap();
    let data = dir.path("data");
    std::fs::create_dir_all(&data).unwrap();
    // The docs' day: which prices are stale does not move with the date.
    let server = Binary::start(&[
        "--today",
        "2026-12-01",
        "--keys",
        keys.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    let base = format!("http://{}", server.addr);

    let mut ran = 0;
    let mut failures = Vec::new();
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    for file in doc_files() {
        let mut text = std::fs::read_to_string(&file).unwrap();
        for ex in examples(&file) {
            // README.md sets KEY to the key it made a line before; here it is `basic`.
            let command: String = ex
                .command
                .lines()
                .filter(|l| !l.starts_with("KEY=tsk_"))
                .collect::<Vec<_>>()
                .join("\n");
            if let Some((_, why)) = NOT_RUN.iter().find(|(p, _)| command.starts_with(p)) {
                assert!(!why.is_empty());
                continue;
            }
            assert!(
                ex.has_output,
                "{}: a curl example without the block of what it prints: show its output \
                 right after it, or list it in NOT_RUN with why",
                ex.place
            );
            assert!(
                command.starts_with("curl ") && !command.contains("127.0.0.1:8081"),
                "{}: a command this test does not run: {command:?} (run it here or list it in NOT_RUN)",
                ex.place
            );
            let out = Command::new("sh")
                .arg("-c")
                .arg(command.replace("http://127.0.0.1:8080", &base))
                .env("PRO_KEY", &pro)
                .env("FREE_KEY", &free)
                .env("KEY", &basic)
                .output()
                .unwrap();
            ran += 1;
            let printed = String::from_utf8_lossy(&out.stdout);
            let (want, got) = (normalise(&ex.shown), normalise(&printed));
            if want != got && update {
                let shown = ex.shown.trim_end();
                let printed = printed.replace('\r', "");
                if shown.is_empty() {
                    // A new example: its output goes right after its command.
                    let line = format!("$ {}\n", ex.command);
                    assert!(
                        text.contains(&line),
                        "{}: the command is not in the file as it is",
                        ex.place
                    );
                    text = text.replacen(&line, &format!("{line}{}\n", printed.trim_end()), 1);
                    continue;
                }
                assert!(
                    text.contains(shown),
                    "{}: the shown output is not in the file as it is",
                    ex.place
                );
                text = text.replacen(shown, printed.trim_end(), 1);
            } else if want != got {
                // The byte index of the first character that differs.
                let common: usize = want
                    .chars()
                    .zip(got.chars())
                    .take_while(|(a, b)| a == b)
                    .map(|(a, _)| a.len_utf8())
                    .sum();
                let from = want[..common]
                    .char_indices()
                    .rev()
                    .nth(80)
                    .map_or(0, |(i, _)| i);
                let cut = |s: &str| s[from..].chars().take(240).collect::<String>();
                failures.push(format!(
                    "{}: {}\n  the docs show: …{}\n  it prints:     …{}",
                    ex.place,
                    command.lines().next().unwrap_or(""),
                    cut(&want),
                    cut(&got)
                ));
            }
        }
        if update {
            std::fs::write(&file, text).unwrap();
        }
    }
    assert!(
        ran >= 50,
        "only {ran} examples found: has the docs' form changed?"
    );
    assert!(
        failures.is_empty(),
        "{} of {ran} examples print something else than the docs show:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
