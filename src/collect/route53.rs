//! Amazon Route 53 Domains `ListPrices`: JSON 1.1 over `POST
//! https://route53domains.us-east-1.amazonaws.com/` with `X-Amz-Target:
//! Route53Domains_v20140515.ListPrices`, signed with SigV4 for `route53domains` in
//! `us-east-1` by AWS's own signer (`aws-sigv4`). Credentials: `access_key_id`,
//! `secret_access_key`, optional `session_token`. Pages of `{"Prices": [...],
//! "NextPageMarker"}` (`MaxItems` at most 1,000) are followed until no marker comes back;
//! an error is a non-2xx answer with `{"__type", "message"}`.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use futures_util::future::BoxFuture;
use hyper::header::HeaderName;

use super::client::Request;
use super::{Collector, Ctx, Page, json_page};

/// The real endpoint (Route 53 Domains lives in us-east-1 only).
pub const ENDPOINT: &str = "https://route53domains.us-east-1.amazonaws.com/";
/// The operation.
pub const TARGET: &str = "Route53Domains_v20140515.ListPrices";
/// Most pages read.
pub const MAX_PAGES: usize = 1000;

/// The Route 53 collector.
#[derive(Debug)]
pub struct Route53;

/// The signed request of one page.
fn signed(ctx: &Ctx<'_>, body: String) -> Result<Request, String> {
    let c = ctx.config;
    let url = c.endpoint(ENDPOINT)?;
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let creds = Credentials::new(
        c.secret("access_key_id")?.expose(),
        c.secret("secret_access_key")?.expose(),
        c.optional("session_token").map(|s| s.expose().to_string()),
        None,
        "tldsnap-collect-config",
    );
    let identity = creds.into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("route53domains")
        .time(SystemTime::now())
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| format!("SigV4 parameters: {e}"))?
        .into();
    let content_type = "application/x-amz-json-1.1";
    let headers = [
        ("content-type", content_type),
        ("host", host.as_str()),
        ("x-amz-target", TARGET),
    ];
    let signable = SignableRequest::new(
        "POST",
        url.as_str(),
        headers.iter().copied(),
        SignableBody::Bytes(body.as_bytes()),
    )
    .map_err(|e| format!("SigV4: {e}"))?;
    let (instructions, _) = sign(signable, &params)
        .map_err(|e| format!("SigV4: {e}"))?
        .into_parts();
    let mut req = Request::post(url, content_type, body.clone())
        .header(HeaderName::from_static("x-amz-target"), TARGET);
    for (name, value) in instructions.headers() {
        let name =
            HeaderName::from_bytes(name.as_bytes()).map_err(|e| format!("SigV4 header: {e}"))?;
        req = req.header(name, value);
    }
    Ok(req)
}

impl Collector for Route53 {
    fn key(&self) -> &'static str {
        "route53"
    }

    fn version(&self) -> u32 {
        1
    }

    fn min_interval(&self) -> Duration {
        Duration::from_millis(200)
    }

    fn collect<'a>(&'a self, ctx: Ctx<'a>) -> BoxFuture<'a, Result<Vec<Page>, String>> {
        Box::pin(async move {
            let max_items = ctx.config.page_size.unwrap_or(1000).min(1000);
            let mut pages = Vec::new();
            let mut marker: Option<String> = None;
            while pages.len() < MAX_PAGES {
                let mut body = serde_json::json!({ "MaxItems": max_items });
                if let Some(m) = &marker {
                    body["Marker"] = serde_json::Value::String(m.clone());
                }
                let req = signed(&ctx, body.to_string())?;
                let page = match ctx.fetch(&req, "JSON").await {
                    Ok(p) => p,
                    Err(e) => return Err(e),
                };
                let doc = json_page(&page)?;
                if doc.get("Prices").and_then(|p| p.as_array()).is_none() {
                    return Err(format!(
                        "{}: no \"Prices\" list ({})",
                        page.url,
                        doc.get("__type")
                            .or_else(|| doc.get("message"))
                            .map_or("no error type".to_string(), |t| t.to_string())
                    ));
                }
                let next = doc
                    .get("NextPageMarker")
                    .and_then(|m| m.as_str())
                    .filter(|m| !m.is_empty())
                    .map(str::to_string);
                pages.push(page);
                match next {
                    Some(n) if marker.as_deref() == Some(n.as_str()) => {
                        return Err("Route 53 answered the same NextPageMarker twice".to_string());
                    }
                    Some(n) => marker = Some(n),
                    None => return Ok(pages),
                }
            }
            Err(format!(
                "Route 53's list did not end within {MAX_PAGES} pages"
            ))
        })
    }
}
