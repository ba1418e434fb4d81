//! The tools: each one a REST operation of the route table, answered by that route's
//! own handler.
//!
//! A tool is a row of [`TOOLS`]: its name, a description written for a model choosing
//! among tools, and the route it stands for. Everything else comes from that route:
//!
//! - **Input schema**: the operation's parameters in the OpenAPI document (the same
//!   `#/components/parameters/…` the REST endpoint declares, from the endpoint's one
//!   parameter type in [`crate::http::params`]), its path parameter, and the properties
//!   of its JSON request body.
//! - **Output schema**: the operation's 200 `application/json` schema.
//! - **The call**: the arguments become the REST request they describe (scalars and
//!   lists of scalars in its query string, the path parameter in its path, the body's
//!   properties as its JSON body), with the caller's key, and the route's handler
//!   answers it: the same parameter type reads the same [`Values`], the same checks
//!   admit the key, count the rate and spend the credits, the same query writes the
//!   body. A 200's body is the result's `structuredContent`, as it is; any other answer
//!   is a problem document, which becomes an `isError` result with its `code` and
//!   `detail`.
//!
//! [`Values`]: crate::http::params::Values

use std::sync::OnceLock;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode};
use serde_json::{Map, Value, json};

use crate::api::{Connection, HttpResponse, State};
use crate::api::{catalogue, domains, live, prices};
use crate::app::routes::RouteId;
use crate::query::Shape;
use crate::time::Stamp;

use super::text::{self, Kind};

/// One tool: a name, what it is for, and the REST route that answers it.
#[derive(Debug)]
pub struct Tool {
    /// The tool's name, as `tools/call` gives it.
    pub name: &'static str,
    /// A short title for people.
    pub title: &'static str,
    /// What it answers and when to choose it, for a model.
    pub description: &'static str,
    /// The route whose handler answers it.
    pub route: RouteId,
    /// Whether it asks upstreams at request time (listed only with `serve --live`).
    pub live: bool,
    /// How its result's text is written.
    pub text: Kind,
}

