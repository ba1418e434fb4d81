//! `GET /openapi.json`: the OpenAPI 3.1 description of every route.
//!
//! Each route's operation is written next to its handler and named in the route table
//! ([`crate::app::routes`]), which puts them together with [`build`]; this file holds
//! what operations share: the components (parameters, responses, schemas), the
//! patterns of the parameters, and the helpers that write common parts. A test walks the
//! route table and the document's `paths` and fails when one has a path or method the
//! other lacks.

use serde_json::{Value, json};

use super::params::{DEFAULT_LIMIT, EventsParams, MAX_LIMIT, MAX_LIST_VALUES};
use super::router::POST;
use crate::audit::portfolio::MAX_NAME_FIELD;

// Patterns of the parameters, so that the document refuses what the server refuses
// (schemathesis checks both directions: tools/apicheck; tests/openapi_schema.rs checks
// each pattern against the parser in `super::params` on a table of inputs). They are
// written in the common subset of ECMA-262 (what JSON Schema names), Python's `re` and
// Rust's `regex`: classes, `\uXXXX` and `\xXX` escapes, no look-around.

// Written for code generators too (tools/clientcheck generates a Python client and
// TypeScript types from the served document, and fails on what they cannot model):
// - a schema that extends another says what it adds as a second member of its `allOf`,
//   not beside it: openapi-python-client takes `allOf` of one `$ref` for the referenced
//   schema itself and drops what stands beside it (a created webhook's `secret`);
// - an object inside a schema that others extend (Event, Webhook) is a component of its
//   own: a generator that copies the base into each extension would define the inline
//   object once per copy, and drop the schemas;
// - a component is an object, and a place where it may be null says so (`oneOf` it or
//   null): a nullable component (Pick, Coverage) is generated as a union named
//   `PickType0`, with its inline objects defined once per place that refers to it;
// - a `const: true` says `type: boolean` too, and an event's narrowed `type` is an
//   `enum` of one (the same values): openapi-python-client writes invalid Python for a
//   bare boolean `const` of an optional property, and cannot narrow an `enum` by a
//   `const`.

// The lists (`tlds`, `registrars`) take at most 100 values *after duplicates are
// collapsed* (docs/API.md, "Parameters"), which no JSON Schema keyword says: `maxItems` would claim that
// `com` sent 101 times is refused, and it is answered. The limit is in the description
// and in `x-max-distinct-items`; tests/http_malformed.rs tests the 101st distinct value.

/// One label of a TLD name as the server accepts it: ASCII letters (any case), digits and
/// inner hyphens, 1 to 63; or up to 8 of those mixed with the Unicode letters below.
const LABEL: &str = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[A-Za-z0-9\u00c0-\u00d6\u00d8-\u00de\u00e0-\u00f6\u00f8-\u00ff\u0410-\u044f\u4e00-\u9fff]{1,8})";

/// A TLD name (`tlds` items, the path's `{tld}`): surrounding blanks and one leading dot
/// are dropped, letters lowercased, Unicode labels turned into `xn--`. The document
/// names the Unicode letters that are always valid in a name (Latin-1 letters,
/// Cyrillic, CJK ideographs): the server takes every name IDNA (UTS 46) maps, which no
/// regular expression can say; a name outside this pattern that IDNA refuses is a 400,
/// one that IDNA takes is looked up like any other (404 or `not_found` when unknown).
fn tld_name_pattern() -> String {
    format!(r"^[ \t]*\.?{LABEL}(?:\.{LABEL}){{0,3}}[ \t]*$")
}

/// The schema of one TLD name.
fn tld_name_schema() -> Value {
    json!({ "type": "string", "minLength": 1, "maxLength": crate::tld::MAX_NAME_LEN, "pattern": tld_name_pattern(), "examples": ["com", "co.uk", "рф"] })
}

/// A registrar key in a path: the documented form (any letter case is taken and lowercased).
const REGISTRAR_KEY: &str = "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$";
/// A registrar key in the `registrars` list (blanks around it are dropped).
const REGISTRAR_KEY_ITEM: &str = r"^[ \t]*[A-Za-z0-9][A-Za-z0-9_-]{0,63}[ \t]*$";
/// The catalogue's `q`: a piece of a name, 1 to 253 characters after trimming and
/// dropping one leading dot; of ASCII only letters, digits, '-' and '.'.
const CATALOGUE_Q: &str = r"^[ \t]*(?:\.(?:[A-Za-z0-9.-]|[^\x00-\x7f]){1,253}|(?:[A-Za-z0-9-]|[^\x00-\x7f])(?:[A-Za-z0-9.-]|[^\x00-\x7f]){0,252})[ \t]*$";
/// The domain search's `q`: up to three ASCII words (joined into one label), or one
/// word of up to 8 letters with Unicode ones, optionally followed by a suffix of one or
/// two labels.
pub(crate) const SEARCH_Q: &str = r"^ *(?:[A-Za-z0-9]{1,20}(?: +[A-Za-z0-9]{1,20}){0,2}|[A-Za-z0-9\u00c0-\u00d6\u00d8-\u00de\u00e0-\u00f6\u00f8-\u00ff\u0410-\u044f\u4e00-\u9fff]{1,8})(?:\.[A-Za-z0-9]{1,20}){0,2} *$";
/// A portfolio as CSV with a `domain` column alone and at least one row: each row a
/// name (any text but a comma, a quote, a line break or NUL; a name that is not a
/// domain is an entry with `error`, not a failed request).
pub(crate) const AUDIT_CSV: &str = r#"^domain\r?\n[^\r\n,"\x00]*[^\r\n,"\s\x00][^\r\n,"\x00]*(?:\r?\n[^\r\n,"\x00]*[^\r\n,"\s\x00][^\r\n,"\x00]*)*(?:\r?\n)?$"#;
/// A page cursor as `next_cursor` writes it.
const CURSOR: &str = "^c1[0-9a-f]{32}$";
/// US dollars with at most two decimals, below 10 million.
pub(crate) const DOLLARS: &str = r"^0*(?:[0-9]{1,7}(?:\.[0-9]{1,2})?|\.[0-9]{1,2})$";

/// The document, from each API route's path, methods (its `Allow` list) and path item
/// ([`item`], or one of several methods written whole).
pub fn build<'a>(paths: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    let paths: serde_json::Map<String, Value> =
        paths.into_iter().map(|(p, v)| (p.to_owned(), v)).collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "tldsnap: Domain Price Intelligence API",
            "version": env!("CARGO_PKG_VERSION"),
            "summary": "Registration, renewal and transfer prices of TLDs across registrars (BETA).",
            "description": "Every price is a JSON number in US dollars with at most two decimals. \
                TLDs are written without a leading dot; internationalised TLDs may be sent in \
                Unicode and are answered under their xn-- form. Client endpoints need an API \
                key in X-API-Key; the public variants take one but do not need it. Errors are \
                RFC 9457 problem documents (application/problem+json). HEAD is answered like \
                GET, without the body.",
            "license": { "name": "MIT", "identifier": "MIT" }
        },
        "paths": paths,
        "webhooks": webhooks(),
        "components": components(),
    })
}

/// The path item of a route with one operation, `op`, under its method (POST for a route
/// that answers POST alone, GET otherwise), with the refusals every route can answer.
pub fn item(allow: &str, mut op: Value) -> Value {
    merge(
        &mut op["responses"],
        json!({
            "404": { "$ref": "#/components/responses/NotFound" },
            "405": { "$ref": "#/components/responses/MethodNotAllowed" },
            "414": { "$ref": "#/components/responses/RequestTooLarge" },
            "431": { "$ref": "#/components/responses/RequestTooLarge" }
        }),
    );
    let method = if allow == POST { "post" } else { "get" };
    json!({ method: op })
}

/// The security of a client endpoint: the key is required.
pub fn keyed() -> Value {
    json!([{ "apiKey": [] }])
}

/// The security of a public endpoint: a key is taken but not needed.
pub fn optional_key() -> Value {
    json!([{}, { "apiKey": [] }])
}

/// The refusals of the price endpoints (and the 401 of a keyed one when `with_key`).
pub fn price_errors(with_key: bool) -> Value {
    let mut r = json!({
        "400": { "$ref": "#/components/responses/BadRequest" },
        "403": { "$ref": "#/components/responses/TldNotInPlan" },
        "404": { "$ref": "#/components/responses/UnknownTld" },
        "429": { "$ref": "#/components/responses/TooManyRequests" },
        "503": { "$ref": "#/components/responses/NotReady" }
    });
    if with_key {
        r["401"] = json!({ "$ref": "#/components/responses/Unauthorized" });
    }
    r
}

/// A 200 answer of the schema component `schema`, with the meter headers.
pub fn ok(schema: &str, description: &str) -> Value {
    json!({
        "description": description,
        "headers": meter_headers(),
        "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } }
    })
}

/// References to the parameter components `names` (`#/components/parameters/…`), in
/// order: an operation's `parameters`.
pub fn refs(names: &[&str]) -> Value {
    names
        .iter()
        .map(|p| json!({ "$ref": format!("#/components/parameters/{p}") }))
        .collect()
}

/// The client or the public variant of one operation: the same answer, with the key
/// required or optional; `ids` are the two operation ids, `parameters` names of
/// parameter components.
pub fn variant(
    client: bool,
    ids: [&str; 2],
    summary: &str,
    description: &str,
    parameters: &[&str],
    answer: Value,
) -> Value {
    json!({
        "operationId": if client { ids[0] } else { ids[1] },
        "summary": summary,
        "description": description,
        "security": if client { keyed() } else { optional_key() },
        "parameters": refs(parameters),
        "responses": { "200": answer }
    })
}

/// One DNS record type of `types`, any letter case, blanks around it.
pub(crate) const DNS_TYPE: &str =
    r"^[ \t]*(?:[Aa]|[Aa]{4}|[Mm][Xx]|[Nn][Ss]|[Tt][Xx][Tt]|[Cc][Aa][Aa]|[Ss][Oo][Aa])[ \t]*$";

