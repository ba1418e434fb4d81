//! NameSilo: `GET https://www.namesilo.com/api/getPrices?version=1&type=json&key=KEY`
//! (an API key; a read-only one is enough). The answer is `{"request", "reply": {"code",
//! "detail", tld: {"registration", "transfer", "renew"}, ...}}`; a `code` other than 300
//! is an error answer, sent with HTTP 200. NameSilo allows one request per second.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::client::Request;
use super::{Collector, Ctx, Page};

/// The real endpoint.
pub const ENDPOINT: &str = "https://www.namesilo.com/api/getPrices?version=1&type=json";

/// The NameSilo collector.
#[derive(Debug)]
pub struct NameSilo;

impl Collector for NameSilo {
    fn key(&self) -> &'static str {
        "namesilo"
    }

    fn version(&self) -> u32 {
        1
    }

    fn min_interval(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn collect<'a>(&'a self, ctx: Ctx<'a>) -> BoxFuture<'a, Result<Vec<Page>, String>> {
        Box::pin(async move {
            let mut url = ctx.config.endpoint(ENDPOINT)?;
            url.query_pairs_mut()
                .append_pair("key", ctx.config.secret("api_key")?.expose());
            let mut req = Request::get(url);
            req.secret_params = &["key"];
            let page = ctx.fetch(&req, "JSON").await?;
            crate::import::collected::parse_namesilo(&page.body)
                .map_err(|e| format!("{}: {e}", page.url))?;
            Ok(vec![page])
        })
    }
}
