//! Name.com: `GET https://api.name.com/core/v1/tldpricing?page=N&perPage=M` with HTTP
//! Basic authentication (user name and API token). Each page is `{"pricing": [{"tld",
//! "duration", "registrationPrice", "registrationOriginalPrice", "renewalPrice",
//! "transferInPrice", ...}], "nextPage"?}`; pages are followed until one has no
//! `nextPage`. Name.com allows 20 requests a second and 3,000 an hour: the collector
//! keeps 1.2 s between requests.

use std::time::Duration;

use base64::Engine;
use futures_util::future::BoxFuture;
use hyper::header;

use super::client::Request;
use super::{Collector, Ctx, Page, json_page};

/// The real endpoint.
pub const ENDPOINT: &str = "https://api.name.com/core/v1/tldpricing";

/// Most pages read.
pub const MAX_PAGES: u64 = 1000;

/// The Name.com collector.
#[derive(Debug)]
pub struct NameCom;

impl Collector for NameCom {
    fn key(&self) -> &'static str {
        "namecom"
    }

    fn version(&self) -> u32 {
        1
    }

    fn min_interval(&self) -> Duration {
        Duration::from_millis(1200)
    }

    fn collect<'a>(&'a self, ctx: Ctx<'a>) -> BoxFuture<'a, Result<Vec<Page>, String>> {
        Box::pin(async move {
            let c = ctx.config;
            let basic = base64::engine::general_purpose::STANDARD.encode(format!(
                "{}:{}",
                c.secret("username")?.expose(),
                c.secret("token")?.expose()
            ));
            let per_page = c.page_size.unwrap_or(1000);
            let mut pages = Vec::new();
            let mut page_no = 1u64;
            loop {
                let mut url = c.endpoint(ENDPOINT)?;
                url.query_pairs_mut()
                    .append_pair("page", &page_no.to_string())
                    .append_pair("perPage", &per_page.to_string());
                let req = Request::get(url).header(header::AUTHORIZATION, format!("Basic {basic}"));
                let page = ctx.fetch(&req, "JSON").await?;
                let doc = json_page(&page)?;
                if doc.get("pricing").is_none_or(|p| !p.is_array()) {
                    return Err(format!(
                        "Name.com page {page_no}: no \"pricing\" list ({})",
                        doc.get("message")
                            .and_then(|m| m.as_str())
                            .unwrap_or("no message")
                    ));
                }
                crate::import::collected::parse_namecom(&page.body)
                    .map_err(|e| format!("{}: {e}", page.url))?;
                pages.push(page);
                match doc.get("nextPage").and_then(serde_json::Value::as_u64) {
                    Some(next) if next > page_no && next <= MAX_PAGES => page_no = next,
                    Some(next) => {
                        return Err(format!(
                            "Name.com's nextPage {next} after page {page_no} does not move forward"
                        ));
                    }
                    None => return Ok(pages),
                }
            }
        })
    }
}