/// Every tool, in the order `tools/list` gives them.
pub static TOOLS: &[Tool] = &[
    Tool {
        name: "cheapest",
        title: "Cheapest registrars for TLDs",
        description: "Rank the registrars that sell each given TLD by first-year registration price (ties: renewal, then key), with renewal, 5-year total and data date. Use it for 'where is .dev cheapest?'. `tlds` is a comma-separated list (up to 100, no dots); `at` (YYYY-MM-DD) answers as of a past day. The plan caps how many sellers are shown.",
        route: RouteId::ClientCheapest,
        live: false,
        text: Kind::Cheapest,
    },
    Tool {
        name: "prices",
        title: "Prices of chosen registrars",
        description: "Register, renew and transfer prices of chosen registrars (comma-separated keys in `registrars`; every seller when absent) for each given TLD. Use it to compare specific registrars; `at` answers as of a past day. Unknown TLDs and keys are listed in `stats.not_found`.",
        route: RouteId::ClientPrices,
        live: false,
        text: Kind::Prices,
    },
    Tool {
        name: "tld_registrars",
        title: "Registrars that sell a TLD",
        description: "Every registrar selling one TLD, by ascending registration price, with each one's website; `include_prices` adds their prices. Use it to list who sells a TLD; for a ranking with totals prefer `cheapest`.",
        route: RouteId::ClientRegistrars,
        live: false,
        text: Kind::Registrars,
    },
    Tool {
        name: "tld_overview",
        title: "Overview of a TLD",
        description: "One TLD at a glance: IANA type and manager, how many registrars sell it, lowest and average register, renew and transfer prices, the cheapest offers. Works for any IANA TLD, sold or not. Use it first when asked about a TLD in general.",
        route: RouteId::ClientOverview,
        live: false,
        text: Kind::Overview,
    },
    Tool {
        name: "price_history",
        title: "Price history of a TLD",
        description: "Every recorded price change of a TLD per registrar (dated register, renew and transfer prices), optionally for chosen `registrars` and a window `from`..`to` (YYYY-MM-DD). Use it for 'how did .io renewals change?'. For prices on one past day use `cheapest` or `prices` with `at`.",
        route: RouteId::ClientHistory,
        live: false,
        text: Kind::History,
    },
    Tool {
        name: "tld_catalogue",
        title: "Search the TLD catalogue",
        description: "Page through every IANA TLD and priced suffix: filter by a piece of the name (`q`) and IANA `type`, sort by name, cheapest or number of registrars; `cursor` continues a page. Use it to find TLDs matching a theme or budget.",
        route: RouteId::ClientTlds,
        live: false,
        text: Kind::Catalogue,
    },
    Tool {
        name: "registrars",
        title: "All registrars",
        description: "Every registrar tldsnap has prices of, with its key, name, website and how many TLDs it sells. Use it to find a registrar's key for the other tools.",
        route: RouteId::RegistrarList,
        live: false,
        text: Kind::RegistrarList,
    },
    Tool {
        name: "registrar_prices",
        title: "A registrar's price list",
        description: "One registrar (by `key`) and its prices for every TLD it sells, in TLD name order, paged with `limit` and `cursor`. Use it for 'what does Porkbun charge?'.",
        route: RouteId::Registrar,
        live: false,
        text: Kind::Registrar,
    },
    Tool {
        name: "portfolio_audit",
        title: "Audit a domain portfolio",
        description: "For each domain held (`domains`: names, or objects with registrar, renew_price, expires), the yearly price paid now, the cheapest renewal anywhere, the best transfer-then-renew path, the recommendation and yearly and 5-year savings, with totals. Costs one credit per started 100 domains.",
        route: RouteId::PortfolioAudit,
        live: false,
        text: Kind::Audit,
    },
    Tool {
        name: "domains_lookup",
        title: "Cheapest registrars for domain names",
        description: "For up to 100 full domain names (`domains`), each one's public suffix (co.uk, not uk) and the cheapest registrars of that suffix. Use it when given domain names rather than TLDs. A name that is not a domain is an entry with `error`.",
        route: RouteId::DomainsLookup,
        live: false,
        text: Kind::Lookup,
    },
    Tool {
        name: "domain_search",
        title: "Suggest domain names",
        description: "Candidate domain names for a word or phrase (`q`) across TLDs, under `max_price` and of chosen IANA `types`, each with its cheapest registration. Counts against the plan's daily searches.",
        route: RouteId::DomainsSearch,
        live: false,
        text: Kind::Search,
    },
    Tool {
        name: "domain_registration",
        title: "Registration data of a domain (live)",
        description: "Asks the registry now (RDAP, else WHOIS): registrar, creation and expiry dates, name servers, status of one registered `domain`.",
        route: RouteId::DomainRdap,
        live: true,
        text: Kind::Registration,
    },
    Tool {
        name: "domain_status",
        title: "EPP status of a domain (live)",
        description: "Asks the registry now for a `domain`'s EPP status codes (clientTransferProhibited, redemptionPeriod, ...), each explained.",
        route: RouteId::DomainStatus,
        live: true,
        text: Kind::Status,
    },
    Tool {
        name: "domain_dns",
        title: "DNS records of a domain (live)",
        description: "Resolves a `domain`'s DNS records now (A, AAAA, MX, NS, TXT, CNAME, CAA, SOA; `types` to choose).",
        route: RouteId::DomainDns,
        live: true,
        text: Kind::Dns,
    },
    Tool {
        name: "domain_availability",
        title: "Is a domain available (live)",
        description: "Whether one `domain` can be registered, asked of its registry now, with the cheapest registrars of its suffix.",
        route: RouteId::DomainAvailability,
        live: true,
        text: Kind::Availability,
    },
    Tool {
        name: "domains_availability",
        title: "Are these domains available (live)",
        description: "Availability of up to 100 `domains` at once, asked of their registries now. Costs the plan's availability credits per distinct name.",
        route: RouteId::DomainsAvailability,
        live: true,
        text: Kind::BulkAvailability,
    },
    Tool {
        name: "domain_tls",
        title: "TLS certificate of a domain's website (live)",
        description: "Connects to https://`domain` now and reports its certificate: issuer, names, validity, days left, whether it verifies.",
        route: RouteId::DomainTls,
        live: true,
        text: Kind::Tls,
    },
];

/// The tools a server offers: the live ones only when it makes live lookups.
pub fn offered(state: &State) -> impl Iterator<Item = &'static Tool> {
    let live = state.live.is_some();
    TOOLS.iter().filter(move |t| live || !t.live)
}

