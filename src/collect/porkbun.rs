//! Porkbun: `POST https://api.porkbun.com/api/json/v3/pricing/get` with `{}`; no
//! credential. The answer is `{"status": "SUCCESS", "pricing": {tld: {"registration",
//! "renewal", "transfer", "coupons", "specialType"?}}}`; `status` other than `SUCCESS`
//! (with a `message`) is an error answer.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::client::Request;
use super::{Collector, Ctx, Page, json_page};

/// The real endpoint.
pub const ENDPOINT: &str = "https://api.porkbun.com/api/json/v3/pricing/get";

/// The Porkbun collector.
#[derive(Debug)]
pub struct Porkbun;

impl Collector for Porkbun {
    fn key(&self) -> &'static str {
        "porkbun"
    }

    fn version(&self) -> u32 {
        1
    }

    fn min_interval(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn collect<'a>(&'a self, ctx: Ctx<'a>) -> BoxFuture<'a, Result<Vec<Page>, String>> {
        Box::pin(async move {
            let url = ctx.config.endpoint(ENDPOINT)?;
            let page = ctx
                .fetch(&Request::post(url, "application/json", "{}"), "JSON")
                .await?;
            let doc = json_page(&page)?;
            match doc.get("status").and_then(|s| s.as_str()) {
                Some("SUCCESS") if doc.get("pricing").is_some_and(|p| p.is_object()) => {
                    Ok(vec![page])
                }
                Some("SUCCESS") => {
                    Err("Porkbun answered SUCCESS without a \"pricing\" object".to_string())
                }
                other => Err(format!(
                    "Porkbun status {}: {}",
                    other.unwrap_or("missing"),
                    doc.get("message")
                        .and_then(|m| m.as_str())
                        .unwrap_or("no message")
                )),
            }
        })
    }
}