/// A top-level label: a letter first (no TLD starts with a digit, so a dotted number is
/// an IP address, not a name), then letters, digits and inner hyphens; or the Unicode
/// letters [`LABEL`] names.
const TOP_LABEL: &str = r"(?:[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[A-Za-z\u00c0-\u00d6\u00d8-\u00de\u00e0-\u00f6\u00f8-\u00ff\u0410-\u044f\u4e00-\u9fff][A-Za-z0-9\u00c0-\u00d6\u00d8-\u00de\u00e0-\u00f6\u00f8-\u00ff\u0410-\u044f\u4e00-\u9fff]{0,7})";

/// A domain name of the live lookups' `{domain}`: 2 to 5 labels, the last a top-level
/// label; blanks around it, a leading and a trailing dot are dropped by the server.
pub(crate) fn domain_pattern() -> String {
    format!(r"^[ \t]*\.?{LABEL}(?:\.{LABEL}){{0,3}}\.{TOP_LABEL}\.?[ \t]*$")
}

/// The parameter, responses and schemas of the live lookups.
fn live_components() -> Value {
    json!({
        "parameters": {
            "domain": { "name": "domain", "in": "path", "required": true,
                        "description": "A domain name (Unicode or xn--; a subdomain is looked up as its registrable domain). A public suffix alone (`co.uk`) is a 400.",
                        "schema": { "type": "string", "minLength": 3, "maxLength": crate::tld::MAX_NAME_LEN, "pattern": domain_pattern(), "examples": ["example.com", "shop.example.co.uk", "bücher.de"] } }
        },
        "responses": {
            "UpstreamFailed": problem_response("An upstream (`upstream`: registry, name server or web server) did not answer in time, answered with an error or garbage, could not be reached, or tldsnap holds back from it (its Retry-After, the circuit breaker, tldsnap's pace toward it or its address, the key's share of it). Nothing is known from it; it costs one credit (`X-Credits-Cost: 1`).", &["upstream_timeout", "upstream_error"], json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" }, "X-Credits-Cost": { "$ref": "#/components/headers/X-Credits-Cost" } }))
        },
        "schemas": live_schemas(),
    })
}

/// The schemas of the live lookups, one `json!` each (the macro's recursion limit).
fn live_schemas() -> Value {
    let date_time = json!({ "type": ["string", "null"], "format": "date-time" });
    let text = json!({ "type": ["string", "null"] });
    let mut schemas = serde_json::Map::new();
    schemas.insert("LiveSource".into(), json!({ "type": "object", "required": ["protocol", "server"], "properties": {
                "protocol": { "enum": ["rdap", "whois"] },
                "server": { "type": "string", "description": "The URL queried (RDAP) or the WHOIS server's host name." } } }));
    schemas.insert("Registration".into(), json!({ "type": "object", "required": ["domain", "statuses", "nameservers", "redacted"], "properties": {
                "domain": { "type": "string" }, "handle": text.clone(),
                "registrar": { "type": ["object", "null"], "properties": { "name": text.clone(), "iana_id": text.clone(), "abuse_email": text.clone() } },
                "created": date_time.clone(), "updated": date_time.clone(), "expires": date_time.clone(),
                "statuses": { "type": "array", "items": { "type": "string" }, "description": "EPP status codes (RDAP's spelling mapped per RFC 8056)." },
                "nameservers": { "type": "array", "items": { "type": "string" } },
                "dnssec": { "type": ["object", "null"], "properties": { "delegation_signed": { "type": "boolean" },
                    "ds": { "type": "array", "items": { "type": "object", "properties": { "key_tag": { "type": "integer" }, "algorithm": { "type": "integer" }, "digest_type": { "type": "integer" }, "digest": { "type": "string" } } } } } },
                "registrant": { "type": ["object", "null"], "description": "As published: redacted fields stay as the registry served them.", "properties": { "name": text.clone(), "organization": text.clone(), "country": text.clone(), "email": text.clone() } },
                "redacted": { "type": "array", "items": { "type": "object", "required": ["field"], "properties": { "field": { "type": "string" }, "method": text.clone(), "reason": text.clone() } } } } }));
    schemas.insert("RegistryAnswer".into(), json!({ "type": "object", "required": ["domain", "registered", "reserved", "registration", "raw", "source", "learnt_at"], "properties": {
                "domain": { "type": "string", "description": "The registrable domain, canonical." },
                "registered": { "type": ["boolean", "null"], "description": "Whether the registry holds the name (reserved names too); null when its WHOIS answer was not recognised." },
                "reserved": { "type": "boolean" },
                "registration": { "oneOf": [ { "type": "null" }, { "$ref": "#/components/schemas/Registration" } ] },
                "raw": { "type": ["string", "null"], "description": "The WHOIS answer as it came, when not recognised." },
                "source": { "$ref": "#/components/schemas/LiveSource" },
                "learnt_at": { "type": "string", "format": "date-time" } } }));
    schemas.insert("AvailabilityEvidence".into(), json!({ "type": "object", "required": ["source", "upstream", "answer", "learnt_at"], "properties": {
                "source": { "enum": ["rdap", "whois", "dns"] },
                "upstream": { "type": "string", "description": "Who answered, or failed to: the RDAP URL or server, the WHOIS server, the resolver." },
                "answer": { "type": "string", "description": "What it answered, in words.", "examples": ["not found (RDAP 404)", "NXDOMAIN", "2 NS records", "timeout (first byte)"] },
                "learnt_at": { "type": ["string", "null"], "format": "date-time" } } }));
    schemas.insert("Availability".into(), json!({ "type": "object", "required": ["domain", "availability", "reason", "evidence"], "properties": {
                "domain": { "type": "string", "description": "The registrable domain, canonical." },
                "availability": { "enum": ["available", "registered", "reserved", "unknown"] },
                "reason": { "type": "string" },
                "evidence": { "type": "array", "items": { "$ref": "#/components/schemas/AvailabilityEvidence" } } } }));
    schemas.insert("AvailabilityBulk".into(), json!({ "type": "object", "required": ["results", "meta"], "properties": {
                "results": { "type": "array", "items": { "type": "object", "required": ["input"], "properties": {
                    "input": { "type": "string", "description": "The name as given (first occurrence), cut to 256 bytes." },
                    "domain": { "type": "string" },
                    "availability": { "enum": ["available", "registered", "reserved", "unknown"] },
                    "reason": { "type": "string" },
                    "evidence": { "type": "array", "items": { "$ref": "#/components/schemas/AvailabilityEvidence" } },
                    "error": { "enum": ["invalid_name", "tld_not_in_plan"] },
                    "detail": { "type": "string" } } } },
                "meta": { "type": "object", "required": ["total", "checked", "counts", "elapsed_ms"], "properties": {
                    "total": { "type": "integer", "description": "Names in the request." },
                    "checked": { "type": "integer", "description": "Distinct names looked up (what the credits count)." },
                    "counts": { "type": "object", "properties": { "available": { "type": "integer" }, "registered": { "type": "integer" }, "reserved": { "type": "integer" }, "unknown": { "type": "integer" } } },
                    "elapsed_ms": { "type": "integer" },
                    "tier": { "type": "string" } } } } }));
    schemas.insert("DnsRecordSet".into(), json!({ "type": "object", "required": ["type", "status", "ttl", "records"], "properties": {
                "type": { "enum": ["A", "AAAA", "MX", "NS", "TXT", "CAA", "SOA"] },
                "status": { "type": "string", "description": "The response code (NOERROR, NXDOMAIN, SERVFAIL, REFUSED, ...), or TIMEOUT / ERROR when no response came.", "examples": ["NOERROR", "NXDOMAIN", "SERVFAIL"] },
                "ttl": { "type": ["integer", "null"], "description": "The records' lowest TTL, or the negative answer's (from the SOA)." },
                "records": { "type": "array", "items": { "type": "object", "required": ["ttl"], "description": "A/AAAA: address; MX: preference, exchange; NS: host; TXT: text; CAA: flags, tag, value; SOA: mname, rname, serial, refresh, retry, expire, minimum. Each with its ttl.",
                    "properties": { "ttl": { "type": "integer" }, "address": { "type": "string" }, "preference": { "type": "integer" }, "exchange": { "type": "string" }, "host": { "type": "string" }, "text": { "type": "string" },
                                    "flags": { "type": "integer" }, "tag": { "type": "string" }, "value": { "type": "string" },
                                    "mname": { "type": "string" }, "rname": { "type": "string" }, "serial": { "type": "integer" }, "refresh": { "type": "integer" }, "retry": { "type": "integer" }, "expire": { "type": "integer" }, "minimum": { "type": "integer" } } } },
                "error": { "type": "string", "description": "Why no response came (TIMEOUT, ERROR)." },
                "dnssec": { "$ref": "#/components/schemas/DnssecVerdict" } } }));
    schemas.insert("DnssecVerdict".into(), json!({ "enum": ["secure", "insecure", "bogus", "indeterminate"],
                "description": "Only with `dnssec=true`. The resolver's verdict (RFC 4035 section 4.3's words): secure = it set AD (it validated the records, or the proof there are none); insecure = no AD from a resolver that validates (the data is not signed); bogus = SERVFAIL, and an answer when asked with CD (checking disabled): its validation failed; indeterminate = no verdict (the resolver does not validate, failed either way, or did not answer)." }));
    schemas.insert("DnsAnswer".into(), json!({ "type": "object", "required": ["name", "status", "records", "resolver", "learnt_at"], "properties": {
                "name": { "type": "string", "description": "The name looked up, canonical (xn-- form)." },
                "status": { "type": "string", "description": "NXDOMAIN when the name does not exist, SERVFAIL when every type failed so, else NOERROR." },
                "records": { "type": "array", "items": { "$ref": "#/components/schemas/DnsRecordSet" } },
                "resolver": { "type": "string", "description": "The resolver asked." },
                "dnssec": { "type": "object", "required": ["verdict", "resolver_validates"], "description": "Only with `dnssec=true`.", "properties": {
                    "verdict": { "$ref": "#/components/schemas/DnssecVerdict", "description": "The weakest of the record sets' verdicts (bogus, then indeterminate, then insecure, then secure)." },
                    "resolver_validates": { "type": ["boolean", "null"], "description": "Whether the resolver authenticates DNSSEC data: it set AD on the root zone's SOA (asked at most every 10 minutes); null when it did not answer." } } },
                "learnt_at": { "type": "string", "format": "date-time" } } }));
    schemas.insert("StatusAnswer".into(), json!({ "type": "object", "required": ["domain", "registered", "statuses", "grace_period", "on_hold", "pending_delete", "source", "learnt_at"], "properties": {
                "domain": { "type": "string" },
                "registered": { "type": ["boolean", "null"] },
                "statuses": { "type": "array", "items": { "type": "object", "required": ["code"], "properties": {
                    "code": { "type": "string" }, "meaning": text.clone(),
                    "set_by": { "enum": ["registrar", "registry", null] },
                    "state": { "enum": ["normal", "lock", "grace", "hold", "pending_delete", "pending", null] } } } },
                "grace_period": { "type": "boolean" }, "on_hold": { "type": "boolean" }, "pending_delete": { "type": "boolean" },
                "source": { "$ref": "#/components/schemas/LiveSource" },
                "learnt_at": { "type": "string", "format": "date-time" } } }));
    schemas.insert("Certificate".into(), json!({ "type": "object", "required": ["subject", "issuer", "sans", "not_before", "not_after", "days_to_expiry", "serial", "signature_algorithm"], "properties": {
        "subject": { "type": "string" }, "issuer": { "type": "string" },
        "sans": { "type": "array", "items": { "type": "string" }, "description": "DNS names and IP addresses of the subject alternative names." },
        "not_before": { "type": "string", "format": "date-time" }, "not_after": { "type": "string", "format": "date-time" },
        "days_to_expiry": { "type": "integer", "description": "Whole days to the end of validity; negative once expired." },
        "serial": { "type": "string" }, "signature_algorithm": { "type": "string", "description": "OID." } } }));
    schemas.insert("TlsAnswer".into(), json!({ "type": "object", "required": ["domain", "port", "address", "protocol", "cipher_suite", "valid", "error", "error_detail", "certificate", "chain", "learnt_at"], "properties": {
        "domain": { "type": "string" }, "port": { "type": "integer" }, "address": { "type": "string", "description": "The address connected to." },
        "protocol": { "type": "string", "examples": ["TLS 1.3"] }, "cipher_suite": { "type": "string" },
        "valid": { "type": "boolean", "description": "The chain is valid for the name against the trusted roots, now." },
        "error": { "enum": ["expired", "not_yet_valid", "not_valid_for_name", "unknown_issuer", "revoked", "bad_signature", "invalid_purpose", "invalid", null] },
        "error_detail": { "type": ["string", "null"] },
        "certificate": { "$ref": "#/components/schemas/Certificate" },
        "chain": { "type": "array", "items": { "$ref": "#/components/schemas/Certificate" } },
        "learnt_at": { "type": "string", "format": "date-time" } } }));
    Value::Object(schemas)
}

/// The query parameters of both event endpoints.
pub fn events_parameters() -> Value {
    json!([
        { "name": "after", "in": "query", "required": false, "description": "Only events with a larger id (default 0: every event kept). The Last-Event-ID header, when sent, takes its place.", "schema": { "type": "integer", "minimum": 0 } },
        { "name": "tlds", "in": "query", "required": false, "description": format!("Only events of these TLDs (comma-separated, 1 to {MAX_LIST_VALUES} after duplicates collapse; absent: every TLD the plan covers)."),
          "style": "form", "explode": false,
          "schema": { "type": "array", "minItems": 1, "x-max-distinct-items": MAX_LIST_VALUES, "items": tld_name_schema(), "examples": [["com", "io"]] } },
        { "name": "registrars", "in": "query", "required": false, "description": format!("Only events of these registrars (comma-separated keys, 1 to {MAX_LIST_VALUES}); a ranking.changed matches its new or its previous cheapest."),
          "style": "form", "explode": false,
          "schema": { "type": "array", "minItems": 1, "x-max-distinct-items": MAX_LIST_VALUES, "items": { "type": "string", "pattern": REGISTRAR_KEY_ITEM }, "examples": [["porkbun", "dynadot"]] } },
        { "name": "types", "in": "query", "required": false, "description": "Only these event types (comma-separated).",
          "style": "form", "explode": false,
          "schema": { "type": "array", "minItems": 1, "items": { "enum": ["price.changed", "offer.added", "offer.removed", "ranking.changed"] }, "examples": [["price.changed", "ranking.changed"]] } },
        { "name": "limit", "in": "query", "required": false, "description": format!("Most events in a page (polling only), 1 to {}.", EventsParams::MAX_LIMIT), "schema": { "type": "integer", "minimum": 1, "maximum": EventsParams::MAX_LIMIT, "default": EventsParams::DEFAULT_LIMIT } }
    ])
}

/// Adds the members of `extra` that `into` lacks (an operation's own answers stay in
/// place of the shared ones).
pub fn merge(into: &mut Value, extra: Value) {
    if let (Some(into), Value::Object(extra)) = (into.as_object_mut(), extra) {
        for (k, v) in extra {
            into.entry(k).or_insert(v);
        }
    }
}

/// Adds the named components of `extra` to `into`. A name both define must be defined
/// the same: two shapes under one name would make every `$ref` to it mean one of them
/// silently (as an event's old and new prices once meant the prices answer).
fn define(into: &mut Value, extra: Value) {
    if let (Some(into), Value::Object(extra)) = (into.as_object_mut(), extra) {
        for (k, v) in extra {
            if let Some(existing) = into.get(&k) {
                assert!(
                    *existing == v,
                    "OpenAPI component {k:?} is defined twice, differently"
                );
            }
            into.insert(k, v);
        }
    }
}

/// The headers of a metered answer: the rate limit and the credits left.
pub fn meter_headers() -> Value {
    json!({
        "RateLimit-Limit": { "$ref": "#/components/headers/RateLimit-Limit" },
        "RateLimit-Remaining": { "$ref": "#/components/headers/RateLimit-Remaining" },
        "RateLimit-Reset": { "$ref": "#/components/headers/RateLimit-Reset" },
        "X-Credits-Remaining": { "$ref": "#/components/headers/X-Credits-Remaining" }
    })
}

/// An answer of problem documents with `codes`, its description naming them.
pub fn problem_response(description: &str, codes: &[&str], extra_headers: Value) -> Value {
    let mut headers = meter_headers();
    merge(&mut headers, extra_headers);
    json!({
        "description": format!("{description} Codes: {}.", codes.join(", ")),
        "headers": headers,
        "content": { "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } }
    })
}

/// What every shown offer may say beside its prices ([`crate::snapshot::render::terms`]),
/// and the `currency` member of an answer in another currency, added to the schemas
/// that carry them.
fn add_terms_and_currency(schemas: &mut Value) {
    let terms = json!({
        "promotion": { "type": "boolean", "const": true, "description": "Present when the registrar's list marks the first-year price (`register_price`) as a promotion." },
        "regular_register_price": { "type": ["number", "null"], "minimum": 0, "description": "With `promotion`: the regular first-year price, what the first year costs once the promotion ends; null where the list marks a sale without stating it." },
        "coupon": { "$ref": "#/components/schemas/Coupon" },
        "member_prices": { "$ref": "#/components/schemas/MemberPrices" },
        "icann_fee": { "type": "number", "minimum": 0, "description": "Present where the registrar's list states the ICANN fee of a year apart: the fee." },
        "icann_fee_included": { "type": "boolean", "description": "With `icann_fee`: whether the prices shown include it (tldsnap ranks prices with the fee included; see docs/API.md, \"Promotions and the ICANN fee\")." }
    });
    schemas["CurrencyCode"] = json!({
        "type": "string",
        "description": "ISO 4217 code of a currency of the ECB's euro reference rates.",
        "enum": crate::price::ECB_CURRENCIES,
        "default": "USD",
        "examples": ["EUR", "GBP", "JPY"]
    });
    schemas["Coupon"] = json!({
        "type": "object",
        "description": "A coupon code the registrar's list publishes for the first year, and the first-year price with it. Rankings use `register_price`, the price without a code.",
        "required": ["code", "register_price"],
        "properties": {
            "code": { "type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$" },
            "register_price": { "type": "number", "minimum": 0 }
        }
    });
    schemas["MemberPrices"] = json!({
        "type": "object",
        "description": "The prices of the registrar's paid membership, given beside the prices for everyone; never ranked.",
        "required": ["register", "renew", "transfer"],
        "properties": {
            "register": { "type": ["number", "null"], "minimum": 0 },
            "renew": { "type": ["number", "null"], "minimum": 0 },
            "transfer": { "type": ["number", "null"], "minimum": 0 }
        }
    });
    let currency = json!({ "$ref": "#/components/schemas/Currency" });
    schemas["Currency"] = json!({
        "type": "object",
        "description": "Present when the prices are in another currency than USD (`currency=`): each price was converted from USD at the ECB euro reference rates of `rate_date`.",
        "required": ["code", "per_usd", "rate_date", "source"],
        "properties": {
            "code": { "type": "string", "pattern": "^[A-Z]{3}$", "examples": ["EUR"] },
            "per_usd": { "type": "number", "exclusiveMinimum": 0, "description": "Units of the currency per US dollar, rounded to 6 decimals (the conversion itself uses the ECB's two rates exactly)." },
            "rate_date": { "type": "string", "format": "date", "description": "The day of the ECB rates: the last one on or before the snapshot's data date." },
            "source": { "type": "string" }
        }
    });
    let add = |at: &mut Value, extra: &Value| {
        if let (Some(into), Some(from)) = (at.as_object_mut(), extra.as_object()) {
            for (k, v) in from {
                into.insert(k.clone(), v.clone());
            }
        }
    };
    for name in ["CheapestEntryClient", "CheapestEntryPublic", "PriceRecord"] {
        add(&mut schemas[name]["properties"], &terms);
    }
    add(
        &mut schemas["Registrars"]["properties"]["registrars"]["items"]["properties"],
        &terms,
    );
    let member = json!({ "currency": currency });
    add(
        &mut schemas["CheapestClient"]["properties"]["meta"]["properties"],
        &member,
    );
    add(
        &mut schemas["CheapestPublic"]["properties"]["meta"]["properties"],
        &member,
    );
    add(
        &mut schemas["Prices"]["properties"]["stats"]["properties"],
        &member,
    );
    add(&mut schemas["Registrars"]["properties"], &member);
    let audit_domain = &mut schemas["AuditDomain"]["properties"];
    add(&mut audit_domain["cheapest_renewal"]["properties"], &terms);
    add(&mut audit_domain["best_transfer"]["properties"], &terms);
    add(
        &mut schemas["SearchAnswer"]["properties"]["results"]["items"]["properties"],
        &terms,
    );
    add(
        &mut schemas["AuditAnswer"]["properties"]["meta"]["properties"],
        &member,
    );
    add(&mut schemas["Overview"]["allOf"][1]["properties"], &member);
    add(&mut schemas["History"]["properties"], &member);
    add(&mut schemas["PageMeta"]["properties"], &member);
    add(
        &mut schemas["LookupAnswer"]["properties"]["meta"]["properties"],
        &member,
    );
    add(
        &mut schemas["SearchAnswer"]["properties"]["meta"]["properties"],
        &member,
    );
}

fn price() -> Value {
    json!({ "type": "number", "minimum": 0, "description": "US dollars with at most two decimals, or the answer's `currency` (rounded to its minor unit)." })
}

/// The schemas of the domain owner's endpoints (docs/AUDIT.md), kept apart so each `json!`
/// stays within the macro's recursion limit.
fn domain_schemas() -> Value {
    let mut schemas = serde_json::Map::new();
    for (name, schema) in [
        (
            "AuditRequest",
            json!({
                "type": "object", "required": ["domains"], "additionalProperties": false,
                "properties": { "domains": { "type": "array", "minItems": 1, "items": { "oneOf": [
                    { "type": "string", "maxLength": MAX_NAME_FIELD, "description": "A domain name." },
                    { "type": "object", "required": ["name"], "additionalProperties": false, "properties": {
                        "name": { "type": "string", "maxLength": MAX_NAME_FIELD, "description": "The domain name (`domain` is accepted too). Trimmed, lower-cased, a trailing dot dropped, Unicode turned into xn--; subdomains are audited as their registrable domain. A name that is not a domain name is an entry with `error`." },
                        "registrar": { "type": ["string", "null"], "description": "Registrar key where the domain is now." },
                        "renew_price": { "anyOf": [
                            { "type": "number", "minimum": 0, "maximum": 42949672.94, "multipleOf": 0.01 },
                            { "type": "string", "pattern": r"^\s*(?:0*[0-9]{1,7}(?:\.[0-9]{1,2})?|\.[0-9]{1,2})?\s*$" },
                            { "type": "null" } ], "description": "Yearly renewal price paid now, US dollars, at most two decimals (a number, or a decimal string; empty: unknown)." },
                        "expires": { "anyOf": [ { "type": "string", "format": "date" }, { "type": "string", "format": "date-time" }, { "type": "string", "pattern": "^\\s*$" }, { "type": "null" } ],
                                     "description": "Expiry date, YYYY-MM-DD (or an RFC 3339 timestamp); empty or null: unknown." } } } ] } } },
                "examples": [{ "domains": ["example.com", { "name": "shop.example.co.uk", "registrar": "dynadot", "expires": "2026-09-10" }] }]
            }),
        ),
        (
            "AuditDomain",
            json!({
                "type": "object", "required": ["input", "count", "flags"],
                "properties": {
                    "input": { "type": "string", "description": "The name as given (first occurrence), cut to 256 bytes." },
                    "domain": { "type": "string", "description": "The registrable domain, canonical." },
                    "suffix": { "type": "string", "description": "Its public suffix (ICANN section of the PSL; a PRIVATE-section suffix tldsnap prices, like us.com, wins)." },
                    "count": { "type": "integer", "description": "Entries that named this domain." },
                    "error": { "const": "invalid_name" },
                    "detail": { "type": "string", "description": "Why the input is not a domain name." },
                    "registrar_key": { "type": ["string", "null"] },
                    "expires": { "type": ["string", "null"], "format": "date" },
                    "current_price": { "type": ["number", "null"], "description": "Yearly price paid now." },
                    "price_source": { "enum": ["stated", "registrar", null] },
                    "cheapest_renewal": { "type": ["object", "null"], "properties": { "registrar_key": { "type": "string" }, "registrar_name": { "type": "string" }, "renew_price": price() } },
                    "best_transfer": { "type": ["object", "null"], "properties": { "registrar_key": { "type": "string" }, "registrar_name": { "type": "string" }, "transfer_price": price(), "renew_price": price(), "total_cost_5_year": price() } },
                    "recommendation": { "enum": ["stay", "transfer", null] },
                    "optimal_price": { "type": ["number", "null"] },
                    "savings_per_year": { "type": ["number", "null"] },
                    "savings_5_year": { "type": ["number", "null"] },
                    "flags": { "type": "array", "items": { "enum": ["invalid_name", "unknown_tld", "tld_not_in_plan", "no_seller", "registrar_does_not_sell", "renewal_trap", "expires_soon"] } }
                }
            }),
        ),
        (
            "AuditSums",
            json!({
                "type": "object",
                "properties": {
                    "domains": { "type": "integer" }, "priced_domains": { "type": "integer" },
                    "current_yearly": price(), "optimal_yearly": price(), "savings_per_year": price(), "savings_5_year": price()
                }
            }),
        ),
        (
            "AuditAnswer",
            json!({
                "type": "object", "required": ["domains", "totals", "by_registrar", "flags", "meta"],
                "properties": {
                    "domains": { "type": "array", "items": { "$ref": "#/components/schemas/AuditDomain" } },
                    "totals": { "$ref": "#/components/schemas/AuditSums" },
                    "by_registrar": { "type": "array", "items": { "allOf": [ { "$ref": "#/components/schemas/AuditSums" }, { "type": "object", "properties": { "registrar_key": { "type": ["string", "null"] }, "registrar_name": { "type": ["string", "null"] } } } ] } },
                    "flags": { "type": "object", "additionalProperties": { "type": "integer" }, "description": "Distinct domains per flag." },
                    "meta": { "type": "object", "properties": { "entries": { "type": "integer" }, "distinct": { "type": "integer" }, "data_date": { "type": "string", "format": "date" }, "expires_soon_days": { "type": "integer" }, "tier": { "type": "string" }, "ignored_columns": { "type": "array", "items": { "type": "string" } } } }
                }
            }),
        ),
        (
            "LookupAnswer",
            json!({
                "type": "object", "required": ["results", "meta"],
                "properties": {
                    "results": { "type": "array", "items": { "type": "object", "required": ["input"], "properties": {
                        "input": { "type": "string" }, "domain": { "type": "string" }, "suffix": { "type": "string" },
                        "cheapest_register": { "type": "array", "items": { "$ref": "#/components/schemas/CheapestEntryClient" } },
                        "registrar_count": { "type": "integer" },
                        "stale_count": { "type": "integer", "minimum": 1, "description": "How many sellers have a price older than `max_age_days`; present only when some have." },
                        "error": { "enum": ["invalid_name", "unknown_tld", "tld_not_in_plan"] },
                        "detail": { "type": "string" } } } },
                    "meta": { "type": "object", "properties": { "total": { "type": "integer" }, "tier": { "type": "string" } } }
                }
            }),
        ),
        (
            "SearchAnswer",
            json!({
                "type": "object", "required": ["query", "name", "results", "meta"],
                "properties": {
                    "query": { "type": "string" }, "name": { "type": "string", "description": "The label searched, canonical (xn-- for Unicode)." },
                    "results": { "type": "array", "items": { "type": "object", "properties": {
                        "domain": { "type": "string" }, "tld": { "type": "string" },
                        "type": { "enum": ["generic", "country-code", "sponsored", "generic-restricted", "infrastructure", "test", null], "description": "IANA root zone type of the top-level label; null when unknown." },
                        "registrar_key": { "type": "string" }, "registrar_name": { "type": "string" },
                        "register_price": price(), "renew_price": price(), "total_cost_5_year": price(),
                        "renewal_trap": { "type": "boolean" }, "requested": { "type": "boolean", "const": true },
                        "last_updated": { "type": "string", "format": "date-time", "description": "When the registrar published the price." },
                        "stale": { "type": "boolean", "const": true, "description": "The price is older than `max_age_days` (only with `include_stale=true`)." },
                        "availability": { "enum": ["unknown", "available", "registered", "reserved"], "description": "`unknown` unless `check_availability=true`." },
                        "availability_reason": { "type": "string", "description": "Why, with `check_availability=true`." } } } },
                    "meta": { "type": "object", "properties": { "total": { "type": "integer" }, "availability": { "type": "string" }, "tier": { "type": "string" },
                        "requested_suffix": { "type": "object", "properties": { "suffix": { "type": "string" }, "error": { "enum": ["unknown_tld", "tld_not_in_plan", "no_seller"] } } } } }
                }
            }),
        ),
    ] {
        schemas.insert(name.to_owned(), schema);
    }
    Value::Object(schemas)
}

fn components() -> Value {
    let mut doc = components_base();
    define(&mut doc["schemas"], domain_schemas());
    add_terms_and_currency(&mut doc["schemas"]);
    doc
}

fn components_base() -> Value {
    let tld_list = format!(
        "Comma-separated TLDs without leading dot, 1 to {MAX_LIST_VALUES} after duplicates are collapsed. Trimmed, lowercased, Unicode names turned into xn-- form."
    );
    let mut c = json!({
        "securitySchemes": {
            "apiKey": { "type": "apiKey", "in": "header", "name": "X-API-Key" }
        },
        "parameters": {
            "tlds": { "name": "tlds", "in": "query", "required": true, "description": tld_list,
                      "style": "form", "explode": false,
                      "schema": { "type": "array", "minItems": 1, "x-max-distinct-items": MAX_LIST_VALUES,
                                  "items": tld_name_schema(),
                                  "examples": [["com", "net", "io"]] } },
            "export_tlds": { "name": "tlds", "in": "query", "required": false, "description": format!("Comma-separated TLDs to export, 1 to {MAX_LIST_VALUES} after duplicates are collapsed; absent: every TLD the plan shows. Unknown ones are left out (404 unknown_tld when none is known)."),
                             "style": "form", "explode": false,
                             "schema": { "type": "array", "minItems": 1, "x-max-distinct-items": MAX_LIST_VALUES, "items": tld_name_schema(), "examples": [["com", "net"]] } },
            "limit": { "name": "limit", "in": "query", "required": false,
                       "description": "Most entries in `cheapest_register`.",
                       "schema": { "type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT } },
            "registrars": { "name": "registrars", "in": "query", "required": false,
                            "description": format!("Comma-separated registrar keys, 1 to {MAX_LIST_VALUES} after duplicates are collapsed (any letter case; trimmed); absent: every registrar that has a price for the TLD. A well-formed key that no registrar has is listed in `not_found`."),
                            "style": "form", "explode": false,
                            "schema": { "type": "array", "minItems": 1, "x-max-distinct-items": MAX_LIST_VALUES,
                                        "items": { "type": "string", "pattern": REGISTRAR_KEY_ITEM },
                                        "examples": [["porkbun", "dynadot"]] } },
            "max_age_days": { "name": "max_age_days", "in": "query", "required": false,
                              "description": "A price published more than this many days before today (UTC) is stale: marked `\"stale\": true`, and left out of rankings (cheapest, registrar listings, the overview's picks) unless `include_stale=true`. Default: the server's (`serve --max-age-days`, 365).",
                              "schema": { "type": "integer", "minimum": 1, "maximum": 36500 } },
            "include_stale": { "name": "include_stale", "in": "query", "required": false,
                               "description": "When true, rankings keep stale offers, each marked `\"stale\": true`.",
                               "schema": { "type": "boolean", "default": false } },
            "ranking": { "name": "sort", "in": "query", "required": false,
                         "description": "The order of the ranking: register (first-year price, ties by renewal then registrar key), renew (renewal price), total_3_year (first year and two renewals), total_5_year (first year and four renewals); ties after the key by first-year price, then registrar key. Computed in USD, so the order is the same in every currency. With `at`: the sellers of that day a plan sees, in this order.",
                         "schema": { "type": "string", "enum": ["register", "renew", "total_3_year", "total_5_year"], "default": "register" } },
            "currency": { "name": "currency", "in": "query", "required": false,
                          "description": "ISO 4217 code of the currency the prices are shown in (any case accepted), one of the ECB euro reference rates. Each price is converted from USD at the ECB rates of the snapshot's data date (the day is in `currency.rate_date`), rounded half to even to the currency's minor unit; totals are sums of the converted prices. Default USD (no `currency` object). A code the snapshot has no rate for is a 400 naming the codes it has.",
                          "schema": { "$ref": "#/components/schemas/CurrencyCode" } },
            "include_prices": { "name": "include_prices", "in": "query", "required": false,
                                "description": "When true, each entry carries `prices`.",
                                "schema": { "type": "boolean", "default": false } },
            "tld": { "name": "tld", "in": "path", "required": true, "description": "TLD without leading dot (Unicode or xn--).",
                     "schema": tld_name_schema() },
            "key": { "name": "key", "in": "path", "required": true, "description": "Registrar key.",
                     "schema": { "type": "string", "pattern": REGISTRAR_KEY, "examples": ["dynadot"] } },
            "at": { "name": "at", "in": "query", "required": false,
                    "description": "Answer as of this UTC day, from the price history: for each (TLD, registrar) the last change on or before it; registrars without data that day are absent. A day after both today and the snapshot's data date is a 400; a day between them is answered with the prices of the data date.",
                    "schema": { "type": "string", "format": "date", "examples": ["2025-10-01"] } },
            "from": { "name": "from", "in": "query", "required": false, "description": "First UTC day of the window (YYYY-MM-DD); must not be after `to`.",
                      "schema": { "type": "string", "format": "date" } },
            "to": { "name": "to", "in": "query", "required": false, "description": "Last UTC day of the window (YYYY-MM-DD).",
                    "schema": { "type": "string", "format": "date" } },
            "q": { "name": "q", "in": "query", "required": false, "description": "A piece of the TLD name (prefix or substring), in Unicode or xn-- form.",
                   "schema": { "type": "string", "pattern": CATALOGUE_Q, "examples": ["co", "рф"] } },
            "type": { "name": "type", "in": "query", "required": false, "description": "IANA root zone type of the TLD (for a second-level name: of its top-level label).",
                      "schema": { "type": "string", "enum": crate::query::TYPES } },
            "sort": { "name": "sort", "in": "query", "required": false, "description": "name; cheapest (registration price, unsold last); registrars (most sellers first). Ties by name.",
                      "schema": { "type": "string", "enum": ["name", "cheapest", "registrars"], "default": "name" } },
            "page_limit": { "name": "limit", "in": "query", "required": false, "description": "Entries per page.",
                            "schema": { "type": "integer", "minimum": 1, "maximum": crate::query::MAX_PAGE, "default": crate::query::DEFAULT_PAGE } },
            "cursor": { "name": "cursor", "in": "query", "required": false, "description": "The `next_cursor` of the previous page, as it is. A cursor of another listing (other filters or order) or of an earlier snapshot is a 400 naming `cursor`.",
                        "schema": { "type": "string", "pattern": CURSOR } }
        },
        "headers": {
            "RateLimit-Limit": { "description": "Requests the caller's bucket holds (the plan's burst).", "schema": { "type": "integer" } },
            "RateLimit-Remaining": { "description": "Whole requests left in the bucket.", "schema": { "type": "integer" } },
            "RateLimit-Reset": { "description": "Seconds until the bucket is full.", "schema": { "type": "integer" } },
            "X-Credits-Remaining": { "description": "API credits left this calendar month (UTC).", "schema": { "type": "integer" } },
            "Retry-After": { "description": "Seconds to wait before retrying.", "schema": { "type": "integer" } },
            "Allow": { "description": "The methods the path answers.", "schema": { "type": "string" } },
            "X-Credits-Cost": { "description": "Credits this answer cost (audit: one per started 100 entries; live lookups: as the plan says, one for a failed one, docs/LIVE.md; other endpoints: 1).", "schema": { "type": "integer", "minimum": 1 } },
            "Accept-Post": { "description": "The media types the endpoint takes.", "schema": { "type": "string" } }
        },
        "responses": {
            "BadRequest": problem_response("A query parameter is missing, malformed, repeated or out of range.", &["missing_parameter", "invalid_parameter", "too_many_values"], json!({})),
            "Unauthorized": problem_response("The API key is missing or not valid.", &["missing_api_key", "invalid_api_key"], json!({})),
            "TldNotInPlan": problem_response("A TLD asked for is outside the caller's plan; `tlds` lists them. No credit is spent.", &["tld_not_in_plan"], json!({})),
            "UnknownTld": problem_response("None of the TLDs asked for is known; `tlds` lists them.", &["unknown_tld"], json!({})),
            "NotFound": problem_response("No endpoint has this path.", &["not_found"], json!({})),
            "MethodNotAllowed": problem_response("Only GET and HEAD are answered.", &["method_not_allowed"], json!({ "Allow": { "$ref": "#/components/headers/Allow" } })),
            "RequestTooLarge": problem_response("The request target (414) or header section (431) is too large.", &["request_too_large"], json!({})),
            "TooManyRequests": problem_response("The rate limit or the monthly credits are exhausted; `retry_after` says when to retry. Or (with a key) the key has as many requests being answered at once as one key may (too_many_in_flight, `limit`; retry after `Retry-After`, when one has been answered); no credit is spent.", &["rate_limited", "credits_exhausted", "too_many_in_flight"], json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" } })),
            "NotReady": problem_response("No snapshot is loaded yet.", &["not_ready"], json!({})),
            "UnknownRegistrar": problem_response("No registrar has this key; `registrar` names it.", &["unknown_registrar"], json!({})),
            "BadBody": problem_response("The request body is empty, not the JSON or CSV the endpoint takes, has a bad field or too many entries (a bad domain name is an entry of the answer, not this), or a query parameter is bad.", &["invalid_body", "too_many_values", "missing_parameter", "invalid_parameter"], json!({})),
            "PayloadTooLarge": problem_response("The body is larger than the endpoint reads (`max_bytes`; refused from Content-Length before reading), or the portfolio has more domains than the plan audits (`limit`, `plan`; no credit spent).", &["request_too_large", "too_many_domains"], json!({})),
            "RequestTimeout": problem_response("The body did not arrive in full within the server's body timeout (`timeout_secs`; 30 s unless configured) once the endpoint began reading it. The connection is closed.", &["request_timeout"], json!({})),
            "UnsupportedMediaType": problem_response("The body's Content-Type is not one the endpoint takes (`accept`).", &["unsupported_media_type"], json!({ "Accept-Post": { "$ref": "#/components/headers/Accept-Post" } })),
            "TooManySearches": problem_response("The rate limit, the monthly credits, or the plan's searches of this UTC day are exhausted; `retry_after` says when to retry (daily_limit: the next UTC midnight). Or the key has as many requests being answered at once as one key may (too_many_in_flight, `limit`).", &["rate_limited", "credits_exhausted", "daily_limit", "too_many_in_flight"], json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" } }))
        },
        "schemas": {
            "Problem": {
                "type": "object",
                "description": "RFC 9457 problem details.",
                "required": ["type", "title", "status", "detail", "code"],
                "properties": {
                    "type": { "type": "string", "format": "uri", "examples": ["https://tldsnap.dev/errors/invalid_parameter"] },
                    "title": { "type": "string" },
                    "status": { "type": "integer" },
                    "detail": { "type": "string" },
                    "code": { "type": "string", "enum": super::problem::CODES.as_slice() },
                    "parameter": { "type": "string", "description": "The parameter at fault (400)." },
                    "value": { "type": "string", "description": "The value at fault, cut to 100 characters (400)." },
                    "max": { "type": "integer", "description": "Most values the parameter takes (too_many_values)." },
                    "tlds": { "type": "array", "items": { "type": "string" }, "description": "TLDs at fault (403, 404 unknown_tld)." },
                    "plans_covering_all": { "type": "array", "items": { "type": "string" }, "description": "The plans in force that cover every TLD (403 tld_not_in_plan)." },
                    "registrar": { "type": "string", "description": "The registrar key at fault (404 unknown_registrar)." },
                    "plan": { "type": "string", "description": "The caller's plan (403)." },
                    "allow": { "type": "string", "description": "Methods answered (405)." },
                    "max_bytes": { "type": "integer", "description": "Size limit (414, 431)." },
                    "max_headers": { "type": "integer", "description": "Most header fields read (431 for a head the server does not read at all)." },
                    "retry_after": { "type": "integer", "description": "Seconds to wait (429; 424 when known)." },
                    "timeout_secs": { "type": "integer", "description": "The server's body timeout, in seconds (408 request_timeout)." },
                    "limit": { "type": "integer", "description": "The plan's audit limit (too_many_domains), daily searches (daily_limit), the streams one key may hold open (too_many_streams), or the requests of one key answered at once (too_many_in_flight)." },
                    "accept": { "type": "string", "description": "Media types taken (415)." },
                    "lookup": { "type": "string", "description": "The live lookup the plan does not include (403 lookup_not_in_plan)." },
                    "plans_including": { "type": "array", "items": { "type": "string" }, "description": "The plans in force that include it (403 lookup_not_in_plan, events_not_in_plan, webhooks_not_in_plan)." },
                    "tld": { "type": "string", "description": "The TLD without a registration data service (404 no_rdap_service)." },
                    "target": { "type": "string", "description": "The target tldsnap does not connect to (422 target_refused)." },
                    "upstream": { "type": "string", "description": "The upstream that failed (424)." }
                }
            },
            "CheapestEntryClient": {
                "type": "object",
                "required": ["rank", "registrar_name", "registrar_key", "register_price", "renew_price", "total_cost_5_year"],
                "properties": {
                    "rank": { "type": "integer", "minimum": 1 },
                    "registrar_name": { "type": "string" },
                    "registrar_key": { "type": "string" },
                    "register_price": price(),
                    "renew_price": price(),
                    "total_cost_5_year": price(),
                    "last_updated": { "type": "string", "format": "date-time", "description": "When the registrar published this price." },
                    "stale": { "type": "boolean", "const": true, "description": "Present when the price is older than the age limit (`max_age_days`); such an offer is shown only with `include_stale=true`." }
                }
            },
            "CheapestEntryPublic": {
                "type": "object",
                "required": ["rank", "registrar_name", "register_price", "renew_price", "total_cost_1_year", "total_cost_3_year", "total_cost_5_year"],
                "properties": {
                    "rank": { "type": "integer", "minimum": 1 },
                    "registrar_name": { "type": "string" },
                    "register_price": price(),
                    "renew_price": price(),
                    "transfer_price": { "type": ["number", "null"], "minimum": 0, "description": "US dollars (or the answer's `currency`); null when the registrar publishes no transfer price." },
                    "total_cost_1_year": price(),
                    "total_cost_3_year": price(),
                    "total_cost_5_year": price(),
                    "last_updated": { "type": "string", "format": "date-time", "description": "When the registrar published this price." },
                    "stale": { "type": "boolean", "const": true, "description": "Present when the price is older than the age limit (`max_age_days`); such an offer is shown only with `include_stale=true`." }
                }
            },
            "NotFoundLists": {
                "type": "object",
                "description": "What was asked for and is not known; each list present only when non-empty.",
                "properties": {
                    "tlds": { "type": "array", "items": { "type": "string" } },
                    "registrars": { "type": "array", "items": { "type": "string" } }
                }
            },
            "CheapestClient": {
                "type": "object",
                "required": ["results", "meta"],
                "properties": {
                    "results": { "type": "object", "additionalProperties": {
                        "type": "object", "required": ["cheapest_register", "registrar_count"],
                        "properties": {
                            "cheapest_register": { "type": "array", "items": { "$ref": "#/components/schemas/CheapestEntryClient" } },
                            "registrar_count": { "type": "integer" },
                            "stale_count": { "type": "integer", "minimum": 1, "description": "How many sellers have a price older than `max_age_days`; present only when some have." } } } },
                    "meta": { "type": "object", "required": ["total_tlds", "tier"], "properties": {
                        "total_tlds": { "type": "integer" },
                        "tier": { "type": "string", "examples": ["basic"] },
                        "not_found": { "$ref": "#/components/schemas/NotFoundLists" } } }
                }
            },
            "CheapestPublic": {
                "type": "object",
                "required": ["results"],
                "properties": {
                    "results": { "type": "object", "additionalProperties": {
                        "type": "object", "required": ["cheapest_register", "registrar_count", "avg_prices"],
                        "properties": {
                            "cheapest_register": { "type": "array", "items": { "$ref": "#/components/schemas/CheapestEntryPublic" } },
                            "registrar_count": { "type": "integer" },
                            "stale_count": { "type": "integer", "minimum": 1, "description": "How many sellers have a price older than `max_age_days`; present only when some have." },
                            "avg_prices": { "type": "object", "properties": {
                                "register": { "type": ["number", "null"] }, "renew": { "type": ["number", "null"] }, "transfer": { "type": ["number", "null"] } } } } } },
                    "meta": { "type": "object", "properties": { "not_found": { "$ref": "#/components/schemas/NotFoundLists" } } }
                }
            },
            "PriceRecord": {
                "type": "object",
                "required": ["register_price", "renew_price", "transfer_price", "last_updated"],
                "properties": {
                    "register_price": { "type": ["number", "null"], "minimum": 0 },
                    "renew_price": { "type": ["number", "null"], "minimum": 0 },
                    "transfer_price": { "type": ["number", "null"], "minimum": 0 },
                    "last_updated": { "type": "string", "format": "date-time", "examples": ["2025-06-01T00:00:00.000Z"] },
                    "stale": { "type": "boolean", "const": true, "description": "The price is older than `max_age_days`." }
                }
            },
            "Prices": {
                "type": "object",
                "required": ["results", "stats"],
                "properties": {
                    "results": { "type": "object", "additionalProperties": { "type": "object", "additionalProperties": { "$ref": "#/components/schemas/PriceRecord" } } },
                    "stats": { "type": "object", "required": ["total_tlds", "time_elapsed", "last_updated"], "properties": {
                        "total_tlds": { "type": "integer" },
                        "time_elapsed": { "type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?ms$" },
                        "last_updated": { "type": "string", "format": "date-time" },
                        "not_found": { "$ref": "#/components/schemas/NotFoundLists" } } }
                }
            },
            "Registrars": {
                "type": "object",
                "required": ["tld", "registrar_count", "registrars"],
                "properties": {
                    "tld": { "type": "string" },
                    "registrar_count": { "type": "integer" },
                    "stale_count": { "type": "integer", "minimum": 1, "description": "How many sellers have a price older than `max_age_days`; present only when some have." },
                    "registrars": { "type": "array", "items": {
                        "type": "object", "required": ["name", "key", "website_url"],
                        "properties": {
                            "name": { "type": "string" },
                            "key": { "type": "string" },
                            "website_url": { "type": "string", "format": "uri" },
                            "prices": { "type": "object", "properties": { "register": price(), "renew": price(), "transfer": { "type": ["number", "null"] } } },
                            "original_prices": { "$ref": "#/components/schemas/OriginalPrices" },
                            "last_updated": { "type": "string", "format": "date-time", "description": "When the registrar published this price." },
                    "stale": { "type": "boolean", "const": true, "description": "The price is older than `max_age_days` (shown only with `include_stale=true`)." } } } },
                    "message": { "type": "string" }
                }
            }
        }
    });
    define(&mut c["schemas"], catalogue_schemas());
    define(&mut c["schemas"], event_schemas());
    define(&mut c["schemas"], webhook_schemas());
    merge(
        &mut c["parameters"],
        json!({
            "id": { "name": "id", "in": "path", "required": true, "description": "The subscription's id (`wh_` and 24 hex digits), as its creation answered it.",
                    "schema": { "type": "string", "pattern": WEBHOOK_ID, "examples": ["wh_3f9a1c0d2b7e4a5968c1d0e2"] } }
        }),
    );
    let live = live_components();
    for part in ["parameters", "responses", "schemas"] {
        define(&mut c[part], live[part].clone());
    }
    c
}

/// The schemas of the history, overview, catalogue and registrar endpoints.
fn catalogue_schemas() -> Value {
    json!({
            "Change": {
                "type": "object",
                "required": ["date", "register_price", "renew_price", "transfer_price"],
                "properties": {
                    "date": { "type": "string", "format": "date" },
                    "register_price": { "type": ["number", "null"], "minimum": 0 },
                    "renew_price": { "type": ["number", "null"], "minimum": 0 },
                    "transfer_price": { "type": ["number", "null"], "minimum": 0 }
                }
            },
            "Coverage": {
                "type": "object",
                "description": "First and last dated feed version of the registrar in the price source.",
                "required": ["first", "last"],
                "properties": { "first": { "type": "string", "format": "date" }, "last": { "type": "string", "format": "date" } }
            },
            "History": {
                "type": "object",
                "required": ["tld", "from", "to", "history"],
                "properties": {
                    "tld": { "type": "string" },
                    "from": { "type": ["string", "null"], "format": "date" },
                    "to": { "type": ["string", "null"], "format": "date" },
                    "history": { "type": "object", "additionalProperties": {
                        "type": "object", "required": ["coverage", "price_at_from", "changes"],
                        "properties": {
                            "coverage": { "oneOf": [ { "$ref": "#/components/schemas/Coverage" }, { "type": "null" } ] },
                            "price_at_from": { "oneOf": [ { "$ref": "#/components/schemas/Change" }, { "type": "null" } ] },
                            "changes": { "type": "array", "items": { "$ref": "#/components/schemas/Change" } } } } },
                    "not_found": { "$ref": "#/components/schemas/NotFoundLists" }
                }
            },
            "Pick": {
                "type": "object",
                "required": ["price", "registrar_key", "registrar_name"],
                "properties": { "price": price(), "registrar_key": { "type": "string" }, "registrar_name": { "type": "string" },
                    "last_updated": { "type": "string", "format": "date-time", "description": "When the registrar published this price." },
                    "stale": { "type": "boolean", "const": true, "description": "The price is older than `max_age_days` (shown only with `include_stale=true`)." },
                    "original_price": { "type": "object", "description": "The price as the registrar quoted it in another currency, and the day of the ECB rate it was converted at (absent for USD prices).",
                        "required": ["currency", "price", "rate_date"],
                        "properties": { "currency": { "type": "string", "examples": ["GBP"] }, "price": { "type": ["number", "null"] }, "rate_date": { "type": "string", "format": "date" } } } }
            },
            "OriginalPrices": {
                "type": "object",
                "description": "The prices as the registrar quoted them in another currency, and the day of the ECB reference rate they were converted to USD at (absent for prices quoted in USD).",
                "required": ["currency", "register", "renew", "transfer", "rate_date"],
                "properties": { "currency": { "type": "string", "examples": ["GBP"] }, "register": { "type": ["number", "null"] }, "renew": { "type": ["number", "null"] }, "transfer": { "type": ["number", "null"] }, "rate_date": { "type": "string", "format": "date" } }
            },
            "TldFacts": {
                "type": "object",
                "required": ["tld", "unicode", "type", "manager", "free"],
                "properties": {
                    "tld": { "type": "string", "examples": ["xn--p1ai"] },
                    "unicode": { "type": "string", "examples": ["рф"] },
                    "type": { "type": ["string", "null"], "description": "IANA root zone type (of the top-level label)." },
                    "manager": { "type": ["string", "null"], "description": "TLD manager from the IANA root zone database (top-level names only)." },
                    "free": { "type": "boolean", "description": "One of the 22 TLDs every plan covers." },
                    "members_only": { "type": "array", "items": { "type": "string" }, "description": "Fields set to null because the caller's plan does not show them." }
                }
            },
            "Overview": {
                "allOf": [ { "$ref": "#/components/schemas/TldFacts" }, {
                    "type": "object",
                    "required": ["registrar_count", "avg_prices", "cheapest_register", "lowest_renew", "lowest_5_year"],
                    "properties": {
                        "registrar_count": { "type": "integer" },
                        "stale_count": { "type": "integer", "minimum": 1, "description": "How many sellers have a price older than `max_age_days`; present only when some have." },
                        "avg_prices": { "type": "object", "properties": {
                            "register": { "type": ["number", "null"] }, "renew": { "type": ["number", "null"] }, "transfer": { "type": ["number", "null"] } } },
                        "cheapest_register": { "oneOf": [ { "$ref": "#/components/schemas/Pick" }, { "type": "null" } ] },
                        "lowest_renew": { "oneOf": [ { "$ref": "#/components/schemas/Pick" }, { "type": "null" } ] },
                        "lowest_5_year": { "oneOf": [ { "$ref": "#/components/schemas/Pick" }, { "type": "null" } ] } } } ]
            },
            "PageMeta": {
                "type": "object",
                "required": ["total", "limit", "next_cursor"],
                "properties": {
                    "total": { "type": "integer", "description": "Entries of the whole listing (after filters)." },
                    "sort": { "type": "string" },
                    "limit": { "type": "integer" },
                    "next_cursor": { "type": ["string", "null"], "description": "Pass as `cursor` for the next page; null on the last page." }
                }
            },
            "Catalogue": {
                "type": "object",
                "required": ["tlds", "meta"],
                "properties": {
                    "tlds": { "type": "array", "items": { "allOf": [ { "$ref": "#/components/schemas/TldFacts" }, {
                        "type": "object", "required": ["registrar_count", "avg_register_price", "cheapest_register"],
                        "properties": {
                            "registrar_count": { "type": "integer" },
                            "avg_register_price": { "type": ["number", "null"] },
                            "cheapest_register": { "oneOf": [ { "$ref": "#/components/schemas/Pick" }, { "type": "null" } ] } } } ] } },
                    "meta": { "$ref": "#/components/schemas/PageMeta" }
                }
            },
            "RegistrarHead": {
                "type": "object",
                "required": ["key", "name", "homepage", "website_url", "tlds_sold", "renewal_only", "cheapest_in", "coverage", "last_updated"],
                "properties": {
                    "key": { "type": "string" },
                    "name": { "type": "string" },
                    "homepage": { "type": ["string", "null"], "format": "uri" },
                    "website_url": { "type": "string", "format": "uri" },
                    "tlds_sold": { "type": "integer" },
                    "renewal_only": { "type": "integer" },
                    "cheapest_in": { "type": "integer", "description": "TLDs where it ranks first for registration." },
                    "coverage": { "oneOf": [ { "$ref": "#/components/schemas/Coverage" }, { "type": "null" } ] },
                    "last_updated": { "type": ["string", "null"], "format": "date-time", "description": "Date of its latest feed version." }
                }
            },
            "RegistrarList": {
                "type": "object",
                "required": ["registrars", "total"],
                "properties": {
                    "registrars": { "type": "array", "items": { "$ref": "#/components/schemas/RegistrarHead" } },
                    "total": { "type": "integer" }
                }
            },
            "Registrar": {
                "allOf": [ { "$ref": "#/components/schemas/RegistrarHead" }, {
                    "type": "object", "required": ["prices", "meta"],
                    "properties": {
                        "prices": { "type": "array", "items": { "type": "object", "required": ["tld", "register_price", "renew_price", "transfer_price", "last_updated"],
                            "properties": {
                                "tld": { "type": "string" },
                                "register_price": { "type": ["number", "null"] },
                                "renew_price": { "type": ["number", "null"] },
                                "transfer_price": { "type": ["number", "null"] },
                                "last_updated": { "type": "string", "format": "date-time" },
                                "original_prices": { "$ref": "#/components/schemas/OriginalPrices" },
                                "members_only": { "type": "array", "items": { "type": "string" } } } } },
                        "meta": { "$ref": "#/components/schemas/PageMeta" } } } ]
            }
    })
}

/// The schemas of the event endpoints.
fn event_schemas() -> Value {
    json!({
            "EventPage": {
                "type": "object", "required": ["events", "next_after", "has_more"],
                "properties": {
                    "events": { "type": "array", "items": { "$ref": "#/components/schemas/Event" } },
                    "next_after": { "type": "integer", "description": "The `after` of the next call: the last event id looked at (filtered-out events included)." },
                    "has_more": { "type": "boolean", "description": "More events after `next_after` exist now." }
                }
            },
            "EventPrices": {
                "type": "object", "required": ["register", "renew", "transfer"],
                "description": "An offer's register, renew and transfer prices before or after the change (null: not offered).",
                "properties": {
                    "register": { "type": ["number", "null"], "minimum": 0 },
                    "renew": { "type": ["number", "null"], "minimum": 0 },
                    "transfer": { "type": ["number", "null"], "minimum": 0 }
                }
            },
            "Event": {
                "type": "object", "required": ["id", "type", "timestamp", "snapshot", "data"],
                "description": "One price change, as the log records it and every channel delivers it (docs/EVENTS.md).",
                "properties": {
                    "id": { "type": "integer", "minimum": 1, "description": "Increases by one per event, never reused." },
                    "type": { "enum": ["price.changed", "offer.added", "offer.removed", "ranking.changed"] },
                    "timestamp": { "type": "string", "format": "date-time", "description": "When the snapshot swap that produced it was recorded." },
                    "snapshot": { "$ref": "#/components/schemas/EventSnapshots" },
                    "data": { "$ref": "#/components/schemas/EventData" }
                }
            },
            "EventSnapshots": {
                "type": "object", "required": ["from", "to"],
                "description": "The snapshots before and after the swap.",
                "properties": {
                    "from": { "type": "string", "pattern": "^[0-9a-f]{32}$" },
                    "to": { "type": "string", "pattern": "^[0-9a-f]{32}$" }
                }
            },
            "EventData": {
                "type": "object", "required": ["tld", "registrar", "old", "new"],
                "properties": {
                    "tld": { "type": "string" },
                    "registrar": { "type": ["string", "null"], "description": "The registrar; for ranking.changed the new cheapest (null: nobody sells the TLD now)." },
                    "previous_registrar": { "type": ["string", "null"], "description": "ranking.changed only: the previous cheapest (null: nobody sold it)." },
                    "old": { "oneOf": [ { "$ref": "#/components/schemas/EventPrices" }, { "type": "null" } ] },
                    "new": { "oneOf": [ { "$ref": "#/components/schemas/EventPrices" }, { "type": "null" } ] },
                    "percent_change": { "type": "object", "description": "price.changed only: percent, two decimals; null when a side is not offered or the old price is 0.",
                        "properties": { "register": { "type": ["number", "null"] }, "renew": { "type": ["number", "null"] }, "transfer": { "type": ["number", "null"] } } }
                }
            }
    })
}

/// A webhook subscription id.
const WEBHOOK_ID: &str = "^wh_[0-9a-f]{24}$";
/// A webhook URL as the server takes it: http(s), printable ASCII without blanks (the
/// scheme in any case; `http` only on a server started with --allow-private-webhooks).
const WEBHOOK_URL: &str = "^[Hh][Tt][Tt][Pp][Ss]?://[!-~]+$";
/// A description: any text but control characters (tab and line feed are taken).
const DESCRIPTION: &str = "^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]*$";

/// The operations of the webhook routes (several methods per path), or `None` for
/// another route.
/// The top-level `webhooks` of the document: what a subscriber's URL receives.
fn webhooks() -> Value {
    let headers = json!([
        { "name": "webhook-id", "in": "header", "required": true, "description": "The message id: the same on every attempt at one message (deduplicate on it); for an event `msg_<event id>_<swap time in ms>`.", "schema": { "type": "string", "pattern": "^msg_[0-9a-z_]+$" } },
        { "name": "webhook-timestamp", "in": "header", "required": true, "description": "Unix seconds when this attempt was sent (refuse one far from your clock: replays).", "schema": { "type": "string", "pattern": "^[0-9]+$" } },
        { "name": "webhook-signature", "in": "header", "required": true, "description": "Space-separated `v1,<base64>` signatures: HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the `whsec_` secret (two during the 24 h after a rotation).", "schema": { "type": "string", "pattern": "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$" } }
    ]);
    let responses = json!({
        "2XX": { "description": "Delivered: the next message follows." },
        "410": { "description": "Gone: the subscription is removed, nothing more is sent." },
        "default": { "description": "Any other answer, no answer within 10 s, or a redirect (never followed): the message is retried at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (± 20 %); when the last attempt fails the subscription is disabled, with the reason in GET /api/v1/client/webhooks/{id}." }
    });
    let mut out = serde_json::Map::new();
    for (name, schema, summary) in [
        (
            "price.changed",
            "PriceChangedEvent",
            "A registrar's register, renew or transfer price for a TLD changed.",
        ),
        (
            "offer.added",
            "OfferAddedEvent",
            "A registrar has a price for a TLD it had none for.",
        ),
        (
            "offer.removed",
            "OfferRemovedEvent",
            "A registrar no longer has a price for a TLD.",
        ),
        (
            "ranking.changed",
            "RankingChangedEvent",
            "The cheapest registrar of a TLD is not the same.",
        ),
        (
            "webhook.test",
            "WebhookTestMessage",
            "A test message (POST /api/v1/client/webhooks/{id}/test); carries no event.",
        ),
    ] {
        out.insert(name.to_owned(), json!({ "post": {
            "operationId": format!("webhook_{}", name.replace('.', "_")),
            "summary": summary,
            "description": "POSTed to the subscription's url, one message per event, in event order, one at a time per subscription. Verify the signature before trusting the body (docs/EVENTS.md has a receiver).",
            "parameters": headers,
            "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } } },
            "responses": responses
        } }));
    }
    Value::Object(out)
}

/// The schemas of the webhook endpoints and of the messages they deliver.
fn webhook_schemas() -> Value {
    let tlds = json!({ "type": "array", "x-max-distinct-items": MAX_LIST_VALUES, "items": tld_name_schema(),
        "description": format!("Only events of these TLDs (up to {MAX_LIST_VALUES} distinct, written as in `tlds` of the price endpoints); empty or absent: every TLD the plan covers."), "examples": [["com", "io"]] });
    let registrars = json!({ "type": "array", "x-max-distinct-items": MAX_LIST_VALUES, "items": { "type": "string", "pattern": REGISTRAR_KEY_ITEM },
        "description": "Only events of these registrars (a ranking.changed matches its new or previous cheapest); empty or absent: every registrar.", "examples": [["porkbun"]] });
    let types = json!({ "type": "array", "items": { "enum": ["price.changed", "offer.added", "offer.removed", "ranking.changed"] },
        "description": "Only these event types; empty or absent: every type." });
    let url = json!({ "type": "string", "minLength": 10, "maxLength": crate::webhooks::MAX_URL_LEN, "pattern": WEBHOOK_URL,
        "description": "Where events are POSTed: https (http only on a server started with --allow-private-webhooks); no user name, no fragment; a host that resolves to a loopback, private, link-local or metadata address is refused (and checked again at every delivery).",
        "examples": ["https://hooks.example.com/tldsnap"] });
    let description = json!({ "type": "string", "maxLength": crate::webhooks::MAX_DESCRIPTION_CHARS, "pattern": DESCRIPTION, "description": "Free text for you." });
    let event = |kind: &str| json!({ "allOf": [ { "$ref": "#/components/schemas/Event" }, { "type": "object", "properties": { "type": { "enum": [kind] } } } ] });
    json!({
        "WebhookCreate": {
            "type": "object", "required": ["url"], "additionalProperties": false,
            "properties": { "url": url, "description": description, "tlds": tlds, "registrars": registrars, "types": types }
        },
        "WebhookPatch": {
            "type": "object", "minProperties": 1, "additionalProperties": false,
            "properties": { "url": url, "description": description, "tlds": tlds, "registrars": registrars, "types": types,
                "status": { "enum": ["active", "paused"], "description": "paused: stop deliveries (events wait); active: resume, also after being disabled." } }
        },
        "Webhook": {
            "type": "object",
            "required": ["id", "url", "description", "tlds", "registrars", "types", "status", "disabled_reason", "created_at", "updated_at", "delivery"],
            "properties": {
                "id": { "type": "string", "pattern": WEBHOOK_ID },
                "url": { "type": "string" },
                "description": { "type": "string" },
                "tlds": { "type": "array", "items": { "type": "string" } },
                "registrars": { "type": "array", "items": { "type": "string" } },
                "types": { "type": "array", "items": { "type": "string" } },
                "status": { "enum": ["active", "paused", "disabled"] },
                "disabled_reason": { "type": ["string", "null"], "description": "Why it is disabled: every attempt of the retry schedule at one event failed, or the key lost webhooks." },
                "created_at": { "type": "string", "format": "date-time" },
                "updated_at": { "type": "string", "format": "date-time" },
                "delivery": { "$ref": "#/components/schemas/WebhookDelivery" }
            }
        },
        "WebhookDelivery": {
            "type": "object", "required": ["last_event_id", "delivered", "pending_event_id", "attempts", "next_attempt_at", "failing_since"],
            "properties": {
                "last_event_id": { "type": "integer", "minimum": 0, "description": "The last event id handled (delivered, or not matching the filters)." },
                "delivered": { "type": "integer", "minimum": 0 },
                "pending_event_id": { "type": ["integer", "null"], "description": "The event being delivered." },
                "attempts": { "type": "integer", "minimum": 0, "description": "Attempts made at the pending event." },
                "next_attempt_at": { "type": ["string", "null"], "format": "date-time" },
                "failing_since": { "type": ["string", "null"], "format": "date-time" }
            }
        },
        "WebhookCreated": { "allOf": [ { "$ref": "#/components/schemas/Webhook" }, { "type": "object", "required": ["secret"],
            "properties": { "secret": { "type": "string", "pattern": "^whsec_[A-Za-z0-9+/]+={0,2}$", "description": "The signing secret, shown only here (and by rotate-secret)." } } } ] },
        "WebhookSecret": { "allOf": [ { "$ref": "#/components/schemas/Webhook" }, { "type": "object", "required": ["secret", "previous_secret_expires_at"],
            "properties": { "secret": { "type": "string", "pattern": "^whsec_[A-Za-z0-9+/]+={0,2}$" },
                "previous_secret_expires_at": { "type": "string", "format": "date-time", "description": "Until then deliveries carry a signature with the previous secret too." } } } ] },
        "WebhookList": { "type": "object", "required": ["webhooks"], "properties": { "webhooks": { "type": "array", "items": { "$ref": "#/components/schemas/Webhook" } } } },
        "WebhookAttempt": {
            "type": "object", "required": ["webhook_id", "event_id", "event_type", "attempt", "at", "duration_ms", "status", "error", "response", "result", "next_attempt_at"],
            "properties": {
                "webhook_id": { "type": "string" },
                "event_id": { "type": ["integer", "null"], "description": "null for a test message." },
                "event_type": { "type": "string" },
                "attempt": { "type": "integer", "minimum": 1 },
                "at": { "type": "string", "format": "date-time" },
                "duration_ms": { "type": "integer", "minimum": 0 },
                "status": { "type": ["integer", "null"], "description": "The receiver's HTTP status; null when it did not answer." },
                "error": { "type": ["string", "null"], "description": "Why there was no answer (connection, TLS, timeout, refused address)." },
                "response": { "type": ["string", "null"], "description": "The start of the receiver's body (256 characters)." },
                "result": { "enum": ["delivered", "retrying", "disabled", "removed", "test"] },
                "next_attempt_at": { "type": ["string", "null"], "format": "date-time" }
            }
        },
        "WebhookDetail": { "allOf": [ { "$ref": "#/components/schemas/Webhook" }, { "type": "object", "required": ["recent_attempts"],
            "properties": { "recent_attempts": { "type": "array", "maxItems": crate::webhooks::subscription::RECENT_ATTEMPTS, "items": { "$ref": "#/components/schemas/WebhookAttempt" } } } } ] },
        "WebhookTestResult": { "type": "object", "required": ["attempt"], "properties": { "attempt": { "$ref": "#/components/schemas/WebhookAttempt" } } },
        "PriceChangedEvent": event("price.changed"),
        "OfferAddedEvent": event("offer.added"),
        "OfferRemovedEvent": event("offer.removed"),
        "RankingChangedEvent": event("ranking.changed"),
        "WebhookTestMessage": {
            "type": "object", "required": ["type", "timestamp", "data"],
            "properties": {
                "type": { "const": "webhook.test" },
                "timestamp": { "type": "string", "format": "date-time" },
                "data": { "type": "object", "required": ["webhook", "message"], "properties": {
                    "webhook": { "type": "string", "pattern": WEBHOOK_ID }, "message": { "type": "string" } } }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `$ref` points at something that exists, in every part but the paths (the
    /// route table's test checks those).
    #[test]
    fn every_ref_of_the_components_resolves() {
        let doc = build([]);
        fn walk(v: &Value, doc: &Value) {
            match v {
                Value::Object(map) => {
                    if let Some(Value::String(r)) = map.get("$ref") {
                        let pointer = r.strip_prefix('#').unwrap();
                        assert!(doc.pointer(pointer).is_some(), "dangling {r}");
                    }
                    map.values().for_each(|v| walk(v, doc));
                }
                Value::Array(items) => items.iter().for_each(|v| walk(v, doc)),
                _ => {}
            }
        }
        walk(&doc, &doc);
    }
}
