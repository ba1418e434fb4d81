//! The route table: every path the API answers, in one list.
//!
//! [`ROUTES`] is the single source of truth: the dispatcher matches against it, the
//! metrics label requests with its templates, and a test checks that
//! `/openapi.json` documents exactly these paths. Matching is a handful of string
//! comparisons on the raw (undecoded) path, among the templates that can match a path
//! that starts as it does (the client API, the rest of the API, the others); no
//! allocation, no regular expressions.
//!
//! Paths are matched exactly: no trailing-slash redirect, no case folding, no `..`
//! resolution (`/api/v1/../healthz` is simply an unknown path, 404).

use super::same_bytes;

/// What a route is, independent of its path. Also the index into per-route counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteId {
    /// `GET /api/v1/client/prices/cheapest`
    ClientCheapest = 0,
    /// `GET /api/v1/prices/cheapest`
    PublicCheapest,
    /// `GET /api/v1/client/prices`
    ClientPrices,
    /// `GET /api/v1/prices`
    PublicPrices,
    /// `GET /v1/prices`
    PublicPricesV1,
    /// `GET /api/v1/client/registrars/tld/{tld}`
    ClientRegistrars,
    /// `GET /healthz`
    Healthz,
    /// `GET /readyz`
    Readyz,
    /// `GET /metrics`
    Metrics,
    /// `GET /openapi.json`
    OpenApi,
    /// `GET /api/v1/client/history/tld/{tld}`
    ClientHistory,
    /// `GET /api/v1/history/tld/{tld}`
    PublicHistory,
    /// `GET /api/v1/client/overview/tld/{tld}`
    ClientOverview,
    /// `GET /api/v1/overview/tld/{tld}`
    PublicOverview,
    /// `GET /api/v1/client/tlds`
    ClientTlds,
    /// `GET /api/v1/tlds`
    PublicTlds,
    /// `GET /api/v1/registrars`
    RegistrarList,
    /// `GET /api/v1/registrars/{key}`
    Registrar,
    /// `GET /registrars/{key}`: a registrar's page, the `website_url` of the API.
    RegistrarPage,
    /// `POST /api/v1/client/portfolio/audit`
    PortfolioAudit,
    /// `POST /api/v1/client/domains/lookup`
    DomainsLookup,
    /// `GET /api/v1/client/domains/search`
    DomainsSearch,
    /// `GET /`: the website's home page.
    Home,
    /// `GET /tld/{tld}`: one TLD's page.
    TldPage,
    /// `GET /tlds`: the catalogue page.
    CataloguePage,
    /// `GET /registrars`: the registrars page.
    RegistrarsPage,
    /// `GET, POST /signin`: the sign-in form and the account page.
    SignIn,
    /// `POST /signout`
    SignOut,
    /// `GET /static/{file}`: the stylesheet, script and icon.
    Asset,
    /// `GET /api/v1/client/events`
    ClientEvents,
    /// `GET /api/v1/client/events/stream`
    ClientEventsStream,
    /// `GET, POST /api/v1/client/webhooks`
    ClientWebhooks,
    /// `GET, PATCH, DELETE /api/v1/client/webhooks/{id}`
    ClientWebhook,
    /// `POST /api/v1/client/webhooks/{id}/test`
    ClientWebhookTest,
    /// `POST /api/v1/client/webhooks/{id}/rotate-secret`
    ClientWebhookRotate,
    /// `GET /api/v1/client/domains/{domain}/rdap`: registration data (live).
    DomainRdap,
    /// `GET /api/v1/client/domains/{domain}/status`: EPP status codes (live).
    DomainStatus,
    /// `GET /api/v1/client/domains/{domain}/dns`: DNS records (live).
    DomainDns,
    /// `GET /api/v1/client/domains/{domain}/availability` (live).
    DomainAvailability,
    /// `POST /api/v1/client/domains/availability`: up to 100 names (live).
    DomainsAvailability,
    /// `GET /api/v1/client/domains/{domain}/tls`: the certificate of `https://{domain}` (live).
    DomainTls,
}

