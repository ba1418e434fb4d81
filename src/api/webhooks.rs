//! Webhook subscriptions: `/api/v1/client/webhooks` and below, over
//! [`crate::webhooks::Webhooks`]. `docs/EVENTS.md` is the reference.
//!
//! | route | does | answer |
//! |---|---|---|
//! | `POST /webhooks` | subscribe (url, description, tlds, registrars, types) | 201, with the `secret` (shown once) |
//! | `GET /webhooks` | the key's subscriptions | 200 |
//! | `GET /webhooks/{id}` | one, with its recent delivery attempts | 200 |
//! | `PATCH /webhooks/{id}` | change url, description, filters, or `status` (active, paused) | 200 |
//! | `DELETE /webhooks/{id}` | unsubscribe | 204 |
//! | `POST /webhooks/{id}/test` | send a `webhook.test` message now (one at a time; one credit) | 200, with the attempt |
//! | `POST /webhooks/{id}/rotate-secret` | a new secret; the old one signs for 24 h more | 200, with the new `secret` |
//!
//! Order of checks: key (401), rate (429), content type (415), body (413, 400), plan
//! (403 `webhooks_not_in_plan`, `tld_not_in_plan`), the event log (503
//! `events_unavailable` without `--data-dir`), the subscription (404 `unknown_webhook`:
//! another key's subscriptions do not exist for this one), the plan's number of
//! subscriptions (403 `webhook_limit`), the URL (400 `invalid_webhook_url`). A test
//! then meets a test of the same subscription in flight (409 `webhook_test_in_flight`,
//! at once) and the credits (429 `credits_exhausted`): a test message costs one credit,
//! taken before it is sent, as every answered client call does; the other webhook
//! calls spend none, and deliveries are not API calls.

use std::borrow::Cow;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;

use super::{
    Connection, HttpResponse, State, admit, answer_headers, read_body, refuse, with_meter,
};
use crate::access::Caller;
use crate::access::plans::{FREE_TLDS, TldScope};
use crate::events::Kind;
use crate::http::body::Body;
use crate::http::params::{MAX_LIST_VALUES, is_registrar_key};
use crate::http::problem::{Problem, echo};
use crate::http::router::Route;
use crate::webhooks::{NewSubscription, Patch, Status, WebhookError, subscription};
use serde_json::{Value, json};

use crate::http::openapi::{merge, meter_headers, problem_response};

/// Largest request body read: a URL of 2 KiB, a description and 3 × 100 filter values.
pub const MAX_BODY: usize = 16 * 1024;
const ACCEPTS: &str = "application/json";
/// Where the collection lives (the `Location` of a new subscription is below it).
const COLLECTION: &str = "/api/v1/client/webhooks";

/// The fields a subscription body may have (`status` in a PATCH only).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    url: Option<String>,
    description: Option<String>,
    tlds: Option<Vec<String>>,
    registrars: Option<Vec<String>>,
    types: Option<Vec<String>>,
    status: Option<String>,
}

/// The webhook routes: the collection, one subscription, its test message, its secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `GET, POST /api/v1/client/webhooks`
    Collection,
    /// `GET, PATCH, DELETE /api/v1/client/webhooks/{id}`
    Item,
    /// `POST /api/v1/client/webhooks/{id}/test`
    Test,
    /// `POST /api/v1/client/webhooks/{id}/rotate-secret`
    Rotate,
}

/// Every webhook route.
pub async fn handle(
    state: &State,
    req: Request<Incoming>,
    route: &'static Route,
    endpoint: Endpoint,
    conn: &Connection,
) -> HttpResponse {
    let mut caller = match admit(state, &req, route, conn).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    // The subscription's id, raw: the path's segment in place of `{id}`.
    let segment = route.segment(req.uri().path()).to_owned();
    match answer(state, req, endpoint, &segment, &mut caller).await {
        Ok(response) => response,
        Err(problem) => refuse(problem, &caller),
    }
}

