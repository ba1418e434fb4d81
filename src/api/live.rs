//! The live lookups' endpoints (issue 15): a domain name in, a call into
//! [`crate::live`], a JSON answer or a problem naming the upstream out.
//!
//! | route | answer | credits (default plans) |
//! |---|---|---|
//! | `GET /api/v1/client/domains/{domain}/rdap` | registration data (RDAP, else WHOIS) | 2 |
//! | `GET /api/v1/client/domains/{domain}/status` | EPP status codes, their meaning, grace / hold / pending delete | 1 |
//! | `GET /api/v1/client/domains/{domain}/dns?types=` | DNS records with TTLs and response codes | 1 |
//!
//! Order of checks: key (401), rate (429), the domain and the query (400), the plan — the lookup
//! (403 `lookup_not_in_plan`) and the name's suffix (403 `tld_not_in_plan`) —, whether
//! this server makes live lookups (404 `live_unavailable`), the lookup (404
//! `no_rdap_service`, 422 `target_refused`, 424 `upstream_timeout` / `upstream_error`),
//! credits (429), answer (200, the lookup's credits, `X-Credits-Cost`). A failed lookup
//! costs nothing. `docs/LIVE.md` says where each answer comes from.

use std::borrow::Cow;

use hyper::Request;
use hyper::body::Incoming;

use super::domains::with_cost;
use super::{Connection, HttpResponse, State, admit, finish_costing, refuse};
use crate::access::Caller;
use crate::access::plans::Lookup;
use crate::audit::Split;
use crate::http::params::{self, percent_decode};
use crate::http::problem::{Problem, echo};
use crate::http::router::RouteId;
use crate::live::registry::StatusAnswer;
use crate::live::{Failure, Live};

/// `GET /api/v1/client/domains/{domain}/rdap`.
pub async fn rdap(
    state: &State,
    req: &Request<Incoming>,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    single(
        state,
        req,
        RouteId::DomainRdap,
        segment,
        conn,
        Lookup::Rdap,
        |_| Ok(()),
        async |live, name, ()| {
            let answer = live
                .registry(&name.split.domain, live.deadline())
                .await
                .map_err(registry_problem)?;
            Ok(serde_json::to_vec(&*answer).unwrap_or_default())
        },
    )
    .await
}

/// `GET /api/v1/client/domains/{domain}/status`.
pub async fn status(
    state: &State,
    req: &Request<Incoming>,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    single(
        state,
        req,
        RouteId::DomainStatus,
        segment,
        conn,
        Lookup::Status,
        |_| Ok(()),
        async |live, name, ()| {
            let answer = live
                .registry(&name.split.domain, live.deadline())
                .await
                .map_err(registry_problem)?;
            Ok(serde_json::to_vec(&StatusAnswer::of(&answer)).unwrap_or_default())
        },
    )
    .await
}

/// `GET /api/v1/client/domains/{domain}/dns?types=`: the name as given (a subdomain is
/// its own name here), every type asked at once.
pub async fn dns(
    state: &State,
    req: &Request<Incoming>,
    segment: &str,
    conn: &Connection,
) -> HttpResponse {
    single(
        state,
        req,
        RouteId::DomainDns,
        segment,
        conn,
        Lookup::Dns,
        |query| {
            let [types] = params::pick(query, ["types"])?;
            params::dns_types(types.as_deref())
        },
        async |live, name, types| {
            let answer = live
                .dns(&name.full, &types, live.deadline())
                .await
                .map_err(upstream_problem)?;
            Ok(serde_json::to_vec(&answer).unwrap_or_default())
        },
    )
    .await
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
async fn single<P>(
    state: &State,
    req: &Request<Incoming>,
    route: RouteId,
    segment: &str,
    conn: &Connection,
    lookup: Lookup,
    parse: impl FnOnce(Option<&str>) -> Result<P, Problem>,
    answer: impl AsyncFnOnce(&Live, &Name, P) -> Result<Vec<u8>, Problem>,
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
    let body = match answer(live, &name, params).await {
        Ok(body) => body,
        Err(problem) => return refuse(problem, &caller),
    };
    let credits = u64::from(credits);
    with_cost(
        finish_costing(state, route, caller, body, credits).await,
        credits,
    )
}

/// The `{domain}` path segment: percent-decoded and split at its public suffix with the
/// names every domain endpoint uses ([`super::domains::names`]), so only a valid,
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
    let split = super::domains::names()
        .split(&decoded, priced)
        .map_err(not_a_name)?;
    // No TLD is all digits (RFC 3696 section 2): such a "name" is an IP address.
    if split.suffix().bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(
            &decoded,
            "not a domain name: an IP address (its last label is a number)".into(),
        ));
    }
    let full = crate::audit::names::canonical(&decoded).map_err(not_a_name)?;
    Ok(Name { full, split })
}

/// The credits of `lookup` on the caller's plan, or the plan's refusal: the lookup,
/// then the suffixes of the names.
fn in_plan<'a>(
    state: &State,
    caller: &Caller,
    lookup: Lookup,
    suffixes: impl IntoIterator<Item = &'a str>,
) -> Result<u32, Problem> {
    let plans = state.access.plans();
    let Some(credits) = caller.plan.live.cost(lookup) else {
        return Err(Problem::LookupNotInPlan {
            lookup: lookup.as_str(),
            plan: caller.tier().to_owned(),
            including: plans.including(lookup),
        });
    };
    match Problem::tld_not_in_plan(plans, &caller.plan, suffixes) {
        Some(problem) => Err(problem),
        None => Ok(credits),
    }
}

/// The problem of a failed registration lookup: a registry tldsnap will not connect to
/// is the registry's failure as far as the caller can tell.
fn registry_problem(failure: Failure) -> Problem {
    match failure {
        Failure::Refused { target, detail } => Problem::UpstreamError {
            upstream: target,
            detail: format!("tldsnap does not connect to it ({detail})"),
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