/// The tool named `name`, when this server offers it.
pub fn find(state: &State, name: &str) -> Option<&'static Tool> {
    offered(state).find(|t| t.name == name)
}

/// Where each argument of a tool goes in its REST request.
#[derive(Debug, Default)]
struct Places {
    /// The path parameter (`tld`, `key`, `domain`), if the path has one.
    segment: Option<String>,
    /// The query parameters.
    query: Vec<String>,
    /// The properties of the JSON body.
    body: Vec<String>,
}

impl Tool {
    /// The HTTP method of its operation (the route answers one besides HEAD).
    fn method(&self) -> Method {
        if self.route.route().allow == crate::http::router::POST {
            Method::POST
        } else {
            Method::GET
        }
    }

    /// The route's operation in the OpenAPI document.
    fn operation(&self) -> &'static Value {
        let doc = crate::app::routes::openapi_value();
        let method = self.method().as_str().to_ascii_lowercase();
        &doc["paths"][self.route.route().path][method]
    }

    /// Which arguments go where.
    fn shape(&self) -> Places {
        let doc = crate::app::routes::openapi_value();
        let op = self.operation();
        let mut shape = Places::default();
        for p in op["parameters"].as_array().into_iter().flatten() {
            let p = resolve(doc, p);
            let name = p["name"].as_str().unwrap_or_default().to_owned();
            match p["in"].as_str() {
                Some("path") => shape.segment = Some(name),
                Some("query") => shape.query.push(name),
                _ => {}
            }
        }
        if let Some(body) = request_body(doc, op) {
            shape.body = body["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.clone())
                .collect();
        }
        shape
    }

    /// Its input schema: one property per parameter of the operation (path and query,
    /// each the parameter's own schema and description) and per property of its JSON
    /// body.
    pub fn input_schema(&self) -> Value {
        let doc = crate::app::routes::openapi_value();
        let op = self.operation();
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in op["parameters"].as_array().into_iter().flatten() {
            let p = resolve(doc, p);
            if !matches!(p["in"].as_str(), Some("path" | "query")) {
                continue;
            }
            let name = p["name"].as_str().unwrap_or_default().to_owned();
            let mut schema = p["schema"].clone();
            if let (Some(s), Some(d)) = (schema.as_object_mut(), p["description"].as_str()) {
                s.entry("description").or_insert_with(|| d.into());
            }
            if p["required"] == true {
                required.push(Value::from(name.clone()));
            }
            properties.insert(name, schema);
        }
        if let Some(body) = request_body(doc, op) {
            for (k, v) in body["properties"].as_object().into_iter().flatten() {
                properties.insert(k.clone(), v.clone());
            }
            for r in body["required"].as_array().into_iter().flatten() {
                required.push(r.clone());
            }
        }
        let mut schema = json!({
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
        });
        if !required.is_empty() {
            schema["required"] = Value::Array(required);
        }
        self_contained(doc, schema)
    }

    /// Its output schema: the operation's 200 `application/json` schema.
    pub fn output_schema(&self) -> Option<Value> {
        let doc = crate::app::routes::openapi_value();
        let schema = &self.operation()["responses"]["200"]["content"]["application/json"]["schema"];
        if schema.is_null() {
            return None;
        }
        let mut root = resolve(doc, schema).clone();
        if root.get("type").is_none() {
            root["type"] = "object".into();
        }
        Some(self_contained(doc, root))
    }

    /// Its entry in `tools/list`.
    pub fn listing(&self) -> Value {
        let mut tool = json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema(),
            "annotations": {
                "title": self.title,
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": !self.live,
                "openWorldHint": self.live,
            },
        });
        if let Some(output) = self.output_schema() {
            tool["outputSchema"] = output;
        }
        tool
    }
}

/// An object resolved through one `$ref`, or itself.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => doc.pointer(pointer).unwrap_or(v),
        None => v,
    }
}

/// The JSON schema of an operation's request body, resolved.
fn request_body<'a>(doc: &'a Value, op: &'a Value) -> Option<&'a Value> {
    let schema = &op["requestBody"]["content"]["application/json"]["schema"];
    (!schema.is_null()).then(|| resolve(doc, schema))
}

