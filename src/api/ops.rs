//! The operational routes: `/healthz`, `/readyz`, `/metrics`, `/openapi.json`. No key,
//! no metering.

use hyper::Response;
use hyper::header::{self, HeaderValue};

use super::{HttpResponse, State, json_response};
use crate::collect::status;
use crate::http::body::Body;
use crate::http::metrics::{
    CollectFacts, EventFacts, LiveFacts, ReloadFacts, RemoteFacts, SnapshotFacts, WebhookFacts,
    render_collect, render_events, render_live, render_remote, render_webhooks,
};
use crate::http::problem::Problem;
use crate::remote::replica::SyncState;
use crate::store::Loaded;
use serde_json::{Value, json};

use crate::http::router::Route;

const PROMETHEUS_TEXT: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");

/// `GET /healthz`: the process answers.
pub fn healthz() -> HttpResponse {
    json_response(Body::from(b"{\"status\":\"ok\"}".as_slice()))
}

/// `GET /openapi.json`: `document`, the route table's OpenAPI document.
pub fn openapi(document: bytes::Bytes) -> HttpResponse {
    json_response(Body::from(document))
}

/// `GET /readyz`: a snapshot is loaded (503 `not_ready` otherwise), and which; for a
/// replica of object storage, also how it stands with the store (`source`).
pub fn readyz(state: &State) -> HttpResponse {
    let Some(loaded) = state.store.load() else {
        return Problem::NotReady.into_response();
    };
    let header = loaded.snapshot.header();
    let mut body = Vec::with_capacity(160);
    body.extend_from_slice(b"{\"status\":\"ready\",\"snapshot\":{\"hash\":\"");
    body.extend_from_slice(header.hash_hex().as_bytes());
    body.extend_from_slice(b"\",\"data_updated\":\"");
    crate::time::write_iso_millis(header.data_updated_ms, &mut body);
    body.extend_from_slice(b"\",\"loaded_at\":\"");
    crate::time::write_iso_millis(loaded.loaded_at_ms, &mut body);
    body.extend_from_slice(b"\"}");
    if let Some(status) = &state.remote {
        let view = status.view(true);
        body.extend_from_slice(b",\"source\":{\"url\":");
        crate::json::write_str(&view.url, &mut body);
        body.extend_from_slice(b",\"state\":\"");
        body.extend_from_slice(view.state.as_str().as_bytes());
        body.extend_from_slice(b"\",\"pointer_hash\":");
        crate::json::write_opt_str(view.pointer_hash.as_deref(), &mut body);
        body.extend_from_slice(b",\"last_success\":");
        match view.last_success_ms {
            Some(ms) => {
                body.push(b'"');
                crate::time::write_iso_millis(ms, &mut body);
                body.push(b'"');
            }
            None => body.extend_from_slice(b"null"),
        }
        body.extend_from_slice(b",\"last_error\":");
        crate::json::write_opt_str(view.last_error.as_deref(), &mut body);
        body.push(b'}');
    }
    body.extend_from_slice(b",\"registrars\":[");
    let attempts = state.feeds.as_deref().map(status::last_attempts);
    for (i, (key, newest_ms)) in newest_prices(&loaded).iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(b"{\"key\":");
        crate::json::write_str(key, &mut body);
        body.extend_from_slice(b",\"newest_price\":");
        write_opt_time(*newest_ms, &mut body);
        if let Some(attempts) = &attempts {
            body.extend_from_slice(b",\"last_collection\":");
            // A collector's key is its registrar's key.
            match attempts.iter().find(|a| a.key == key) {
                None => body.extend_from_slice(b"null"),
                Some(a) => {
                    body.extend_from_slice(b"{\"at\":");
                    write_opt_time(a.at_ms, &mut body);
                    body.extend_from_slice(b",\"outcome\":\"");
                    body.extend_from_slice(a.outcome.as_str().as_bytes());
                    body.extend_from_slice(b"\",\"reason\":");
                    crate::json::write_opt_str(a.reason.as_deref(), &mut body);
                    body.push(b'}');
                }
            }
        }
        body.push(b'}');
    }
    body.extend_from_slice(b"]}");
    json_response(Body::from(body))
}

