//! The Model Context Protocol endpoint (`/mcp`, docs/MCP.md): the API's read
//! capabilities as MCP tools, over MCP's Streamable HTTP transport (revision
//! 2025-11-25, and the older revisions the official SDKs still negotiate).
//!
//! # Why not rmcp
//!
//! The official Rust SDK's Streamable HTTP server is a tower service meant to be
//! mounted in axum, with its own session manager, task per session and SSE channels.
//! Here a request is answered on the connection layer's own task through the route
//! table ([`crate::app`]), and the tools need nothing the transport would add: every
//! answer is one JSON document. So the transport is written here, over the existing
//! connection layer: JSON-RPC 2.0 messages in a POST body, JSON answers (never a
//! stream, which the transport allows), sessions by `Mcp-Session-Id`
//! ([`session::Sessions`]). That is a few hundred lines, with no second HTTP stack.
//!
//! # The rules
//!
//! | request | answer |
//! |---|---|
//! | `Origin` present and not this server's (`--public-url`) or a loopback one | 403 |
//! | `GET /mcp` (no server-to-client stream is offered) | 405, `Allow: POST, DELETE` (the route table) |
//! | `POST` body not JSON | 400, JSON-RPC `-32700` |
//! | not a JSON-RPC 2.0 message; a batch where the revision has none, empty or over [`MAX_BATCH`] | 400, `-32600` |
//! | `initialize` | 200, the result and a new `Mcp-Session-Id` |
//! | anything else without `Mcp-Session-Id` | 400, `-32600` |
//! | an `Mcp-Session-Id` that is not open | 404, `-32001` |
//! | `MCP-Protocol-Version` that is not a supported revision | 400, `-32600` |
//! | notifications and responses only | 202, no body |
//! | an unknown method | `-32601`; bad `params`, an unknown tool or arguments that make no request: `-32602` |
//! | `tools/call` | the tool's REST request answered by its route's handler ([`tools`]); a problem is an `isError` result |
//! | `resources/list`, `resources/templates/list`, `resources/read` | [`resources`]: the registrar list and a TLD's overview, each a tool's REST answer; a problem is a JSON-RPC error (`-32002` not found) |
//! | `prompts/list`, `prompts/get` | [`prompts`]: two templates, text only |
//! | `logging/setLevel` | `{}` for a known level (no log notifications are sent) |
//! | `DELETE` with an open session | 204, the session ends |
//!
//! No answer here is a 5xx, and none closes the connection: a protocol fault is a
//! JSON-RPC error in a 4xx, as the transport says.

use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Map, Value, json};

use crate::api::{Connection, HttpResponse, State, read_body};
use crate::http::body::Body;
use crate::http::problem::Problem;

pub mod prompts;
pub mod resources;
pub mod session;
pub mod state;
pub mod text;
pub mod tools;

pub use state::Mcp;

/// The revision this server speaks when the client's is not one it knows.
pub const LATEST: &str = "2025-11-25";

/// The revisions it negotiates, newest first.
pub const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Most messages in one batch (revisions before 2025-06-18 allow batches): each call
/// is admitted and metered on its own, so the cap only bounds one body's work.
pub const MAX_BATCH: usize = 32;

/// Largest body read: a portfolio audit's largest body, in a JSON-RPC envelope.
pub const MAX_BODY: usize = crate::api::domains::AUDIT_MAX_BODY + 64 * 1024;

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// JSON-RPC 2.0 error codes.
pub mod code {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid JSON-RPC request (or not one this transport takes here).
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad parameters: missing, of the wrong type, an unknown tool.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The request was refused at the HTTP level (an `Origin`, a missing session).
    pub const REFUSED: i64 = -32000;
    /// No open session has the id the request gave.
    pub const SESSION_NOT_FOUND: i64 = -32001;
}

/// The Prometheus lines of the endpoint: tool calls by tool and result, open
/// sessions.
pub fn render_metrics(mcp: &Mcp, out: &mut String) {
    use std::fmt::Write;
    out.push_str("# HELP tldsnap_mcp_tool_calls_total MCP tool calls, by tool and result (ok, or error: an isError result).\n");
    out.push_str("# TYPE tldsnap_mcp_tool_calls_total counter\n");
    for (i, tool) in tools::TOOLS.iter().enumerate() {
        let (ok, error) = mcp.calls(i);
        for (result, n) in [("ok", ok), ("error", error)] {
            if n > 0 {
                let _ = writeln!(
                    out,
                    "tldsnap_mcp_tool_calls_total{{tool=\"{}\",result=\"{result}\"}} {n}",
                    tool.name
                );
            }
        }
    }
    out.push_str("# HELP tldsnap_mcp_sessions MCP sessions open.\n");
    out.push_str("# TYPE tldsnap_mcp_sessions gauge\n");
    let _ = writeln!(out, "tldsnap_mcp_sessions {}", mcp.sessions.len());
}