async fn answer(
    state: &State,
    req: Request<Incoming>,
    endpoint: Endpoint,
    segment: &str,
    caller: &mut Caller,
) -> Result<HttpResponse, Problem> {
    let method = req.method().clone();
    // The body's syntax and values first (400), like the parameters of every endpoint.
    let mut new = None;
    let mut change = None;
    if method == Method::POST && endpoint == Endpoint::Collection {
        new = Some(new_subscription(read_fields(state, req).await?)?);
    } else if method == Method::PATCH {
        change = Some(patch(read_fields(state, req).await?)?);
    }
    let limit = match caller.plan().webhooks {
        Some(0) => {
            return Err(Problem::WebhooksNotInPlan {
                plan: caller.tier().to_owned(),
                including: super::events::plans_with(state, |p| p.webhooks != Some(0)),
            });
        }
        limit => limit,
    };
    if let Some(new) = &mut new {
        scope(state, caller, &mut new.tlds)?;
    }
    if let Some(tlds) = change.as_mut().and_then(|c| c.tlds.as_mut()) {
        scope(state, caller, tlds)?;
    }
    let hooks = state.webhooks.clone().ok_or(Problem::EventsUnavailable)?;
    let owner: Arc<str> = caller.key_id().cloned().unwrap_or_else(|| Arc::from(""));
    let owner = &*owner;
    let id = segment;
    if endpoint != Endpoint::Collection && !subscription::is_id(id) {
        return Err(unknown(id));
    }
    let found = |e| match e {
        WebhookError::NotFound => unknown(id),
        e => from_error(e, caller),
    };
    match (endpoint, method) {
        (Endpoint::Collection, Method::POST) => {
            let new = new.unwrap_or_default();
            let sub = hooks
                .create(owner, new, limit)
                .await
                .map_err(|e| from_error(e, caller))?;
            let mut body = sub.to_json(false);
            body["secret"] = sub.secret.clone().into();
            let mut response = json(caller, StatusCode::CREATED, &body);
            if let Ok(location) = HeaderValue::from_str(&format!("{COLLECTION}/{}", sub.id)) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            Ok(response)
        }
        (Endpoint::Collection, _) => {
            let list: Vec<serde_json::Value> =
                hooks.list(owner).iter().map(|s| s.to_json(false)).collect();
            Ok(json(
                caller,
                StatusCode::OK,
                &serde_json::json!({ "webhooks": list }),
            ))
        }
        (Endpoint::Item, Method::PATCH) => {
            let patch = change.unwrap_or_default();
            let sub = hooks.update(owner, id, patch).await.map_err(found)?;
            Ok(json(caller, StatusCode::OK, &sub.to_json(true)))
        }
        (Endpoint::Item, Method::DELETE) => {
            hooks.delete(owner, id).map_err(found)?;
            let mut response = json(caller, StatusCode::NO_CONTENT, &serde_json::Value::Null);
            *response.body_mut() = Body::from(Vec::new());
            response.headers_mut().remove(header::CONTENT_TYPE);
            Ok(response)
        }
        (Endpoint::Item, _) => {
            let sub = hooks.get(owner, id).map_err(found)?;
            Ok(json(caller, StatusCode::OK, &sub.to_json(true)))
        }
        (Endpoint::Test, _) => {
            // One test at a time per subscription: another is refused here, at once.
            let test = hooks.begin_test(owner, id).map_err(found)?;
            // The credit is taken before the message is sent (outbound work is done
            // only for a caller with credits left), and kept if the client leaves
            // while the receiver is slow to answer.
            let spent = match state.access.spend_now(caller, 1) {
                Some(spent) => spent,
                None => state.access.spend_n(caller, 1).await,
            };
            if let Err(denial) = spent {
                let (problem, meter) = Problem::from_denial(denial);
                return Ok(with_meter(
                    problem.into_response(),
                    meter.as_ref().or(caller.headers.as_ref()),
                ));
            }
            let attempt = test.send(&hooks).await;
            Ok(json(
                caller,
                StatusCode::OK,
                &serde_json::json!({ "attempt": attempt.to_json() }),
            ))
        }
        (Endpoint::Rotate, _) => {
            let (sub, secret) = hooks.rotate_secret(owner, id).map_err(found)?;
            let mut body = sub.to_json(false);
            body["secret"] = secret.into();
            body["previous_secret_expires_at"] =
                sub.previous_until_ms.map(crate::time::iso_millis).into();
            Ok(json(caller, StatusCode::OK, &body))
        }
    }
}

