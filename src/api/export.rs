//! `GET /api/v1/client/export`: the price grid a plan sees, as CSV, streamed
//! (docs/API.md, "Export").
//!
//! The checks are the price endpoints': key and rate limit, then the parameters
//! (`tlds`, optional; `currency`), the plan (403 `export_not_in_plan` unless it
//! includes the export; 403 `tld_not_in_plan` for a named TLD outside it), existence
//! (404 `unknown_tld` when none of the named TLDs is known), credits. The rows are
//! [`crate::query::export`]'s, written in chunks of about [`CHUNK`] bytes: an export
//! that fits in one is answered as one body; a larger one is streamed by a task that
//! holds the snapshot it started with, so a swap mid-export changes nothing of it and
//! a slow reader holds one chunk in memory at a time.
//!
//! The answer's `ETag` names the snapshot, the plan's sight, the currency and the TLDs
//! covered: `If-None-Match` with it is answered 304, free. The cost is one credit per
//! started [`ROWS_PER_CREDIT`] rows (the whole grid of the shipped data, 10,308 rows:
//! 11 credits), told in `X-Credits-Cost`.

use std::hash::Hasher;
use std::sync::Arc;

use hyper::header::{self, HeaderValue};
use hyper::{Request, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::body::CREDITS_COST;
use super::events::plans_with;
use super::prices::{as_strs, check_plan, money_of};
use super::{Connection, HttpResponse, State, admit, finish_costing, refuse, snapshot};
use crate::http::body::Body;
use crate::http::openapi::{keyed, meter_headers, problem_response};
use crate::http::params::{self, ExportParams};
use crate::http::problem::Problem;
use crate::http::router::Route;
use crate::query::export::{self, ExportRequest};

/// About how many bytes each streamed chunk holds (whole TLDs: `.com`'s rows are ~2 KiB).
pub const CHUNK: usize = 64 * 1024;

/// Rows one credit buys.
pub const ROWS_PER_CREDIT: usize = 1_000;

/// Chunks written ahead of a slow reader.
const QUEUE: usize = 2;

/// `GET /api/v1/client/export`.
pub async fn handle<B>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> HttpResponse {
    let loaded = match snapshot(state) {
        Ok(loaded) => loaded,
        Err(response) => return response,
    };
    let caller = match admit(state, req, route, conn).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    let data = loaded.snapshot.data();
    let checked = (|| {
        let values = params::pick(req.uri().query(), ExportParams::NAMES)?;
        let p = ExportParams::from_values(&values)?;
        let money = money_of(data, p.currency.as_deref())?;
        if !caller.plan().export {
            return Err(Problem::ExportNotInPlan {
                plan: caller.tier().to_owned(),
                including: plans_with(state, |plan| plan.export),
            });
        }
        let names = p.tlds.as_deref().map(as_strs);
        if let Some(list) = &p.tlds {
            check_plan(state, &caller, list)?;
        }
        let request = ExportRequest {
            tlds: names.as_deref(),
            sight: caller.sight(),
            money,
        };
        let positions = export::covered(data, &request);
        if let Some(asked) = &names
            && positions.is_empty()
        {
            return Err(Problem::from_query(crate::query::QueryError::UnknownTlds(
                asked.iter().map(|n| n.to_string()).collect(),
            )));
        }
        let rows = export::row_count(data, request.sight, &positions);
        let tag = etag(&loaded, caller.tier(), money.code(), &positions);
        Ok((money, positions, rows, tag))
    })();
    let (money, positions, rows, tag) = match checked {
        Ok(checked) => checked,
        Err(problem) => return refuse(problem, &caller),
    };
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
    if fresh {
        let mut response = HttpResponse::new(Body::default());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        set_tag(&mut response, &tag);
        return response;
    }
    let credits = rows.div_ceil(ROWS_PER_CREDIT).max(1) as u64;
    let sight = caller.sight();
    let day = crate::time::date_string(
        data.data_updated_ms
            .to_native()
            .div_euclid(crate::time::MS_PER_DAY),
    );
    let currency = money.code().to_owned();
    // The first chunk now: an export that fits in it (a few TLDs) is one answer with its
    // length, with no task and no channel; a larger one streams the rest.
    let request = ExportRequest {
        tlds: None,
        sight,
        money,
    };
    let mut first = Vec::with_capacity(CHUNK + 4096);
    export::header(&mut first);
    let next = export::rows(data, &request, &positions, 0, CHUNK, &mut first);
    let mut response = match next {
        None => finish_costing(state, route, caller, first, credits).await,
        Some(from) => {
            let mut response = finish_costing(state, route, caller, Vec::new(), credits).await;
            if response.status().is_success() {
                let (tx, rx) = mpsc::channel(QUEUE);
                tokio::spawn(stream(loaded, sight, currency, positions, first, from, tx));
                *response.body_mut() = Body::channel(rx);
            }
            response
        }
    };
    if !response.status().is_success() {
        return response;
    }
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!(
        "attachment; filename=\"tldsnap-prices-{day}.csv\""
    )) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    headers.insert(CREDITS_COST, HeaderValue::from(credits));
    set_tag(&mut response, &tag);
    response
}

