//! Plans: what a caller may use (docs/METERING.md, "Plans").
//!
//! | plan | credits/month | rate (sustained/burst per s) | TLDs | registrar list | audit | searches/day | events | webhooks | export |
//! |---|---|---|---|---|---|---|---|---|---|
//! | free | 50 | 1 / 5 | the 22 free TLDs | 5 | 500 domains | 5 | no | no | no |
//! | basic | 1,000 | 5 / 20 | all | 5 | 1,000 domains | unlimited | yes | no | no |
//! | pro | 10,000 | 20 / 100 | all | all | 2,000 domains | unlimited | yes | 10 subscriptions | yes |
//! | enterprise | 1,000,000 | 100 / 1000 | all | all | 10,000 domains | unlimited | yes | 100 subscriptions | yes |
//! | public | none (unmetered) | 10 / 20 per client address | the 22 free TLDs | 5 | 500 domains | 5 | no | no | no |
//!
//! "events" is the price-change events (polling and streaming, `docs/EVENTS.md`): every
//! paid plan has them. "webhooks" is how many webhook subscriptions a key may have: the
//! server does the delivering, retrying and keeping of state, so it starts at Pro.
//! "export" is the whole price grid as CSV (`GET /api/v1/client/export`): the plans that
//! see every seller of every TLD have it, since an export is the grid they see.
//!
//! Live lookups (`docs/LIVE.md`) and their credits per lookup ([`LiveCosts`]): free has
//! availability (1 per name) and status (1); basic, pro and enterprise have every lookup:
//! availability 1 per name, status 1, DNS 1, registration data (RDAP/WHOIS) 2 and the TLS
//! certificate 2 — the two that ask a third party's server the most.
//!
//! `public` is the plan of unauthenticated calls to the public variants. An operator may
//! override any plan, or add one, with a JSON plans file ([`Plans::load`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::AccessError;

/// The 22 free TLDs live with the names (`crate::tld`), where the queries that mark
/// them (overview, catalogue) can reach them too.
pub use crate::tld::{FREE_TLDS, is_free as is_free_tld};

/// What a plan shows of the prices lives below the queries, which ask it.
pub use crate::sight::Sight;

/// Name of the plan of unauthenticated calls to the public variants.
pub const PUBLIC_PLAN: &str = "public";

/// Which TLDs a plan may query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TldScope {
    /// Every TLD in the snapshot.
    All,
    /// Only the 22 [`FREE_TLDS`].
    Free,
}

/// One plan's allowances. `None` means unlimited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The plan's name, reported as `meta.tier`.
    pub name: String,
    /// Credits per calendar month (UTC); one credit per successful request.
    pub credits_per_month: Option<u64>,
    /// Sustained requests per second (per key; per client address for `public`).
    pub rate_per_second: Option<u32>,
    /// Requests that may be sent at once after a quiet period (the bucket size).
    pub burst: Option<u32>,
    /// Which TLDs the plan may query.
    pub tlds: TldScope,
    /// Most entries in a registrar listing (`None`: all).
    pub registrar_list_limit: Option<u32>,
    /// Most domains in one portfolio audit (spec 8: free 500, basic 1,000, pro 2,000,
    /// enterprise 10,000).
    pub audit_limit: u32,
    /// Domain searches per UTC day (`None`: unlimited; spec 8: free 5).
    pub searches_per_day: Option<u32>,
    /// Whether the plan may read price-change events (`docs/EVENTS.md`).
    pub events: bool,
    /// Most webhook subscriptions per key: `Some(0)` none, `None` unlimited.
    pub webhooks: Option<u32>,
    /// Whether the plan may export the price grid (`GET /api/v1/client/export`).
    pub export: bool,
    /// The live lookups the plan may make and their credits (`docs/LIVE.md`).
    pub live: LiveCosts,
}

/// A kind of live lookup (`docs/LIVE.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Availability, single or bulk (cost per name).
    Availability,
    /// Registration data (RDAP, WHOIS).
    Rdap,
    /// EPP status codes and their meaning.
    Status,
    /// DNS records.
    Dns,
    /// The TLS certificate of `https://{domain}`.
    Tls,
}