/// The webhooks of a server, for `serve`: whether an owner (an API key id) may still
/// receive, by the key table and plans in force at each delivery.
pub fn owner_check(access: Arc<crate::access::Access>) -> crate::webhooks::OwnerCheck {
    Arc::new(move |owner: &str| match access.plan_of(owner) {
        None => Err(format!(
            "the API key {owner} that owns this subscription no longer exists"
        )),
        Some(plan) if plan.webhooks == Some(0) => Err(format!(
            "the {} plan of the API key {owner} does not include webhooks",
            plan.name
        )),
        Some(_) => Ok(()),
    })
}

fn unknown(id: &str) -> Problem {
    Problem::UnknownWebhook { id: echo(id) }
}

fn from_error(e: WebhookError, caller: &Caller) -> Problem {
    match e {
        WebhookError::NotFound => unknown(""),
        WebhookError::Url(reason) => Problem::InvalidWebhookUrl { reason },
        WebhookError::Limit(limit) => Problem::WebhookLimit {
            plan: caller.tier().to_owned(),
            limit,
        },
        WebhookError::Invalid(reason) => Problem::InvalidBody { reason },
        // The subscription could not be written: the server's trouble, said as such.
        WebhookError::Io(reason) => Problem::NotSaved { reason },
        WebhookError::TestInFlight(retry_after_secs) => {
            Problem::WebhookTestInFlight { retry_after_secs }
        }
    }
}

/// A 2xx JSON answer with the caller's metering headers (no credit is spent here).
fn json(caller: &Caller, status: StatusCode, body: &serde_json::Value) -> HttpResponse {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    *response.headers_mut() = answer_headers(caller.headers.as_ref());
    response
}

async fn read_fields(state: &State, req: Request<Incoming>) -> Result<Fields, Problem> {
    let media = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase());
    if media.as_deref() != Some("application/json") {
        return Err(Problem::UnsupportedMediaType { accept: ACCEPTS });
    }
    let (_, body) = read_body(req, MAX_BODY, state.config.body_timeout).await?;
    let what = "expected a JSON object with url, description, tlds, registrars, types, status";
    let value: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| Problem::InvalidBody {
            reason: format!("{what}: {e}"),
        })?;
    // `null` is no value of any field: leave a field out to keep it as it is.
    if let Some((name, _)) = value
        .as_object()
        .and_then(|o| o.iter().find(|(_, v)| v.is_null()))
    {
        return Err(invalid(&format!(
            "{name} must not be null (leave it out instead)"
        )));
    }
    serde_json::from_value(value).map_err(|e| Problem::InvalidBody {
        reason: format!("{what}: {e}"),
    })
}

fn new_subscription(f: Fields) -> Result<NewSubscription, Problem> {
    if f.status.is_some() {
        return Err(invalid(
            "status is set with PATCH; a new subscription is active",
        ));
    }
    let url = f.url.ok_or_else(|| invalid("url is required"))?;
    Ok(NewSubscription {
        url,
        description: f.description.unwrap_or_default(),
        tlds: tld_list(f.tlds.unwrap_or_default())?,
        registrars: registrar_list(f.registrars.unwrap_or_default())?,
        types: type_list(f.types.unwrap_or_default())?,
    })
}

fn patch(f: Fields) -> Result<Patch, Problem> {
    let status = match f.status.as_deref() {
        None => None,
        Some("active") => Some(Status::Active),
        Some("paused") => Some(Status::Paused),
        Some(other) => {
            return Err(invalid(&format!(
                "status {:?} is not active or paused",
                echo(other)
            )));
        }
    };
    let patch = Patch {
        url: f.url,
        description: f.description,
        tlds: f.tlds.map(tld_list).transpose()?,
        registrars: f.registrars.map(registrar_list).transpose()?,
        types: f.types.map(type_list).transpose()?,
        status,
    };
    if patch == Patch::default() {
        return Err(invalid(
            "give at least one of url, description, tlds, registrars, types, status",
        ));
    }
    Ok(patch)
}

/// A plan limited to the free TLDs subscribes to their events only.
fn scope(state: &State, caller: &Caller, tlds: &mut Vec<String>) -> Result<(), Problem> {
    if caller.plan().tlds != TldScope::Free {
        return Ok(());
    }
    let asked: Vec<Cow<'_, str>> = tlds.iter().map(|t| Cow::from(t.as_str())).collect();
    super::prices::check_plan(state, caller, &asked)?;
    if tlds.is_empty() {
        *tlds = FREE_TLDS.iter().map(|t| t.to_string()).collect();
    }
    Ok(())
}

