//! The delivery loop of one subscription, and the retry schedule.
//!
//! ```text
//! loop:
//!   not active            → wait for a change
//!   next matching event   → none: cursor moves past what was read; wait for an append
//!   attempt due later     → sleep until then (or a change)
//!   owner may not receive → disabled, with the reason
//!   send (the endpoint's one-at-a-time lock held), record the attempt, save:
//!     2xx  → delivered: cursor = event id
//!     410  → the subscription is removed
//!     else → the next delay of the schedule (± 20 % jitter); none left → disabled
//! ```
//!
//! The default schedule is the one the Standard Webhooks specification recommends: at
//! once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later — eight attempts over
//! about 27.6 hours. `serve --webhook-retry-schedule` sets another (the tests use
//! milliseconds).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::send::{MAX_RESPONSE_BODY, Outcome};
use super::sign::signature_header;
use super::subscription::{Attempt, RESPONSE_KEPT, Status};
use super::{Entry, Webhooks, lock};
use crate::events::Stored;

/// What an attempt can lead to, as [`Attempt::result`] says it.
pub const RESULTS: [&str; 5] = ["delivered", "retrying", "disabled", "removed", "test"];

/// Delays before each attempt at a message (Standard Webhooks' recommendation).
pub const DEFAULT_SCHEDULE: [Duration; 8] = [
    Duration::ZERO,
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];

/// Parses a schedule: comma-separated delays, each a whole number with a unit (`ms`,
/// `s`, `m`, `h`) or `0`; 1 to 50 of them, each at most a week.
pub fn parse_schedule(text: &str) -> Result<Vec<Duration>, String> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let split = item
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(item.len());
        let (n, unit) = item.split_at(split);
        let n: u64 = n
            .parse()
            .map_err(|_| format!("{item:?} is not a delay like 0, 500ms, 5s, 5m or 2h"))?;
        let ms = match unit {
            "" if n == 0 => 0,
            "ms" => n,
            "s" => n.saturating_mul(1000),
            "m" => n.saturating_mul(60_000),
            "h" => n.saturating_mul(3_600_000),
            _ => {
                return Err(format!(
                    "{item:?} is not a delay like 0, 500ms, 5s, 5m or 2h"
                ));
            }
        };
        if ms > 7 * 24 * 3_600_000 {
            return Err(format!("{item:?} is longer than a week"));
        }
        out.push(Duration::from_millis(ms));
    }
    if out.len() > 50 {
        return Err("at most 50 attempts".to_owned());
    }
    Ok(out)
}

/// The `webhook-id` of an event's message: the same on every attempt and after every
/// restart, different for every event (the swap time makes an id of a data directory
/// that was started afresh differ from the old one's).
pub fn message_id(e: &Stored) -> String {
    format!("msg_{}_{}", e.id, e.at_ms)
}

/// Runs the deliveries of one subscription until it is removed or the server stops.
pub(super) async fn run(hooks: Arc<Webhooks>, entry: Arc<Entry>) {
    let mut closing = hooks.closing.subscribe();
    let mut appended = hooks.log.subscribe();
    loop {
        if entry.removed.load(std::sync::atomic::Ordering::SeqCst) || *closing.borrow() {
            return;
        }
        let (status, cursor, filter, pending, next_at) = {
            let s = lock(&entry.state);
            (
                s.status,
                s.cursor,
                s.filter(),
                s.pending_event,
                s.next_attempt_ms,
            )
        };
        if status != Status::Active {
            tokio::select! {
                _ = entry.changed.notified() => {}
                _ = closing.wait_for(|c| *c) => return,
            }
            continue;
        }
        appended.borrow_and_update();
        let page = hooks.log.read(cursor, &filter, 1);
        let Some(event) = page.events.into_iter().next() else {
            if page.cursor > cursor {
                // Everything read was filtered out: handled. Saved with the next change;
                // a crash before that only reads those events again.
                lock(&entry.state).cursor = page.cursor;
            }
            tokio::select! {
                changed = appended.changed() => if changed.is_err() { return },
                _ = entry.changed.notified() => {}
                _ = closing.wait_for(|c| *c) => return,
            }
            continue;
        };
        if pending != Some(event.id) {
            let first = hooks.config.schedule.first().copied().unwrap_or_default();
            let mut s = lock(&entry.state);
            s.cursor = event.id - 1;
            s.reset_attempts();
            s.pending_event = Some(event.id);
            if !first.is_zero() {
                s.next_attempt_ms = Some(hooks.clock.now_ms() + first.as_millis() as i64);
            }
            continue;
        }
        if let Some(at) = next_at {
            let wait = at - hooks.clock.now_ms();
            if wait > 0 {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(wait as u64)) => {}
                    _ = entry.changed.notified() => {}
                    _ = closing.wait_for(|c| *c) => return,
                }
                continue;
            }
        }
        let sending = entry.sending.lock().await;
        {
            // The subscriber may have changed it while this waited for the lock.
            let s = lock(&entry.state);
            if s.status != Status::Active
                || s.pending_event != Some(event.id)
                || entry.removed.load(std::sync::atomic::Ordering::SeqCst)
            {
                continue;
            }
        }
        let owner = lock(&entry.state).owner.clone();
        if let Err(reason) = (hooks.config.owner_check)(&owner) {
            disable(&hooks, &entry, reason);
            continue;
        }
        let attempt = tokio::select! {
            a = deliver(&hooks, &entry, &event) => a,
            // Abandoned, not recorded: made again after the restart, same webhook-id.
            _ = closing.wait_for(|c| *c) => return,
        };
        drop(sending);
        if attempt.result == "removed" {
            let id = lock(&entry.state).id.clone();
            eprintln!(
                "tldsnap: webhook {id} removed: its receiver answered 410 Gone to {}",
                attempt.webhook_id
            );
            let _ = hooks.remove(&id, &entry);
            return;
        }
        if let Err(e) = hooks.write(&entry) {
            eprintln!("tldsnap: webhook state not saved (will be retried): {e}");
        }
    }
}