/// The API keys of a request: each `X-API-Key`, and the token of an
/// `Authorization: Bearer` header (two keys in one request are refused as REST
/// refuses them: 401 `invalid_api_key`).
pub fn keys(headers: &HeaderMap) -> Vec<HeaderValue> {
    let mut keys: Vec<HeaderValue> = headers.get_all("x-api-key").iter().cloned().collect();
    for v in headers.get_all(header::AUTHORIZATION) {
        let Ok(text) = v.to_str() else { continue };
        let Some((scheme, token)) = text.split_once(' ') else {
            continue;
        };
        if scheme.eq_ignore_ascii_case("bearer")
            && let Ok(token) = HeaderValue::from_str(token.trim())
            && !keys.contains(&token)
        {
            keys.push(token);
        }
    }
    keys
}

/// `POST` and `DELETE /mcp`.
pub async fn handle(state: &State, req: Request<Incoming>, conn: &Connection) -> HttpResponse {
    if !origin_allowed(state, req.headers()) {
        return http_error(
            StatusCode::FORBIDDEN,
            code::REFUSED,
            "Origin not allowed: only this server's own origin and loopback origins may call it",
        );
    }
    if req.method() == Method::DELETE {
        return end_session(state, req.headers());
    }
    if let Some(version) = req.headers().get(&PROTOCOL_VERSION)
        && !VERSIONS.iter().any(|v| v.as_bytes() == version.as_bytes())
    {
        return http_error(
            StatusCode::BAD_REQUEST,
            code::INVALID_REQUEST,
            &format!(
                "unsupported MCP-Protocol-Version {:?}; supported: {}",
                String::from_utf8_lossy(version.as_bytes()),
                VERSIONS.join(", ")
            ),
        );
    }
    if !accepts_json(req.headers()) {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            code::INVALID_REQUEST,
            "the client must accept application/json",
        );
    }
    if !is_json(req.headers()) {
        return http_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::INVALID_REQUEST,
            "the body must be application/json",
        );
    }
    let (parts, body) = match read_body(req, MAX_BODY, state.config.body_timeout).await {
        Ok(read) => read,
        Err(problem) => {
            let status = problem.status();
            return http_error(status, code::INVALID_REQUEST, &problem_text(problem));
        }
    };
    let headers = parts.headers;
    // Checked to be UTF-8 as a whole first (then serde_json does not check each string
    // again); a body that is not is parsed as bytes for the error's words.
    let text = std::str::from_utf8(&body).ok();
    // The usual message, one tool call, is read into its parts at once; any other is
    // read as a JSON value.
    let fast = text.and_then(ToolCall::parse);
    let message: Value = if fast.is_some() {
        Value::Null
    } else {
        let parsed = match text {
            Some(text) => serde_json::from_str(text),
            None => serde_json::from_slice(&body),
        };
        match parsed {
            Ok(v) => v,
            Err(e) => {
                return http_error(
                    StatusCode::BAD_REQUEST,
                    code::PARSE_ERROR,
                    &format!("parse error: {e}"),
                );
            }
        }
    };
    let now_ms = state.access.now_ms();
    // `initialize` opens a session; everything else names one.
    if message["method"] == "initialize" {
        return initialize(state, &message, now_ms);
    }
    let version = match headers.get(&SESSION_ID).map(|v| v.to_str()) {
        None => {
            return http_error(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                "Mcp-Session-Id is required: initialize first",
            );
        }
        Some(id) => match id.ok().and_then(|id| state.mcp.sessions.touch(id, now_ms)) {
            Some(version) => version,
            None => {
                return http_error(
                    StatusCode::NOT_FOUND,
                    code::SESSION_NOT_FOUND,
                    "session not found: initialize a new one",
                );
            }
        },
    };
    if let Some(call) = fast {
        let answer = call_tool(
            state,
            &call.id,
            &call.params.name,
            &call.params.arguments,
            &headers,
            conn,
        )
        .await;
        return json_response(StatusCode::OK, answer, None);
    }
    let (messages, batch) = match message {
        Value::Array(items) => {
            if version >= "2025-06-18" {
                return http_error(
                    StatusCode::BAD_REQUEST,
                    code::INVALID_REQUEST,
                    &format!("protocol revision {version} has no JSON-RPC batches"),
                );
            }
            if items.is_empty() || items.len() > MAX_BATCH {
                return http_error(
                    StatusCode::BAD_REQUEST,
                    code::INVALID_REQUEST,
                    &format!("a batch holds 1 to {MAX_BATCH} messages"),
                );
            }
            (items, true)
        }
        single => (vec![single], false),
    };
    let mut answers = Vec::new();
    for message in &messages {
        if let Some(answer) = answer(state, message, &headers, conn).await {
            answers.push(answer);
        }
    }
    if answers.is_empty() {
        // Notifications and responses only.
        return empty(StatusCode::ACCEPTED);
    }
    let body = if batch {
        let mut body = Vec::with_capacity(answers.iter().map(|a| a.len() + 1).sum::<usize>() + 1);
        for (i, answer) in answers.iter().enumerate() {
            body.push(if i == 0 { b'[' } else { b',' });
            body.extend_from_slice(answer);
        }
        body.push(b']');
        body
    } else {
        answers.pop().unwrap_or_default()
    };
    json_response(StatusCode::OK, body, None)
}

