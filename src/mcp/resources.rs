//! Resources: documents an agent's host can attach to a conversation without a model
//! choosing a tool. Two, each the answer of a tool's REST request (the same handler,
//! key, plan and credits as the call):
//!
//! - `tldsnap://registrars`, the registrar list (the `registrars` tool), a direct
//!   resource of `resources/list`;
//! - `tldsnap://tld/{tld}`, a TLD's overview (the `tld_overview` tool), the template of
//!   `resources/templates/list`.
//!
//! A read's content is the REST answer's JSON body as it is. A refusal is a JSON-RPC
//! error, since a read has no result that could carry one: `-32002` (resource not
//! found) for a URI that names nothing or a TLD that does not exist, the server's
//! `-32000` for any other problem, each with the problem document and the HTTP status
//! REST gives in `data`.

use hyper::header::HeaderMap;
use serde_json::{Map, Value, json};

use super::code;
use super::tools::{self, TOOLS};
use crate::api::{Connection, State};

/// The registrar list's URI.
pub const REGISTRARS: &str = "tldsnap://registrars";

/// The prefix of a TLD overview's URI (`tldsnap://tld/{tld}`).
pub const TLD_PREFIX: &str = "tldsnap://tld/";

/// JSON-RPC's "resource not found" (the MCP specification's code).
pub const NOT_FOUND: i64 = -32002;

/// `resources/list`: the direct resources.
pub fn list() -> Value {
    json!({ "resources": [{
        "uri": REGISTRARS,
        "name": "registrars",
        "title": "All registrars",
        "description": "Every registrar tldsnap has prices of: key, name, website, how many TLDs it sells. The same document as the `registrars` tool.",
        "mimeType": "application/json",
    }] })
}

/// `resources/templates/list`: the resource templates.
pub fn templates() -> Value {
    json!({ "resourceTemplates": [{
        "uriTemplate": format!("{TLD_PREFIX}{{tld}}"),
        "name": "tld_overview",
        "title": "Overview of a TLD",
        "description": "One TLD at a glance (tld without a dot: com, co.uk): IANA type and manager, how many registrars sell it, lowest and average prices, the cheapest offers. The same document as the `tld_overview` tool, metered as its call.",
        "mimeType": "application/json",
    }] })
}

/// `resources/read`: the document `params.uri` names, or the JSON-RPC error of a read
/// that finds or is allowed nothing.
pub async fn read(
    state: &State,
    params: &Value,
    headers: &HeaderMap,
    conn: &Connection,
) -> Result<Value, (i64, String, Option<Value>)> {
    let Some(uri) = params["uri"].as_str() else {
        return Err((
            code::INVALID_PARAMS,
            "params.uri (a string) is required".into(),
            None,
        ));
    };
    let not_found = || {
        (
            NOT_FOUND,
            format!("resource not found: {uri}"),
            Some(json!({ "uri": uri })),
        )
    };
    let (name, arguments) = if uri == REGISTRARS {
        ("registrars", Map::new())
    } else if let Some(raw) = uri.strip_prefix(TLD_PREFIX) {
        let tld = crate::http::params::percent_decode(raw, false).map_err(|_| not_found())?;
        if tld.is_empty() || tld.contains(['/', '?', '#']) {
            return Err(not_found());
        }
        let mut arguments = Map::new();
        arguments.insert("tld".into(), Value::from(tld.into_owned()));
        ("tld_overview", arguments)
    } else {
        return Err(not_found());
    };
    let tool = TOOLS
        .iter()
        .find(|t| t.name == name)
        .expect("the resources' tools are in TOOLS");
    let answer = tools::rest(state, tool, &arguments, headers, conn)
        .await
        .map_err(|tools::BadArguments(why)| (code::INVALID_PARAMS, why, None))?;
    if !answer.status.is_success() {
        let status = answer.status.as_u16();
        let problem: Value = serde_json::from_slice(answer.body()).unwrap_or_default();
        let text = super::text::problem(answer.body());
        let data = json!({ "uri": uri, "status": status, "problem": problem });
        let code = if status == 404 {
            NOT_FOUND
        } else {
            code::REFUSED
        };
        return Err((code, text, Some(data)));
    }
    // The REST body as it is.
    let body = String::from_utf8_lossy(answer.body());
    let mut contents = json!({ "uri": uri, "mimeType": "application/json", "text": body });
    let meta = answer.meta();
    if !meta.is_empty() {
        contents["_meta"] = Value::Object(meta);
    }
    Ok(json!({ "contents": [contents] }))
}
