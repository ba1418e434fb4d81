//! Finding a request's route in a table of path templates.
//!
//! The routes themselves are declared once, in [`crate::app::routes`]: that table makes a
//! [`Table`] of [`Route`]s at compile time, and everything below the application (the
//! handlers, the metrics) knows a route by its [`Route`] entry alone. Matching is a
//! handful of string comparisons on the raw (undecoded) path, among the templates that
//! can match a path that starts as it does (the client API, the rest of the API, the
//! others); no allocation, no regular expressions.
//!
//! Paths are matched exactly: no trailing-slash redirect, no case folding, no `..`
//! resolution (`/api/v1/../healthz` is simply an unknown path, 404).

use super::same_bytes;

/// Most routes a table may hold: the size of per-route counters and hints.
pub const MAX_ROUTES: usize = 64;

/// One entry of a route table: what the request path, the metrics and the handlers know
/// of a route.
#[derive(Debug)]
pub struct Route {
    /// The route's place in its table: the index of per-route counters.
    pub index: usize,
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
    /// Whether `/openapi.json` describes it: every API route, but neither the pages nor
    /// a protocol of its own (the MCP endpoint, whose tools the document describes).
    pub documented: bool,
    /// The path split at its parameter.
    template: Template,
    /// The methods of `allow` as bits ([`method_bit`]).
    methods: u8,
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

/// The methods of the MCP endpoint: messages are posted, a session is deleted.
pub const POST_DELETE: &str = "POST, DELETE";

impl Route {
    /// The entry of the route at `index` of its table, with `path`, `allow` (names among
    /// GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, joined by `", "`: another name fails
    /// the build), whether it needs a key, and whether it is a page of the website.
    pub const fn new(
        index: usize,
        path: &'static str,
        allow: &'static str,
        requires_key: bool,
        page: bool,
    ) -> Route {
        Route {
            index,
            path,
            requires_key,
            allow,
            page,
            documented: !page,
            template: Template::of(path),
            methods: methods_of(allow),
        }
    }

    /// The same entry, for a route of a protocol of its own, which `/openapi.json`
    /// does not describe.
    pub const fn undocumented(mut self) -> Route {
        self.documented = false;
        self
    }

    /// Whether the route answers `method` (HEAD wherever GET is).
    #[inline]
    pub fn allows(&self, method: &hyper::Method) -> bool {
        use hyper::Method;
        // One bit per method, from the route's `allow` list at compile time: a GET costs
        // one comparison and one load (reading the list at run time cost ~40
        // instructions a request).
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
        self.methods & bit != 0
    }

    /// For a route with a path parameter (`{name}` in its template), the part of the
    /// path before it.
    pub fn prefix(&self) -> Option<&'static str> {
        self.template.parameter.map(|_| self.template.prefix)
    }

    /// The part of the template after its path parameter (`""` when it ends the path).
    pub fn suffix(&self) -> &'static str {
        self.template.suffix
    }

    /// The name of the path parameter (`tld` of `{tld}`).
    pub fn parameter(&self) -> Option<&'static str> {
        self.template.parameter
    }

    /// The raw segment of `path` in place of the parameter, for a path this route
    /// matched (`""` for a route without a parameter, or a path it does not match).
    pub fn segment<'p>(&self, path: &'p str) -> &'p str {
        self.template.matches(path).unwrap_or("")
    }
}

/// A route's path template split at its parameter, once, at compile time: matching a
/// request no longer looks for `{` in every template it passes.
#[derive(Clone, Copy, Debug)]
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

/// The routes whose templates can match a path of one group, as indices into the
/// table, with their templates, in table order (so the first match is the one a walk of
/// the whole table finds); `len` of them. A page's path (`/`, `/tld/com`) would pass
/// the thirty API templates otherwise.
#[derive(Clone, Copy)]
struct Group<const N: usize> {
    routes: [(u8, Template); N],
    len: usize,
}

/// A table of routes, with what finding one needs worked out at compile time.
pub struct Table<const N: usize> {
    routes: [Route; N],
    groups: [Group<N>; 3],
}

impl<const N: usize> Table<N> {
    /// The table of `routes`, each at its own `index`; at most [`MAX_ROUTES`] (more
    /// fail the build).
    pub const fn new(routes: [Route; N]) -> Table<N> {
        assert!(N <= MAX_ROUTES, "more routes than MAX_ROUTES");
        const EMPTY: Template = Template::of("");
        let mut groups = [Group {
            routes: [(0, EMPTY); N],
            len: 0,
        }; 3];
        let mut g = 0;
        while g < 3 {
            let mut i = 0;
            while i < N {
                assert!(routes[i].index == i, "a route's index is not its place");
                if may_match(&routes[i].template, g) {
                    groups[g].routes[groups[g].len] = (i as u8, routes[i].template);
                    groups[g].len += 1;
                }
                i += 1;
            }
            g += 1;
        }
        Table { routes, groups }
    }

    /// Every route, in table order.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// Finds the route of a raw request path. Returns the route and, for a route with a
    /// path parameter, the raw (still percent-encoded) segment: exactly one non-empty
    /// segment, no `/` in it.
    #[inline]
    pub fn find<'p>(&self, path: &'p str) -> Option<(&Route, &'p str)> {
        // `group_of` at run time: the prefixes compared inline, not a loop a byte at a
        // time.
        let path_bytes = path.as_bytes();
        let starts = |prefix: &[u8]| {
            path_bytes
                .get(..prefix.len())
                .is_some_and(|p| same_bytes(p, prefix))
        };
        let group = if starts(CLIENT_API) {
            &self.groups[0]
        } else if starts(API) {
            &self.groups[1]
        } else {
            &self.groups[2]
        };
        group.routes[..group.len].iter().find_map(|(i, template)| {
            template
                .matches(path)
                .map(|segment| (&self.routes[*i as usize], segment))
        })
    }
}

/// The bits of [`Route`]'s `methods` that stand for GET and HEAD.
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

/// The methods of an `allow` list (`"GET, HEAD"`) as bits ([`method_bit`]); a name that
/// is not in [`METHOD_NAMES`] fails the build.
const fn methods_of(allow: &str) -> u8 {
    let allow = allow.as_bytes();
    let mut out = 0u8;
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
        out |= bit;
        // Past the comma and the space after it.
        start = end + 2;
    }
    out
}