impl Lookup {
    /// Every kind, in the order the plans file and the docs list them.
    pub const ALL: [Lookup; 5] = [
        Lookup::Availability,
        Lookup::Rdap,
        Lookup::Status,
        Lookup::Dns,
        Lookup::Tls,
    ];

    /// The kind's name in the plans file and in problems.
    pub fn as_str(self) -> &'static str {
        match self {
            Lookup::Availability => "availability",
            Lookup::Rdap => "rdap",
            Lookup::Status => "status",
            Lookup::Dns => "dns",
            Lookup::Tls => "tls",
        }
    }
}

/// The live lookups a plan may make, with the credits each costs (availability: per
/// name); `None` for a kind the plan does not include.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveCosts {
    costs: [Option<u32>; 5],
}

impl LiveCosts {
    /// The credits `lookup` costs, or `None` when the plan does not include it.
    pub fn cost(&self, lookup: Lookup) -> Option<u32> {
        self.costs[lookup as usize]
    }

    /// These costs with `lookup` costing `credits` (`None`: not included).
    pub fn with(mut self, lookup: Lookup, credits: Option<u32>) -> LiveCosts {
        self.costs[lookup as usize] = credits;
        self
    }
}

/// The live lookups of a plan the plans file does not say them for: the default plan
/// of the same name's, else the free plan's.
fn default_live(name: &str) -> LiveCosts {
    let free = LiveCosts::default()
        .with(Lookup::Availability, Some(1))
        .with(Lookup::Status, Some(1));
    match name {
        "basic" | "pro" | "enterprise" => free
            .with(Lookup::Rdap, Some(2))
            .with(Lookup::Dns, Some(1))
            .with(Lookup::Tls, Some(2)),
        PUBLIC_PLAN => LiveCosts::default(),
        _ => free,
    }
}

/// The audit limit and daily searches of a plan the plans file does not give them for:
/// the default plan of the same name's, else the free plan's (the most careful choice
/// for a plan an operator added without saying).
fn default_extras(name: &str) -> (u32, Option<u32>) {
    match name {
        "basic" => (1_000, None),
        "pro" => (2_000, None),
        "enterprise" => (10_000, None),
        _ => (500, Some(5)),
    }
}

/// Whether a plan the plans file does not say it for has price-change events: the
/// default plan of the same name's (every paid plan), else the free plan's (none).
fn default_events(name: &str) -> bool {
    matches!(name, "basic" | "pro" | "enterprise")
}

/// Whether a plan the plans file does not say it for may export the price grid: the
/// default plan of the same name's (pro and enterprise), else none.
fn default_export(name: &str) -> bool {
    matches!(name, "pro" | "enterprise")
}

/// Webhook subscriptions of a plan the plans file does not say it for: the default
/// plan of the same name's (pro 10, enterprise 100), else none.
fn default_webhooks(name: &str) -> Option<u32> {
    Some(match name {
        "pro" => 10,
        "enterprise" => 100,
        _ => 0,
    })
}

impl Plan {
    /// What the plan shows of the prices ([`Sight`]): the TLDs of its scope, and at
    /// most `registrar_list_limit` sellers of each. Every door asks this one value.
    pub fn sight(&self) -> Sight {
        Sight::new(self.tlds == TldScope::All, self.registrar_list_limit)
    }

    /// Whether the plan may query `tld` (canonical form).
    pub fn covers(&self, tld: &str) -> bool {
        match self.tlds {
            TldScope::All => true,
            TldScope::Free => is_free_tld(tld),
        }
    }

    /// The TLDs of `tlds` the plan does not cover, in order.
    pub fn outside<'a>(&self, tlds: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        tlds.into_iter()
            .filter(|t| !self.covers(t))
            .map(str::to_owned)
            .collect()
    }

    fn new(
        name: &str,
        credits: Option<u64>,
        rate: u32,
        burst: u32,
        tlds: TldScope,
        list: Option<u32>,
    ) -> Plan {
        let (audit_limit, searches_per_day) = default_extras(name);
        Plan {
            name: name.to_string(),
            credits_per_month: credits,
            rate_per_second: Some(rate),
            burst: Some(burst),
            tlds,
            registrar_list_limit: list,
            audit_limit,
            searches_per_day,
            events: default_events(name),
            live: default_live(name),
            webhooks: default_webhooks(name),
            export: default_export(name),
        }
    }
}

