//! The price-change event endpoints: polling (`/api/v1/client/events`) and Server-Sent
//! Events (`/api/v1/client/events/stream`), both reading the durable log
//! ([`crate::events::EventLog`]). `docs/EVENTS.md` is the reference.
//!
//! Order of checks, as for every keyed route: key (401), rate (429), parameters (400),
//! plan (403 `events_not_in_plan`), the log (503 `events_unavailable` without
//! `--data-dir`), the cursor (410 `cursor_expired`), for a stream the key's open
//! streams (429 `too_many_streams`), credits (429), answer. A poll costs one credit; a
//! stream costs one credit when it opens, however long it stays open.
//!
//! A stream is a small task per subscriber that sleeps on the log's "last id" watch
//! channel, a shutdown flag and a heartbeat timer: an idle subscriber costs its memory
//! and one timer wake-up every 15 s, nothing else. Events reach it through a bounded
//! channel that the response body reads ([`Body::channel`]).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use hyper::Request;
use hyper::header::{self, HeaderName, HeaderValue};
use tokio::sync::{mpsc, watch};

use super::{Connection, HttpResponse, State, Step, admit, admit_now, finish, finish_now, refuse};
use crate::access::plans::{FREE_TLDS, TldScope};
use crate::events::{EventLog, Filter, Stored};
use crate::http::body::Body;
use crate::http::params::{self, EventsParams};
use crate::http::problem::Problem;
use crate::http::router::Route;
use serde_json::{Value, json};

use crate::http::openapi::{events_parameters, keyed, meter_headers, ok, problem_response};

/// Events read from the log per chunk of a stream.
const STREAM_BATCH: usize = 256;
/// Chunks a stream may have waiting for the client (each up to a batch of events).
const STREAM_QUEUE: usize = 2;
/// The reconnection delay a stream tells `EventSource` clients, in ms.
const RETRY_MS: u32 = 5000;

/// Where an `EventSource` that reconnects says it stopped.
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// What both endpoints take from the request.
struct Wanted {
    after: u64,
    filter: Filter,
    limit: usize,
    /// The caller's plan, when it does not see every seller.
    shown: Option<Shown>,
}

/// What a plan that does not see every seller of a TLD is told of the events: nothing
/// about an offer it does not see today (no other door shows that offer either; an
/// event's new prices are its prices now). Asked of the snapshot served when the event
/// is read, since which offers a plan sees is today's ranking.
#[derive(Clone)]
struct Shown {
    store: Arc<crate::store::Store>,
    sight: crate::sight::Sight,
}

impl Shown {
    fn of(state: &State, caller: &crate::access::Caller) -> Option<Shown> {
        let sight = caller.sight();
        (!sight.every_seller()).then(|| Shown {
            store: Arc::clone(&state.store),
            sight,
        })
    }

    fn keeps(shown: &Option<Shown>, e: &Stored) -> bool {
        let Some(s) = shown else {
            return true;
        };
        let Some(loaded) = s.store.load() else {
            return false;
        };
        crate::query::event_shown(
            loaded.snapshot.data(),
            s.sight,
            &e.tld,
            [e.registrar.as_deref(), e.previous_registrar.as_deref()],
        )
    }
}

/// `GET /api/v1/client/events`: a plain function, as the price endpoints are ([`Step`]:
/// a credit kept in Redis is left to the caller), so a poll costs no future of its own.
pub fn poll<B>(state: &State, req: &Request<B>, route: &'static Route, conn: &Connection) -> Step {
    let caller = match admit_now(state, req, route, conn) {
        Ok(caller) => caller,
        Err(response) => return Step::Done(response),
    };
    let (log, wanted) = match prepare(state, req, &caller) {
        Ok(prepared) => prepared,
        Err(problem) => return Step::Done(refuse(problem, &caller)),
    };
    let page = log.read(wanted.after, &wanted.filter, wanted.limit);
    let mut out = state.body_buffer(route);
    out.extend_from_slice(b"{\"events\":[");
    let kept = page
        .events
        .iter()
        .filter(|e| Shown::keeps(&wanted.shown, e));
    for (i, e) in kept.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(e.json.as_bytes());
    }
    out.extend_from_slice(b"],\"next_after\":");
    crate::json::write_int(page.cursor, &mut out);
    out.extend_from_slice(b",\"has_more\":");
    out.extend_from_slice(if page.more { b"true" } else { b"false" });
    out.push(b'}');
    finish_now(state, route, caller, out)
}