/// `schema` with every `#/components/schemas/X` it reaches, however deep, copied into
/// its `$defs` and referred to there: a schema a client validates without the OpenAPI
/// document.
fn self_contained(doc: &Value, mut schema: Value) -> Value {
    let mut defs = Map::new();
    let mut pending = Vec::new();
    rewrite(&mut schema, &mut pending);
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let mut def = doc["components"]["schemas"][&name].clone();
        rewrite(&mut def, &mut pending);
        defs.insert(name, def);
    }
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    schema
}

/// Points every component reference of `v` at `#/$defs/`, noting the names.
fn rewrite(v: &mut Value, names: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(name) = r.strip_prefix("#/components/schemas/")
            {
                names.push(name.to_owned());
                *r = format!("#/$defs/{name}");
            }
            map.values_mut().for_each(|v| rewrite(v, names));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, names)),
        _ => {}
    }
}

/// Arguments that do not make a request of the tool's route: a JSON-RPC `-32602`.
#[derive(Debug)]
pub struct BadArguments(pub String);

/// The REST answer of a tool call: its status, its body, and the metering headers a
/// result repeats in its `_meta` (under `tldsnap.dev/` and the header's name).
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status REST gives.
    pub status: StatusCode,
    /// The response's headers, the metering ones among them.
    headers: HeaderMap,
    /// The body: the JSON document of a 200, else a problem document.
    body: Whole,
}

/// A response's whole body: its one chunk as the handler made it (no copy), or its
/// chunks collected (a kept answer sent around a part written anew).
#[derive(Debug)]
enum Whole {
    One(crate::http::body::Body),
    Collected(Bytes),
}

impl Answer {
    /// The body's bytes.
    pub fn body(&self) -> &[u8] {
        match &self.body {
            Whole::One(body) => body.bytes(),
            Whole::Collected(bytes) => bytes,
        }
    }

    /// The metering headers REST sent, in [`METER`]'s order.
    fn meter(&self) -> impl Iterator<Item = (&'static str, &HeaderValue)> {
        METER
            .iter()
            .filter_map(|name| Some((*name, self.headers.get(*name)?)))
    }

    /// `_meta`: each metering header under `tldsnap.dev/` and its name (a number where
    /// the value is one), and `tldsnap.dev/status` for a problem.
    pub fn meta(&self) -> Map<String, Value> {
        let mut meta = Map::new();
        for (name, v) in self.meter() {
            let v = String::from_utf8_lossy(v.as_bytes());
            let value = v
                .parse::<u64>()
                .map_or_else(|_| Value::from(&*v), Value::from);
            meta.insert(format!("tldsnap.dev/{name}"), value);
        }
        if !self.status.is_success() {
            meta.insert("tldsnap.dev/status".into(), self.status.as_u16().into());
        }
        meta
    }

    /// [`Answer::meta`] written as a JSON object into `out`; nothing when it is empty.
    fn write_meta(&self, out: &mut Vec<u8>) {
        let problem = !self.status.is_success();
        let mut meter = self.meter().peekable();
        if meter.peek().is_none() && !problem {
            return;
        }
        out.extend_from_slice(b",\"_meta\":{");
        let mut any = false;
        for (i, (name, v)) in meter.enumerate() {
            any = true;
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"\"tldsnap.dev/");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
            let v = String::from_utf8_lossy(v.as_bytes());
            match v.parse::<u64>() {
                Ok(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
                Err(_) => crate::json::write_str(&v, out),
            }
        }
        if problem {
            if any {
                out.push(b',');
            }
            out.extend_from_slice(b"\"tldsnap.dev/status\":");
            out.extend_from_slice(itoa::Buffer::new().format(self.status.as_u16()).as_bytes());
        }
        out.push(b'}');
    }
}

/// Calls `tool` with `arguments` for the caller whose headers are `headers`: the REST
/// request they stand for, answered by its route's handler. Writes the `tools/call`
/// result into `out` (the JSON object, after whatever `out` holds).
pub async fn call(
    state: &State,
    tool: &'static Tool,
    arguments: &Map<String, Value>,
    headers: &HeaderMap,
    conn: &Connection,
    out: &mut Vec<u8>,
) -> Result<(), BadArguments> {
    let answer = rest(state, tool, arguments, headers, conn).await?;
    let data_date = data_date(state);
    let cx = text::Context {
        data_date: data_date.as_deref(),
        at: arguments.get("at").and_then(Value::as_str),
    };
    write_result(tool.text, cx, &answer, out);
    Ok(())
}