/// The set of plans the service knows, by name.
#[derive(Clone, Debug)]
pub struct Plans {
    by_name: HashMap<String, Arc<Plan>>,
}

impl Default for Plans {
    /// The product's plans plus the `public` plan.
    fn default() -> Plans {
        let list = [
            Plan::new("free", Some(50), 1, 5, TldScope::Free, Some(5)),
            Plan::new("basic", Some(1_000), 5, 20, TldScope::All, Some(5)),
            Plan::new("pro", Some(10_000), 20, 100, TldScope::All, None),
            Plan::new(
                "enterprise",
                Some(1_000_000),
                100,
                1_000,
                TldScope::All,
                None,
            ),
            Plan::new(PUBLIC_PLAN, None, 10, 20, TldScope::Free, Some(5)),
        ];
        Plans {
            by_name: list
                .into_iter()
                .map(|p| (p.name.clone(), Arc::new(p)))
                .collect(),
        }
    }
}

const FIELDS: [&str; 11] = [
    "credits_per_month",
    "rate_per_second",
    "burst",
    "tlds",
    "registrar_list_limit",
    "audit_limit",
    "searches_per_day",
    "events",
    "live",
    "webhooks",
    "export",
];

/// The fields a plan in a plans file may leave out (files written before the audit's limits existed).
const OPTIONAL_FIELDS: [&str; 6] = [
    "audit_limit",
    "searches_per_day",
    "events",
    "live",
    "webhooks",
    "export",
];

/// Most credits one live lookup may cost.
const MAX_LOOKUP_CREDITS: u64 = 1_000;

