//! Where collected versions go: the gate's decision written to the feeds directory,
//! with a provenance record per collection.
//!
//! A provenance record is one JSON line in `<folder>/collected/<key>.provenance.jsonl`:
//! `version` (file name), `outcome` (`new`, `unchanged`, `quarantined`, `accepted`,
//! `failed`: then no `version`, but the `reason`, scrubbed of secrets),
//! `fetched_at` (RFC 3339), `collector` (`tldsnap/<version> <key>/<collector version>`),
//! `bytes` and `sha256` of the version file, and `requests`: per request the URL without
//! secrets, the HTTP status, the byte count and the SHA-256 of the body.

use std::io::Write;
use std::path::Path;

use serde_json::json;
use sha2::{Digest, Sha256};

use super::gate::{self, Thresholds};
use super::{Collector, Outcome, Page};
use crate::import::collected::Shape;

pub(crate) fn hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The bytes of a version: one page as it was answered, or the JSON array of the pages'
/// bodies, each byte for byte.
pub fn assemble(pages: &[Page]) -> Vec<u8> {
    if let [one] = pages {
        return one.body.to_vec();
    }
    let mut out = Vec::with_capacity(pages.iter().map(|p| p.body.len() + 2).sum::<usize>() + 2);
    out.push(b'[');
    for (i, p) in pages.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b",\n");
        }
        out.extend_from_slice(&p.body);
    }
    out.extend_from_slice(b"]\n");
    out
}

/// Writes `bytes` to `path` all or nothing, creating its directory
/// ([`crate::files::write_atomic`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().ok_or("no parent directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    crate::files::write_atomic(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn append_provenance(feeds: &Path, shape: &Shape, record: serde_json::Value) -> Result<(), String> {
    append_line(
        &shape.collected_dir(feeds),
        &shape.provenance_name(),
        record,
    )
}