/// Per registrar of the served snapshot, its key and when its newest price was last
/// seen (Unix ms, 0 when it has none).
fn newest_prices(loaded: &Loaded) -> Vec<(String, i64)> {
    let data = loaded.snapshot.data();
    data.registrars
        .iter()
        .map(|r| (data.span_str(&r.key).to_string(), r.updated_ms.to_native()))
        .collect()
}

/// A time as a JSON string, or `null` for 0 (never).
fn write_opt_time(ms: i64, body: &mut Vec<u8>) {
    if ms == 0 {
        body.extend_from_slice(b"null");
    } else {
        body.push(b'"');
        crate::time::write_iso_millis(ms, body);
        body.push(b'"');
    }
}

/// `GET /metrics`: the Prometheus text exposition, with the requests of each of
/// `routes` (the route table's) under its path template.
pub fn metrics(state: &State, routes: &[Route]) -> HttpResponse {
    let facts = state.store.load().map(|loaded| facts(&loaded));
    let reloads = ReloadFacts {
        successes: state.store.reload_successes(),
        failures: state.store.reload_failures(),
    };
    let mut text = state.metrics.render(routes, facts.as_ref(), reloads);
    crate::mcp::render_metrics(&state.mcp, &mut text);
    if let Some(log) = &state.events {
        let facts = EventFacts {
            last_id: log.last_id(),
            kept: log.kept(),
            streams_open: super::events::streams_open(state),
        };
        render_events(&mut text, &facts);
    }
    if let Some(status) = &state.remote {
        let view = status.view(state.store.is_ready());
        let states = SyncState::ALL.map(SyncState::as_str);
        render_remote(
            &mut text,
            &RemoteFacts {
                states: &states,
                state: view.state.as_str(),
                polls_ok: view.polls_ok,
                polls_failed: view.polls_failed,
                last_success_ms: view.last_success_ms,
                pointer_hash: view.pointer_hash.as_deref(),
                served_published_ms: view.served_published_ms,
                now_ms: crate::time::now_ms(),
            },
        );
    }
    if let Some(hooks) = &state.webhooks {
        let (subscriptions, attempts) = hooks.counts();
        render_webhooks(
            &mut text,
            &WebhookFacts {
                subscriptions,
                attempts,
            },
        );
    }
    if let Some(loaded) = state.store.load() {
        let newest = newest_prices(&loaded);
        let newest: Vec<(&str, i64)> = newest
            .iter()
            .filter(|(_, ms)| *ms > 0)
            .map(|(k, ms)| (k.as_str(), *ms))
            .collect();
        let attempts = state.feeds.as_deref().map(status::last_attempts);
        let attempts: Option<Vec<(&str, &str, i64)>> = attempts.as_ref().map(|list| {
            list.iter()
                .map(|a| (a.key, a.outcome.as_str(), a.at_ms))
                .collect()
        });
        render_collect(
            &mut text,
            &CollectFacts {
                newest: &newest,
                attempts: attempts.as_deref(),
            },
        );
    }
    if let Some(live) = &state.live {
        render_live_report(&mut text, &live.report());
    }
    let mut response = Response::new(Body::from(text.into_bytes()));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, PROMETHEUS_TEXT);
    response
}

/// The live lookups' series, from their report.
fn render_live_report(text: &mut String, report: &crate::live::stats::Report) {
    use crate::live::cache::Kind;
    use crate::live::stats::{LATENCY_BOUNDS_MS, Outcome, Upstream};
    let c = &report.upstreams;
    let outcomes = Outcome::ALL.map(Outcome::as_str);
    let requests = Upstream::ALL.map(|u| (u.as_str(), &c.requests[u as usize][..]));
    let bounds = LATENCY_BOUNDS_MS.map(|ms| ms as f64 / 1e3);
    let durations = Upstream::ALL.map(|u| {
        let i = u as usize;
        (
            u.as_str(),
            &c.buckets[i][..],
            c.sent[i],
            c.sum_us[i] as f64 / 1e6,
        )
    });
    let cache = Kind::ALL.map(|k| {
        let [hits, misses] = report.cache[k as usize];
        (k.as_str(), hits, misses)
    });
    render_live(
        text,
        &LiveFacts {
            outcomes: &outcomes,
            requests: &requests,
            bounds: &bounds,
            durations: &durations,
            cache: &cache,
            cache_entries: report.cache_entries,
        },
    );
}

