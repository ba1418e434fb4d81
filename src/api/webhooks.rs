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
use crate::http::router::RouteId;
use crate::webhooks::{NewSubscription, Patch, Status, WebhookError, subscription};

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

/// Every webhook route.
pub async fn handle(
    state: &State,
    req: Request<Incoming>,
    route: RouteId,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    let mut caller = match admit(state, &req, route, conn).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    match answer(state, req, route, segment, &mut caller).await {
        Ok(response) => response,
        Err(problem) => refuse(problem, &caller),
    }
}

async fn answer(
    state: &State,
    req: Request<Incoming>,
    route: RouteId,
    segment: &str,
    caller: &mut Caller,
) -> Result<HttpResponse, Problem> {
    let method = req.method().clone();
    // The body's syntax and values first (400), like the parameters of every endpoint.
    let mut new = None;
    let mut change = None;
    if method == Method::POST && route == RouteId::ClientWebhooks {
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
    if route != RouteId::ClientWebhooks && !subscription::is_id(id) {
        return Err(unknown(id));
    }
    let found = |e| match e {
        WebhookError::NotFound => unknown(id),
        e => from_error(e, caller),
    };
    match (route, method) {
        (RouteId::ClientWebhooks, Method::POST) => {
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
        (RouteId::ClientWebhooks, _) => {
            let list: Vec<serde_json::Value> =
                hooks.list(owner).iter().map(|s| s.to_json(false)).collect();
            Ok(json(
                caller,
                StatusCode::OK,
                &serde_json::json!({ "webhooks": list }),
            ))
        }
        (RouteId::ClientWebhook, Method::PATCH) => {
            let patch = change.unwrap_or_default();
            let sub = hooks.update(owner, id, patch).await.map_err(found)?;
            Ok(json(caller, StatusCode::OK, &sub.to_json(true)))
        }
        (RouteId::ClientWebhook, Method::DELETE) => {
            hooks.delete(owner, id).map_err(found)?;
            let mut response = json(caller, StatusCode::NO_CONTENT, &serde_json::Value::Null);
            *response.body_mut() = Body::from(Vec::new());
            response.headers_mut().remove(header::CONTENT_TYPE);
            Ok(response)
        }
        (RouteId::ClientWebhook, _) => {
            let sub = hooks.get(owner, id).map_err(found)?;
            Ok(json(caller, StatusCode::OK, &sub.to_json(true)))
        }
        (RouteId::ClientWebhookTest, _) => {
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
        (RouteId::ClientWebhookRotate, _) => {
            let (sub, secret) = hooks.rotate_secret(owner, id).map_err(found)?;
            let mut body = sub.to_json(false);
            body["secret"] = secret.into();
            body["previous_secret_expires_at"] =
                sub.previous_until_ms.map(crate::time::iso_millis).into();
            Ok(json(caller, StatusCode::OK, &body))
        }
        _ => Err(Problem::NotFound),
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