/// Number of routes; per-route counters have one more slot for unmatched paths.
pub const ROUTE_COUNT: usize = 41;

/// One entry of the route table.
#[derive(Debug)]
pub struct Route {
    /// What the route is.
    pub id: RouteId,
    /// The path as an OpenAPI template (`{tld}` for the one path parameter, which is a
    /// whole segment: the last, or followed by a fixed rest such as `/test`).
    pub path: &'static str,
    /// Whether the route needs `X-API-Key` (the client endpoints).
    pub requires_key: bool,
    /// The methods it answers, as the `Allow` header of a 405 says them.
    pub allow: &'static str,
    /// A page of the website (HTML, [`crate::web`]), not part of the API: not in
    /// `/openapi.json`.
    pub page: bool,
}

/// The methods of a read-only route. HEAD is GET without the body (hyper drops it and
/// keeps `content-length`).
pub const GET_HEAD: &str = "GET, HEAD";

/// The methods of a streamed route: HEAD would open a stream to send no body of.
pub const GET: &str = "GET";

/// The methods of a route that takes a request body.
pub const POST: &str = "POST";

/// The methods of a page with a form that posts to itself, and of a collection that
/// is listed and added to.
pub const GET_HEAD_POST: &str = "GET, HEAD, POST";

/// The methods of one item of a collection.
pub const GET_HEAD_PATCH_DELETE: &str = "GET, HEAD, PATCH, DELETE";

/// Every route, in the order of [`RouteId`].
pub static ROUTES: [Route; ROUTE_COUNT] = [
    Route {
        id: RouteId::ClientCheapest,
        path: "/api/v1/client/prices/cheapest",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::PublicCheapest,
        path: "/api/v1/prices/cheapest",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::ClientPrices,
        path: "/api/v1/client/prices",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::PublicPrices,
        path: "/api/v1/prices",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::PublicPricesV1,
        path: "/v1/prices",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::ClientRegistrars,
        path: "/api/v1/client/registrars/tld/{tld}",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::Healthz,
        path: "/healthz",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::Readyz,
        path: "/readyz",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::Metrics,
        path: "/metrics",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::OpenApi,
        path: "/openapi.json",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::ClientHistory,
        path: "/api/v1/client/history/tld/{tld}",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::PublicHistory,
        path: "/api/v1/history/tld/{tld}",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::ClientOverview,
        path: "/api/v1/client/overview/tld/{tld}",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::PublicOverview,
        path: "/api/v1/overview/tld/{tld}",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::ClientTlds,
        path: "/api/v1/client/tlds",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::PublicTlds,
        path: "/api/v1/tlds",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::RegistrarList,
        path: "/api/v1/registrars",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::Registrar,
        path: "/api/v1/registrars/{key}",
        requires_key: false,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::RegistrarPage,
        path: "/registrars/{key}",
        requires_key: false,
        allow: GET_HEAD,
        page: true,
    },
    Route {
        id: RouteId::PortfolioAudit,
        path: "/api/v1/client/portfolio/audit",
        requires_key: true,
        allow: POST,
        page: false,
    },
    Route {
        id: RouteId::DomainsLookup,
        path: "/api/v1/client/domains/lookup",
        requires_key: true,
        allow: POST,
        page: false,
    },
    Route {
        id: RouteId::DomainsSearch,
        path: "/api/v1/client/domains/search",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::Home,
        path: "/",
        requires_key: false,
        allow: GET_HEAD,
        page: true,
    },
    Route {
        id: RouteId::TldPage,
        path: "/tld/{tld}",
        requires_key: false,
        allow: GET_HEAD,
        page: true,
    },
    Route {
        id: RouteId::CataloguePage,
        path: "/tlds",
        requires_key: false,
        allow: GET_HEAD,
        page: true,
    },
    Route {
        id: RouteId::RegistrarsPage,
        path: "/registrars",
        requires_key: false,
        allow: GET_HEAD,
        page: true,
    },
    Route {
        id: RouteId::SignIn,
        path: "/signin",
        requires_key: false,
        allow: GET_HEAD_POST,
        page: true,
    },
    Route {
        id: RouteId::SignOut,
        path: "/signout",
        requires_key: false,
        allow: POST,
        page: true,
    },
    Route {
        id: RouteId::Asset,
        path: "/static/{file}",
        requires_key: false,
        allow: GET_HEAD,
        page: true,
    },
    Route {
        id: RouteId::ClientEvents,
        path: "/api/v1/client/events",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::ClientEventsStream,
        path: "/api/v1/client/events/stream",
        requires_key: true,
        allow: GET,
        page: false,
    },
    Route {
        id: RouteId::ClientWebhooks,
        path: "/api/v1/client/webhooks",
        requires_key: true,
        allow: GET_HEAD_POST,
        page: false,
    },
    Route {
        id: RouteId::ClientWebhook,
        path: "/api/v1/client/webhooks/{id}",
        requires_key: true,
        allow: GET_HEAD_PATCH_DELETE,
        page: false,
    },
    Route {
        id: RouteId::ClientWebhookTest,
        path: "/api/v1/client/webhooks/{id}/test",
        requires_key: true,
        allow: POST,
        page: false,
    },
    Route {
        id: RouteId::ClientWebhookRotate,
        path: "/api/v1/client/webhooks/{id}/rotate-secret",
        requires_key: true,
        allow: POST,
        page: false,
    },
    Route {
        id: RouteId::DomainRdap,
        path: "/api/v1/client/domains/{domain}/rdap",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::DomainStatus,
        path: "/api/v1/client/domains/{domain}/status",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::DomainDns,
        path: "/api/v1/client/domains/{domain}/dns",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::DomainAvailability,
        path: "/api/v1/client/domains/{domain}/availability",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
    Route {
        id: RouteId::DomainsAvailability,
        path: "/api/v1/client/domains/availability",
        requires_key: true,
        allow: POST,
        page: false,
    },
    Route {
        id: RouteId::DomainTls,
        path: "/api/v1/client/domains/{domain}/tls",
        requires_key: true,
        allow: GET_HEAD,
        page: false,
    },
];

impl RouteId {
    /// The table entry of this route.
    pub fn route(self) -> &'static Route {
        &ROUTES[self as usize]
    }
}

