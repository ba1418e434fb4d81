//! The API reference page: the OpenAPI document ([`crate::http::openapi::build`]) as
//! HTML for people.
//!
//! Every operation of `paths` (and every message of `webhooks`) is shown with its
//! method, path, summary, description, parameters and responses, grouped by its first
//! tag, or, for an operation without tags, by the resource its path names
//! (`/api/v1/client/prices/cheapest` and `/api/v1/prices` are both "Prices"; paths
//! outside `/api/` and `/v1/` are "Service"). Local `$ref`s are followed. Like every
//! template in [`super::pages`] it reads nothing but its arguments, and maud escapes
//! every spliced value.

use std::collections::HashSet;

use maud::{Markup, html};
use serde_json::Value;

use super::pages::{Chrome, layout};

/// The methods an OpenAPI path item may hold, in the order they are shown.
const METHODS: [&str; 8] = [
    "get", "put", "post", "patch", "delete", "head", "options", "trace",
];

/// Most `$ref` hops followed before a value is taken as it is (a loop).
const MAX_REF_HOPS: usize = 16;

/// One operation of the document, as the page shows it.
struct Operation<'a> {
    /// Upper-case method.
    method: String,
    /// The path (or, for a webhook, the message's name).
    path: &'a str,
    /// The anchor of its heading.
    anchor: String,
    op: &'a Value,
    /// The path item's own parameters, which the operation's override.
    shared_params: &'a [Value],
}

/// A heading's group of operations.
struct Group<'a> {
    title: String,
    description: Option<&'a str>,
    anchor: String,
    ops: Vec<Operation<'a>>,
}

/// The API reference page of `doc`, an OpenAPI 3.x document as a JSON value.
pub fn render(chrome: &Chrome<'_>, doc: &Value) -> Markup {
    let info = &doc["info"];
    let title = info["title"].as_str().unwrap_or("API");
    let mut anchors = HashSet::new();
    let groups = groups(doc, &mut anchors);
    let webhooks = webhooks(doc, &mut anchors);
    let content = html! {
        h1 { "API reference" }
        p.lead {
            (title)
            @if let Some(v) = info["version"].as_str() { ", version " (v) }
            @if let Some(s) = info["summary"].as_str() { ": " (text(s)) }
        }
        @if let Some(d) = info["description"].as_str() { p { (text(d)) } }
        dl.facts {
            @for how in security_schemes(doc) {
                dt { "Authentication" } dd { (how) }
            }
            dt { "Machine-readable" } dd {
                "This page is made from the server's "
                a href="/openapi.json" { "OpenAPI document" }
                @if let Some(v) = doc["openapi"].as_str() { " (OpenAPI " (v) ")" }
                "."
            }
        }
        nav aria-labelledby="contents" {
            h2 #contents { "Contents" }
            ul {
                @for g in &groups { (contents_entry(&g.title, &g.anchor, &g.ops)) }
                @if !webhooks.is_empty() {
                    (contents_entry("Webhook messages", "group-webhooks", &webhooks))
                }
            }
        }
        @for g in &groups {
            section aria-labelledby=(g.anchor) {
                h2 id=(g.anchor) { (g.title) }
                @if let Some(d) = g.description { p { (text(d)) } }
                @for op in &g.ops { (operation(doc, op)) }
            }
        }
        @if !webhooks.is_empty() {
            section aria-labelledby="group-webhooks" {
                h2 #group-webhooks { "Webhook messages" }
                p { "The requests tldsnap sends to a webhook subscription's URL; answer them with a 2xx status." }
                @for op in &webhooks { (operation(doc, op)) }
            }
        }
    };
    layout(chrome, "API reference", content)
}