/// The REST answer to `tool`'s call with `arguments` (counted in the tool's calls).
pub async fn rest(
    state: &State,
    tool: &'static Tool,
    arguments: &Map<String, Value>,
    headers: &HeaderMap,
    conn: &Connection,
) -> Result<Answer, BadArguments> {
    let request = request(tool, arguments, headers)?;
    let route = tool.route.route();
    let segment = request.segment.as_deref().unwrap_or_default();
    let started = Stamp::now();
    let response = answer(state, request.http, route, segment, conn, started).await;
    state
        .mcp
        .count(tool_index(tool), response.status().is_success());
    let (parts, body) = response.into_parts();
    let one = hyper::body::Body::size_hint(&body).exact() == Some(body.bytes().len() as u64);
    let body = if one && !body.is_streamed() {
        Whole::One(body)
    } else {
        match body.collect().await {
            Ok(collected) => Whole::Collected(collected.to_bytes()),
            Err(never) => match never {},
        }
    };
    Ok(Answer {
        status: parts.status,
        headers: parts.headers,
        body,
    })
}

/// The data date (`YYYY-MM-DD`) of the snapshot served, for the text of a result.
fn data_date(state: &State) -> Option<String> {
    let loaded = state.store.load()?;
    let days = loaded
        .snapshot
        .header()
        .data_updated_ms
        .div_euclid(crate::time::MS_PER_DAY);
    let mut out = Vec::with_capacity(10);
    crate::time::write_date(days, &mut out);
    String::from_utf8(out).ok()
}

/// The REST request of a tool call.
struct Made {
    http: Request<Full<Bytes>>,
    /// The raw (percent-encoded) path parameter.
    segment: Option<String>,
}

/// Where each argument of `tool` goes, read from the OpenAPI document once per
/// process for every tool.
fn places(tool: &Tool) -> &'static Places {
    static PLACES: OnceLock<Vec<Places>> = OnceLock::new();
    &PLACES.get_or_init(|| TOOLS.iter().map(Tool::shape).collect())[tool_index(tool)]
}

/// Builds the REST request that `arguments` describe.
fn request(
    tool: &Tool,
    arguments: &Map<String, Value>,
    headers: &HeaderMap,
) -> Result<Made, BadArguments> {
    let shape = places(tool);
    let route = tool.route.route();
    let mut query = String::new();
    let mut body = Map::new();
    let mut segment = None;
    for (name, value) in arguments {
        if shape.segment.as_deref() == Some(name.as_str()) {
            let text = scalar(name, value)?;
            if text.is_empty() {
                return Err(BadArguments(format!("`{name}` must not be empty")));
            }
            segment = Some(encode(&text));
        } else if shape.query.iter().any(|q| q == name) {
            if value.is_null() {
                continue;
            }
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(name);
            query.push('=');
            push_list(name, value, &mut query)?;
        } else if shape.body.iter().any(|b| b == name) {
            body.insert(name.clone(), value.clone());
        } else {
            let mut takes: Vec<&str> = shape.segment.iter().map(String::as_str).collect();
            takes.extend(shape.query.iter().map(String::as_str));
            takes.extend(shape.body.iter().map(String::as_str));
            return Err(BadArguments(format!(
                "{} takes no argument `{name}`; it takes: {}",
                tool.name,
                takes.join(", ")
            )));
        }
    }
    let path = match (&shape.segment, &segment) {
        (None, _) => route.path.to_owned(),
        (Some(name), Some(value)) => route.path.replace(&format!("{{{name}}}"), value),
        (Some(name), None) => {
            return Err(BadArguments(format!("`{name}` is required")));
        }
    };
    let mut target = path;
    if !query.is_empty() {
        target.push('?');
        target.push_str(&query);
    }
    let method = tool.method();
    let has_body = !shape.body.is_empty();
    let bytes = if has_body {
        Bytes::from(serde_json::to_vec(&body).unwrap_or_default())
    } else {
        Bytes::new()
    };
    let uri = hyper::Uri::from_maybe_shared(Bytes::from(target))
        .map_err(|e| BadArguments(format!("the arguments make no request: {e}")))?;
    let mut http = Request::new(Full::new(bytes));
    *http.method_mut() = method;
    *http.uri_mut() = uri;
    let keys = super::keys(headers);
    let out = http.headers_mut();
    out.reserve(keys.len() + usize::from(has_body));
    if has_body {
        out.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    for key in keys {
        out.append(header::HeaderName::from_static("x-api-key"), key);
    }
    Ok(Made { http, segment })
}

/// A scalar argument as the text of a query value.
fn scalar(name: &str, value: &Value) -> Result<String, BadArguments> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(scalar_only(name)),
    }
}