impl Route {
    /// Whether the route answers `method` (HEAD wherever GET is).
    pub fn allows(&self, method: &hyper::Method) -> bool {
        use hyper::Method;
        // One bit per method, from the route's `allow` list at compile time ([`METHODS`]):
        // a GET costs one comparison and one load (reading the list at run time cost
        // ~40 instructions a request).
        let bit = if *method == Method::GET {
            GET_BIT
        } else if *method == Method::HEAD {
            HEAD_BIT
        } else {
            match method_bit(method.as_str().as_bytes()) {
                0 => return false,
                bit => bit,
            }
        };
        METHODS[self.id as usize] & bit != 0
    }

    /// For a route with a path parameter (`{name}` in its template), the part of the
    /// path before it.
    pub fn prefix(&self) -> Option<&'static str> {
        let t = &TEMPLATES[self.id as usize];
        t.parameter.map(|_| t.prefix)
    }

    /// The part of the template after its path parameter (`""` when it ends the path).
    pub fn suffix(&self) -> &'static str {
        TEMPLATES[self.id as usize].suffix
    }

    /// The name of the path parameter (`tld` of `{tld}`).
    pub fn parameter(&self) -> Option<&'static str> {
        TEMPLATES[self.id as usize].parameter
    }
}

/// A route's path template split at its parameter, once, at compile time: matching a
/// request no longer looks for `{` in every template it passes.
#[derive(Clone, Copy)]
struct Template {
    /// The whole path, or the part before `{`.
    prefix: &'static str,
    /// The parameter's name, without braces.
    parameter: Option<&'static str>,
    /// The part after `}` (`""` without a parameter).
    suffix: &'static str,
}