/// Appends `record` as one JSON line to `dir/name` (created with `dir` if missing),
/// synced before it returns.
pub(crate) fn append_line(dir: &Path, name: &str, record: serde_json::Value) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(name);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut line = record.to_string();
    line.push('\n');
    f.write_all(line.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A provenance record of `c`'s answer `pages`, kept (or not) as `version` of `bytes`.
pub(crate) fn record(
    c: &dyn Collector,
    version: &str,
    outcome: &str,
    fetched_at: i64,
    bytes: &[u8],
    pages: &[Page],
) -> serde_json::Value {
    json!({
        "version": version,
        "outcome": outcome,
        "fetched_at": crate::time::iso_millis(fetched_at),
        "collector": format!("tldsnap/{} {}/{}", env!("CARGO_PKG_VERSION"), c.key(), c.version()),
        "bytes": bytes.len(),
        "sha256": hex(bytes),
        "requests": pages.iter().map(|p| json!({
            "url": p.url,
            "status": p.status,
            "bytes": p.body.len(),
            "sha256": hex(&p.body),
        })).collect::<Vec<_>>(),
    })
}

/// The version in use for `shape`: the newest collected one, else the feed's own file
/// (relative path and its rows), if any.
fn previous(feeds: &Path, shape: &Shape) -> Result<Option<(String, gate::Rows)>, String> {
    let versions = shape.versions(feeds)?;
    let (rel, parse) = match versions.last() {
        Some(v) => (v.rel.clone(), v.parse),
        None => match shape.feed_current() {
            Some((rel, parse)) if feeds.join(&rel).is_file() => (rel, parse),
            _ => return Ok(None),
        },
    };
    let path = feeds.join(&rel);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let parsed =
        parse(&bytes).map_err(|e| format!("the version in use, {rel}, does not parse: {e}"))?;
    Ok(Some((rel, gate::rows_of(&parsed).0)))
}

/// A name for a version collected at `ms` that no file has yet.
fn free_name(feeds: &Path, shape: &Shape, ms: i64) -> String {
    let mut at = ms;
    loop {
        let name = shape.file_name(at);
        if !shape.collected_dir(feeds).join(&name).exists()
            && !shape.quarantine_dir(feeds).join(&name).exists()
        {
            return name;
        }
        at += 1000;
    }
}

/// Keeps what `c` collected: unchanged, new, or quarantined.
pub fn keep(
    feeds: &Path,
    c: &dyn Collector,
    thresholds: &Thresholds,
    pages: &[Page],
    fetched_at: i64,
) -> Result<Outcome, String> {
    let shape = Shape::of(c.key()).ok_or_else(|| format!("no feed shape for {}", c.key()))?;
    let bytes = assemble(pages);
    let parsed = (shape.parse)(&bytes);
    let prev = previous(feeds, shape)?;
    let name = free_name(feeds, shape, fetched_at);
    let (rows, failed) = match &parsed {
        Ok(p) => {
            let (rows, bad) = gate::rows_of(p);
            if let Some((rel, prev_rows)) = &prev
                && bad.is_empty()
                && *prev_rows == rows
            {
                let version = rel.rsplit('/').next().unwrap_or(rel);
                append_provenance(
                    feeds,
                    shape,
                    record(c, version, "unchanged", fetched_at, &bytes, pages),
                )?;
                return Ok(Outcome::Unchanged(rel.clone(), rows.len()));
            }
            let failed = gate::check(&rows, &bad, prev.as_ref().map(|(_, r)| r), thresholds);
            (rows, failed)
        }
        Err(e) => (
            gate::Rows::new(),
            vec![gate::Failed {
                rule: format!("parses completely: {e}"),
                rows: Vec::new(),
            }],
        ),
    };
    if failed.is_empty() {
        let path = shape.collected_dir(feeds).join(&name);
        write_atomic(&path, &bytes)?;
        append_provenance(
            feeds,
            shape,
            record(c, &name, "new", fetched_at, &bytes, pages),
        )?;
        return Ok(Outcome::New(
            format!(
                "{}/{}/{name}",
                shape.folder,
                crate::import::collected::COLLECTED_DIR
            ),
            rows.len(),
        ));
    }
    let qdir = shape.quarantine_dir(feeds);
    let rel = format!(
        "{}/{}/{name}",
        shape.folder,
        crate::import::collected::QUARANTINE_DIR
    );
    write_atomic(&qdir.join(&name), &bytes)?;
    let prev_name = prev
        .as_ref()
        .map_or("no previous version", |(r, _)| r.as_str());
    let report = gate::report(c.key(), &rel, prev_name, &failed);
    let report_name = format!("{name}.report.txt");
    write_atomic(&qdir.join(&report_name), report.as_bytes())?;
    append_provenance(
        feeds,
        shape,
        record(c, &name, "quarantined", fetched_at, &bytes, pages),
    )?;
    Ok(Outcome::Quarantined(
        rel,
        format!(
            "{}/{}/{report_name}",
            shape.folder,
            crate::import::collected::QUARANTINE_DIR
        ),
        failed.iter().map(|f| f.rule.clone()).collect(),
    ))
}

/// Records that collecting `c` at `fetched_at` failed, and why (`reason` already
/// scrubbed of secrets): a provenance line without a version.
pub fn record_failure(
    feeds: &Path,
    c: &dyn Collector,
    fetched_at: i64,
    reason: &str,
) -> Result<(), String> {
    let shape = Shape::of(c.key()).ok_or_else(|| format!("no feed shape for {}", c.key()))?;
    append_provenance(feeds, shape, failure_record(c, fetched_at, reason))
}

/// The provenance record of a failed collection: no version, the reason.
pub(crate) fn failure_record(
    c: &dyn Collector,
    fetched_at: i64,
    reason: &str,
) -> serde_json::Value {
    json!({
        "outcome": "failed",
        "fetched_at": crate::time::iso_millis(fetched_at),
        "collector": format!("tldsnap/{} {}/{}", env!("CARGO_PKG_VERSION"), c.key(), c.version()),
        "reason": reason,
    })
}

/// Takes the newest quarantined version of `c` into use.
pub fn accept(feeds: &Path, c: &dyn Collector) -> Result<Outcome, String> {
    let shape = Shape::of(c.key()).ok_or_else(|| format!("no feed shape for {}", c.key()))?;
    let qdir = shape.quarantine_dir(feeds);
    let mut found: Vec<(i64, String)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&qdir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(ms) = shape.instant_of(&name) {
                found.push((ms, name));
            }
        }
    }
    found.sort();
    let Some((ms, name)) = found.pop() else {
        return Err(format!(
            "nothing quarantined to accept in {}",
            qdir.display()
        ));
    };
    let dir = shape.collected_dir(feeds);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bytes = std::fs::read(qdir.join(&name)).map_err(|e| format!("{}: {e}", qdir.display()))?;
    (shape.parse)(&bytes).map_err(|e| format!("{name} cannot be taken: it does not parse: {e}"))?;
    std::fs::rename(qdir.join(&name), dir.join(&name))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(qdir.join(format!("{name}.report.txt")));
    let mut rec = record(c, &name, "accepted", ms, &bytes, &[]);
    rec["accepted_at"] = json!(crate::time::iso_millis(crate::time::now_ms()));
    if let Some(obj) = rec.as_object_mut() {
        obj.remove("requests");
    }
    append_provenance(feeds, shape, rec)?;
    Ok(Outcome::Accepted(format!(
        "{}/{}/{name}",
        shape.folder,
        crate::import::collected::COLLECTED_DIR
    )))
}