fn contents_entry(title: &str, anchor: &str, ops: &[Operation<'_>]) -> Markup {
    html! {
        li {
            a href={ "#" (anchor) } { (title) }
            ul {
                @for op in ops {
                    li { a href={ "#" (op.anchor) } { code { (op.method) " " (op.path) } } }
                }
            }
        }
    }
}

fn operation(doc: &Value, o: &Operation<'_>) -> Markup {
    let op = o.op;
    let params = parameters(doc, o.shared_params, op);
    let body = op.get("requestBody").map(|b| resolve(doc, b));
    let responses: Vec<(&String, &Value)> = op["responses"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k, resolve(doc, v))).collect())
        .unwrap_or_default();
    let needs_key = op.get("security").or_else(|| doc.get("security"));
    html! {
        article aria-labelledby=(o.anchor) {
            h3 id=(o.anchor) { code { (o.method) " " (o.path) } }
            @if let Some(s) = op["summary"].as_str() { p { strong { (text(s)) } } }
            @if op["deprecated"].as_bool() == Some(true) {
                p.notice { "Deprecated: kept for existing clients." }
            }
            @if let Some(d) = op["description"].as_str() { p { (text(d)) } }
            @if let Some(security) = needs_key.and_then(Value::as_array) {
                p.muted { (security_line(doc, security)) }
            }
            @if !params.is_empty() {
                h4 { "Parameters" }
                // A table wider than the screen scrolls; keyboard users reach it too.
                div.table-wrap tabindex="0" role="region" aria-label={ "Parameters of " (o.method) " " (o.path) } {
                    table {
                        thead { tr {
                            th scope="col" { "Name" }
                            th scope="col" { "In" }
                            th scope="col" { "Required" }
                            th scope="col" { "Type" }
                            th scope="col" { "Description" }
                        } }
                        tbody {
                            @for p in &params {
                                tr {
                                    th scope="row" { code { (p["name"].as_str().unwrap_or("")) } }
                                    td { (p["in"].as_str().unwrap_or("")) }
                                    td { @if p["required"].as_bool() == Some(true) { "yes" } @else { "no" } }
                                    td { (schema_type(doc, &p["schema"])) }
                                    td { @if let Some(d) = p["description"].as_str() { (text(d)) } }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(body) = body {
                h4 { "Request body" }
                p {
                    @if body["required"].as_bool() == Some(true) { "Required. " } @else { "Optional. " }
                    @if let Some(d) = body["description"].as_str() { (text(d)) " " }
                    (media_types(&body["content"]))
                }
            }
            @if !responses.is_empty() {
                h4 { "Responses" }
                div.table-wrap tabindex="0" role="region" aria-label={ "Responses of " (o.method) " " (o.path) } {
                    table {
                        thead { tr {
                            th scope="col" { "Status" }
                            th scope="col" { "Description" }
                        } }
                        tbody {
                            @for (status, r) in &responses {
                                tr {
                                    th scope="row" { (status) }
                                    td {
                                        @if let Some(d) = r["description"].as_str() { (text(d)) }
                                        @if r["content"].as_object().is_some_and(|c| !c.is_empty()) {
                                            " " span.muted { (media_types(&r["content"])) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The operations of `paths`, grouped.
fn groups<'a>(doc: &'a Value, anchors: &mut HashSet<String>) -> Vec<Group<'a>> {
    let mut groups: Vec<Group<'a>> = Vec::new();
    // Declared tags first, in their order, with their descriptions.
    for tag in doc["tags"].as_array().into_iter().flatten() {
        if let Some(name) = tag["name"].as_str() {
            groups.push(Group {
                title: name.to_owned(),
                description: tag["description"].as_str(),
                anchor: unique(anchors, &format!("group-{}", slug(name))),
                ops: Vec::new(),
            });
        }
    }
    let Some(paths) = doc["paths"].as_object() else {
        return groups;
    };
    for (path, item) in paths {
        let item = resolve(doc, item);
        let shared = item["parameters"].as_array().map_or(&[][..], Vec::as_slice);
        for method in METHODS {
            let Some(op) = item.get(method).filter(|op| op.is_object()) else {
                continue;
            };
            let title = match op["tags"].get(0).and_then(Value::as_str) {
                Some(tag) => tag.to_owned(),
                None => resource(path),
            };
            let at = match groups.iter().position(|g| g.title == title) {
                Some(at) => at,
                None => {
                    groups.push(Group {
                        anchor: unique(anchors, &format!("group-{}", slug(&title))),
                        title,
                        description: None,
                        ops: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let anchor = op_anchor(anchors, op, method, path);
            groups[at].ops.push(Operation {
                method: method.to_ascii_uppercase(),
                path,
                anchor,
                op,
                shared_params: shared,
            });
        }
    }
    groups.retain(|g| !g.ops.is_empty());
    groups
}

/// The messages of `webhooks` (OpenAPI 3.1), as operations named by the message.
fn webhooks<'a>(doc: &'a Value, anchors: &mut HashSet<String>) -> Vec<Operation<'a>> {
    let mut ops = Vec::new();
    for (name, item) in doc["webhooks"].as_object().into_iter().flatten() {
        let item = resolve(doc, item);
        let shared = item["parameters"].as_array().map_or(&[][..], Vec::as_slice);
        for method in METHODS {
            if let Some(op) = item.get(method).filter(|op| op.is_object()) {
                ops.push(Operation {
                    method: method.to_ascii_uppercase(),
                    path: name,
                    anchor: op_anchor(anchors, op, method, &format!("webhook {name}")),
                    op,
                    shared_params: shared,
                });
            }
        }
    }
    ops
}

/// The group of an untagged path: the resource after the API's prefix.
fn resource(path: &str) -> String {
    let rest = ["/api/v1/client/", "/api/v1/", "/v1/"]
        .iter()
        .find_map(|p| path.strip_prefix(p));
    let Some(rest) = rest else {
        return "Service".to_owned();
    };
    let first = rest.split('/').next().unwrap_or(rest);
    if let Some(more) = first.strip_prefix("tld") {
        return format!("TLD{more}");
    }
    let mut chars = first.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => "Service".to_owned(),
    }
}

/// The parameters of an operation: the path item's, overridden by the operation's of the
/// same name and location.
fn parameters<'a>(doc: &'a Value, shared: &'a [Value], op: &'a Value) -> Vec<&'a Value> {
    let own: Vec<&Value> = op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| resolve(doc, p))
        .collect();
    let key = |p: &Value| (p["name"].as_str().map(str::to_owned), p["in"].clone());
    let mut all: Vec<&Value> = shared
        .iter()
        .map(|p| resolve(doc, p))
        .filter(|p| !own.iter().any(|o| key(o) == key(p)))
        .collect();
    all.extend(own);
    all
}

/// `v`, or what its local `$ref` points at.
fn resolve<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..MAX_REF_HOPS {
        let Some(target) = v["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| doc.pointer(pointer))
        else {
            break;
        };
        v = target;
    }
    v
}

/// A schema's type in a few words: `string (date)`, `array of string`, `Problem`.
fn schema_type(doc: &Value, schema: &Value) -> String {
    schema_type_within(doc, schema, MAX_REF_HOPS)
}

/// [`schema_type`] at most `depth` schemas deep (a schema may hold itself).
fn schema_type_within(doc: &Value, schema: &Value, depth: usize) -> String {
    if let Some(name) = schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
        let target = resolve(doc, schema);
        if depth > 0 && target.get("$ref").is_none() && target.get("type").is_some() {
            return schema_type_within(doc, target, depth - 1);
        }
        return name.to_owned();
    }
    let mut out = match &schema["type"] {
        Value::String(t) if t == "array" => {
            format!(
                "array of {}",
                schema_type_within(doc, &schema["items"], depth.saturating_sub(1))
            )
        }
        Value::String(t) => t.clone(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => String::new(),
    };
    if let Some(f) = schema["format"].as_str() {
        out.push_str(&format!(" ({f})"));
    }
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values.iter().map(plain).collect();
        out.push_str(&format!(", one of {}", values.join(", ")));
    }
    if let Some(d) = schema.get("default") {
        out.push_str(&format!(", default {}", plain(d)));
    }
    if let (Some(lo), Some(hi)) = (schema["minimum"].as_f64(), schema["maximum"].as_f64()) {
        out.push_str(&format!(", {lo} to {hi}"));
    }
    out
}

/// A JSON value as a reader would write it: strings without their quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// `As application/json or text/csv.` from a `content` map.
fn media_types(content: &Value) -> String {
    let names: Vec<&str> = content
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!("As {}.", names.join(" or "))
    }
}

/// How each security scheme is used.
fn security_schemes(doc: &Value) -> Vec<String> {
    doc["components"]["securitySchemes"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, s)| scheme_text(resolve(doc, s)))
        .collect()
}

fn scheme_text(s: &Value) -> String {
    let mut out = match (s["type"].as_str(), s["in"].as_str(), s["name"].as_str()) {
        (Some("apiKey"), Some(place), Some(name)) => format!("An API key in the {name} {place}"),
        (Some("http"), _, _) => {
            format!("HTTP {} authentication", s["scheme"].as_str().unwrap_or(""))
        }
        (Some(t), _, _) => t.to_owned(),
        _ => String::new(),
    };
    if let Some(d) = s["description"].as_str() {
        out.push_str(": ");
        out.push_str(d);
    }
    if !out.is_empty() && !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// Whether an operation needs a key, from its `security` list.
fn security_line(doc: &Value, security: &[Value]) -> String {
    let optional = security
        .iter()
        .any(|r| r.as_object().is_some_and(|m| m.is_empty()));
    let names: Vec<String> = security
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|m| m.keys())
        .map(|name| {
            let s = &doc["components"]["securitySchemes"][name.as_str()];
            match s["name"].as_str() {
                Some(header) => header.to_owned(),
                None => name.clone(),
            }
        })
        .collect();
    match (names.is_empty(), optional) {
        (true, _) => "No key needed.".to_owned(),
        (false, true) => format!("A key ({}) is optional.", names.join(" or ")),
        (false, false) => format!("Needs a key ({}).", names.join(" or ")),
    }
}

/// Text of the document, with its `backticked` spans as code.
fn text(s: &str) -> Markup {
    let pieces: Vec<&str> = s.split('`').collect();
    // An odd piece is code only when a closing backtick follows it.
    let closed = if pieces.len().is_multiple_of(2) {
        pieces.len() - 1
    } else {
        pieces.len()
    };
    html! {
        @for (i, piece) in pieces.iter().enumerate() {
            @if i % 2 == 1 && i < closed {
                code { (piece) }
            } @else {
                @if i % 2 == 1 { "`" }
                (piece)
            }
        }
    }
}

/// The anchor of an operation: its `operationId`, else its method and path.
fn op_anchor(anchors: &mut HashSet<String>, op: &Value, method: &str, path: &str) -> String {
    let base = match op["operationId"].as_str() {
        Some(id) if !slug(id).is_empty() => slug(id),
        _ => slug(&format!("{method} {path}")),
    };
    unique(anchors, &format!("op-{base}"))
}

/// `base`, or `base-2`, `base-3`… when it is taken.
fn unique(anchors: &mut HashSet<String>, base: &str) -> String {
    let mut candidate = base.to_owned();
    let mut n = 2;
    while !anchors.insert(candidate.clone()) {
        candidate = format!("{base}-{n}");
        n += 1;
    }
    candidate
}

/// Letters, digits, `_` and `-` of `s`; runs of anything else become one `-`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::pages::Viewer;
    use serde_json::json;

    fn page(doc: &Value) -> String {
        let viewer = Viewer::visitor();
        let chrome = Chrome {
            viewer: &viewer,
            data_date: "2025-01-01",
            path: "/reference",
            cash: crate::web::format::Cash::USD,
            currencies: &[],
        };
        render(&chrome, doc).into_string()
    }

    /// `s` as maud escapes it.
    fn escaped(s: &str) -> String {
        maud::html! { (s) }.into_string()
    }

    #[test]
    fn every_path_and_operation_of_the_real_document_is_on_the_page() {
        let doc = crate::app::routes::openapi();
        let html = page(&doc);
        let paths = doc["paths"].as_object().unwrap();
        assert!(paths.len() > 10, "{}", paths.len());
        for (path, item) in paths {
            for method in METHODS {
                let Some(op) = item.get(method) else { continue };
                let heading = format!(
                    "<code>{} {}</code></h3>",
                    method.to_ascii_uppercase(),
                    escaped(path)
                );
                assert!(html.contains(&heading), "{heading}");
                if let Some(id) = op["operationId"].as_str() {
                    let anchor = format!("id=\"op-{}\"", slug(id));
                    assert!(html.contains(&anchor), "{anchor}");
                    assert!(html.contains(&format!("href=\"#op-{}\"", slug(id))), "{id}");
                }
                for status in op["responses"].as_object().unwrap().keys() {
                    assert!(html.contains(&format!("<th scope=\"row\">{status}</th>")));
                }
            }
        }
        for name in doc["webhooks"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            assert!(html.contains(&format!("<code>POST {}</code></h3>", escaped(name))));
        }
        // Referenced parameters are resolved: the cheapest query's `tlds` is described.
        let tlds = &doc["components"]["parameters"]["tlds"];
        let d = tlds["description"].as_str().unwrap();
        let first = d.split('`').next().unwrap();
        assert!(html.contains(&escaped(first)), "{first}");
        assert!(html.contains("<html lang=\"en\">"));
    }

    #[test]
    fn headings_go_down_one_level_at_a_time_and_header_cells_have_a_scope() {
        let html = page(&crate::app::routes::openapi());
        let mut last = 0;
        for (at, _) in html.match_indices("<h") {
            let Some(level) = html[at + 2..].chars().next().and_then(|c| c.to_digit(10)) else {
                continue;
            };
            assert!(level <= last + 1, "h{level} after h{last} at {at}");
            last = level;
        }
        assert_eq!(html.matches("<h1").count(), 1);
        let cells = html.matches("<th").count() - html.matches("<thead").count();
        assert_eq!(html.matches("<th scope=").count(), cells);
        assert!(cells > 0);
    }

    #[test]
    fn the_document_s_text_is_escaped() {
        let doc = json!({
            "openapi": "3.1.0",
            "info": { "title": "A & B", "version": "1", "description": "<b>bold</b> `<i>`" },
            "paths": {
                "/x/{a<b>}": {
                    "parameters": [ { "$ref": "#/components/parameters/p" } ],
                    "get": {
                        "operationId": "x\"><script>",
                        "summary": "<script>alert(1)</script>",
                        "responses": { "200": { "description": "ok & <done>" } }
                    }
                }
            },
            "components": { "parameters": { "p": {
                "name": "q\"", "in": "query", "required": true,
                "description": "<img src=x onerror=alert(1)>"
            } } }
        });
        let html = page(&doc);
        for raw in [
            "<script>",
            "<b>bold",
            "<img",
            "<i>",
            "{a<b>}",
            "ok & <done>",
        ] {
            assert!(!html.contains(raw), "{raw} is not escaped");
        }
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("<code>&lt;i&gt;</code>"));
        assert!(html.contains("<code>GET /x/{a&lt;b&gt;}</code>"));
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(html.contains("<code>q&quot;</code>"));
        assert!(html.contains("id=\"op-x-script\""));
        assert!(html.contains("A &amp; B"));
        // The untagged path outside the API's prefix is a service route.
        assert!(html.contains("<h2 id=\"group-Service\">Service</h2>"));
    }

    #[test]
    fn untagged_paths_are_grouped_by_resource() {
        assert_eq!(resource("/api/v1/client/prices/cheapest"), "Prices");
        assert_eq!(resource("/api/v1/prices"), "Prices");
        assert_eq!(resource("/v1/prices"), "Prices");
        assert_eq!(resource("/api/v1/client/tlds"), "TLDs");
        assert_eq!(resource("/api/v1/client/domains/{domain}/dns"), "Domains");
        assert_eq!(resource("/healthz"), "Service");
    }
}
