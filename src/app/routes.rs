//! The route table: every route tldsnap answers, each declared once.
//!
//! A row names the route, its path template, the methods it answers, whether it needs a
//! key (`key`), is public (`public`) or is a page of the website (`page`), and then:
//!
//! - `now:` the handler that answers without waiting (`Option<Step>`: `None` leaves the
//!   request to `later:`), called from the connection's own task;
//! - `later:` the handler whose answer waits (a future, boxed);
//! - `op:` its OpenAPI operation, written next to the handler (`item:` for a path of
//!   several operations, written whole). Pages have neither.
//!
//! From the rows the `routes!` macro makes the [`RouteId`]s, the [`TABLE`] the request path
//! finds routes in ([`crate::http::router::Table`]), the two dispatching `match`es and
//! the `paths` of `/openapi.json` ([`document`]). The handlers take the row's expressions'
//! names: `state`, `req` (borrowed by `now:`, owned by `later:`), `route` (the
//! [`Route`] entry), `segment` (the path parameter, raw), `conn` and `started`.
//!
//! Adding an endpoint: its handler (and operation) in its file, and one row here.

use std::sync::OnceLock;

use bytes::Bytes;
use hyper::Request;
use hyper::body::Incoming;
use serde_json::Value;

use crate::access::plans::Lookup;
use crate::api::{Connection, HttpResponse, State, Step};
use crate::api::{catalogue, domains, events, export, live, ops, prices, webhooks};
use crate::http::openapi;
use crate::http::router::{GET, GET_HEAD, GET_HEAD_PATCH_DELETE, GET_HEAD_POST, POST, POST_DELETE};
use crate::http::router::{Route, Table};
use crate::query::Shape;
use crate::time::Stamp;
use crate::web::{self, PageKind};

/// Whether a row's access word means the route needs a key.
macro_rules! needs_key {
    (key) => {
        true
    };
    (public) => {
        false
    };
    (page) => {
        false
    };
}

/// The table entry of a row: a `protocol` row is not described by `/openapi.json`.
macro_rules! entry {
    ($index:expr, $path:literal, $allow:ident, protocol) => {
        Route::new($index, $path, $allow, false, false).undocumented()
    };
    ($index:expr, $path:literal, $allow:ident, $access:ident) => {
        Route::new(
            $index,
            $path,
            $allow,
            needs_key!($access),
            is_page!($access),
        )
    };
}

/// Whether a row's access word makes it a page of the website.
macro_rules! is_page {
    (page) => {
        true
    };
    ($other:ident) => {
        false
    };
}