/// One attempt at `event`: send, then update the state (not saved here).
async fn deliver(hooks: &Webhooks, entry: &Entry, event: &Stored) -> Attempt {
    let (url, secrets, attempt_no) = {
        let s = lock(&entry.state);
        (
            s.url.clone(),
            s.signing_secrets(hooks.clock.now_ms()),
            s.attempts + 1,
        )
    };
    let id = message_id(event);
    let (outcome, at_ms, duration_ms) =
        post(hooks, &url, &id, &secrets, event.json.as_bytes()).await;
    let schedule = &hooks.config.schedule;
    let mut s = lock(&entry.state);
    s.attempts = attempt_no;
    let (status, error, response) = describe(&outcome);
    let mut next_attempt_ms = None;
    let result = match outcome {
        Outcome::Answered { status, .. } if (200..300).contains(&status) => {
            s.cursor = event.id;
            s.delivered += 1;
            s.reset_attempts();
            "delivered"
        }
        Outcome::Answered { status: 410, .. } => "removed",
        _ => {
            s.failing_since_ms.get_or_insert(at_ms);
            match schedule.get(attempt_no as usize) {
                Some(delay) => {
                    let at = at_ms + jittered(*delay).as_millis() as i64;
                    s.next_attempt_ms = Some(at);
                    next_attempt_ms = Some(at);
                    "retrying"
                }
                None => {
                    s.status = Status::Disabled;
                    s.updated_ms = at_ms;
                    s.next_attempt_ms = None;
                    let since = s.failing_since_ms.unwrap_or(at_ms);
                    s.disabled_reason = Some(format!(
                        "{attempt_no} attempts at event {} failed from {} to {} (last: {}); \
                         set the status to active to resume from this event",
                        event.id,
                        crate::time::iso_millis(since),
                        crate::time::iso_millis(at_ms),
                        error
                            .clone()
                            .or(status.map(|c| format!("HTTP {c}")))
                            .unwrap_or_default()
                    ));
                    "disabled"
                }
            }
        }
    };
    let attempt = Attempt {
        webhook_id: id,
        event_id: Some(event.id),
        event_type: event.kind.as_str().to_owned(),
        attempt: attempt_no,
        at_ms,
        duration_ms,
        status,
        error,
        response,
        result: result.to_owned(),
        next_attempt_ms,
    };
    s.record(attempt.clone());
    drop(s);
    hooks.count_attempt(result);
    attempt
}