impl Plans {
    /// The default plans with the plans named in the JSON file at `path` replaced (or
    /// added). Every field of a named plan is required but `audit_limit` (most domains
    /// per portfolio audit, at least 1), `searches_per_day` (`null`: unlimited),
    /// `events` (`true` or `false`), `webhooks` (subscriptions per key, 0: none,
    /// `null`: unlimited; needs `events`) and `export` (`true` or `false`), which default to the default plan of the
    /// same name's, else the free plan's; `null` means unlimited:
    ///
    /// ```json
    /// {"enterprise": {"credits_per_month": 1000000, "rate_per_second": 100, "burst": 1000,
    ///                 "tlds": "all", "registrar_list_limit": null,
    ///                 "audit_limit": 10000, "searches_per_day": null}}
    /// ```
    pub fn load(path: &Path) -> Result<Plans, AccessError> {
        let text = std::fs::read_to_string(path).map_err(|e| AccessError::Io {
            path: path.to_path_buf(),
            action: "read the plans file",
            source: e,
        })?;
        Plans::from_json(&text).map_err(|message| AccessError::PlansFile {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Like [`Plans::load`], from the file's text; the error is the message alone.
    pub fn from_json(text: &str) -> Result<Plans, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
        let serde_json::Value::Object(map) = value else {
            return Err("expected a JSON object of plans by name, e.g. {\"pro\": {...}}".into());
        };
        let mut plans = Plans::default();
        for (name, body) in map {
            let plan = parse_plan(&name, &body).map_err(|m| format!("plan \"{name}\": {m}"))?;
            plans.by_name.insert(name, Arc::new(plan));
        }
        Ok(plans)
    }

    /// The plan called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Plan>> {
        self.by_name.get(name)
    }

    /// The names of every plan, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// The plans (not `public`) that cover every TLD, sorted: what a caller refused a
    /// TLD can move to.
    pub fn covering_all(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .by_name
            .values()
            .filter(|p| p.tlds == TldScope::All && p.name != PUBLIC_PLAN)
            .map(|p| p.name.clone())
            .collect();
        v.sort_unstable();
        v
    }

    /// The plans (not `public`) that include the live lookup `lookup`, sorted.
    pub fn including(&self, lookup: Lookup) -> Vec<String> {
        let mut v: Vec<String> = self
            .by_name
            .values()
            .filter(|p| p.live.cost(lookup).is_some() && p.name != PUBLIC_PLAN)
            .map(|p| p.name.clone())
            .collect();
        v.sort_unstable();
        v
    }

    /// The `public` plan (always present: a plans file may change it but not remove it).
    pub fn public(&self) -> Arc<Plan> {
        match self.by_name.get(PUBLIC_PLAN) {
            Some(p) => p.clone(),
            None => Arc::new(Plan::new(
                PUBLIC_PLAN,
                None,
                10,
                20,
                TldScope::Free,
                Some(5),
            )),
        }
    }
}

fn parse_plan(name: &str, body: &serde_json::Value) -> Result<Plan, String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        return Err("a plan name is 1 to 64 characters of a-z, 0-9, '_' and '-'".into());
    }
    let serde_json::Value::Object(obj) = body else {
        return Err(format!(
            "expected an object with the fields {}",
            FIELDS.join(", ")
        ));
    };
    for key in obj.keys() {
        if !FIELDS.contains(&key.as_str()) {
            return Err(format!(
                "unknown field \"{key}\" (the fields are {})",
                FIELDS.join(", ")
            ));
        }
    }
    let events = match obj.get("events") {
        None => default_events(name),
        Some(serde_json::Value::Bool(b)) => *b,
        Some(_) => return Err("field \"events\" must be true or false".into()),
    };
    let export = match obj.get("export") {
        None => default_export(name),
        Some(serde_json::Value::Bool(b)) => *b,
        Some(_) => return Err("field \"export\" must be true or false".into()),
    };
    let live = match obj.get("live") {
        None => default_live(name),
        Some(v) => parse_live(v)?,
    };
    let webhooks = match obj.get("webhooks") {
        None if events => default_webhooks(name),
        None => Some(0),
        Some(v) => opt_uint(v, "webhooks", u32::MAX as u64)?.map(|n| n as u32),
    };
    if webhooks != Some(0) && !events {
        return Err("field \"webhooks\" needs \"events\": true (webhooks deliver events)".into());
    }
    let field = |f: &str| {
        obj.get(f).ok_or_else(|| {
            format!(
                "field \"{f}\" is missing (every field but {} is required; use null for unlimited)",
                OPTIONAL_FIELDS.join(" and ")
            )
        })
    };
    let (default_audit, default_searches) = default_extras(name);
    let audit_limit = match obj.get("audit_limit") {
        None => default_audit,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=u32::MAX as u64).contains(&n) => n as u32,
            _ => {
                return Err(format!(
                    "field \"audit_limit\" must be a whole number from 1 to {}, not {v}",
                    u32::MAX
                ));
            }
        },
    };
    let searches_per_day = match obj.get("searches_per_day") {
        None => default_searches,
        Some(v) => opt_uint(v, "searches_per_day", u32::MAX as u64)?.map(|n| n as u32),
    };
    let credits = opt_uint(field("credits_per_month")?, "credits_per_month", u64::MAX)?;
    let rate = opt_uint(field("rate_per_second")?, "rate_per_second", 1_000_000)?;
    let burst = opt_uint(field("burst")?, "burst", 1_000_000)?;
    let list = opt_uint(
        field("registrar_list_limit")?,
        "registrar_list_limit",
        u32::MAX as u64,
    )?;
    let tlds = match field("tlds")?.as_str() {
        Some("all") => TldScope::All,
        Some("free") => TldScope::Free,
        _ => return Err("field \"tlds\" must be \"all\" or \"free\"".into()),
    };
    match (rate, burst) {
        (Some(0), _) => return Err("rate_per_second must be at least 1 (null: unlimited)".into()),
        (_, Some(0)) => return Err("burst must be at least 1 (null: unlimited)".into()),
        (Some(_), None) | (None, Some(_)) => {
            return Err(
                "rate_per_second and burst are both numbers (a token bucket) or both null (no rate limit)"
                    .into(),
            );
        }
        (Some(r), Some(b)) if b < r => {
            return Err(format!(
                "burst ({b}) must be at least rate_per_second ({r}), or a second's worth of requests could never be sent"
            ));
        }
        _ => {}
    }
    if list == Some(0) {
        return Err("registrar_list_limit must be at least 1 (null: all)".into());
    }
    Ok(Plan {
        name: name.to_string(),
        credits_per_month: credits,
        rate_per_second: rate.map(|r| r as u32),
        burst: burst.map(|b| b as u32),
        tlds,
        registrar_list_limit: list.map(|l| l as u32),
        audit_limit,
        searches_per_day,
        events,
        export,
        live,
        webhooks,
    })
}