/// What `/metrics` reports of a loaded snapshot.
pub fn facts(loaded: &Loaded) -> SnapshotFacts {
    let header = loaded.snapshot.header();
    let data = loaded.snapshot.data();
    SnapshotFacts {
        hash_hex: header.hash_hex(),
        format_version: header.version,
        data_updated_ms: header.data_updated_ms,
        loaded_at_ms: loaded.loaded_at_ms,
        tlds: data.tld_count(),
        registrars: data.registrar_count(),
        offers: data.offer_count(),
    }
}

/// The OpenAPI operation of `/healthz`.
pub(crate) fn healthz_doc() -> Value {
    json!({
        "operationId": "healthz",
        "summary": "Liveness",
        "responses": { "200": { "description": "The process is up.", "content": { "application/json": { "schema": {
            "type": "object", "required": ["status"], "properties": { "status": { "const": "ok" } } } } } } }
    })
}

/// The OpenAPI operation of `/readyz`.
pub(crate) fn readyz_doc() -> Value {
    json!({
        "operationId": "readyz",
        "summary": "Readiness: a snapshot is loaded",
        "responses": {
            "200": { "description": "A snapshot is loaded and served.", "content": { "application/json": { "schema": {
                "type": "object", "required": ["status", "snapshot", "registrars"],
                "properties": {
                    "status": { "const": "ready" },
                    "registrars": { "type": "array", "description": "Per registrar of the snapshot (key order): when its newest price was last seen at its source, and, when the server is told the feeds directory (`serve --feeds`), its last collection attempt recorded there (`null`: never collected). See docs/COLLECT.md.",
                        "items": { "type": "object", "required": ["key", "newest_price"], "properties": {
                            "key": { "type": "string" },
                            "newest_price": { "type": ["string", "null"], "format": "date-time" },
                            "last_collection": { "type": ["object", "null"], "required": ["at", "outcome", "reason"], "properties": {
                                "at": { "type": "string", "format": "date-time" },
                                "outcome": { "enum": ["ok", "unchanged", "quarantined", "failed"], "description": "ok: a new version is in use; unchanged: the source answered the list in use again; quarantined: the quality gate refused it, the previous version stays in use; failed: nothing collected." },
                                "reason": { "type": ["string", "null"], "description": "Why it failed, or where the quarantine report is." } } } } } },
                    "snapshot": { "type": "object", "required": ["hash", "data_updated", "loaded_at"], "properties": {
                        "hash": { "type": "string", "description": "Content hash of the snapshot, hex." },
                        "data_updated": { "type": "string", "format": "date-time" },
                        "loaded_at": { "type": "string", "format": "date-time" } } },
                    "source": { "type": "object", "description": "Only on a replica that follows a snapshot in object storage (`serve --snapshot s3://…`): how it stands with the store. See docs/DEPLOY.md.",
                        "required": ["url", "state", "pointer_hash", "last_success", "last_error"],
                        "properties": {
                            "url": { "type": "string", "description": "The prefix followed, s3://BUCKET/PREFIX/." },
                            "state": { "enum": ["cached", "synced", "stale"], "description": "cached: serving the data directory's copy, the store not reached since start; synced: the last poll succeeded; stale: the last poll failed, the last good snapshot serves." },
                            "pointer_hash": { "type": ["string", "null"], "description": "The snapshot the store's pointer named at the last read." },
                            "last_success": { "type": ["string", "null"], "format": "date-time" },
                            "last_error": { "type": ["string", "null"], "description": "Why polls fail, while they fail." } } } } } } } },
            "503": { "$ref": "#/components/responses/NotReady" }
        }
    })
}

/// The OpenAPI operation of `/metrics`.
pub(crate) fn metrics_doc() -> Value {
    json!({
        "operationId": "metrics",
        "summary": "Prometheus metrics",
        "responses": { "200": { "description": "Prometheus text exposition format 0.0.4.",
            "content": { "text/plain": { "schema": { "type": "string" } } } } }
    })
}

/// The OpenAPI operation of `/openapi.json`.
pub(crate) fn openapi_doc() -> Value {
    json!({
        "operationId": "openapi",
        "summary": "This document",
        "responses": { "200": { "description": "The OpenAPI 3.1 document.",
            "content": { "application/json": { "schema": { "type": "object" } } } } }
    })
}
