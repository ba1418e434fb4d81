//! The route table: every path the API answers, in one list.
//!
//! [`ROUTES`] is the single source of truth: the dispatcher matches against it, the
//! metrics label requests with its templates, and a test checks that
//! `/openapi.json` documents exactly these paths. Matching is a handful of string
//! comparisons on the raw (undecoded) path; no allocation, no regular expressions.
//!
//! Paths are matched exactly: no trailing-slash redirect, no case folding, no `..`
//! resolution (`/api/v1/../healthz` is simply an unknown path, 404).

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
    /// `POST /api/v1/client/portfolio/audit`
    PortfolioAudit,
    /// `POST /api/v1/client/domains/lookup`
    DomainsLookup,
    /// `GET /api/v1/client/domains/search`
    DomainsSearch,
}

/// Number of routes; per-route counters have one more slot for unmatched paths.
pub const ROUTE_COUNT: usize = 13;

/// One entry of the route table.
#[derive(Debug)]
pub struct Route {
    /// What the route is.
    pub id: RouteId,
    /// The path as an OpenAPI template (`{tld}` for the one path parameter).
    pub path: &'static str,
    /// Whether the route needs `X-API-Key` (the client endpoints).
    pub requires_key: bool,
    /// The methods it answers: [`ALLOW`] or [`ALLOW_POST`] (the `Allow` header of a 405).
    pub allow: &'static str,
}

/// The methods of the read routes. HEAD is GET without the body (hyper drops it and
/// keeps `content-length`).
pub const ALLOW: &str = "GET, HEAD";
/// The method of the routes that take a request body.
pub const ALLOW_POST: &str = "POST";

impl Route {
    /// Whether the route answers `method`.
    pub fn allows(&self, method: &hyper::Method) -> bool {
        if self.allow == ALLOW_POST {
            method == hyper::Method::POST
        } else {
            method == hyper::Method::GET || method == hyper::Method::HEAD
        }
    }
}

/// Prefix of the one route with a path parameter.
const REGISTRARS_PREFIX: &str = "/api/v1/client/registrars/tld/";

/// Every route, in the order of [`RouteId`].
pub static ROUTES: [Route; ROUTE_COUNT] = [
    Route {
        id: RouteId::ClientCheapest,
        path: "/api/v1/client/prices/cheapest",
        requires_key: true,
        allow: ALLOW,
    },
    Route {
        id: RouteId::PublicCheapest,
        path: "/api/v1/prices/cheapest",
        requires_key: false,
        allow: ALLOW,
    },
    Route {
        id: RouteId::ClientPrices,
        path: "/api/v1/client/prices",
        requires_key: true,
        allow: ALLOW,
    },
    Route {
        id: RouteId::PublicPrices,
        path: "/api/v1/prices",
        requires_key: false,
        allow: ALLOW,
    },
    Route {
        id: RouteId::PublicPricesV1,
        path: "/v1/prices",
        requires_key: false,
        allow: ALLOW,
    },
    Route {
        id: RouteId::ClientRegistrars,
        path: "/api/v1/client/registrars/tld/{tld}",
        requires_key: true,
        allow: ALLOW,
    },
    Route {
        id: RouteId::Healthz,
        path: "/healthz",
        requires_key: false,
        allow: ALLOW,
    },
    Route {
        id: RouteId::Readyz,
        path: "/readyz",
        requires_key: false,
        allow: ALLOW,
    },
    Route {
        id: RouteId::Metrics,
        path: "/metrics",
        requires_key: false,
        allow: ALLOW,
    },
    Route {
        id: RouteId::OpenApi,
        path: "/openapi.json",
        requires_key: false,
        allow: ALLOW,
    },
    Route {
        id: RouteId::PortfolioAudit,
        path: "/api/v1/client/portfolio/audit",
        requires_key: true,
        allow: ALLOW_POST,
    },
    Route {
        id: RouteId::DomainsLookup,
        path: "/api/v1/client/domains/lookup",
        requires_key: true,
        allow: ALLOW_POST,
    },
    Route {
        id: RouteId::DomainsSearch,
        path: "/api/v1/client/domains/search",
        requires_key: true,
        allow: ALLOW,
    },
];

impl RouteId {
    /// The table entry of this route.
    pub fn route(self) -> &'static Route {
        &ROUTES[self as usize]
    }
}

/// Finds the route of a raw request path. Returns the route and, for the registrar
/// listing, the raw (still percent-encoded) `{tld}` segment.
pub fn find(path: &str) -> Option<(RouteId, &str)> {
    if let Some(segment) = path.strip_prefix(REGISTRARS_PREFIX) {
        // Exactly one non-empty segment.
        if segment.is_empty() || segment.contains('/') {
            return None;
        }
        return Some((RouteId::ClientRegistrars, segment));
    }
    ROUTES
        .iter()
        .find(|route| route.path == path && route.id != RouteId::ClientRegistrars)
        .map(|route| (route.id, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_route_id_order() {
        for (i, route) in ROUTES.iter().enumerate() {
            assert_eq!(route.id as usize, i);
            assert_eq!(route.id.route().path, route.path);
        }
    }

    #[test]
    fn finds_every_static_route_and_nothing_near_it() {
        for route in &ROUTES {
            if route.id == RouteId::ClientRegistrars {
                continue;
            }
            assert_eq!(find(route.path), Some((route.id, "")));
            assert_eq!(find(&format!("{}/", route.path)), None);
            assert_eq!(find(&route.path.to_uppercase()), None);
        }
        assert_eq!(find("/"), None);
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
}