/// `"live": {"availability": 1, "rdap": 2, ...}`: the lookups the plan includes and their
/// credits; a kind left out, or `null`, is not included; `"live": null` includes none.
fn parse_live(v: &serde_json::Value) -> Result<LiveCosts, String> {
    let mut costs = LiveCosts::default();
    let obj = match v {
        serde_json::Value::Null => return Ok(costs),
        serde_json::Value::Object(obj) => obj,
        _ => {
            return Err(
                "field \"live\" must be an object of credits by lookup, e.g. {\"availability\": 1, \"rdap\": 2}, or null"
                    .into(),
            );
        }
    };
    let names: Vec<&str> = Lookup::ALL.iter().map(|l| l.as_str()).collect();
    for (key, value) in obj {
        let Some(lookup) = Lookup::ALL.iter().find(|l| l.as_str() == key) else {
            return Err(format!(
                "\"live\" has an unknown lookup \"{key}\" (the lookups are {})",
                names.join(", ")
            ));
        };
        let credits = opt_uint(value, &format!("live.{key}"), MAX_LOOKUP_CREDITS)?;
        if credits == Some(0) {
            return Err(format!(
                "\"live.{key}\" must be at least 1 (every answer costs a credit; null: not in the plan)"
            ));
        }
        costs = costs.with(*lookup, credits.map(|c| c as u32));
    }
    Ok(costs)
}