/// Answers `initialize`: negotiates the revision and opens a session.
fn initialize(state: &State, message: &Value, now_ms: i64) -> HttpResponse {
    let id = message.get("id").cloned();
    let status = StatusCode::OK;
    let Some(id) = id.filter(valid_id) else {
        return json_response(
            StatusCode::BAD_REQUEST,
            bytes_of(&error(
                Value::Null,
                code::INVALID_REQUEST,
                "initialize is a request: it needs an id",
            )),
            None,
        );
    };
    if message["jsonrpc"] != "2.0" {
        return json_response(
            StatusCode::BAD_REQUEST,
            bytes_of(&error(id, code::INVALID_REQUEST, "jsonrpc must be \"2.0\"")),
            None,
        );
    }
    let Some(asked) = message["params"]["protocolVersion"].as_str() else {
        return json_response(
            status,
            bytes_of(&error(
                id,
                code::INVALID_PARAMS,
                "params.protocolVersion (a string) is required",
            )),
            None,
        );
    };
    let version = VERSIONS
        .iter()
        .copied()
        .find(|v| *v == asked)
        .unwrap_or(LATEST);
    let session = state.mcp.sessions.open(version, now_ms);
    let result = json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": { "listChanged": false },
            "resources": { "subscribe": false, "listChanged": false },
            "prompts": { "listChanged": false },
            "logging": {},
        },
        "serverInfo": {
            "name": "tldsnap",
            "title": "tldsnap domain prices",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": "Domain prices across registrars from tldsnap's snapshot: cheapest registrars per TLD, prices of chosen registrars, history, TLD overviews and the catalogue, a registrar's price list, portfolio audits and domain lookups. TLDs are written without a dot (com, co.uk). Prices are US dollars. Each tool call is metered like a REST request of the same API key (send it as X-API-Key or Authorization: Bearer).",
    });
    json_response(
        status,
        bytes_of(&json!({ "jsonrpc": "2.0", "id": id, "result": result })),
        HeaderValue::from_str(&session).ok(),
    )
}

