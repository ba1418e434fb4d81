//! Namecheap: `GET https://api.namecheap.com/xml.response?ApiUser=&ApiKey=&UserName=
//! &ClientIp=&Command=namecheap.users.getPricing&ProductType=DOMAIN` (the API user, its
//! key, the user name, and the client IP whitelisted in the account). The answer is XML;
//! `Status="ERROR"` with `Errors` is an error answer, sent with HTTP 200. Namecheap allows
//! 50 calls a minute (and 700 an hour, 8,000 a day) and asks callers to cache the price
//! list.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::client::Request;
use super::{Collector, Ctx, Page};

/// The real endpoint.
pub const ENDPOINT: &str = "https://api.namecheap.com/xml.response";

/// The Namecheap collector.
#[derive(Debug)]
pub struct Namecheap;

impl Collector for Namecheap {
    fn key(&self) -> &'static str {
        "namecheap"
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
            let api_user = c.secret("api_user")?.expose();
            let user = c.optional("username").map_or(api_user, |s| s.expose());
            let mut url = c.endpoint(ENDPOINT)?;
            url.query_pairs_mut()
                .append_pair("ApiUser", api_user)
                .append_pair("ApiKey", c.secret("api_key")?.expose())
                .append_pair("UserName", user)
                .append_pair("ClientIp", c.secret("client_ip")?.expose())
                .append_pair("Command", "namecheap.users.getPricing")
                .append_pair("ProductType", "DOMAIN");
            let mut req = Request::get(url);
            req.secret_params = &["ApiUser", "ApiKey", "UserName", "ClientIp"];
            let page = ctx.fetch(&req, "XML").await?;
            crate::import::collected::parse_namecheap_xml(&page.body)
                .map_err(|e| format!("{}: {e}", page.url))?;
            Ok(vec![page])
        })
    }
}