/// Declares the routes: see the module's docs.
macro_rules! routes {
    (
        |$state:ident, $req:ident, $route:ident, $segment:ident, $conn:ident, $started:ident|
        $(
            $(#[doc = $doc:literal])*
            $id:ident = $path:literal, $allow:ident, $access:ident {
                $(now: $now:expr,)?
                $(later: $later:expr,)?
                $(op: $op:expr,)?
                $(item: $item:expr,)?
            }
        )*
    ) => {
        /// What a route is: one per row of the table, in its order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum RouteId {
            $($(#[doc = $doc])* $id,)*
        }

        /// Every route, in table order.
        const IDS: &[RouteId] = &[$(RouteId::$id),*];

        /// Number of routes.
        pub const ROUTE_COUNT: usize = IDS.len();

        /// The table the request path finds routes in.
        pub static TABLE: Table<ROUTE_COUNT> = Table::new([
            $(entry!(RouteId::$id as usize, $path, $allow, $access),)*
        ]);

        /// The routes answered without waiting, and their answer; `None` for every other
        /// route (and for a request a `now:` handler leaves to its `later:` one).
        #[inline(always)]
        pub(super) fn now(
            $state: &State,
            $req: &Request<Incoming>,
            $route: &'static Route,
            $segment: &str,
            $conn: &Connection,
            $started: Stamp,
        ) -> Option<Step> {
            let _ = (&$state, &$req, &$segment, &$conn, &$started);
            match RouteId::of($route) {
                $($(RouteId::$id => $now,)?)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }

        /// The answer of a route whose handler waits; `None` for a route without one.
        pub(super) async fn later(
            $state: &State,
            $req: Request<Incoming>,
            $route: &'static Route,
            $conn: &Connection,
            $started: Stamp,
        ) -> Option<HttpResponse> {
            let _ = (&$state, &$conn, &$started);
            let $segment = $route.segment($req.uri().path());
            let _ = &$segment;
            Some(match RouteId::of($route) {
                $($(RouteId::$id => Box::pin($later).await,)?)*
                #[allow(unreachable_patterns)]
                _ => return None,
            })
        }

        /// The `paths` of the OpenAPI document: each API route's path item.
        #[allow(clippy::vec_init_then_push)]
        fn paths() -> Vec<(&'static str, Value)> {
            let mut out = Vec::new();
            $(
                $(out.push(($path, openapi::item($allow, $op)));)?
                $(out.push(($path, $item));)?
            )*
            out
        }
    };
}

impl RouteId {
    /// The table entry of this route.
    pub fn route(self) -> &'static Route {
        &TABLE.routes()[self as usize]
    }

    /// The route of a table entry.
    #[inline(always)]
    pub fn of(route: &Route) -> RouteId {
        IDS[route.index]
    }
}

/// Finds the route of a raw request path, and the raw segment of its path parameter
/// (`""` for a route without one).
pub fn find(path: &str) -> Option<(RouteId, &str)> {
    TABLE
        .find(path)
        .map(|(route, segment)| (RouteId::of(route), segment))
}

/// The OpenAPI document of the table, as a JSON value.
pub fn openapi() -> Value {
    openapi::build(paths())
}

/// The OpenAPI document as a JSON value, made once (the reference page draws it).
pub fn openapi_value() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(openapi)
}

/// The OpenAPI document, serialised once.
pub fn document() -> Bytes {
    static DOC: OnceLock<Bytes> = OnceLock::new();
    DOC.get_or_init(|| Bytes::from(serde_json::to_vec(openapi_value()).unwrap_or_default()))
        .clone()
}

routes! {
    |state, req, route, segment, conn, started|

    /// `GET /api/v1/client/prices/cheapest`
    ClientCheapest = "/api/v1/client/prices/cheapest", GET_HEAD, key {
        now: Some(prices::endpoint(state, req, route, prices::Endpoint::Cheapest(Shape::Client), segment, conn, started)),
        op: prices::cheapest_doc(Shape::Client),
    }
    /// `GET /api/v1/prices/cheapest`
    PublicCheapest = "/api/v1/prices/cheapest", GET_HEAD, public {
        now: Some(prices::endpoint(state, req, route, prices::Endpoint::Cheapest(Shape::Public), segment, conn, started)),
        op: prices::cheapest_doc(Shape::Public),
    }
    /// `GET /api/v1/client/prices`
    ClientPrices = "/api/v1/client/prices", GET_HEAD, key {
        now: Some(prices::endpoint(state, req, route, prices::Endpoint::Prices, segment, conn, started)),
        op: prices::prices_doc("clientPrices"),
    }
    /// `GET /api/v1/prices`
    PublicPrices = "/api/v1/prices", GET_HEAD, public {
        now: Some(prices::endpoint(state, req, route, prices::Endpoint::Prices, segment, conn, started)),
        op: prices::prices_doc("publicPrices"),
    }
    /// `GET /v1/prices`
    PublicPricesV1 = "/v1/prices", GET_HEAD, public {
        now: Some(prices::endpoint(state, req, route, prices::Endpoint::Prices, segment, conn, started)),
        op: prices::prices_doc("publicPricesV1"),
    }
    /// `GET /api/v1/client/registrars/tld/{tld}`
    ClientRegistrars = "/api/v1/client/registrars/tld/{tld}", GET_HEAD, key {
        now: Some(prices::endpoint(state, req, route, prices::Endpoint::Registrars, segment, conn, started)),
        op: prices::registrars_doc(),
    }
    /// `GET /healthz`
    Healthz = "/healthz", GET_HEAD, public {
        now: Some(Step::Done(ops::healthz())),
        op: ops::healthz_doc(),
    }
    /// `GET /readyz`
    Readyz = "/readyz", GET_HEAD, public {
        now: Some(Step::Done(ops::readyz(state))),
        op: ops::readyz_doc(),
    }
    /// `GET /metrics`
    Metrics = "/metrics", GET_HEAD, public {
        now: Some(Step::Done(ops::metrics(state, TABLE.routes()))),
        op: ops::metrics_doc(),
    }
    /// `GET /openapi.json`
    OpenApi = "/openapi.json", GET_HEAD, public {
        now: Some(Step::Done(ops::openapi(document()))),
        op: ops::openapi_doc(),
    }
    /// `GET /api/v1/client/history/tld/{tld}`
    ClientHistory = "/api/v1/client/history/tld/{tld}", GET_HEAD, key {
        now: Some(catalogue::endpoint(state, req, route, catalogue::Endpoint::History, segment, conn)),
        op: catalogue::history_doc(true),
    }
    /// `GET /api/v1/history/tld/{tld}`
    PublicHistory = "/api/v1/history/tld/{tld}", GET_HEAD, public {
        now: Some(catalogue::endpoint(state, req, route, catalogue::Endpoint::History, segment, conn)),
        op: catalogue::history_doc(false),
    }
    /// `GET /api/v1/client/overview/tld/{tld}`
    ClientOverview = "/api/v1/client/overview/tld/{tld}", GET_HEAD, key {
        now: Some(catalogue::endpoint(state, req, route, catalogue::Endpoint::Overview, segment, conn)),
        op: catalogue::overview_doc(true),
    }
    /// `GET /api/v1/overview/tld/{tld}`
    PublicOverview = "/api/v1/overview/tld/{tld}", GET_HEAD, public {
        now: Some(catalogue::endpoint(state, req, route, catalogue::Endpoint::Overview, segment, conn)),
        op: catalogue::overview_doc(false),
    }
    /// `GET /api/v1/client/tlds`
    ClientTlds = "/api/v1/client/tlds", GET_HEAD, key {
        now: Some(catalogue::endpoint(state, req, route, catalogue::Endpoint::Tlds, segment, conn)),
        op: catalogue::tlds_doc(true),
    }
    /// `GET /api/v1/tlds`
    PublicTlds = "/api/v1/tlds", GET_HEAD, public {
        now: Some(catalogue::endpoint(state, req, route, catalogue::Endpoint::Tlds, segment, conn)),
        op: catalogue::tlds_doc(false),
    }
    /// `GET /api/v1/registrars`
    RegistrarList = "/api/v1/registrars", GET_HEAD, public {
        now: Some(catalogue::endpoint(state, req, route, catalogue::Endpoint::RegistrarList, segment, conn)),
        op: catalogue::registrar_list_doc(),
    }
    /// `GET /api/v1/registrars/{key}`
    Registrar = "/api/v1/registrars/{key}", GET_HEAD, public {
        now: Some(catalogue::endpoint(state, req, route, catalogue::Endpoint::Registrar, segment, conn)),
        op: catalogue::registrar_doc(),
    }
    /// `GET /registrars/{key}`: a registrar's page, the `website_url` of the API.
    RegistrarPage = "/registrars/{key}", GET_HEAD, page {
        now: web::answer_now(state, req, route, PageKind::Registrar, conn).map(Step::Done),
    }
    /// `POST /api/v1/client/portfolio/audit`
    PortfolioAudit = "/api/v1/client/portfolio/audit", POST, key {
        later: domains::audit(state, req, route, conn),
        op: domains::audit_doc(),
    }
    /// `POST /api/v1/client/domains/lookup`
    DomainsLookup = "/api/v1/client/domains/lookup", POST, key {
        later: domains::lookup(state, req, route, conn),
        op: domains::lookup_doc(),
    }
    /// `GET /api/v1/client/domains/search`
    DomainsSearch = "/api/v1/client/domains/search", GET_HEAD, key {
        later: domains::search(state, &req, route, conn),
        op: domains::search_doc(),
    }
    /// `GET /`: the website's home page.
    Home = "/", GET_HEAD, page {
        now: web::answer_now(state, req, route, PageKind::Home, conn).map(Step::Done),
    }
    /// `GET /tld/{tld}`: one TLD's page.
    TldPage = "/tld/{tld}", GET_HEAD, page {
        now: web::answer_now(state, req, route, PageKind::Tld, conn).map(Step::Done),
    }
    /// `GET /tlds`: the catalogue page.
    CataloguePage = "/tlds", GET_HEAD, page {
        now: web::answer_now(state, req, route, PageKind::Catalogue, conn).map(Step::Done),
    }
    /// `GET /registrars`: the registrars page.
    RegistrarsPage = "/registrars", GET_HEAD, page {
        now: web::answer_now(state, req, route, PageKind::Registrars, conn).map(Step::Done),
    }
    /// `GET, POST /signin`: the sign-in form and the account page.
    SignIn = "/signin", GET_HEAD_POST, page {
        now: web::answer_now(state, req, route, PageKind::SignIn, conn).map(Step::Done),
        later: web::handle(state, req, route, PageKind::SignIn, conn),
    }
    /// `POST /signout`
    SignOut = "/signout", POST, page {
        later: web::handle(state, req, route, PageKind::SignOut, conn),
    }
    /// `GET /static/{file}`: the stylesheet, script and icon.
    Asset = "/static/{file}", GET_HEAD, page {
        now: web::answer_now(state, req, route, PageKind::Asset, conn).map(Step::Done),
    }
    /// `GET /docs/api`: the API reference, for people.
    ApiReference = "/docs/api", GET_HEAD, page {
        now: web::answer_now(state, req, route, PageKind::Reference(openapi_value()), conn).map(Step::Done),
    }
    /// `GET /api/v1/client/export`
    ClientExport = "/api/v1/client/export", GET, key {
        later: export::handle(state, &req, route, conn),
        op: export::doc(),
    }
    /// `GET /api/v1/client/events`
    ClientEvents = "/api/v1/client/events", GET_HEAD, key {
        now: Some(events::poll(state, req, route, conn)),
        op: events::poll_doc(),
    }
    /// `GET /api/v1/client/events/stream`
    ClientEventsStream = "/api/v1/client/events/stream", GET, key {
        later: events::stream(state, &req, route, conn),
        op: events::stream_doc(),
    }
    /// `GET, POST /api/v1/client/webhooks`
    ClientWebhooks = "/api/v1/client/webhooks", GET_HEAD_POST, key {
        later: webhooks::handle(state, req, route, webhooks::Endpoint::Collection, conn),
        item: webhooks::doc(webhooks::Endpoint::Collection),
    }
    /// `GET, PATCH, DELETE /api/v1/client/webhooks/{id}`
    ClientWebhook = "/api/v1/client/webhooks/{id}", GET_HEAD_PATCH_DELETE, key {
        later: webhooks::handle(state, req, route, webhooks::Endpoint::Item, conn),
        item: webhooks::doc(webhooks::Endpoint::Item),
    }
    /// `POST /api/v1/client/webhooks/{id}/test`
    ClientWebhookTest = "/api/v1/client/webhooks/{id}/test", POST, key {
        later: webhooks::handle(state, req, route, webhooks::Endpoint::Test, conn),
        item: webhooks::doc(webhooks::Endpoint::Test),
    }
    /// `POST /api/v1/client/webhooks/{id}/rotate-secret`
    ClientWebhookRotate = "/api/v1/client/webhooks/{id}/rotate-secret", POST, key {
        later: webhooks::handle(state, req, route, webhooks::Endpoint::Rotate, conn),
        item: webhooks::doc(webhooks::Endpoint::Rotate),
    }
    /// `GET /api/v1/client/domains/{domain}/rdap`: registration data (live).
    DomainRdap = "/api/v1/client/domains/{domain}/rdap", GET_HEAD, key {
        later: live::rdap(state, &req, route, segment, conn),
        op: live::doc(Lookup::Rdap),
    }
    /// `GET /api/v1/client/domains/{domain}/status`: EPP status codes (live).
    DomainStatus = "/api/v1/client/domains/{domain}/status", GET_HEAD, key {
        later: live::status(state, &req, route, segment, conn),
        op: live::doc(Lookup::Status),
    }
    /// `GET /api/v1/client/domains/{domain}/dns`: DNS records (live).
    DomainDns = "/api/v1/client/domains/{domain}/dns", GET_HEAD, key {
        later: live::dns(state, &req, route, segment, conn),
        op: live::doc(Lookup::Dns),
    }
    /// `GET /api/v1/client/domains/{domain}/availability` (live).
    DomainAvailability = "/api/v1/client/domains/{domain}/availability", GET_HEAD, key {
        later: live::availability(state, &req, route, segment, conn),
        op: live::doc(Lookup::Availability),
    }
    /// `POST /api/v1/client/domains/availability`: up to 100 names (live).
    DomainsAvailability = "/api/v1/client/domains/availability", POST, key {
        later: live::bulk_availability(state, req, route, conn),
        op: live::bulk_availability_doc(),
    }
    /// `GET /api/v1/client/domains/{domain}/tls`: the certificate of `https://{domain}` (live).
    DomainTls = "/api/v1/client/domains/{domain}/tls", GET_HEAD, key {
        later: live::tls(state, &req, route, segment, conn),
        op: live::doc(Lookup::Tls),
    }
    /// `POST, DELETE /mcp`: the Model Context Protocol endpoint (docs/MCP.md); each tool
    /// call is admitted and metered as the REST request it stands for.
    Mcp = "/mcp", POST_DELETE, protocol {
        later: crate::mcp::handle(state, req, conn),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`find`] as it was: a walk of the whole table, each template matched with the
    /// standard library's string methods.
    fn find_by_walk(path: &str) -> Option<(RouteId, &str)> {
        let matches = |r: &Route| -> Option<&str> {
            let Some(prefix) = r.prefix() else {
                return (r.path == path).then_some("");
            };
            path.strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(r.suffix()))
                .filter(|segment| !segment.is_empty() && !segment.contains('/'))
        };
        TABLE
            .routes()
            .iter()
            .find_map(|route| matches(route).map(|s| (RouteId::of(route), s)))
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
        for route in TABLE.routes() {
            match route.prefix() {
                None => {
                    paths.push(route.path.to_owned());
                    paths.push(format!("{}/", route.path));
                    paths.push(route.path[..route.path.len() - 1].to_owned());
                }
                Some(prefix) => {
                    for segment in ["com", "", "a/b", "%2F", "api", "v1", "\u{e9}"] {
                        paths.push(format!("{prefix}{segment}{}", route.suffix()));
                        paths.push(format!("{prefix}{segment}{}/x", route.suffix()));
                    }
                }
            }
        }
        for path in &paths {
            assert_eq!(find(path), find_by_walk(path), "{path:?}");
        }
        // Every route is in a group, and found.
        for route in TABLE.routes() {
            let path = match route.prefix() {
                None => route.path.to_owned(),
                Some(prefix) => format!("{prefix}x{}", route.suffix()),
            };
            assert_eq!(
                find(&path).map(|(id, _)| id),
                Some(RouteId::of(route)),
                "{path}"
            );
        }
    }

    #[test]
    fn table_is_in_route_id_order() {
        for (i, route) in TABLE.routes().iter().enumerate() {
            assert_eq!(route.index, i);
            assert_eq!(RouteId::of(route) as usize, i);
            assert_eq!(RouteId::of(route).route().path, route.path);
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
        for route in TABLE.routes() {
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
        for route in TABLE.routes() {
            if let Some(name) = route.parameter() {
                assert_eq!(
                    find(route.path),
                    Some((RouteId::of(route), &*format!("{{{name}}}")))
                );
                continue;
            }
            assert_eq!(find(route.path), Some((RouteId::of(route), "")));
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

    /// The router and the document describe the same paths and methods.
    #[test]
    fn document_matches_the_route_table() {
        let doc = openapi();
        assert_eq!(doc["openapi"], "3.1.0");
        let paths = doc["paths"].as_object().unwrap();
        let documented: std::collections::BTreeSet<&str> =
            paths.keys().map(String::as_str).collect();
        let api = || TABLE.routes().iter().filter(|r| r.documented);
        let routed: std::collections::BTreeSet<&str> = api().map(|r| r.path).collect();
        assert_eq!(documented, routed);
        assert!(
            !documented.contains("/registrars/{key}"),
            "a page, not the API"
        );
        for route in api() {
            let item = paths[route.path].as_object().unwrap();
            let mut methods: Vec<String> = item.keys().map(|m| m.to_uppercase()).collect();
            methods.sort();
            let mut allowed: Vec<String> = route
                .allow
                .split(", ")
                .filter(|m| *m != "HEAD")
                .map(str::to_owned)
                .collect();
            allowed.sort();
            assert_eq!(methods, allowed, "{}", route.path);
            for (method, op) in item {
                // Every route that reads a body documents it.
                let reads_body = matches!(method.as_str(), "post" | "patch")
                    && !matches!(
                        RouteId::of(route),
                        RouteId::ClientWebhookTest | RouteId::ClientWebhookRotate
                    );
                assert_eq!(
                    op.get("requestBody").is_some(),
                    reads_body,
                    "{} {method}",
                    route.path
                );
                let keyed = op["security"]
                    .as_array()
                    .is_some_and(|s| s.len() == 1 && s[0].get("apiKey").is_some());
                assert_eq!(keyed, route.requires_key, "{}", route.path);
                // Every path parameter of the template is declared.
                if let Some(name) = route.parameter() {
                    let reference = format!("#/components/parameters/{name}\"");
                    assert!(
                        op["parameters"].to_string().contains(&reference),
                        "{}",
                        route.path
                    );
                    assert_eq!(doc["components"]["parameters"][name]["in"], "path");
                }
            }
        }
    }

    /// Every `$ref` points at something that exists.
    #[test]
    fn every_ref_resolves() {
        let doc = openapi();
        fn walk(v: &serde_json::Value, doc: &serde_json::Value) {
            match v {
                serde_json::Value::Object(map) => {
                    if let Some(Value::String(r)) = map.get("$ref") {
                        let pointer = r.strip_prefix('#').unwrap();
                        assert!(doc.pointer(pointer).is_some(), "dangling {r}");
                    }
                    map.values().for_each(|v| walk(v, doc));
                }
                serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, doc)),
                _ => {}
            }
        }
        walk(&doc, &doc);
        assert!(!document().is_empty());
    }
}