/// The answer to one message of a session, written: `None` for a notification or a
/// response.
async fn answer(
    state: &State,
    message: &Value,
    headers: &HeaderMap,
    conn: &Connection,
) -> Option<Vec<u8>> {
    let Some(object) = message.as_object() else {
        return Some(bytes_of(&error(
            Value::Null,
            code::INVALID_REQUEST,
            "a message is a JSON object",
        )));
    };
    let id = object.get("id");
    let id_value = id.filter(|i| valid_id(i)).cloned().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(bytes_of(&error(
            id_value,
            code::INVALID_REQUEST,
            "jsonrpc must be \"2.0\"",
        )));
    }
    let Some(method) = object.get("method") else {
        // A response of the client (to nothing this server asked): nothing to answer.
        if id.is_some() && (object.contains_key("result") || object.contains_key("error")) {
            return None;
        }
        return Some(bytes_of(&error(
            id_value,
            code::INVALID_REQUEST,
            "a request needs a method",
        )));
    };
    let Some(method) = method.as_str() else {
        return Some(bytes_of(&error(
            id_value,
            code::INVALID_REQUEST,
            "method must be a string",
        )));
    };
    let Some(id) = id else {
        // A notification (`notifications/initialized`, `notifications/cancelled`, ...):
        // nothing to answer.
        return None;
    };
    if !valid_id(id) {
        return Some(bytes_of(&error(
            Value::Null,
            code::INVALID_REQUEST,
            "id must be a string or an integer",
        )));
    }
    let params = match object.get("params") {
        None | Some(Value::Null) => &Value::Null,
        Some(p @ Value::Object(_)) => p,
        Some(_) => {
            return Some(bytes_of(&error(
                id.clone(),
                code::INVALID_PARAMS,
                "params must be an object",
            )));
        }
    };
    let result = match method {
        "ping" => Ok(json!({})),
        "initialize" => Err((
            code::INVALID_REQUEST,
            "the session is initialized already".to_owned(),
        )),
        "tools/list" => Ok(json!({
            "tools": tools::offered(state).map(tools::Tool::listing).collect::<Vec<_>>(),
        })),
        "tools/call" => {
            let Some(name) = params["name"].as_str() else {
                return Some(bytes_of(&error(
                    id.clone(),
                    code::INVALID_PARAMS,
                    "params.name (a string) is required",
                )));
            };
            let empty = Map::new();
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => &empty,
                Some(Value::Object(a)) => a,
                Some(_) => {
                    return Some(bytes_of(&error(
                        id.clone(),
                        code::INVALID_PARAMS,
                        "arguments must be an object",
                    )));
                }
            };
            return Some(call_tool(state, id, name, arguments, headers, conn).await);
        }
        "logging/setLevel" => set_level(params),
        "resources/list" => Ok(resources::list()),
        "resources/templates/list" => Ok(resources::templates()),
        "resources/read" => {
            return Some(bytes_of(
                &match resources::read(state, params, headers, conn).await {
                    Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                    Err((code, message, data)) => {
                        let mut e = error(id.clone(), code, &message);
                        if let Some(data) = data {
                            e["error"]["data"] = data;
                        }
                        e
                    }
                },
            ));
        }
        "prompts/list" => Ok(prompts::list()),
        "prompts/get" => prompts::get(params),
        other => Err((code::METHOD_NOT_FOUND, format!("method not found: {other}"))),
    };
    Some(bytes_of(&match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, message)) => error(id.clone(), code, &message),
    }))
}

/// The answer to `tools/call` of the tool `name` with `arguments` (request `id`): the
/// result written after the envelope's head, into the answer itself, or the JSON-RPC
/// error of an unknown tool or arguments that make no request.
async fn call_tool(
    state: &State,
    id: &Value,
    name: &str,
    arguments: &Map<String, Value>,
    headers: &HeaderMap,
    conn: &Connection,
) -> Vec<u8> {
    let Some(tool) = tools::find(state, name) else {
        let message = format!("unknown tool: {name}");
        return bytes_of(&error(id.clone(), code::INVALID_PARAMS, &message));
    };
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(&bytes_of(id));
    out.extend_from_slice(b",\"result\":");
    match tools::call(state, tool, arguments, headers, conn, &mut out).await {
        Ok(()) => {
            out.push(b'}');
            out
        }
        Err(tools::BadArguments(why)) => bytes_of(&error(id.clone(), code::INVALID_PARAMS, &why)),
    }
}

/// A `tools/call` request as clients send one: `jsonrpc` "2.0", an id (a string or an
/// integer), and `params` with the tool's `name`, its `arguments` (an object) and
/// perhaps `_meta`, nothing else. [`ToolCall::parse`] reads such a message into these
/// parts in one pass, without building a JSON value of the whole; any other message
/// (another method, a batch, another member or type, a string with escapes where a
/// borrowed one is read) is not one, and is read as a value and answered by the
/// general path, which answers these alike.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCall<'a> {
    jsonrpc: &'a str,
    id: Value,
    method: &'a str,
    #[serde(borrow)]
    params: ToolCallParams<'a>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallParams<'a> {
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    arguments: Map<String, Value>,
    #[serde(rename = "_meta")]
    _meta: Option<serde::de::IgnoredAny>,
}