/// Signs and POSTs one message; returns the outcome, when it was sent and how long
/// it took.
async fn post(
    hooks: &Webhooks,
    url: &str,
    id: &str,
    secrets: &[super::Secret],
    body: &[u8],
) -> (Outcome, i64, u64) {
    let at_ms = hooks.clock.now_ms();
    let timestamp = at_ms.div_euclid(1000);
    let headers = [
        ("webhook-id", id.to_owned()),
        ("webhook-timestamp", timestamp.to_string()),
        (
            "webhook-signature",
            signature_header(secrets, id, timestamp, body),
        ),
    ];
    let started = Instant::now();
    let outcome = match url::Url::parse(url) {
        Ok(url) => {
            hooks
                .config
                .sender
                .post(&url, &headers, Bytes::copy_from_slice(body))
                .await
        }
        Err(e) => Outcome::Failed {
            error: format!("stored URL does not parse: {e}"),
            refused: true,
        },
    };
    (outcome, at_ms, started.elapsed().as_millis() as u64)
}

fn describe(outcome: &Outcome) -> (Option<u16>, Option<String>, Option<String>) {
    match outcome {
        Outcome::Answered { status, body } => {
            let text = String::from_utf8_lossy(&body[..body.len().min(MAX_RESPONSE_BODY)]);
            let kept: String = text.chars().take(RESPONSE_KEPT).collect();
            (Some(*status), None, (!kept.is_empty()).then_some(kept))
        }
        Outcome::Failed { error, .. } => (None, Some(error.clone()), None),
    }
}

fn disable(hooks: &Webhooks, entry: &Entry, reason: String) {
    {
        let mut s = lock(&entry.state);
        s.status = Status::Disabled;
        s.disabled_reason = Some(reason);
        s.updated_ms = hooks.clock.now_ms();
        s.next_attempt_ms = None;
    }
    if let Err(e) = hooks.write(entry) {
        eprintln!("tldsnap: webhook state not saved: {e}");
    }
}

/// `delay` ± 20 %, from the operating system's randomness (0 stays 0): endpoints that
/// failed together do not all retry at the same instant.
fn jittered(delay: Duration) -> Duration {
    let mut r = [0u8; 4];
    if delay.is_zero() || getrandom::fill(&mut r).is_err() {
        return delay;
    }
    let unit = f64::from(u32::from_le_bytes(r)) / f64::from(u32::MAX); // 0..=1
    delay.mul_f64(0.8 + 0.4 * unit)
}

/// Sends one `webhook.test` message after any attempt in flight; records it.
pub(super) async fn send_test(hooks: &Webhooks, entry: &Entry) -> Attempt {
    let _sending = entry.sending.lock().await;
    let (sub_id, url, secrets) = {
        let s = lock(&entry.state);
        (
            s.id.clone(),
            s.url.clone(),
            s.signing_secrets(hooks.clock.now_ms()),
        )
    };
    let mut r = [0u8; 8];
    let _ = getrandom::fill(&mut r);
    let id = format!(
        "msg_test_{}",
        r.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    let now = hooks.clock.now_ms();
    let body = serde_json::json!({
        "type": "webhook.test",
        "timestamp": crate::time::iso_millis(now),
        "data": {"webhook": sub_id, "message": "a test message from tldsnap; it carries no event"},
    })
    .to_string();
    let (outcome, at_ms, duration_ms) = post(hooks, &url, &id, &secrets, body.as_bytes()).await;
    let (status, error, response) = describe(&outcome);
    let attempt = Attempt {
        webhook_id: id,
        event_id: None,
        event_type: "webhook.test".to_owned(),
        attempt: 1,
        at_ms,
        duration_ms,
        status,
        error,
        response,
        result: "test".to_owned(),
        next_attempt_ms: None,
    };
    lock(&entry.state).record(attempt.clone());
    hooks.count_attempt("test");
    if let Err(e) = hooks.write(entry) {
        eprintln!("tldsnap: webhook state not saved: {e}");
    }
    attempt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_and_refuse_nonsense() {
        assert_eq!(
            parse_schedule("0,5s,5m,30m,2h,5h,10h,10h").unwrap(),
            DEFAULT_SCHEDULE
        );
        assert_eq!(
            parse_schedule("0, 100ms ,2s").unwrap(),
            [
                Duration::ZERO,
                Duration::from_millis(100),
                Duration::from_secs(2)
            ]
        );
        for bad in [
            "",
            "5",
            "5x",
            "-1s",
            "1.5s",
            "200h",
            "s",
            &vec!["1s"; 51].join(","),
        ] {
            assert!(parse_schedule(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn jitter_stays_within_a_fifth() {
        assert_eq!(jittered(Duration::ZERO), Duration::ZERO);
        for _ in 0..1000 {
            let d = jittered(Duration::from_secs(100));
            assert!(
                d >= Duration::from_secs(80) && d <= Duration::from_secs(120),
                "{d:?}"
            );
        }
    }
}
