//! The live lookups' endpoints (docs/LIVE.md): a domain name in, a call into
//! [`crate::live`], a JSON answer or a problem naming the upstream out.
//!
//! | route | answer | credits (default plans) |
//! |---|---|---|
//! | `GET /api/v1/client/domains/{domain}/rdap` | registration data (RDAP, else WHOIS) | 2 |
//! | `GET /api/v1/client/domains/{domain}/status` | EPP status codes, their meaning, grace / hold / pending delete | 1 |
//! | `GET /api/v1/client/domains/{domain}/dns?types=&dnssec=` | DNS records with TTLs and response codes; the resolver's DNSSEC verdict when asked | 1 |
//! | `GET /api/v1/client/domains/{domain}/availability` | available, registered, reserved or unknown, with the evidence | 1 |
//! | `POST /api/v1/client/domains/availability` | the same for up to 100 names | 1 per name |
//! | `GET /api/v1/client/domains/{domain}/tls` | the certificate `https://{domain}` presents, judged | 2 |
//!
//! Order of checks: key (401), rate (429), the domain and the query (400), the plan — the lookup
//! (403 `lookup_not_in_plan`) and the name's suffix (403 `tld_not_in_plan`) —, whether
//! this server makes live lookups (404 `live_unavailable`), credits (429 unless the
//! lookup's credits are left: no lookup is made that cannot be paid for), the lookup
//! (404 `no_rdap_service`; 422 `target_refused` when the name resolves to an address
//! tldsnap does not connect to; 424 `upstream_timeout` / `upstream_error`: each costs
//! one credit), answer (200, the lookup's credits, `X-Credits-Cost`). Each lookup takes
//! its key's share of every upstream it asks ([`crate::live::limits`]). `docs/LIVE.md`
//! says where each answer comes from.

use std::borrow::Cow;

use hyper::Request;

use super::body::{CREDITS_COST, read_domains, with_cost};
use super::{Connection, HttpResponse, State, admit, finish_costing, refuse, with_meter};
use crate::access::Caller;
use crate::access::plans::Lookup;
use crate::audit::Split;
use crate::http::params::{self, DnsParams, percent_decode};
use crate::http::problem::{Problem, echo};
use crate::http::router::Route;
use crate::live::availability::{Availability, Verdict};
use crate::live::registry::StatusAnswer;
use crate::live::{Ask, Failure, Live};
use serde_json::{Value, json};

use crate::audit::LOOKUP_MAX;
use crate::audit::portfolio::MAX_NAME_FIELD;
use crate::http::openapi::{DNS_TYPE, problem_response};

/// `GET /api/v1/client/domains/{domain}/rdap`.
pub async fn rdap<B: Sync>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    single(
        state,
        req,
        route,
        segment,
        conn,
        Lookup::Rdap,
        |_| Ok(()),
        async |live, name, ask, ()| {
            let answer = live
                .registry_of(&name.split, ask)
                .await
                .map_err(registry_problem)?;
            Ok(serde_json::to_vec(&*answer).unwrap_or_default())
        },
    )
    .await
}

/// `GET /api/v1/client/domains/{domain}/status`.
pub async fn status<B: Sync>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    single(
        state,
        req,
        route,
        segment,
        conn,
        Lookup::Status,
        |_| Ok(()),
        async |live, name, ask, ()| {
            let answer = live
                .registry_of(&name.split, ask)
                .await
                .map_err(registry_problem)?;
            Ok(serde_json::to_vec(&StatusAnswer::of(&answer)).unwrap_or_default())
        },
    )
    .await
}

/// `GET /api/v1/client/domains/{domain}/dns?types=&dnssec=`: the name as given (a
/// subdomain is its own name here), every type asked at once; with `dnssec=true`, the
/// resolver's DNSSEC verdict on each.
pub async fn dns<B: Sync>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    single(
        state,
        req,
        route,
        segment,
        conn,
        Lookup::Dns,
        |query| {
            let values = params::pick(query, DnsParams::NAMES)?;
            let p = DnsParams::from_values(&values)?;
            Ok((p.types, p.dnssec))
        },
        async |live, name, ask, (types, dnssec)| {
            let answer = live
                .dns(&name.full, &types, dnssec, ask.deadline)
                .await
                .map_err(upstream_problem)?;
            Ok(serde_json::to_vec(&answer).unwrap_or_default())
        },
    )
    .await
}

