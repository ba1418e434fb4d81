//! A webhook subscription and its delivery state: one JSON file per subscription,
//! `DATA_DIR/webhooks/wh_<24 hex>.json`, owner-only, replaced whole by
//! [`crate::files::write_atomic_mode`] (temporary file, fsync, rename, fsync of the
//! directory) at every change, so a crash leaves the previous version or the new one.
//!
//! The file holds what the subscriber chose (URL, filters, description, paused), the
//! secrets, and where delivery stands: the `cursor` (the last event id handled:
//! delivered, or filtered out), the attempts made at the next event, when the next one
//! is due, and the last [`RECENT_ATTEMPTS`] attempts for `GET /webhooks/{id}`.

use std::collections::VecDeque;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::sign::Secret;
use crate::events::{Filter, Kind};
use crate::time::iso_millis;

/// Attempts kept per subscription for `GET /webhooks/{id}`.
pub const RECENT_ATTEMPTS: usize = 20;
/// Characters of a response body kept in an attempt.
pub const RESPONSE_KEPT: usize = 256;
/// Prefix of subscription ids.
pub const ID_PREFIX: &str = "wh_";

/// Whether deliveries are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Events are delivered.
    Active,
    /// The subscriber paused it: events wait (within the event retention) and are
    /// delivered, in order, once it is active again.
    Paused,
    /// Every attempt of the retry schedule failed (or the owner lost webhooks): events
    /// wait as when paused; `disabled_reason` says why. Setting it active resumes.
    Disabled,
}

impl Status {
    /// The name in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Paused => "paused",
            Status::Disabled => "disabled",
        }
    }
}

/// One delivery attempt, as `GET /webhooks/{id}` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// The `webhook-id` sent.
    pub webhook_id: String,
    /// The event delivered (`None` for a test message).
    pub event_id: Option<u64>,
    /// The event type (`webhook.test` for a test message).
    pub event_type: String,
    /// 1 for the first attempt at this message, 2 for the first retry, ...
    pub attempt: u32,
    /// When it was sent, Unix ms.
    pub at_ms: i64,
    /// How long it took, ms.
    pub duration_ms: u64,
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// Why there was no answer.
    pub error: Option<String>,
    /// The start of the receiver's body (at most [`RESPONSE_KEPT`] characters).
    pub response: Option<String>,
    /// What it led to: `delivered`, `retrying`, `disabled`, `removed` (410), `test`.
    pub result: String,
    /// When the next attempt is due (`retrying`), Unix ms.
    pub next_attempt_ms: Option<i64>,
}

/// A subscription, and where its deliveries stand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subscription {
    /// `wh_` and 24 hex digits.
    pub id: String,
    /// The API key (its id) the subscription belongs to.
    pub owner: String,
    /// Where events are POSTed.
    pub url: String,
    /// Free text.
    pub description: String,
    /// Canonical TLDs; empty: every TLD.
    pub tlds: Vec<String>,
    /// Registrar keys; empty: every registrar.
    pub registrars: Vec<String>,
    /// Event types; empty: every type.
    pub types: Vec<String>,
    /// Whether deliveries are made.
    pub status: Status,
    /// Why it is disabled.
    pub disabled_reason: Option<String>,
    /// Unix ms.
    pub created_ms: i64,
    /// Unix ms of the last change by the subscriber (or of being disabled).
    pub updated_ms: i64,
    /// The signing secret (`whsec_…`).
    pub secret: String,
    /// The secret before the last rotation, still signing until `previous_until_ms`.
    pub previous_secret: Option<String>,
    /// When the previous secret stops signing, Unix ms.
    pub previous_until_ms: Option<i64>,
    /// The last event id handled (delivered or filtered out).
    pub cursor: u64,
    /// The event the attempts below are for.
    pub pending_event: Option<u64>,
    /// Attempts made at `pending_event`.
    pub attempts: u32,
    /// When the next attempt at `pending_event` is due, Unix ms.
    pub next_attempt_ms: Option<i64>,
    /// When the first failed attempt at `pending_event` was made, Unix ms.
    pub failing_since_ms: Option<i64>,
    /// Events delivered.
    pub delivered: u64,
    /// The last attempts, oldest first.
    pub recent: VecDeque<Attempt>,
}

impl Subscription {
    /// The event filter of the subscription.
    pub fn filter(&self) -> Filter {
        Filter {
            kinds: self
                .types
                .iter()
                .filter_map(|t| Kind::parse(t))
                .fold(0, |k, t| k | t.bit()),
            tlds: self.tlds.clone(),
            registrars: self.registrars.clone(),
        }
    }

    /// The secrets that sign a delivery at `now_ms`: the current one, and the previous
    /// one during its grace period.
    pub fn signing_secrets(&self, now_ms: i64) -> Vec<Secret> {
        let mut out: Vec<Secret> = Secret::parse(&self.secret).into_iter().collect();
        if let (Some(prev), Some(until)) = (&self.previous_secret, self.previous_until_ms)
            && now_ms < until
        {
            out.extend(Secret::parse(prev));
        }
        out
    }

    /// Keeps `attempt` among the recent ones.
    pub fn record(&mut self, attempt: Attempt) {
        if self.recent.len() == RECENT_ATTEMPTS {
            self.recent.pop_front();
        }
        self.recent.push_back(attempt);
    }