/// An argument as a query value, appended to `out` percent-encoded: a scalar, or a
/// list of scalars joined with literal commas, as the REST lists are written (a comma
/// inside an item is encoded).
fn push_list(name: &str, value: &Value, out: &mut String) -> Result<(), BadArguments> {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_scalar(name, item, out)?;
            }
            Ok(())
        }
        v => push_scalar(name, v, out),
    }
}

/// A scalar argument appended to `out` percent-encoded.
fn push_scalar(name: &str, value: &Value, out: &mut String) -> Result<(), BadArguments> {
    match value {
        Value::String(s) => push_encoded(s, out),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => push_encoded(&n.to_string(), out),
        _ => return Err(scalar_only(name)),
    }
    Ok(())
}

fn scalar_only(name: &str) -> BadArguments {
    BadArguments(format!("`{name}` must be a string, a number or a boolean"))
}

/// `text` percent-encoded for a path segment or query value (everything but the
/// unreserved characters).
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_encoded(text, &mut out);
    out
}

/// [`encode`] into `out`.
fn push_encoded(text: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        }
    }
}

/// The answer of the tool's route to its REST request: the route's own handler.
async fn answer(
    state: &State,
    req: Request<Full<Bytes>>,
    route: &'static crate::http::router::Route,
    segment: &str,
    conn: &Connection,
    started: Stamp,
) -> HttpResponse {
    use RouteId as R;
    match RouteId::of(route) {
        R::ClientCheapest => {
            let endpoint = prices::Endpoint::Cheapest(Shape::Client);
            prices::endpoint(state, &req, route, endpoint, segment, conn, started)
                .finish(state)
                .await
        }
        R::ClientPrices => {
            let endpoint = prices::Endpoint::Prices;
            prices::endpoint(state, &req, route, endpoint, segment, conn, started)
                .finish(state)
                .await
        }
        R::ClientRegistrars => {
            let endpoint = prices::Endpoint::Registrars;
            prices::endpoint(state, &req, route, endpoint, segment, conn, started)
                .finish(state)
                .await
        }
        R::ClientOverview | R::ClientHistory | R::ClientTlds | R::RegistrarList | R::Registrar => {
            let endpoint = match RouteId::of(route) {
                R::ClientOverview => catalogue::Endpoint::Overview,
                R::ClientHistory => catalogue::Endpoint::History,
                R::ClientTlds => catalogue::Endpoint::Tlds,
                R::RegistrarList => catalogue::Endpoint::RegistrarList,
                _ => catalogue::Endpoint::Registrar,
            };
            catalogue::endpoint(state, &req, route, endpoint, segment, conn)
                .finish(state)
                .await
        }
        R::PortfolioAudit => Box::pin(domains::audit(state, req, route, conn)).await,
        R::DomainsLookup => Box::pin(domains::lookup(state, req, route, conn)).await,
        R::DomainsSearch => Box::pin(domains::search(state, &req, route, conn)).await,
        R::DomainRdap => Box::pin(live::rdap(state, &req, route, segment, conn)).await,
        R::DomainStatus => Box::pin(live::status(state, &req, route, segment, conn)).await,
        R::DomainDns => Box::pin(live::dns(state, &req, route, segment, conn)).await,
        R::DomainAvailability => {
            Box::pin(live::availability(state, &req, route, segment, conn)).await
        }
        R::DomainsAvailability => Box::pin(live::bulk_availability(state, req, route, conn)).await,
        R::DomainTls => Box::pin(live::tls(state, &req, route, segment, conn)).await,
        _ => crate::http::problem::Problem::NotFound.into_response(),
    }
}

