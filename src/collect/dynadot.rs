//! Dynadot: `GET https://api.dynadot.com/restful/v1/domains/get_tld_price?currency=USD
//! &page_index=N&count_per_page=M` with `Authorization: Bearer KEY`. Each page is `{"code",
//! "message", "data": {"tldPriceList": [...]}}`; a `code` other than 200 is an error
//! answer, sent with HTTP 200. Pages are read from index 1 until one comes back with
//! fewer than `count_per_page` TLDs. Dynadot limits requests by account tier (one at a
//! time for a regular account): the collector sends one at a time, a second apart.

use std::time::Duration;

use futures_util::future::BoxFuture;
use hyper::header;

use super::client::Request;
use super::{Collector, Ctx, Page, json_page};

/// The real endpoint.
pub const ENDPOINT: &str = "https://api.dynadot.com/restful/v1/domains/get_tld_price?currency=USD";

/// Most pages read (a source that never ends its list is an error).
pub const MAX_PAGES: u32 = 1000;

/// The Dynadot collector.
#[derive(Debug)]
pub struct Dynadot;

impl Collector for Dynadot {
    fn key(&self) -> &'static str {
        "dynadot"
    }

    fn version(&self) -> u32 {
        1
    }

    fn min_interval(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn collect<'a>(&'a self, ctx: Ctx<'a>) -> BoxFuture<'a, Result<Vec<Page>, String>> {
        Box::pin(async move {
            let per_page = ctx.config.page_size.unwrap_or(500);
            let auth = format!("Bearer {}", ctx.config.secret("api_key")?.expose());
            let mut pages = Vec::new();
            for index in 1..=MAX_PAGES {
                let mut url = ctx.config.endpoint(ENDPOINT)?;
                url.query_pairs_mut()
                    .append_pair("page_index", &index.to_string())
                    .append_pair("count_per_page", &per_page.to_string());
                let req = Request::get(url).header(header::AUTHORIZATION, auth.clone());
                let page = ctx.fetch(&req, "JSON").await?;
                let doc = json_page(&page)?;
                let code = doc
                    .get("code")
                    .map(|c| c.to_string().trim_matches('"').to_string());
                if code.as_deref() != Some("200") {
                    return Err(format!(
                        "Dynadot page {index}: code {} ({}), not 200",
                        code.as_deref().unwrap_or("missing"),
                        doc.get("message").and_then(|m| m.as_str()).unwrap_or("")
                    ));
                }
                crate::import::collected::parse_dynadot_api(&page.body)
                    .map_err(|e| format!("{}: {e}", page.url))?;
                let n = doc
                    .pointer("/data/tldPriceList")
                    .and_then(|l| l.as_array())
                    .map_or(0, Vec::len);
                pages.push(page);
                if n < per_page as usize {
                    return Ok(pages);
                }
            }
            Err(format!(
                "Dynadot's list did not end within {MAX_PAGES} pages"
            ))
        })
    }
}
