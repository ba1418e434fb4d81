//! The last collection attempt of each registrar, read back from the feeds directory
//! (its provenance records), so that `tldsnap inspect`, `/readyz` and `/metrics` can
//! show it wherever the feeds directory is known, whoever ran the collection.

use std::path::Path;

use serde_json::Value;

use crate::import::collected::{QUARANTINE_DIR, Shape};

/// How a collection attempt ended, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// A new version was taken into use (collected, or accepted from the quarantine).
    Ok,
    /// The source answered the list in use again.
    Unchanged,
    /// The gate refused the version; the previous one stays in use.
    Quarantined,
    /// Nothing was collected.
    Failed,
}

impl AttemptOutcome {
    /// Every outcome, in the order the metrics list them.
    pub const ALL: [AttemptOutcome; 4] = [
        AttemptOutcome::Ok,
        AttemptOutcome::Unchanged,
        AttemptOutcome::Quarantined,
        AttemptOutcome::Failed,
    ];

    /// Its name (`ok`, `unchanged`, `quarantined`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Ok => "ok",
            AttemptOutcome::Unchanged => "unchanged",
            AttemptOutcome::Quarantined => "quarantined",
            AttemptOutcome::Failed => "failed",
        }
    }
}

/// A registrar's last collection attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// Registrar (collector) key.
    pub key: &'static str,
    /// When it was made (for an accepted version, when it was accepted), Unix ms.
    pub at_ms: i64,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// Why, for a failure (scrubbed of secrets when it was recorded) or a quarantine
    /// (where its report is).
    pub reason: Option<String>,
}

/// The last recorded attempt of every collector that has one under `feeds`, in key
/// order. Unreadable lines are skipped.
pub fn last_attempts(feeds: &Path) -> Vec<Attempt> {
    super::COLLECTORS
        .iter()
        .filter_map(|c| last_attempt(feeds, c.key()))
        .collect()
}

/// The last recorded attempt of collector `key` under `feeds`, if any.
pub fn last_attempt(feeds: &Path, key: &'static str) -> Option<Attempt> {
    let shape = Shape::of(key)?;
    let log = shape.collected_dir(feeds).join(shape.provenance_name());
    let text = std::fs::read_to_string(log).ok()?;
    text.lines().rev().find_map(|line| {
        let v: Value = serde_json::from_str(line).ok()?;
        let time = |field: &str| {
            v.get(field)
                .and_then(Value::as_str)
                .and_then(crate::time::parse_rfc3339)
        };
        let (outcome, reason) = match v.get("outcome")?.as_str()? {
            "new" | "accepted" => (AttemptOutcome::Ok, None),
            "unchanged" => (AttemptOutcome::Unchanged, None),
            "quarantined" => {
                let version = v.get("version").and_then(Value::as_str).unwrap_or("");
                let report = format!("{}/{QUARANTINE_DIR}/{version}.report.txt", shape.folder);
                (
                    AttemptOutcome::Quarantined,
                    Some(format!("the quality gate refused it, report {report}")),
                )
            }
            "failed" => (
                AttemptOutcome::Failed,
                Some(
                    v.get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason recorded")
                        .to_string(),
                ),
            ),
            _ => return None,
        };
        let at_ms = time("accepted_at").or_else(|| time("fetched_at"))?;
        Some(Attempt {
            key,
            at_ms,
            outcome,
            reason,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_of_each_log_is_the_last_attempt() {
        let mut r = [0u8; 6];
        getrandom::fill(&mut r).expect("random");
        let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let feeds = std::env::temp_dir().join(format!("tldsnap-status-{hex}"));
        let dir = feeds.join("porkbun/collected");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(
            dir.join("porkbun.provenance.jsonl"),
            "{\"version\":\"porkbun_2026-12-01T10-00-00Z.json\",\"outcome\":\"new\",\"fetched_at\":\"2026-12-01T10:00:00.000Z\"}\n\
             not json\n\
             {\"outcome\":\"failed\",\"fetched_at\":\"2026-12-01T11:00:00.000Z\",\"reason\":\"HTTP 503\"}\n",
        )
        .expect("write");
        let dir = feeds.join("dynadot/collected");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(
            dir.join("dynadot.provenance.jsonl"),
            "{\"version\":\"dynadot_2026-12-01T10-00-00Z.json\",\"outcome\":\"quarantined\",\"fetched_at\":\"2026-12-01T10:00:00.000Z\"}\n",
        )
        .expect("write");
        let got = last_attempts(&feeds);
        let _ = std::fs::remove_dir_all(&feeds);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].key, "dynadot");
        assert_eq!(got[0].outcome, AttemptOutcome::Quarantined);
        assert!(
            got[0]
                .reason
                .as_deref()
                .is_some_and(|r| r
                    .contains("dynadot/quarantine/dynadot_2026-12-01T10-00-00Z.json.report.txt")),
            "{got:?}"
        );
        assert_eq!(got[1].key, "porkbun");
        assert_eq!(got[1].outcome, AttemptOutcome::Failed);
        assert_eq!(got[1].reason.as_deref(), Some("HTTP 503"));
        assert_eq!(
            got[1].at_ms,
            crate::time::parse_rfc3339("2026-12-01T11:00:00Z").expect("time")
        );
    }
}