    /// Forgets the attempts at the pending event (a new event, a new URL, re-enabled).
    pub fn reset_attempts(&mut self) {
        self.pending_event = None;
        self.attempts = 0;
        self.next_attempt_ms = None;
        self.failing_since_ms = None;
    }

    /// The JSON the API shows: the subscription, its delivery state, and with
    /// `attempts` its recent attempts (newest first). The secret is never in it.
    pub fn to_json(&self, attempts: bool) -> serde_json::Value {
        let mut v = serde_json::json!({
            "id": self.id,
            "url": self.url,
            "description": self.description,
            "tlds": self.tlds,
            "registrars": self.registrars,
            "types": self.types,
            "status": self.status.as_str(),
            "disabled_reason": self.disabled_reason,
            "created_at": iso_millis(self.created_ms),
            "updated_at": iso_millis(self.updated_ms),
            "delivery": {
                "last_event_id": self.cursor,
                "delivered": self.delivered,
                "pending_event_id": self.pending_event,
                "attempts": self.attempts,
                "next_attempt_at": self.next_attempt_ms.map(iso_millis),
                "failing_since": self.failing_since_ms.map(iso_millis),
            },
        });
        if attempts {
            v["recent_attempts"] = self.recent.iter().rev().map(Attempt::to_json).collect();
        }
        v
    }

    /// Reads a subscription file.
    pub fn read(path: &Path) -> Result<Subscription, String> {
        let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let sub: Subscription = serde_json::from_slice(&text)
            .map_err(|e| format!("{}: not a webhook subscription: {e}", path.display()))?;
        if Secret::parse(&sub.secret).is_none() {
            return Err(format!(
                "{}: the secret is not a whsec_ secret",
                path.display()
            ));
        }
        Ok(sub)
    }

    /// The file's bytes.
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a subscription serializes");
        out.push(b'\n');
        out
    }
}

impl Attempt {
    /// The JSON the API shows.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "webhook_id": self.webhook_id,
            "event_id": self.event_id,
            "event_type": self.event_type,
            "attempt": self.attempt,
            "at": iso_millis(self.at_ms),
            "duration_ms": self.duration_ms,
            "status": self.status,
            "error": self.error,
            "response": self.response,
            "result": self.result,
            "next_attempt_at": self.next_attempt_ms.map(iso_millis),
        })
    }
}

/// Whether `id` has the form of a subscription id (before any lookup).
pub fn is_id(id: &str) -> bool {
    id.strip_prefix(ID_PREFIX).is_some_and(|hex| {
        hex.len() == 24 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// A new random subscription id.
pub fn new_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes)?;
    Ok(format!(
        "{ID_PREFIX}{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Subscription {
        Subscription {
            id: new_id().unwrap(),
            owner: "key_1".into(),
            url: "https://hooks.example.com/x".into(),
            description: "d".into(),
            tlds: vec!["com".into()],
            registrars: vec![],
            types: vec!["price.changed".into(), "ranking.changed".into()],
            status: Status::Active,
            disabled_reason: None,
            created_ms: 1_795_262_400_000,
            updated_ms: 1_795_262_400_000,
            secret: Secret::generate().unwrap().to_text(),
            previous_secret: None,
            previous_until_ms: None,
            cursor: 7,
            pending_event: None,
            attempts: 0,
            next_attempt_ms: None,
            failing_since_ms: None,
            delivered: 0,
            recent: VecDeque::new(),
        }
    }

    #[test]
    fn files_round_trip_and_json_hides_the_secret() {
        let mut s = sample();
        for i in 0..25 {
            s.record(Attempt {
                webhook_id: format!("msg_{i}"),
                event_id: Some(i),
                event_type: "price.changed".into(),
                attempt: 1,
                at_ms: 0,
                duration_ms: 1,
                status: Some(200),
                error: None,
                response: None,
                result: "delivered".into(),
                next_attempt_ms: None,
            });
        }
        assert_eq!(s.recent.len(), RECENT_ATTEMPTS);
        assert_eq!(s.recent[0].webhook_id, "msg_5");
        let dir = std::env::temp_dir().join(format!("tldsnap-sub-{}", new_id().unwrap()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.json");
        std::fs::write(&path, s.to_file_bytes()).unwrap();
        assert_eq!(Subscription::read(&path).unwrap(), s);
        let json = s.to_json(true);
        assert!(!json.to_string().contains(&s.secret));
        assert_eq!(json["recent_attempts"][0]["webhook_id"], "msg_24");
        assert_eq!(json["created_at"], "2026-11-21T12:00:00.000Z");
        std::fs::write(&path, b"{\"id\":1}").unwrap();
        assert!(Subscription::read(&path).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_filter_and_the_secrets_in_force() {
        let mut s = sample();
        let f = s.filter();
        assert_eq!(
            f.kinds,
            Kind::PriceChanged.bit() | Kind::RankingChanged.bit()
        );
        assert_eq!(f.tlds, ["com"]);
        assert_eq!(s.signing_secrets(0).len(), 1);
        s.previous_secret = Some(Secret::generate().unwrap().to_text());
        s.previous_until_ms = Some(100);
        assert_eq!(s.signing_secrets(99).len(), 2);
        assert_eq!(s.signing_secrets(100).len(), 1);
        assert!(is_id(&s.id));
        assert!(!is_id("wh_xyz") && !is_id("wh_0123456789ABCDEF01234567"));
    }
}