fn set_tag(response: &mut HttpResponse, tag: &str) {
    if let Ok(v) = HeaderValue::from_str(tag) {
        response.headers_mut().insert(header::ETAG, v);
    }
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
}

/// `"<snapshot hash>-<plan>-<currency>-<digest of the TLDs covered>"`: the same for
/// the same bytes, on every replica serving the same snapshot.
fn etag(loaded: &crate::store::Loaded, plan: &str, currency: &str, positions: &[u32]) -> String {
    let mut h = twox_hash::XxHash3_64::with_seed(0);
    for p in positions {
        h.write(&p.to_le_bytes());
    }
    format!(
        "\"{}-{plan}-{currency}-{:016x}\"",
        loaded.snapshot.header().hash_hex(),
        h.finish()
    )
}

/// Sends `first` (the header and the rows before `from`), then the rows from `from`,
/// chunk by chunk, until done or the reader is gone.
async fn stream(
    loaded: Arc<crate::store::Loaded>,
    sight: crate::sight::Sight,
    currency: String,
    positions: Vec<u32>,
    first: Vec<u8>,
    from: usize,
    tx: mpsc::Sender<Vec<u8>>,
) {
    let data = loaded.snapshot.data();
    // Checked before the answer started: a code the snapshot has.
    let Ok(money) = crate::query::money(data, &currency) else {
        return;
    };
    let request = ExportRequest {
        tlds: None,
        sight,
        money,
    };
    if tx.send(first).await.is_err() {
        return;
    }
    let mut next = Some(from);
    while let Some(from) = next {
        let mut out = Vec::with_capacity(CHUNK + 4096);
        next = export::rows(data, &request, &positions, from, CHUNK, &mut out);
        if tx.send(out).await.is_err() {
            return;
        }
    }
}

/// The operation of `/openapi.json`.
pub(crate) fn doc() -> Value {
    json!({
        "operationId": "clientExport",
        "summary": "The price grid as CSV",
        "description": "Every (TLD, registrar) price row the caller's plan sees, as CSV (RFC 4180, a header row): the columns of the price source (tld, registrar, register, renew, transfer, currency, updated_at, original_currency, original_register, original_renew, original_transfer, rate_date, regular_register, icann_fee, icann_fee_included, register_years, promotion, coupon_code, coupon_register, member_register, member_renew, member_transfer): promotion is true when the first-year price is a promotion (regular_register, where the list gives it, is the regular price); coupon_register is the first-year price with coupon_code; member_* are the prices of the registrar's paid membership. Rows by TLD name, then registrar key; amounts with two decimals, in `currency` (the original_* columns as the registrar quoted them). Streamed. Plans with the export only (pro, enterprise: 403 export_not_in_plan). One credit per started 1,000 rows (X-Credits-Cost). The ETag names the snapshot, plan, currency and TLDs: If-None-Match answers 304 and costs nothing.",
        "security": keyed(),
        "parameters": crate::http::openapi::refs(&ExportParams::COMPONENTS),
        "responses": {
            "200": {
                "description": "The price grid.",
                "headers": {
                    "ETag": { "description": "The export's version: the snapshot, plan, currency and TLDs covered.", "schema": { "type": "string" } },
                    "X-Credits-Cost": { "$ref": "#/components/headers/X-Credits-Cost" },
                    "RateLimit-Limit": meter_headers()["RateLimit-Limit"],
                    "RateLimit-Remaining": meter_headers()["RateLimit-Remaining"],
                    "RateLimit-Reset": meter_headers()["RateLimit-Reset"],
                    "X-Credits-Remaining": meter_headers()["X-Credits-Remaining"]
                },
                "content": { "text/csv": { "schema": { "type": "string" } } }
            },
            "304": { "description": "Not modified: the If-None-Match tag is this export's." },
            "400": { "$ref": "#/components/responses/BadRequest" },
            "401": { "$ref": "#/components/responses/Unauthorized" },
            "403": problem_response("The plan does not include the export, or a TLD named is outside it.", &["export_not_in_plan", "tld_not_in_plan"], json!({})),
            "404": { "$ref": "#/components/responses/UnknownTld" },
            "429": { "$ref": "#/components/responses/TooManyRequests" },
            "503": { "$ref": "#/components/responses/NotReady" }
        }
    })
}