/// `GET /api/v1/client/events/stream`.
pub async fn stream<B>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> HttpResponse {
    let (caller, log, wanted) = match admitted(state, req, route, conn).await {
        Ok(admitted) => admitted,
        Err(response) => return response,
    };
    // Every caller of a client route has a key; the place is freed when the stream
    // ends, or here if the credit is refused.
    let place = match caller.key_id() {
        Some(key) => {
            let max = state.config.max_streams_per_key;
            match state.streams_per_key.take(key, max) {
                Some(place) => Some(place),
                None => return refuse(Problem::TooManyStreams { max }, &caller),
            }
        }
        None => None,
    };
    let mut response = finish(state, route, caller, Vec::new()).await;
    if !response.status().is_success() {
        return response;
    }
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    let feed = pump(
        log,
        wanted.filter,
        wanted.shown,
        wanted.after,
        tx,
        state.streams_closing.subscribe(),
        state.config.event_heartbeat,
    );
    tokio::spawn(async move {
        feed.await;
        drop(place);
    });
    *response.body_mut() = Body::channel(rx);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Proxies that buffer answers (nginx) would hold events back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The event streams each key holds open: a key at [`super::Config::max_streams_per_key`]
/// is refused another until one of its streams ends.
#[derive(Debug, Default)]
pub(super) struct StreamsPerKey(std::sync::Mutex<std::collections::HashMap<Arc<str>, usize>>);

impl StreamsPerKey {
    /// A place for one more stream of `key`, or `None` when it holds `max` already.
    fn take(self: &Arc<Self>, key: &Arc<str>, max: usize) -> Option<StreamPlace> {
        let mut open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let held = open.entry(Arc::clone(key)).or_insert(0);
        if *held >= max {
            return None;
        }
        *held += 1;
        Some(StreamPlace {
            of: Arc::clone(self),
            key: Arc::clone(key),
        })
    }

    /// The streams `key` holds open.
    #[cfg(test)]
    fn held(&self, key: &str) -> usize {
        let open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        open.get(key).copied().unwrap_or(0)
    }
}

/// One open stream's place among its key's; dropping it frees the place.
#[derive(Debug)]
struct StreamPlace {
    of: Arc<StreamsPerKey>,
    key: Arc<str>,
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        let mut open = self.of.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(held) = open.get_mut(&self.key) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// Event streams open now: each one's task holds a receiver of the drain flag.
pub fn streams_open(state: &State) -> usize {
    state.streams_closing.receiver_count()
}

/// Parameters, plan, log and cursor: what to read, or the problem to answer.
/// The plans in force (not `public`) that `has`, sorted: what a refused caller can move
/// to, named in the problem from the plans file rather than from fixed words.
pub(super) fn plans_with(
    state: &State,
    has: impl Fn(&crate::access::plans::Plan) -> bool,
) -> Vec<String> {
    let plans = state.access.plans();
    plans
        .names()
        .into_iter()
        .filter(|&name| name != crate::access::plans::PUBLIC_PLAN)
        .filter(|&name| plans.get(name).is_some_and(|p| has(p)))
        .map(str::to_owned)
        .collect()
}

/// The checks up to the answer (key, rate limit, then the parameters and the
/// plan): the caller, the log and what it asks of it, or the refusal to send.
async fn admitted<B>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> Result<(crate::access::Caller, Arc<EventLog>, Wanted), HttpResponse> {
    let caller = admit(state, req, route, conn).await?;
    match prepare(state, req, &caller) {
        Ok((log, wanted)) => Ok((caller, log, wanted)),
        Err(problem) => Err(refuse(problem, &caller)),
    }
}

fn prepare<B>(
    state: &State,
    req: &Request<B>,
    caller: &crate::access::Caller,
) -> Result<(Arc<EventLog>, Wanted), Problem> {
    let values = params::pick(req.uri().query(), EventsParams::NAMES)?;
    let EventsParams {
        mut after,
        mut filter,
        limit,
    } = EventsParams::from_values(&values)?;
    // An EventSource reconnecting says where it stopped; that wins over the `after`
    // of the URL it was first opened with.
    // A scan of the few request headers: a lookup hashes the name byte by byte (~160
    // instructions a poll, with `Last-Event-ID` absent as it nearly always is).
    let mut headers = req.headers().iter();
    if let Some((_, last)) = headers.find(|(name, _)| **name == LAST_EVENT_ID) {
        let last = last.to_str().unwrap_or("\u{fffd}").trim();
        if !last.is_empty() {
            after = params::integer("Last-Event-ID", Some(last), 0, u64::MAX, 0)?;
        }
    }
    if !caller.plan().events {
        return Err(Problem::EventsNotInPlan {
            plan: caller.tier().to_owned(),
            including: plans_with(state, |p| p.events),
        });
    }
    if caller.plan().tlds == TldScope::Free {
        // A plan limited to the free TLDs sees only their events.
        let asked: Vec<Cow<'_, str>> = filter.tlds.iter().map(|t| Cow::from(t.as_str())).collect();
        super::prices::check_plan(state, caller, &asked)?;
        if filter.tlds.is_empty() {
            filter.tlds = FREE_TLDS.iter().map(|t| t.to_string()).collect();
        }
    }
    let Some(log) = state.events.clone() else {
        return Err(Problem::EventsUnavailable);
    };
    // Events between `after` and the oldest kept were removed: resuming would miss them.
    // An `after` past the last id is no cursor of this log (another data directory, or
    // one that was reset): waiting for ids to pass it would miss everything until then.
    let oldest = log.first_id().unwrap_or(log.last_id() + 1);
    if after > 0 && (after.saturating_add(1) < oldest || after > log.last_id()) {
        return Err(Problem::CursorExpired { after, oldest });
    }
    Ok((
        log,
        Wanted {
            after,
            filter,
            limit,
            shown: Shown::of(state, caller),
        },
    ))
}

/// Appends one event in the `text/event-stream` format.
fn write_sse(e: &Stored, out: &mut Vec<u8>) {
    out.extend_from_slice(b"id: ");
    crate::json::write_int(e.id, out);
    out.extend_from_slice(b"\nevent: ");
    out.extend_from_slice(e.kind.as_str().as_bytes());
    // The JSON is one line: no newline inside it needs a second `data:` field.
    out.extend_from_slice(b"\ndata: ");
    out.extend_from_slice(e.json.as_bytes());
    out.extend_from_slice(b"\n\n");
}

/// Feeds one stream: everything after `cursor` that passes `filter`, then each append
/// as it happens, a heartbeat comment after `heartbeat` of silence; returns (ending the
/// body) when the server drains or the client has gone.
async fn pump(
    log: Arc<EventLog>,
    filter: Filter,
    shown: Option<Shown>,
    mut cursor: u64,
    tx: mpsc::Sender<Vec<u8>>,
    mut closing: watch::Receiver<bool>,
    heartbeat: Duration,
) {
    let mut appended = log.subscribe();
    if !send(
        &tx,
        format!("retry: {RETRY_MS}\n\n").into_bytes(),
        &mut closing,
    )
    .await
    {
        return;
    }
    loop {
        // Seen before reading, so an append during the read wakes the wait below.
        appended.borrow_and_update();
        loop {
            let page = log.read(cursor, &filter, STREAM_BATCH);
            cursor = page.cursor;
            if !page.events.is_empty() {
                let mut out = Vec::with_capacity(page.events.len() * 400);
                for e in page.events.iter().filter(|e| Shown::keeps(&shown, e)) {
                    write_sse(e, &mut out);
                }
                if !out.is_empty() && !send(&tx, out, &mut closing).await {
                    return;
                }
            }
            if !page.more {
                break;
            }
        }
        let heartbeat_due = tokio::select! {
            biased;
            _ = closing.wait_for(|c| *c) => return,
            _ = tx.closed() => return,
            changed = appended.changed() => {
                if changed.is_err() {
                    return;
                }
                false
            }
            _ = tokio::time::sleep(heartbeat) => true,
        };
        if heartbeat_due && !send(&tx, b": heartbeat\n\n".to_vec(), &mut closing).await {
            return;
        }
    }
}

/// Queues `chunk` for the client; false when the stream should end (client gone, or
/// the server draining while the client is not reading).
async fn send(
    tx: &mpsc::Sender<Vec<u8>>,
    chunk: Vec<u8>,
    closing: &mut watch::Receiver<bool>,
) -> bool {
    if *closing.borrow() {
        return false;
    }
    tokio::select! {
        sent = tx.send(chunk) => sent.is_ok(),
        _ = closing.wait_for(|c| *c) => false,
    }
}

/// The OpenAPI operation of the events poll.
pub(crate) fn poll_doc() -> Value {
    json!({
        "operationId": "clientEvents",
        "summary": "Price-change events (polling)",
        "description": "Events with an id above `after`, oldest first, filtered by `tlds`, `registrars` and `types`, at most `limit`. Continue with `after=next_after`. One credit per call. Paid plans only (403 events_not_in_plan); 410 cursor_expired when events after `after` were removed by the retention. See docs/EVENTS.md.",
        "security": keyed(),
        "parameters": events_parameters(),
        "responses": {
            "200": ok("EventPage", "A page of events."),
            "400": { "$ref": "#/components/responses/BadRequest" },
            "401": { "$ref": "#/components/responses/Unauthorized" },
            "403": problem_response("The plan does not include events.", &["events_not_in_plan"], json!({})),
            "410": problem_response("Events after `after` are no longer kept.", &["cursor_expired"], json!({})),
            "429": { "$ref": "#/components/responses/TooManyRequests" },
            "503": problem_response("No snapshot loaded, or the server keeps no event log.", &["not_ready", "events_unavailable"], json!({}))
        }
    })
}

/// The OpenAPI operation of the event stream.
pub(crate) fn stream_doc() -> Value {
    json!({
        "operationId": "clientEventsStream",
        "summary": "Price-change events (Server-Sent Events)",
        "description": "A text/event-stream of the same events as the polling endpoint, with the same filters: every event as `id: <id>`, `event: <type>`, `data: <event JSON>`. Resume with the Last-Event-ID header (or `after`): nothing is missed or repeated. A comment line (`: heartbeat`) every 15 s of silence. The stream ends cleanly when the server shuts down; reconnect with Last-Event-ID. One credit per stream opened. A key holds at most 10 streams open at once unless the server is configured otherwise (429 too_many_streams, `limit`).",
        "security": keyed(),
        "parameters": events_parameters(),
        "responses": {
            "200": {
                "description": "The event stream.",
                "headers": meter_headers(),
                "content": { "text/event-stream": { "schema": { "type": "string" } } }
            },
            "400": { "$ref": "#/components/responses/BadRequest" },
            "401": { "$ref": "#/components/responses/Unauthorized" },
            "403": problem_response("The plan does not include events.", &["events_not_in_plan"], json!({})),
            "410": problem_response("Events after `after` are no longer kept.", &["cursor_expired"], json!({})),
            "429": problem_response("The rate limit or the monthly credits are exhausted (`retry_after` says when to retry), or the key already holds as many streams open as one key may, or has as many requests being answered at once as one key may (`limit`; no credit spent).", &["rate_limited", "credits_exhausted", "too_many_streams", "too_many_in_flight"], json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" } })),
            "503": problem_response("No snapshot loaded, or the server keeps no event log.", &["not_ready", "events_unavailable"], json!({}))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_max_streams_and_an_ended_one_frees_its_place() {
        let open = Arc::new(StreamsPerKey::default());
        let (a, b): (Arc<str>, Arc<str>) = ("key-a".into(), "key-b".into());
        let first = open.take(&a, 2).unwrap();
        let second = open.take(&a, 2).unwrap();
        assert!(open.take(&a, 2).is_none(), "a third stream of the same key");
        let other = open.take(&b, 2).expect("another key's streams are its own");
        assert_eq!((open.held("key-a"), open.held("key-b")), (2, 1));
        drop(first);
        assert_eq!(open.held("key-a"), 1);
        let again = open.take(&a, 2).expect("the ended stream's place is free");
        drop((second, again, other));
        assert_eq!((open.held("key-a"), open.held("key-b")), (0, 0));
        assert!(
            open.0.lock().unwrap().is_empty(),
            "no entry kept for a key with none"
        );
    }
}