fn opt_uint(v: &serde_json::Value, field: &str, max: u64) -> Result<Option<u64>, String> {
    if v.is_null() {
        return Ok(None);
    }
    match v.as_u64() {
        Some(n) if n <= max => Ok(Some(n)),
        _ => Err(format!(
            "field \"{field}\" must be null (unlimited) or a whole number from 0 to {max}, not {v}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_contract() {
        let p = Plans::default();
        let free = p.get("free").unwrap();
        assert_eq!(free.credits_per_month, Some(50));
        assert_eq!((free.rate_per_second, free.burst), (Some(1), Some(5)));
        assert_eq!(free.tlds, TldScope::Free);
        assert_eq!(free.registrar_list_limit, Some(5));
        let ent = p.get("enterprise").unwrap();
        assert_eq!(ent.credits_per_month, Some(1_000_000));
        assert_eq!((ent.rate_per_second, ent.burst), (Some(100), Some(1000)));
        assert_eq!(ent.registrar_list_limit, None);
        assert_eq!(p.get("basic").unwrap().burst, Some(20));
        assert_eq!(p.get("pro").unwrap().credits_per_month, Some(10_000));
        let public = p.public();
        assert_eq!(public.credits_per_month, None);
        assert_eq!((public.rate_per_second, public.burst), (Some(10), Some(20)));
        assert_eq!(public.tlds, TldScope::Free);
        assert_eq!(p.names(), ["basic", "enterprise", "free", "pro", "public"]);
        let audit: Vec<(u32, Option<u32>)> = ["free", "basic", "pro", "enterprise", "public"]
            .iter()
            .map(|n| {
                let p = p.get(n).unwrap();
                (p.audit_limit, p.searches_per_day)
            })
            .collect();
        assert_eq!(
            audit,
            [
                (500, Some(5)),
                (1_000, None),
                (2_000, None),
                (10_000, None),
                (500, Some(5))
            ]
        );
    }

    #[test]
    fn audit_and_search_limits_are_optional_fields() {
        let old = r#""credits_per_month": 1, "rate_per_second": 1, "burst": 1, "tlds": "all", "registrar_list_limit": null"#;
        let p = Plans::from_json(&format!(
            r#"{{"pro": {{{old}}}, "trial": {{{old}}},
                "basic": {{{old}, "audit_limit": 7, "searches_per_day": null}},
                "free": {{{old}, "searches_per_day": 9}}}}"#
        ))
        .unwrap();
        let get = |n: &str| {
            let p = p.get(n).unwrap();
            (p.audit_limit, p.searches_per_day)
        };
        assert_eq!(get("pro"), (2_000, None));
        assert_eq!(get("trial"), (500, Some(5)));
        assert_eq!(get("basic"), (7, None));
        assert_eq!(get("free"), (500, Some(9)));
        for (patch, want) in [
            (r#""audit_limit": 0"#, "audit_limit"),
            (r#""audit_limit": null"#, "audit_limit"),
            (r#""searches_per_day": -1"#, "searches_per_day"),
        ] {
            let err = Plans::from_json(&format!(r#"{{"x": {{{old}, {patch}}}}}"#)).unwrap_err();
            assert!(err.contains(want), "{patch}: {err}");
        }
        let events: Vec<bool> = ["free", "basic", "pro", "enterprise", "public"]
            .iter()
            .map(|n| p.get(n).unwrap().events)
            .collect();
        assert_eq!(events, [false, true, true, true, false]);
        let webhooks: Vec<Option<u32>> = ["free", "basic", "pro", "enterprise", "public"]
            .iter()
            .map(|n| p.get(n).unwrap().webhooks)
            .collect();
        assert_eq!(webhooks, [Some(0), Some(0), Some(10), Some(100), Some(0)]);
        assert_eq!(
            Plans::default().get("enterprise").unwrap().webhooks,
            Some(100)
        );
        let p = Plans::from_json(&format!(
            r#"{{"basic": {{{old}, "webhooks": 3}}, "pro": {{{old}, "webhooks": null}}}}"#
        ))
        .unwrap();
        assert_eq!(p.get("basic").unwrap().webhooks, Some(3));
        assert_eq!(p.get("pro").unwrap().webhooks, None);
        for (patch, want) in [
            (r#""webhooks": -1"#, "webhooks"),
            (r#""webhooks": true"#, "webhooks"),
            (r#""events": false, "webhooks": 2"#, "needs \"events\""),
        ] {
            let err = Plans::from_json(&format!(r#"{{"x": {{{old}, {patch}}}}}"#)).unwrap_err();
            assert!(err.contains(want), "{patch}: {err}");
        }
    }

    #[test]
    fn live_lookups_and_their_costs() {
        let p = Plans::default();
        let free = p.get("free").unwrap().live;
        assert_eq!(free.cost(Lookup::Availability), Some(1));
        assert_eq!(free.cost(Lookup::Status), Some(1));
        assert_eq!(free.cost(Lookup::Rdap), None);
        assert_eq!(free.cost(Lookup::Tls), None);
        let pro = p.get("pro").unwrap().live;
        let costs: Vec<Option<u32>> = Lookup::ALL.iter().map(|l| pro.cost(*l)).collect();
        assert_eq!(costs, [Some(1), Some(2), Some(1), Some(1), Some(2)]);
        assert_eq!(p.public().live, LiveCosts::default());
        assert_eq!(p.including(Lookup::Tls), ["basic", "enterprise", "pro"]);
        assert_eq!(
            p.including(Lookup::Status),
            ["basic", "enterprise", "free", "pro"]
        );
        let old = r#""credits_per_month": 1, "rate_per_second": 1, "burst": 1, "tlds": "all", "registrar_list_limit": null"#;
        let p = Plans::from_json(&format!(
            r#"{{"pro": {{{old}, "live": {{"dns": 3, "tls": null}}}}, "trial": {{{old}}},
                "basic": {{{old}, "live": null}}}}"#
        ))
        .unwrap();
        let pro = p.get("pro").unwrap().live;
        assert_eq!(pro.cost(Lookup::Dns), Some(3));
        assert_eq!(pro.cost(Lookup::Tls), None);
        assert_eq!(pro.cost(Lookup::Availability), None);
        assert_eq!(p.get("trial").unwrap().live, default_live("free"));
        assert_eq!(p.get("basic").unwrap().live, LiveCosts::default());
        for (patch, want) in [
            (r#""live": 3"#, "must be an object"),
            (r#""live": {"whois": 1}"#, "unknown lookup \"whois\""),
            (r#""live": {"dns": -1}"#, "live.dns"),
            (r#""live": {"dns": 5000}"#, "live.dns"),
            (r#""live": {"dns": 0}"#, "at least 1"),
        ] {
            let err = Plans::from_json(&format!(r#"{{"x": {{{old}, {patch}}}}}"#)).unwrap_err();
            assert!(err.contains(want), "{patch}: {err}");
        }
    }

    #[test]
    fn free_tlds_are_exactly_the_seed_list() {
        assert_eq!(FREE_TLDS.len(), 22);
        assert!(is_free_tld("com") && is_free_tld("de") && is_free_tld("uk"));
        assert!(!is_free_tld("co.uk") && !is_free_tld("COM") && !is_free_tld("fr"));
    }

    #[test]
    fn override_replaces_named_plans_and_adds_new_ones() {
        let p = Plans::from_json(
            r#"{"pro": {"credits_per_month": null, "rate_per_second": null, "burst": null,
                        "tlds": "free", "registrar_list_limit": 3},
                "trial": {"credits_per_month": 7, "rate_per_second": 2, "burst": 4,
                          "tlds": "all", "registrar_list_limit": null}}"#,
        )
        .unwrap();
        let pro = p.get("pro").unwrap();
        assert_eq!(pro.credits_per_month, None);
        assert_eq!(pro.rate_per_second, None);
        assert_eq!(pro.tlds, TldScope::Free);
        assert_eq!(pro.registrar_list_limit, Some(3));
        assert_eq!(p.get("trial").unwrap().credits_per_month, Some(7));
        assert_eq!(p.get("free").unwrap().credits_per_month, Some(50));
        // `events` may be left out: the default plan's value, false for a new plan.
        assert!(pro.events);
        assert!(!p.get("trial").unwrap().events);
        let p = Plans::from_json(
            r#"{"free": {"credits_per_month": 1, "rate_per_second": 1, "burst": 1,
                         "tlds": "free", "registrar_list_limit": 1, "events": true},
                "pro": {"credits_per_month": 1, "rate_per_second": 1, "burst": 1,
                        "tlds": "all", "registrar_list_limit": 1, "events": false}}"#,
        )
        .unwrap();
        assert!(p.get("free").unwrap().events && !p.get("pro").unwrap().events);
        // Without events a plan has no webhooks, and may not be given any.
        assert_eq!(p.get("pro").unwrap().webhooks, Some(0));
        assert_eq!(p.get("free").unwrap().webhooks, Some(0));
        assert!(
            Plans::from_json(
                r#"{"pro": {"credits_per_month": 1, "rate_per_second": 1, "burst": 1,
                            "tlds": "all", "registrar_list_limit": 1, "events": "yes"}}"#
            )
            .unwrap_err()
            .contains("\"events\" must be true or false")
        );
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let full = r#""credits_per_month": 1, "rate_per_second": 1, "burst": 1, "tlds": "all", "registrar_list_limit": null"#;
        let cases = [
            ("[]".to_string(), "expected a JSON object"),
            ("{".to_string(), "not valid JSON"),
            (
                r#"{"pro": 3}"#.to_string(),
                "plan \"pro\": expected an object",
            ),
            (
                r#"{"pro": {"credits_per_month": 1}}"#.to_string(),
                "field \"rate_per_second\" is missing",
            ),
            (
                format!(r#"{{"pro": {{{full}, "colour": 1}}}}"#),
                "unknown field \"colour\"",
            ),
        ];
        for (text, want) in &cases {
            let err = Plans::from_json(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
        let bad = |patch: &str, want: &str| {
            let text = format!(r#"{{"x": {{{}}}}}"#, patch);
            let err = Plans::from_json(&text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        };
        bad(&full.replace("\"all\"", "\"some\""), "\"all\" or \"free\"");
        bad(
            &full.replace("\"burst\": 1", "\"burst\": null"),
            "both null",
        );
        bad(
            &full.replace("\"burst\": 1", "\"burst\": 0"),
            "burst must be at least 1",
        );
        bad(
            &full.replace("\"credits_per_month\": 1", "\"credits_per_month\": -1"),
            "whole number",
        );
        bad(
            &full.replace("\"credits_per_month\": 1", "\"credits_per_month\": \"5\""),
            "whole number",
        );
        bad(
            &full.replace("\"burst\": 1", "\"burst\": 1.5"),
            "whole number",
        );
        bad(
            &full.replace("\"rate_per_second\": 1", "\"rate_per_second\": 10"),
            "at least rate_per_second",
        );
        let err = Plans::from_json(&format!(r#"{{"Bad Name": {{{full}}}}}"#)).unwrap_err();
        assert!(err.contains("plan name"), "{err}");
    }
}