impl Template {
    /// Whether `path` is this template's: for a template with a parameter, the raw
    /// segment in its place (exactly one non-empty segment, no `/` in it); `""` for a
    /// whole path.
    #[inline]
    fn matches<'p>(&self, path: &'p str) -> Option<&'p str> {
        let (prefix, suffix) = (self.prefix.as_bytes(), self.suffix.as_bytes());
        if self.parameter.is_none() {
            return same_bytes(prefix, path.as_bytes()).then_some("");
        }
        let p = path.as_bytes();
        if p.len() < prefix.len() + suffix.len()
            || !same_bytes(&p[..prefix.len()], prefix)
            || !same_bytes(&p[p.len() - suffix.len()..], suffix)
        {
            return None;
        }
        // Both ends are ASCII, so the cuts fall on character boundaries.
        path.get(prefix.len()..p.len() - suffix.len())
            .filter(|segment| !segment.is_empty() && !segment.bytes().any(|b| b == b'/'))
    }

    const fn of(path: &'static str) -> Template {
        let bytes = path.as_bytes();
        let mut open = 0;
        while open < bytes.len() && bytes[open] != b'{' {
            open += 1;
        }
        if open == bytes.len() {
            return Template {
                prefix: path,
                parameter: None,
                suffix: "",
            };
        }
        let mut close = open;
        while bytes[close] != b'}' {
            close += 1;
        }
        let (prefix, rest) = path.split_at(open);
        let (braced, suffix) = rest.split_at(close + 1 - open);
        let (name, _) = braced.split_at(braced.len() - 1);
        let (_, name) = name.split_at(1);
        Template {
            prefix,
            parameter: Some(name),
            suffix,
        }
    }
}

/// [`Template`]s of [`ROUTES`], in the same order.
static TEMPLATES: [Template; ROUTE_COUNT] = {
    let mut out = [Template {
        prefix: "",
        parameter: None,
        suffix: "",
    }; ROUTE_COUNT];
    let mut i = 0;
    while i < ROUTE_COUNT {
        out[i] = Template::of(ROUTES[i].path);
        i += 1;
    }
    out
};

/// The start of the client API's paths, and of every API path: a path is looked for
/// only among the templates that can match a path that starts as it does ([`GROUPS`]).
const CLIENT_API: &[u8] = b"/api/v1/client/";
const API: &[u8] = b"/api/";