fn invalid(reason: &str) -> Problem {
    Problem::InvalidBody {
        reason: reason.to_owned(),
    }
}

/// Checks and canonicalises a body list: each item by `each`, duplicates collapsed, at
/// most [`MAX_LIST_VALUES`] distinct. An empty list is "every".
fn list(
    name: &str,
    items: Vec<String>,
    each: impl Fn(&str) -> Result<String, String>,
) -> Result<Vec<String>, Problem> {
    let mut out: Vec<String> = Vec::new();
    for item in &items {
        let value = each(item).map_err(|why| invalid(&format!("{name}: {why}")))?;
        if !out.contains(&value) {
            out.push(value);
        }
        if out.len() > MAX_LIST_VALUES {
            return Err(Problem::TooManyItems {
                name: match name {
                    "tlds" => "tlds",
                    "registrars" => "registrars",
                    _ => "types",
                },
                max: MAX_LIST_VALUES,
            });
        }
    }
    Ok(out)
}

fn tld_list(items: Vec<String>) -> Result<Vec<String>, Problem> {
    list("tlds", items, |t| {
        crate::tld::normalize(t)
            .map(|n| n.into_owned())
            .map_err(|e| format!("{:?} is not a well-formed TLD: {e}", echo(t)))
    })
}

fn registrar_list(items: Vec<String>) -> Result<Vec<String>, Problem> {
    list("registrars", items, |k| {
        let k = k.trim_matches([' ', '\t']);
        if is_registrar_key(k) {
            Ok(k.to_ascii_lowercase())
        } else {
            Err(format!("{:?} is not a registrar key", echo(k)))
        }
    })
}

fn type_list(items: Vec<String>) -> Result<Vec<String>, Problem> {
    list("types", items, |t| {
        Kind::parse(t)
            .map(|k| k.as_str().to_owned())
            .ok_or_else(|| {
                format!(
                    "{:?} is not an event type (price.changed, offer.added, offer.removed, \
                 ranking.changed)",
                    echo(t)
                )
            })
    })
}

