//! Openprovider: `POST https://api.openprovider.eu/v1beta/auth/login` with the user name
//! and password gives a token (`{"code": 0, "data": {"token"}}`); then `GET
//! /v1beta/tlds?with_price=true&limit=L&offset=O` with `Authorization: Bearer TOKEN`,
//! pages of `{"code": 0, "data": {"results": [...], "total"}}` until `total` TLDs are
//! read. A non-zero `code` is an error answer. The token is never written anywhere.

use std::time::Duration;

use futures_util::future::BoxFuture;
use hyper::header;

use super::client::Request;
use super::{Collector, Ctx, Page, json_page};

/// The login endpoint.
pub const LOGIN: &str = "https://api.openprovider.eu/v1beta/auth/login";
/// The TLD list endpoint.
pub const TLDS: &str = "https://api.openprovider.eu/v1beta/tlds?with_price=true";

/// Most pages read.
pub const MAX_PAGES: u64 = 1000;

/// The Openprovider collector.
#[derive(Debug)]
pub struct Openprovider;

fn code_error(what: &str, doc: &serde_json::Value) -> Option<String> {
    let code = doc.get("code").and_then(serde_json::Value::as_i64);
    (code != Some(0)).then(|| {
        format!(
            "Openprovider {what}: code {} ({})",
            code.map_or("missing".to_string(), |c| c.to_string()),
            doc.get("desc").and_then(|d| d.as_str()).unwrap_or("")
        )
    })
}

impl Collector for Openprovider {
    fn key(&self) -> &'static str {
        "openprovider"
    }

    fn version(&self) -> u32 {
        1
    }

    fn min_interval(&self) -> Duration {
        Duration::from_millis(500)
    }

    fn collect<'a>(&'a self, ctx: Ctx<'a>) -> BoxFuture<'a, Result<Vec<Page>, String>> {
        Box::pin(async move {
            let c = ctx.config;
            let body = serde_json::json!({
                "username": c.secret("username")?.expose(),
                "password": c.secret("password")?.expose(),
            })
            .to_string();
            let login = ctx
                .fetch(
                    &Request::post(c.endpoint(LOGIN)?, "application/json", body),
                    "JSON",
                )
                .await?;
            let doc = json_page(&login)?;
            if let Some(e) = code_error("login", &doc) {
                return Err(e);
            }
            let token = doc
                .pointer("/data/token")
                .and_then(|t| t.as_str())
                .filter(|t| !t.is_empty())
                .ok_or("Openprovider login answered no token")?
                .to_string();
            let limit = u64::from(c.page_size.unwrap_or(500));
            let mut pages = Vec::new();
            let mut offset = 0u64;
            for _ in 0..MAX_PAGES {
                let mut url = c.endpoint(TLDS)?;
                url.query_pairs_mut()
                    .append_pair("limit", &limit.to_string())
                    .append_pair("offset", &offset.to_string());
                let req =
                    Request::get(url).header(header::AUTHORIZATION, format!("Bearer {token}"));
                let page = ctx.fetch(&req, "JSON").await?;
                let doc = json_page(&page)?;
                if let Some(e) = code_error("tlds", &doc) {
                    return Err(e);
                }
                crate::import::collected::parse_openprovider_api(&page.body)
                    .map_err(|e| format!("{}: {e}", page.url))?;
                let n = doc
                    .pointer("/data/results")
                    .and_then(|r| r.as_array())
                    .map_or(0, Vec::len) as u64;
                let total = doc
                    .pointer("/data/total")
                    .and_then(serde_json::Value::as_u64);
                pages.push(page);
                offset += n;
                let done = match total {
                    Some(t) => offset >= t,
                    None => n < limit,
                };
                if done || n == 0 {
                    return Ok(pages);
                }
            }
            Err(format!(
                "Openprovider's list did not end within {MAX_PAGES} pages"
            ))
        })
    }
}