impl<'a> ToolCall<'a> {
    fn parse(text: &'a str) -> Option<ToolCall<'a>> {
        let call: ToolCall = serde_json::from_str(text).ok()?;
        (call.jsonrpc == "2.0" && call.method == "tools/call" && valid_id(&call.id)).then_some(call)
    }
}

/// The log levels of `logging/setLevel` (RFC 5424's severities, least severe first).
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// `logging/setLevel`: accepted when the level is one of [`LOG_LEVELS`]. The server
/// sends no log notifications (it answers every request with one JSON document and
/// keeps no stream to the client), so every level filters all of them alike and
/// nothing needs keeping.
fn set_level(params: &Value) -> Result<Value, (i64, String)> {
    match params["level"].as_str() {
        Some(level) if LOG_LEVELS.contains(&level) => Ok(json!({})),
        Some(level) => Err((
            code::INVALID_PARAMS,
            format!(
                "unknown log level {level:?}; one of: {}",
                LOG_LEVELS.join(", ")
            ),
        )),
        None => Err((
            code::INVALID_PARAMS,
            "params.level (a string) is required".into(),
        )),
    }
}

/// `DELETE /mcp`: ends the session the request names.
fn end_session(state: &State, headers: &HeaderMap) -> HttpResponse {
    let Some(id) = headers.get(&SESSION_ID).and_then(|v| v.to_str().ok()) else {
        return http_error(
            StatusCode::BAD_REQUEST,
            code::INVALID_REQUEST,
            "Mcp-Session-Id is required",
        );
    };
    if state.mcp.sessions.end(id) {
        empty(StatusCode::NO_CONTENT)
    } else {
        http_error(
            StatusCode::NOT_FOUND,
            code::SESSION_NOT_FOUND,
            "session not found",
        )
    }
}

/// Whether a JSON-RPC id is one this server answers under: a string or an integer.
fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// Whether the request's `Origin`, if any, may call: this server's own (`--public-url`)
/// or a loopback one (a local agent, an inspector). A page of another site the browser
/// sent here by rebinding a name to this address carries its own origin, refused.
fn origin_allowed(state: &State, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    if origin.eq_ignore_ascii_case(public_origin(&state.config.public_url)) {
        return true;
    }
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    if !matches!(url.scheme(), "http" | "https") {
        return false;
    }
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    }
}

/// The origin (`scheme://host[:port]`) of a URL without a trailing slash.
fn public_origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

/// Whether `Accept` allows a JSON answer (absent counts as yes).
fn accepts_json(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(header::ACCEPT).iter().peekable();
    if values.peek().is_none() {
        return true;
    }
    values.filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').any(|t| {
            let t = t.split(';').next().unwrap_or_default().trim();
            t.eq_ignore_ascii_case("application/json")
                || t == "*/*"
                || t.eq_ignore_ascii_case("application/*")
        })
    })
}

/// Whether the body is declared JSON (`application/json`, any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// The detail of a problem, for a JSON-RPC error's message.
fn problem_text(problem: Problem) -> String {
    let response = problem.into_response();
    let body: Value = serde_json::from_slice(response.body().bytes()).unwrap_or_default();
    body["detail"].as_str().unwrap_or("refused").to_owned()
}

/// A JSON-RPC error response.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// An HTTP refusal with a JSON-RPC error body (id `null`: the request's id is not
/// known, or not read).
fn http_error(status: StatusCode, code: i64, message: &str) -> HttpResponse {
    json_response(status, bytes_of(&error(Value::Null, code, message)), None)
}

/// `v` written as JSON.
fn bytes_of(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// A JSON answer, with the session's id when one was opened.
fn json_response(status: StatusCode, body: Vec<u8>, session: Option<HeaderValue>) -> HttpResponse {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(id) = session {
        headers.insert(SESSION_ID, id);
    }
    response
}

/// An answer without a body.
fn empty(status: StatusCode) -> HttpResponse {
    let mut response = Response::new(Body::default());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_either_header() {
        let mut h = HeaderMap::new();
        assert!(keys(&h).is_empty());
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc"),
        );
        assert_eq!(keys(&h), vec![HeaderValue::from_static("abc")]);
        h.insert("x-api-key", HeaderValue::from_static("abc"));
        assert_eq!(keys(&h).len(), 1, "the same key twice is one key");
        h.insert("x-api-key", HeaderValue::from_static("xyz"));
        assert_eq!(keys(&h).len(), 2, "two keys: refused by admission");
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert!(keys(&h).is_empty());
    }

    #[test]
    fn public_origin_is_scheme_and_host() {
        assert_eq!(public_origin("https://tldsnap.dev"), "https://tldsnap.dev");
        assert_eq!(
            public_origin("https://x.dev:8443/a/b"),
            "https://x.dev:8443"
        );
    }
}