/// The OpenAPI path item of a webhook route: its operations, each with the refusals it
/// can answer.
pub(crate) fn doc(endpoint: Endpoint) -> Value {
    let keyed = json!([{ "apiKey": [] }]);
    let schema = |name: &str| json!({ "$ref": format!("#/components/schemas/{name}") });
    let ok = |status: &str, name: &str, description: &str| {
        json!({ status: {
            "description": description,
            "headers": meter_headers(),
            "content": { "application/json": { "schema": schema(name) } }
        } })
    };
    let body = |name: &str| json!({ "required": true, "content": { "application/json": { "schema": schema(name) } } });
    // Every operation: the key, and the refusals it can answer (`reads_body`: it reads
    // a JSON body; `item`: it is on one subscription, by its `id`).
    let with_errors = |mut op: Value, reads_body: bool, item: bool| {
        let mut errors = json!({
            "401": { "$ref": "#/components/responses/Unauthorized" },
            "403": problem_response("The plan has no webhooks, or this key has as many subscriptions as it allows (`limit`), or a TLD is outside a plan limited to the free TLDs.", &["webhooks_not_in_plan", "webhook_limit", "tld_not_in_plan"], json!({})),
            "404": problem_response(if item { "This key has no subscription with this id (another key's do not exist for it)." } else { "No endpoint has this path." }, if item { &["unknown_webhook", "not_found"] } else { &["not_found"] }, json!({})),
            "405": { "$ref": "#/components/responses/MethodNotAllowed" },
            "414": { "$ref": "#/components/responses/RequestTooLarge" },
            "429": problem_response("The rate limit is exhausted (`retry_after` says when to retry), or the key has as many requests being answered at once as one key may (too_many_in_flight, `limit`). (Webhook calls spend no credits, but for a test message.)", &["rate_limited", "too_many_in_flight"], json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" } })),
            "431": { "$ref": "#/components/responses/RequestTooLarge" },
            "503": problem_response("The server keeps no event log (no --data-dir), or a change could not be written.", &["events_unavailable", "not_saved"], json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" } }))
        });
        if reads_body {
            merge(
                &mut errors,
                json!({
                    "400": problem_response("The body is not the JSON object the endpoint takes, a field is bad, a list has more than 100 distinct values, or the url is one the server does not deliver to.", &["invalid_body", "too_many_values", "invalid_webhook_url"], json!({})),
                    "408": { "$ref": "#/components/responses/RequestTimeout" },
                    "413": { "$ref": "#/components/responses/PayloadTooLarge" },
                    "415": { "$ref": "#/components/responses/UnsupportedMediaType" }
                }),
            );
        }
        merge(&mut op["responses"], errors);
        op["security"] = keyed.clone();
        if item {
            op["parameters"] = json!([ { "$ref": "#/components/parameters/id" } ]);
        }
        op
    };
    match endpoint {
        Endpoint::Collection => json!({
            "get": with_errors(json!({
                "operationId": "listWebhooks",
                "summary": "This key's webhook subscriptions",
                "description": "Oldest first, without secrets or attempts. No credit is spent.",
                "responses": ok("200", "WebhookList", "The subscriptions.")
            }), false, false),
            "post": with_errors(json!({
                "operationId": "createWebhook",
                "summary": "Subscribe a URL to price-change events",
                "description": "Events recorded from now on that pass the filters are POSTed to `url`, signed the Standard Webhooks way with the `secret` of the answer, which is shown this once. Pro and Enterprise plans (subscriptions per key: the plan's `webhooks`). No credit is spent; deliveries are not API calls. See docs/EVENTS.md.",
                "requestBody": body("WebhookCreate"),
                "responses": ok("201", "WebhookCreated", "The subscription, with its signing secret (shown once). `Location` is its URL.")
            }), true, false)
        }),
        Endpoint::Item => json!({
            "get": with_errors(json!({
                "operationId": "getWebhook",
                "summary": "One subscription, with its recent delivery attempts",
                "responses": ok("200", "WebhookDetail", "The subscription, its delivery state and its last 20 attempts (newest first).")
            }), false, true),
            "patch": with_errors(json!({
                "operationId": "updateWebhook",
                "summary": "Change the URL, description or filters, pause, or resume",
                "description": "Fields left out stay as they are; an empty list is \"every\". `status`: `paused` stops deliveries (events wait, within the retention); `active` resumes, also after the subscription was disabled, from the first event not delivered.",
                "requestBody": body("WebhookPatch"),
                "responses": ok("200", "WebhookDetail", "The subscription as changed.")
            }), true, true),
            "delete": with_errors(json!({
                "operationId": "deleteWebhook",
                "summary": "Unsubscribe",
                "responses": { "204": { "description": "Deleted; no more deliveries (one in flight may still arrive).", "headers": meter_headers() } }
            }), false, true)
        }),
        Endpoint::Test => {
            let mut responses = ok(
                "200",
                "WebhookTestResult",
                "The attempt (the receiver's status, or why there was none).",
            );
            merge(
                &mut responses,
                json!({
                    "409": problem_response("A test message to this subscription is being sent; `retry_after` (and `Retry-After`) says within how many seconds it has ended. No credit is spent.", &["webhook_test_in_flight"], json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" } })),
                    "429": problem_response("The rate limit or the monthly credits are exhausted (`retry_after` says when to retry), or the key has as many requests being answered at once as one key may (too_many_in_flight, `limit`).", &["rate_limited", "credits_exhausted", "too_many_in_flight"], json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" } }))
                }),
            );
            json!({
                "post": with_errors(json!({
                    "operationId": "testWebhook",
                    "summary": "Send a test message now",
                    "description": "One `webhook.test` message (see the `webhooks` section), signed like every delivery, sent whatever the subscription's status, after any attempt in flight; not retried. The answer says what the receiver did. One test at a time per subscription: while one is being sent, another is refused at once (409 webhook_test_in_flight, with `Retry-After`). Costs one credit, taken before the message is sent (429 credits_exhausted when none is left). A client that leaves before the answer cancels the attempt.",
                    "responses": responses
                }), false, true)
            })
        }
        Endpoint::Rotate => json!({
            "post": with_errors(json!({
                "operationId": "rotateWebhookSecret",
                "summary": "A new signing secret",
                "description": "The new secret signs every delivery from now on; the previous one signs them too (a second `v1,` signature) until `previous_secret_expires_at`, 24 hours, so a receiver can switch without refusing a delivery.",
                "responses": ok("200", "WebhookSecret", "The subscription with its new secret (shown once).")
            }), false, true)
        }),
    }
}