/// The metering headers a tool result repeats in its `_meta`, under
/// `tldsnap.dev/` and the header's name.
const METER: [&str; 6] = [
    "ratelimit-limit",
    "ratelimit-remaining",
    "ratelimit-reset",
    "x-credits-remaining",
    "x-credits-cost",
    "x-searches-remaining",
];

/// Writes the `tools/call` result of the route's answer into `out`: a 200's body as
/// `structuredContent`, the bytes REST sent (no second parse, no re-serialising), and
/// its rendering ([`text`]) as the text, escaped into place as it is written; a
/// problem as an `isError` result whose text is its code and detail. A body that is
/// not JSON (none is) is given as text, with `structuredContent` null.
fn write_result(kind: Kind, cx: text::Context<'_>, answer: &Answer, out: &mut Vec<u8>) {
    let body = answer.body();
    let ok = answer.status.is_success();
    out.reserve(body.len() * 2 + 256);
    out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":\"");
    let mut json = if ok {
        text::write_success_kept(kind, body, cx, out)
    } else {
        text::write_problem(body, out)
    };
    if ok && !json {
        json = serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok();
        text::write_escaped(&String::from_utf8_lossy(body), out);
    }
    out.extend_from_slice(b"\"}],\"structuredContent\":");
    out.extend_from_slice(if json { body } else { b"null" });
    out.extend_from_slice(if ok {
        b",\"isError\":false"
    } else {
        b",\"isError\":true"
    });
    answer.write_meta(out);
    out.push(b'}');
}

/// The place of `tool` in [`TOOLS`] (the index of its counters).
pub fn tool_index(tool: &Tool) -> usize {
    TOOLS
        .iter()
        .position(|t| std::ptr::eq(t, tool))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_counted() {
        assert!(
            TOOLS.len() <= super::super::state::MAX_TOOLS,
            "{}",
            TOOLS.len()
        );
    }

    #[test]
    fn every_tool_has_object_schemas_without_dangling_references() {
        for tool in TOOLS {
            let input = tool.input_schema();
            assert_eq!(input["type"], "object", "{}", tool.name);
            assert!(
                !input["properties"].as_object().unwrap().is_empty()
                    || tool.route == RouteId::RegistrarList,
                "{}",
                tool.name
            );
            let output = tool.output_schema().expect(tool.name);
            assert_eq!(output["type"], "object", "{}", tool.name);
            for schema in [&input, &output] {
                let text = schema.to_string();
                assert!(!text.contains("#/components/"), "{}: {text}", tool.name);
                let mut names = Vec::new();
                rewrite(&mut schema.clone(), &mut names);
                for name in names {
                    assert!(
                        schema["$defs"].get(&name).is_some(),
                        "{}: {name}",
                        tool.name
                    );
                }
            }
        }
    }

    #[test]
    fn arguments_become_the_rest_request() {
        let tool = TOOLS.iter().find(|t| t.name == "cheapest").unwrap();
        let args = json!({"tlds": ["com", "dev"], "limit": 2, "include_stale": true});
        let made = request(tool, args.as_object().unwrap(), &HeaderMap::new()).unwrap();
        assert_eq!(
            made.http.uri(),
            "/api/v1/client/prices/cheapest?include_stale=true&limit=2&tlds=com,dev"
        );
        let tool = TOOLS.iter().find(|t| t.name == "tld_overview").unwrap();
        let args = json!({"tld": "рф"});
        let made = request(tool, args.as_object().unwrap(), &HeaderMap::new()).unwrap();
        assert_eq!(made.http.uri(), "/api/v1/client/overview/tld/%D1%80%D1%84");
        assert!(request(tool, &Map::new(), &HeaderMap::new()).is_err());
        let args = json!({"tld": "com", "nope": 1});
        assert!(request(tool, args.as_object().unwrap(), &HeaderMap::new()).is_err());
        let args = json!({"tld": {"a": 1}});
        assert!(request(tool, args.as_object().unwrap(), &HeaderMap::new()).is_err());
        let tool = TOOLS.iter().find(|t| t.name == "domains_lookup").unwrap();
        let args = json!({"domains": ["example.com"], "limit": 1});
        let made = request(tool, args.as_object().unwrap(), &HeaderMap::new()).unwrap();
        assert_eq!(made.http.method(), Method::POST);
        assert_eq!(made.http.uri(), "/api/v1/client/domains/lookup?limit=1");
    }
}