/// `GET /api/v1/client/domains/{domain}/availability`: always an answer (200) once the
/// checks pass; a failing witness makes it `unknown`, with the evidence.
pub async fn availability<B: Sync>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    single(
        state,
        req,
        route,
        segment,
        conn,
        Lookup::Availability,
        |_| Ok(()),
        async |live, name, ask, ()| {
            let answer = live.availability_of(&name.split, ask).await;
            Ok(serde_json::to_vec(&answer).unwrap_or_default())
        },
    )
    .await
}

/// `GET /api/v1/client/domains/{domain}/tls`: the name as given (a subdomain is its own
/// host here).
pub async fn tls<B: Sync>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    single(
        state,
        req,
        route,
        segment,
        conn,
        Lookup::Tls,
        |_| Ok(()),
        async |live, name, ask, ()| {
            let answer = live.tls(&name.full, ask).await.map_err(upstream_problem)?;
            Ok(serde_json::to_vec(&*answer).unwrap_or_default())
        },
    )
    .await
}

/// One entry of the bulk answer: the input as given, then its answer.
#[derive(serde::Serialize)]
struct BulkEntry<'a> {
    input: Cow<'a, str>,
    #[serde(flatten)]
    answer: BulkAnswer<'a>,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum BulkAnswer<'a> {
    Checked(&'a Availability),
    Refused {
        #[serde(skip_serializing_if = "Option::is_none")]
        domain: Option<&'a str>,
        error: &'static str,
        detail: String,
    },
}

/// `POST /api/v1/client/domains/availability` with `{"domains": [...]}`: up to 100 names
/// (101: 400 `too_many_values`), all looked up at once within one budget. A name that is
/// not a domain, or whose suffix the plan excludes, is an entry with `error`; a name
/// given twice (after normalisation) is answered once, at its first place. Costs the
/// plan's availability credits per distinct name looked up (at least one), checked
/// before any lookup is made.
pub async fn bulk_availability<B: super::RequestBody>(
    state: &State,
    req: Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> HttpResponse {
    let caller = match admit(state, &req, route, conn).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    let inputs = match read_domains(state, req).await {
        Ok(inputs) => inputs,
        Err(problem) => return refuse(problem, &caller),
    };
    let per_name = match lookup_cost(state, &caller, Lookup::Availability) {
        Ok(credits) => credits,
        Err(problem) => return refuse(problem, &caller),
    };
    let Some(live) = state.live.as_deref() else {
        return refuse(Problem::LiveUnavailable, &caller);
    };
    // Each input: refused, a repeat, or a name to look up.
    let loaded = state.store.load();
    let priced = |s: &str| {
        loaded
            .as_ref()
            .is_some_and(|l| l.snapshot.data().has_tld(s))
    };
    let mut names: Vec<Split> = Vec::with_capacity(inputs.len());
    let mut slots: Vec<Slot> = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let split = super::body::names().split(input, priced);
        slots.push(match split {
            Err(e) => Slot::Refused(None, "invalid_name", format!("not a domain name: {e}")),
            Ok(s) if !top_label_is_a_name(&s) => {
                Slot::Refused(None, "invalid_name", NOT_A_TOP_LABEL.to_owned())
            }
            Ok(s) if !caller.tld_allowed(s.suffix()) => Slot::Refused(
                Some(s.domain.clone()),
                "tld_not_in_plan",
                format!("the {} plan does not cover .{}", caller.tier(), s.suffix()),
            ),
            Ok(s) => match names.iter().position(|n| n.domain == s.domain) {
                Some(_) => Slot::Repeat,
                None => {
                    names.push(s);
                    Slot::Name(names.len() - 1)
                }
            },
        });
    }
    let credits = (names.len() as u64 * u64::from(per_name)).max(1);
    if let Err(problem) = ensure_credits(state, &caller, credits) {
        return refuse(problem, &caller);
    }
    let started = std::time::Instant::now();
    let ask = live.ask(caller.key_id().cloned());
    let answers = futures_util::future::join_all(
        names
            .iter()
            .map(|name| live.availability_of(name, ask.clone())),
    )
    .await;
    let mut counts = [0u64; 4];
    let mut results = Vec::with_capacity(inputs.len());
    for (input, slot) in inputs.iter().zip(&slots) {
        let answer = match slot {
            Slot::Repeat => continue,
            Slot::Name(i) => {
                let a = &answers[*i];
                counts[a.availability as usize] += 1;
                BulkAnswer::Checked(a)
            }
            Slot::Refused(domain, error, detail) => BulkAnswer::Refused {
                domain: domain.as_deref(),
                error,
                detail: detail.clone(),
            },
        };
        results.push(BulkEntry {
            input: crate::audit::echo(input),
            answer,
        });
    }
    let body = serde_json::json!({
        "results": results,
        "meta": {
            "total": inputs.len(),
            "checked": names.len(),
            "counts": {
                "available": counts[Verdict::Available as usize],
                "registered": counts[Verdict::Registered as usize],
                "reserved": counts[Verdict::Reserved as usize],
                "unknown": counts[Verdict::Unknown as usize],
            },
            "elapsed_ms": started.elapsed().as_millis() as u64,
            "tier": caller.tier(),
        }
    });
    let out = serde_json::to_vec(&body).unwrap_or_default();
    with_cost(
        finish_costing(state, route, caller, out, credits).await,
        credits,
    )
}

/// The live availability a domain search asked for (`check_availability=true`): its
/// candidates' names, checked against the plan (403), the server (404) and the
/// caller's credits (429) before any lookup.
pub(super) struct SearchAvailability {
    names: Vec<Split>,
    /// The key whose share of each registry the lookups take.
    key: Option<std::sync::Arc<str>>,
    /// The credits the lookups cost.
    pub(super) credits: u64,
}

impl SearchAvailability {
    /// Prepares the lookups of the candidates of the search answer `out` (at most the
    /// search's `limit`, which is at most the bulk limit, 100); `search_credits` is
    /// what the search itself costs.
    pub(super) fn prepare(
        state: &State,
        caller: &Caller,
        out: &[u8],
        search_credits: u64,
    ) -> Result<SearchAvailability, Problem> {
        let key = caller.key_id().cloned();
        let per_name = lookup_cost(state, caller, Lookup::Availability)?;
        if state.live.is_none() {
            return Err(Problem::LiveUnavailable);
        }
        let body: serde_json::Value = serde_json::from_slice(out).unwrap_or_default();
        let loaded = state.store.load();
        let priced = |s: &str| {
            loaded
                .as_ref()
                .is_some_and(|l| l.snapshot.data().has_tld(s))
        };
        let names: Vec<Split> = body["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["domain"].as_str())
            .filter_map(|d| super::body::names().split(d, priced).ok())
            .take(crate::audit::LOOKUP_MAX)
            .collect();
        let credits = names.len() as u64 * u64::from(per_name);
        ensure_credits(state, caller, credits + search_credits)?;
        Ok(SearchAvailability {
            names,
            key,
            credits,
        })
    }

    /// Looks the candidates up at once and writes each verdict into the search answer
    /// `out` (`availability`, and its `availability_reason`), with `meta.availability`
    /// saying how they were learnt.
    pub(super) async fn fill(self, state: &State, out: &mut Vec<u8>) {
        let Some(live) = state.live.as_deref() else {
            return;
        };
        let ask = live.ask(self.key);
        let answers = futures_util::future::join_all(
            self.names
                .iter()
                .map(|name| live.availability_of(name, ask.clone())),
        )
        .await;
        let Ok(mut body) = serde_json::from_slice::<serde_json::Value>(out) else {
            return;
        };
        if let Some(results) = body["results"].as_array_mut() {
            for (r, a) in results.iter_mut().zip(&answers) {
                r["availability"] = a.availability.as_str().into();
                r["availability_reason"] = a.reason.clone().into();
            }
        }
        body["meta"]["availability"] = "checked live: available only when the registry and \
            the DNS both say the name does not exist (docs/LIVE.md)"
            .into();
        if let Ok(bytes) = serde_json::to_vec(&body) {
            *out = bytes;
        }
    }
}

/// What became of one input of a bulk request.
enum Slot {
    /// Not looked up: the registrable domain when there is one, the error, why.
    Refused(Option<String>, &'static str, String),
    /// The same name as an earlier input.
    Repeat,
    /// The index of its name among those looked up.
    Name(usize),
}

/// A `{domain}` path segment, validated.
struct Name {
    /// The name as given, canonical (`www.example.co.uk`).
    full: String,
    /// Its registrable domain and public suffix.
    split: Split,
}

/// One domain's lookup: the checks in order (module docs); `parse` reads the query
/// string, then `answer` writes the body of the name.
#[allow(clippy::too_many_arguments)]
async fn single<B: Sync, P>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    segment: &str,
    conn: &Connection,
    lookup: Lookup,
    parse: impl FnOnce(Option<&str>) -> Result<P, Problem>,
    answer: impl AsyncFnOnce(&Live, &Name, Ask, P) -> Result<Vec<u8>, Problem>,
) -> HttpResponse {
    let caller = match admit(state, req, route, conn).await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    let parsed =
        path_domain(state, segment).and_then(|name| parse(req.uri().query()).map(|p| (name, p)));
    let (name, params) = match parsed {
        Ok(parsed) => parsed,
        Err(problem) => return refuse(problem, &caller),
    };
    let credits = match in_plan(state, &caller, lookup, [name.split.suffix()]) {
        Ok(credits) => credits,
        Err(problem) => return refuse(problem, &caller),
    };
    let Some(live) = state.live.as_deref() else {
        return refuse(Problem::LiveUnavailable, &caller);
    };
    let credits = u64::from(credits);
    // No lookup is made that could not be paid for, answered or failed.
    if let Err(problem) = ensure_credits(state, &caller, credits.max(FAILED_LOOKUP_CREDITS)) {
        return refuse(problem, &caller);
    }
    let ask = live.ask(caller.key_id().cloned());
    let body = match answer(live, &name, ask, params).await {
        Ok(body) => body,
        Err(problem) => return failed(state, caller, problem).await,
    };
    with_cost(
        finish_costing(state, route, caller, body, credits).await,
        credits,
    )
}

/// The `{domain}` path segment: percent-decoded and split at its public suffix with the
/// names every domain endpoint uses ([`super::body::names`]), so only a valid,
/// IDNA-normalised name ever goes out.
fn path_domain(state: &State, raw: &str) -> Result<Name, Problem> {
    let bad = |value: &str, reason: String| Problem::InvalidParameter {
        name: "domain",
        value: Some(echo(value)),
        reason,
    };
    let decoded: Cow<'_, str> =
        percent_decode(raw, false).map_err(|_| bad(raw, "bad percent-encoding".into()))?;
    let loaded = state.store.load();
    let priced = |s: &str| {
        loaded
            .as_ref()
            .is_some_and(|l| l.snapshot.data().has_tld(s))
    };
    let not_a_name = |e: crate::audit::NameError| bad(&decoded, format!("not a domain name: {e}"));
    let split = super::body::names()
        .split(&decoded, priced)
        .map_err(not_a_name)?;
    if !top_label_is_a_name(&split) {
        return Err(bad(&decoded, NOT_A_TOP_LABEL.into()));
    }
    let full = crate::audit::names::canonical(&decoded).map_err(not_a_name)?;
    Ok(Name { full, split })
}

/// Why a name whose top-level label does not start with a letter is refused.
const NOT_A_TOP_LABEL: &str = "not a domain name: its top-level label must start with a letter \
    (no TLD starts with a digit; a dotted number is an IP address)";

/// Whether the name's top-level label starts with a letter, as every TLD does (IANA's
/// rule; internationalised ones are `xn--…`): `127.0.0.1` and `1.2e` are not names.
fn top_label_is_a_name(name: &Split) -> bool {
    crate::tld::last_label(name.suffix())
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
}

/// What a failed lookup costs, whatever the lookup's price: the upstream was asked (or
/// waited for) all the same, and a lookup that fails must not be free to repeat.
const FAILED_LOOKUP_CREDITS: u64 = 1;

/// The answer of a lookup that failed: `problem`, once [`FAILED_LOOKUP_CREDITS`] are
/// spent (`X-Credits-Cost` says so); the spending's own refusal (429) when they are
/// not left.
async fn failed(state: &State, mut caller: Caller, problem: Problem) -> HttpResponse {
    let credits = FAILED_LOOKUP_CREDITS;
    let spent = match state.access.spend_now(&mut caller, credits) {
        Some(spent) => spent,
        None => state.access.spend_n(&mut caller, credits).await,
    };
    if let Err(denial) = spent {
        let (problem, meter) = Problem::from_denial(denial);
        return with_meter(
            problem.into_response(),
            meter.as_ref().or(caller.headers.as_ref()),
        );
    }
    let mut response = refuse(problem, &caller);
    response
        .headers_mut()
        .insert(CREDITS_COST, hyper::header::HeaderValue::from(credits));
    response
}

/// The credits of `lookup` on the caller's plan, or the plan's refusal: the lookup,
/// then the suffixes of the names.
fn in_plan<'a>(
    state: &State,
    caller: &Caller,
    lookup: Lookup,
    suffixes: impl IntoIterator<Item = &'a str>,
) -> Result<u32, Problem> {
    let credits = lookup_cost(state, caller, lookup)?;
    match Problem::tld_not_in_plan(state.access.plans(), caller.plan(), suffixes) {
        Some(problem) => Err(problem),
        None => Ok(credits),
    }
}

/// The credits of `lookup` on the caller's plan, or 403 `lookup_not_in_plan`.
fn lookup_cost(state: &State, caller: &Caller, lookup: Lookup) -> Result<u32, Problem> {
    caller
        .plan()
        .live
        .cost(lookup)
        .ok_or_else(|| Problem::LookupNotInPlan {
            lookup: lookup.as_str(),
            plan: caller.tier().to_owned(),
            including: state.access.plans().including(lookup),
        })
}

/// 429 `credits_exhausted` unless the caller has `credits` left: checked before the
/// lookups of an answer that costs several, so none is made that cannot be paid for.
fn ensure_credits(state: &State, caller: &Caller, credits: u64) -> Result<(), Problem> {
    match caller.headers.as_ref().and_then(|h| h.credits_remaining) {
        Some(left) if left < credits => Err(Problem::CreditsExhausted {
            retry_after_secs: crate::access::month::secs_until_next_month(state.access.now_ms()),
        }),
        _ => Ok(()),
    }
}

/// The problem of a failed registration lookup: a registry tldsnap will not connect to
/// is the registry's failure as far as the caller can tell.
fn registry_problem(failure: Failure) -> Problem {
    match failure {
        Failure::Refused { target, detail } => Problem::UpstreamError {
            upstream: target,
            detail: format!("refused: tldsnap does not connect to it: {detail}"),
            retry_after_secs: None,
        },
        other => upstream_problem(other),
    }
}

/// The problem of a failed lookup.
fn upstream_problem(failure: Failure) -> Problem {
    match failure {
        Failure::Timeout { upstream, detail } => Problem::UpstreamTimeout { upstream, detail },
        Failure::Upstream {
            upstream,
            detail,
            retry_after,
        } => Problem::UpstreamError {
            upstream,
            detail,
            retry_after_secs: retry_after,
        },
        Failure::NoService { tld } => Problem::NoRdapService { tld },
        Failure::Refused { target, detail } => Problem::TargetRefused {
            target,
            reason: detail,
        },
    }
}

/// The OpenAPI operation of a live lookup of one domain (docs/LIVE.md).
pub(crate) fn doc(lookup: Lookup) -> Value {
    let domain = json!({ "$ref": "#/components/parameters/domain" });
    let not_found = &["live_unavailable", "not_found"][..];
    let (operation_id, summary, description, schema, parameters, codes_404) = match lookup {
        Lookup::Rdap => (
            "domainRdap",
            "Registration data of a domain (live)",
            "What the domain's registry publishes: registrar, created, updated and expiry dates, EPP status codes, name servers, DNSSEC, the registrant as published (redacted fields stay redacted; `redacted` lists them, RFC 9537). From the registry's RDAP server (RFC 9082/9083; IANA bootstrap, RFC 9224), or its WHOIS server (RFC 3912, named by IANA's) where the TLD has no RDAP: read into the same fields where the format allows, returned `raw` otherwise. A name the registry does not hold is `registered: false`. Subdomains are looked up as their registrable domain. Cached: minutes (a negative answer: less); `learnt_at` says when it was learnt.",
            "RegistryAnswer",
            json!([domain]),
            &["live_unavailable", "no_rdap_service", "not_found"][..],
        ),
        Lookup::Status => (
            "domainStatus",
            "EPP status of a domain (live)",
            "The domain's EPP status codes (RFC 5731, RFC 3915; RDAP's spelling mapped per RFC 8056) with their meaning, who sets each, and whether the domain is in a grace period, on hold or pending delete. Same source and cache as the registration data.",
            "StatusAnswer",
            json!([domain]),
            &["live_unavailable", "no_rdap_service", "not_found"][..],
        ),
        Lookup::Availability => (
            "domainAvailability",
            "Availability of a domain (live)",
            "`available`, `registered`, `reserved` or `unknown`, with the evidence: what the registry (RDAP, else WHOIS) and the DNS (the name's NS records) answered, which upstream, and when. `available` only when both say the name does not exist; a timeout, an error or an answer tldsnap does not understand is `unknown`, never `available`. Always a 200 once the checks pass: a failing upstream is evidence, not an error. Subdomains are looked up as their registrable domain.",
            "Availability",
            json!([domain]),
            not_found,
        ),
        Lookup::Tls => (
            "domainTls",
            "TLS certificate of https://{domain} (live)",
            "The certificate the name's HTTPS server presents (port 443): subject, subject alternative names, issuer, validity, days to expiry, the rest of the chain as sent, the negotiated protocol version and cipher suite, and whether the chain is valid for the name against Mozilla's roots (webpki-roots) now — with why not (`expired`, `not_valid_for_name`, `unknown_issuer`, ...). The name is resolved through the same resolver as the DNS lookup and is looked up as given (a subdomain is its own host); an address that is loopback, private, link-local or a cloud metadata address is never connected to (422 `target_refused`). Only the TLS handshake is made; nothing is requested. Cached 5 minutes.",
            "TlsAnswer",
            json!([domain]),
            not_found,
        ),
        Lookup::Dns => (
            "domainDns",
            "DNS records of a name (live)",
            "The name's records of each type asked, through a real stub resolver (the server's, or `--resolver`), with their TTLs and each type's response code: NXDOMAIN (no such name), NOERROR without records (the name exists, not the type) and SERVFAIL (the resolver could not get an answer) are told apart. The name is looked up as given (a subdomain is its own name). With `dnssec=true`, the resolver's DNSSEC verdict on each type and on the name (`secure`, `insecure`, `bogus`, `indeterminate`): tldsnap asks with the DO and AD bits set and reports the resolver's AD bit, a SERVFAIL that a query with CD (checking disabled) answers as `bogus`, and `insecure` only from a resolver that authenticates the root zone — it does not validate signatures itself (docs/LIVE.md). Cached for the answers' TTLs (at least 5 s, at most an hour; negative answers at most 5 minutes). 424 only when no type got a response.",
            "DnsAnswer",
            json!([domain, { "name": "types", "in": "query", "required": false,
                "description": "Comma-separated record types (any letter case; duplicates collapsed); absent: all seven.",
                "style": "form", "explode": false,
                "schema": { "type": "array", "minItems": 1, "items": { "type": "string", "pattern": DNS_TYPE }, "examples": [["A", "MX"]] } },
                { "name": "dnssec", "in": "query", "required": false,
                "description": "When true, the answer carries the resolver's DNSSEC verdict (`dnssec` on the answer and on each record set). Same credits.",
                "schema": { "type": "boolean", "default": false } }]),
            not_found,
        ),
    };
    let mut op = json!({
        "operationId": operation_id,
        "summary": summary,
        "description": format!("{description} Credits per the plan (docs/LIVE.md; `X-Credits-Cost`), checked before the lookup is made; a failed lookup (424, 422, 404 `no_rdap_service`) costs one credit. Each API key gets its share of every upstream, and upstreams are paced by the address connected to. Upstream failures are problems naming the upstream, never a 5xx: 424 `upstream_timeout` / `upstream_error` (with `Retry-After` when the upstream or tldsnap's own pacing says when). A server started without `--live` answers 404 `live_unavailable`."),
        "security": [{ "apiKey": [] }],
        "parameters": parameters,
        "responses": {
            "200": {
                "description": "The answer.",
                "headers": { "X-Credits-Cost": { "$ref": "#/components/headers/X-Credits-Cost" } },
                "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } }
            },
            "400": { "$ref": "#/components/responses/BadRequest" },
            "401": { "$ref": "#/components/responses/Unauthorized" },
            "403": problem_response("The plan does not include this lookup (`lookup`, `plans_including`), or the name's suffix is outside the plan (`tlds`). No credit is spent.", &["lookup_not_in_plan", "tld_not_in_plan"], json!({})),
            "404": problem_response("This server makes no live lookups, or no registration data service is known for the TLD (`tld`: a failed lookup, one credit).", codes_404, json!({ "X-Credits-Cost": { "$ref": "#/components/headers/X-Credits-Cost" } })),
            "424": { "$ref": "#/components/responses/UpstreamFailed" },
            "429": { "$ref": "#/components/responses/TooManyRequests" }
        }
    });
    if lookup == Lookup::Tls {
        op["responses"]["422"] = problem_response(
            "The name resolves to an address tldsnap does not connect to (`target`): loopback, private, link-local, a cloud metadata address, ... A failed lookup: one credit.",
            &["target_refused"],
            json!({ "X-Credits-Cost": { "$ref": "#/components/headers/X-Credits-Cost" } }),
        );
    }
    op
}

/// The OpenAPI operation of the bulk availability lookup.
pub(crate) fn bulk_availability_doc() -> Value {
    json!({
        "operationId": "domainsAvailability",
        "summary": "Availability of up to 100 domains (live)",
        "description": "For up to 100 names, at once: each one's availability (`available`, `registered`, `reserved` or `unknown`) with its evidence, as the single endpoint answers it, all within one time budget. A name that is not a domain name, or whose suffix the plan excludes, is an entry with `error` (`invalid_name`, `tld_not_in_plan`), not a failed request; a name given twice (after normalisation) is answered once. 101 names or more: 400 `too_many_values`. Costs the plan's availability credits per distinct name looked up (default 1; at least 1 in all), checked before any lookup: 429 `credits_exhausted` when they are not left. tldsnap paces its requests to each registry: names it could not ask within the budget are `unknown`, their evidence says why and when to retry.",
        "security": [{ "apiKey": [] }],
        "requestBody": { "required": true, "description": "At most 256 KiB.", "content": { "application/json": { "schema": {
            "type": "object", "required": ["domains"], "additionalProperties": false,
            "properties": { "domains": { "type": "array", "minItems": 1, "maxItems": LOOKUP_MAX, "items": { "type": "string", "maxLength": MAX_NAME_FIELD }, "examples": [["example.com", "bücher.de"]] } } } } } },
        "responses": {
            "200": {
                "description": "Per name, its availability and evidence.",
                "headers": { "X-Credits-Cost": { "$ref": "#/components/headers/X-Credits-Cost" } },
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/AvailabilityBulk" } } }
            },
            "400": { "$ref": "#/components/responses/BadBody" },
            "401": { "$ref": "#/components/responses/Unauthorized" },
            "403": problem_response("The plan does not include availability lookups (`lookup`, `plans_including`). No credit is spent.", &["lookup_not_in_plan"], json!({})),
            "404": problem_response("This server makes no live lookups.", &["live_unavailable", "not_found"], json!({})),
            "408": { "$ref": "#/components/responses/RequestTimeout" },
            "413": { "$ref": "#/components/responses/PayloadTooLarge" },
            "415": { "$ref": "#/components/responses/UnsupportedMediaType" },
            "429": { "$ref": "#/components/responses/TooManyRequests" }
        }
    })
}