const fn starts_with(s: &[u8], prefix: &[u8]) -> bool {
    if s.len() < prefix.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if s[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A path's group: 0 starts with [`CLIENT_API`], 1 with [`API`] but not that, 2 neither.
const fn group_of(path: &[u8]) -> usize {
    if starts_with(path, CLIENT_API) {
        0
    } else if starts_with(path, API) {
        1
    } else {
        2
    }
}

/// Whether the template can match some path of group `group`: a whole path only itself;
/// a template with a parameter every path that starts with its prefix.
const fn may_match(t: &Template, group: usize) -> bool {
    let p = t.prefix.as_bytes();
    if t.parameter.is_none() {
        return group_of(p) == group;
    }
    match group {
        0 => starts_with(p, CLIENT_API) || starts_with(CLIENT_API, p),
        1 => (starts_with(p, API) || starts_with(API, p)) && !starts_with(p, CLIENT_API),
        _ => !starts_with(p, API),
    }
}

/// The routes whose templates can match a path of each group, with their templates, in
/// table order (so the first match is the one a walk of the whole table finds); `len`
/// of them. A page's path (`/`, `/tld/com`) passed the thirty API templates before.
struct Group {
    routes: [(RouteId, Template); ROUTE_COUNT],
    len: usize,
}

static GROUPS: [Group; 3] = {
    const EMPTY: Group = Group {
        routes: [(RouteId::ClientCheapest, Template::of("")); ROUTE_COUNT],
        len: 0,
    };
    let mut out = [EMPTY, EMPTY, EMPTY];
    let mut g = 0;
    while g < 3 {
        let mut i = 0;
        while i < ROUTE_COUNT {
            if may_match(&TEMPLATES[i], g) {
                out[g].routes[out[g].len] = (ROUTES[i].id, TEMPLATES[i]);
                out[g].len += 1;
            }
            i += 1;
        }
        g += 1;
    }
    out
};

/// The bits of [`METHODS`] that stand for GET and HEAD.
const GET_BIT: u8 = method_bit(b"GET");
const HEAD_BIT: u8 = method_bit(b"HEAD");

/// The methods a route may list in its `allow`, in bit order.
const METHOD_NAMES: [&[u8]; 7] = [
    b"GET", b"HEAD", b"POST", b"PUT", b"PATCH", b"DELETE", b"OPTIONS",
];

/// The bit of a method named in [`METHOD_NAMES`], or 0.
const fn method_bit(name: &[u8]) -> u8 {
    let mut i = 0;
    while i < METHOD_NAMES.len() {
        let m = METHOD_NAMES[i];
        if m.len() == name.len() && starts_with(name, m) {
            return 1 << i;
        }
        i += 1;
    }
    0
}

/// Each route's methods as bits ([`method_bit`]), read from its `allow` list
/// (`"GET, HEAD"`) at compile time; a name that is not in [`METHOD_NAMES`] fails the
/// build.
static METHODS: [u8; ROUTE_COUNT] = {
    let mut out = [0u8; ROUTE_COUNT];
    let mut i = 0;
    while i < ROUTE_COUNT {
        let allow = ROUTES[i].allow.as_bytes();
        let mut start = 0;
        while start < allow.len() {
            let mut end = start;
            while end < allow.len() && allow[end] != b',' {
                end += 1;
            }
            let (_, rest) = allow.split_at(start);
            let (name, _) = rest.split_at(end - start);
            let bit = method_bit(name);
            assert!(
                bit != 0,
                "a route's allow list names a method outside METHOD_NAMES"
            );
            out[ROUTES[i].id as usize] |= bit;
            // Past the comma and the space after it.
            start = end + 2;
        }
        i += 1;
    }
    out
};

/// Finds the route of a raw request path. Returns the route and, for a route with a
/// path parameter, the raw (still percent-encoded) segment: exactly one non-empty
/// segment, no `/` in it.
pub fn find(path: &str) -> Option<(RouteId, &str)> {
    // `group_of` at run time: the prefixes compared inline, not a loop a byte at a time.
    let path_bytes = path.as_bytes();
    let starts = |prefix: &[u8]| {
        path_bytes
            .get(..prefix.len())
            .is_some_and(|p| same_bytes(p, prefix))
    };
    let group = if starts(CLIENT_API) {
        &GROUPS[0]
    } else if starts(API) {
        &GROUPS[1]
    } else {
        &GROUPS[2]
    };
    group.routes[..group.len]
        .iter()
        .find_map(|(id, template)| template.matches(path).map(|segment| (*id, segment)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`find`] as it was: a walk of the whole table, each template matched with the
    /// standard library's string methods.
    fn find_by_walk(path: &str) -> Option<(RouteId, &str)> {
        let matches = |t: &Template| -> Option<&str> {
            if t.parameter.is_none() {
                return (t.prefix == path).then_some("");
            }
            path.strip_prefix(t.prefix)
                .and_then(|rest| rest.strip_suffix(t.suffix))
                .filter(|segment| !segment.is_empty() && !segment.contains('/'))
        };
        ROUTES
            .iter()
            .zip(&TEMPLATES)
            .find_map(|(route, template)| matches(template).map(|s| (route.id, s)))
    }

    #[test]
    fn finding_by_group_finds_what_a_walk_of_the_table_finds() {
        let mut paths: Vec<String> = vec![
            "".into(),
            "/".into(),
            "//".into(),
            "/api".into(),
            "/api/".into(),
            "/api/v1".into(),
            "/api/v1/".into(),
            "/api/v1/client".into(),
            "/api/v1/client/".into(),
            "/api/v1/client/x".into(),
            "/api/v2/client/prices".into(),
            "/apix/v1/prices".into(),
            "/tld/".into(),
            "/tld/com/".into(),
            "/v1/prices/".into(),
            "/tld/\u{e9}".into(),
            "/api/v1/client/\u{e9}".into(),
            "\u{e9}/api/v1/client/".into(),
        ];
        for route in &ROUTES {
            let t = Template::of(route.path);
            match t.parameter {
                None => {
                    paths.push(route.path.to_owned());
                    paths.push(format!("{}/", route.path));
                    paths.push(route.path[..route.path.len() - 1].to_owned());
                }
                Some(_) => {
                    for segment in ["com", "", "a/b", "%2F", "api", "v1", "\u{e9}"] {
                        paths.push(format!("{}{segment}{}", t.prefix, t.suffix));
                        paths.push(format!("{}{segment}{}/x", t.prefix, t.suffix));
                    }
                }
            }
        }
        for path in &paths {
            assert_eq!(find(path), find_by_walk(path), "{path:?}");
        }
        // Every route is in a group, and found.
        for route in &ROUTES {
            let t = Template::of(route.path);
            let path = match t.parameter {
                None => route.path.to_owned(),
                Some(_) => format!("{}x{}", t.prefix, t.suffix),
            };
            assert_eq!(find(&path).map(|(id, _)| id), Some(route.id), "{path}");
        }
    }

    #[test]
    fn table_is_in_route_id_order() {
        for (i, route) in ROUTES.iter().enumerate() {
            assert_eq!(route.id as usize, i);
            assert_eq!(route.id.route().path, route.path);
        }
    }

    #[test]
    fn allows_exactly_the_methods_of_its_allow_header() {
        use hyper::Method;
        let methods = [
            Method::GET,
            Method::HEAD,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
            Method::OPTIONS,
            Method::from_bytes(b"GE").unwrap(),
            Method::from_bytes(b"GETX").unwrap(),
        ];
        for route in &ROUTES {
            let listed: Vec<&str> = route.allow.split(", ").collect();
            for m in &methods {
                assert_eq!(
                    route.allows(m),
                    listed.contains(&m.as_str()),
                    "{} {m}",
                    route.path
                );
            }
        }
    }

    #[test]
    fn templates_split_at_their_parameter() {
        let r = RouteId::ClientWebhookRotate.route();
        assert_eq!(r.prefix(), Some("/api/v1/client/webhooks/"));
        assert_eq!(r.parameter(), Some("id"));
        assert_eq!(r.suffix(), "/rotate-secret");
        let r = RouteId::ClientRegistrars.route();
        assert_eq!(r.prefix(), Some("/api/v1/client/registrars/tld/"));
        assert_eq!(r.parameter(), Some("tld"));
        assert_eq!(r.suffix(), "");
        let r = RouteId::Healthz.route();
        assert_eq!((r.prefix(), r.parameter(), r.suffix()), (None, None, ""));
    }

    #[test]
    fn finds_every_static_route_and_nothing_near_it() {
        for route in &ROUTES {
            if let Some(name) = route.parameter() {
                assert_eq!(find(route.path), Some((route.id, &*format!("{{{name}}}"))));
                continue;
            }
            assert_eq!(find(route.path), Some((route.id, "")));
            assert_eq!(find(&format!("{}/", route.path)), None);
            if route.path != "/" {
                assert_eq!(find(&route.path.to_uppercase()), None);
            }
        }
        assert_eq!(find("/"), Some((RouteId::Home, "")));
        assert_eq!(find("/tld/"), None);
        assert_eq!(find("/tld/com"), Some((RouteId::TldPage, "com")));
        assert_eq!(find("/tlds"), Some((RouteId::CataloguePage, "")));
        assert_eq!(find("/registrars"), Some((RouteId::RegistrarsPage, "")));
        assert_eq!(find(""), None);
        assert_eq!(find("/api/v1/../healthz"), None);
    }

    #[test]
    fn registrar_listing_takes_one_segment() {
        assert_eq!(
            find("/api/v1/client/registrars/tld/com"),
            Some((RouteId::ClientRegistrars, "com"))
        );
        assert_eq!(
            find("/api/v1/client/registrars/tld/%D1%80%D1%84").map(|r| r.1),
            Some("%D1%80%D1%84")
        );
        assert_eq!(find("/api/v1/client/registrars/tld/"), None);
        assert_eq!(find("/api/v1/client/registrars/tld/com/x"), None);
        assert_eq!(
            find("/api/v1/client/registrars/tld/{tld}").map(|r| r.0),
            Some(RouteId::ClientRegistrars)
        );
    }

    #[test]
    fn every_parameter_route_takes_one_segment() {
        for (path, id, segment) in [
            (
                "/api/v1/client/history/tld/com",
                RouteId::ClientHistory,
                "com",
            ),
            ("/api/v1/history/tld/co.uk", RouteId::PublicHistory, "co.uk"),
            (
                "/api/v1/client/overview/tld/io",
                RouteId::ClientOverview,
                "io",
            ),
            (
                "/api/v1/overview/tld/museum",
                RouteId::PublicOverview,
                "museum",
            ),
            ("/api/v1/registrars/dynadot", RouteId::Registrar, "dynadot"),
            ("/registrars/dynadot", RouteId::RegistrarPage, "dynadot"),
        ] {
            assert_eq!(find(path), Some((id, segment)), "{path}");
            assert_eq!(find(&format!("{path}/x")), None, "{path}");
        }
        assert_eq!(
            find("/api/v1/registrars"),
            Some((RouteId::RegistrarList, ""))
        );
        assert_eq!(find("/api/v1/registrars/"), None);
        assert_eq!(find("/registrars/"), None);
        assert_eq!(find("/api/v1/overview/tld/"), None);
    }

    #[test]
    fn a_parameter_inside_the_path_takes_one_segment() {
        assert_eq!(
            find("/api/v1/client/domains/example.com/rdap"),
            Some((RouteId::DomainRdap, "example.com"))
        );
        assert_eq!(
            find("/api/v1/client/domains/b%C3%BCcher.de/status"),
            Some((RouteId::DomainStatus, "b%C3%BCcher.de"))
        );
        assert_eq!(
            find("/api/v1/client/domains/availability"),
            Some((RouteId::DomainsAvailability, ""))
        );
        assert_eq!(
            find("/api/v1/client/domains/example.com/availability"),
            Some((RouteId::DomainAvailability, "example.com"))
        );
        // The static routes under the same prefix keep their paths.
        assert_eq!(
            find("/api/v1/client/domains/lookup"),
            Some((RouteId::DomainsLookup, ""))
        );
        assert_eq!(
            find("/api/v1/client/domains/search"),
            Some((RouteId::DomainsSearch, ""))
        );
        for bad in [
            "/api/v1/client/domains//rdap",
            "/api/v1/client/domains/a/b/rdap",
            "/api/v1/client/domains/example.com/rdap/",
            "/api/v1/client/domains/example.com/whois",
            "/api/v1/client/domains/example.com",
        ] {
            assert_eq!(find(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_parameter_may_be_followed_by_a_fixed_rest() {
        let id = "wh_0123456789abcdef01234567";
        for (path, want) in [
            (
                format!("/api/v1/client/webhooks/{id}"),
                Some(RouteId::ClientWebhook),
            ),
            (
                format!("/api/v1/client/webhooks/{id}/test"),
                Some(RouteId::ClientWebhookTest),
            ),
            (
                format!("/api/v1/client/webhooks/{id}/rotate-secret"),
                Some(RouteId::ClientWebhookRotate),
            ),
            (format!("/api/v1/client/webhooks/{id}/other"), None),
            (format!("/api/v1/client/webhooks/{id}/test/x"), None),
            ("/api/v1/client/webhooks//test".to_owned(), None),
            ("/api/v1/client/webhooks/".to_owned(), None),
            (
                "/api/v1/client/webhooks".to_owned(),
                Some(RouteId::ClientWebhooks),
            ),
        ] {
            let found = find(&path);
            assert_eq!(found.map(|f| f.0), want, "{path}");
            if let Some((route, segment)) = found
                && route != RouteId::ClientWebhooks
            {
                assert_eq!(segment, id);
            }
        }
    }
}
