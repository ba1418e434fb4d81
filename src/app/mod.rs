//! The application: the route table ([`routes`]) and the request path over it, from a
//! request to a response, above the connection layer ([`crate::http::server`]) and the
//! rooms that answer ([`crate::api`], [`crate::web`]).
//!
//! [`State`] is the server's [`Handler`]: [`handle`] checks sizes, finds the route,
//! checks the method, and calls the route's handler (`now:`, on the connection's task),
//! or leaves a future for one that waits (`later:`); every answer is recorded in the
//! metrics under its route. The order of checks that follows is the handlers' (docs/
//! API.md, "Order of checks"; [`crate::api`]).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, StatusCode};

use crate::api::{Connection, HttpResponse, State, Step};
use crate::http::problem::Problem;
use crate::http::router::Route;
use crate::http::server::{ConnectionEvent, Handler, Refusal, Reply, Unparsable};
use crate::time::Stamp;

pub mod routes;

impl Handler for State {
    type Connection = Connection;
    type Later = Later;

    fn connect(&self, peer: SocketAddr) -> Connection {
        Connection::new(peer.ip().to_canonical())
    }

    // Inlined, with `handle` below, into the connection's service: the request is then
    // not copied into a call's argument, nor the reply out of its result.
    #[inline(always)]
    fn handle(state: &Arc<State>, req: Request<Incoming>, conn: &Arc<Connection>) -> Reply<Later> {
        handle(state, req, conn)
    }

    fn refusal(&self, why: Refusal) -> Vec<u8> {
        let problem = match why {
            Refusal::PerAddress => Problem::TooManyConnections,
            Refusal::Full => Problem::ServerBusy,
        };
        problem.to_closing_response_bytes()
    }

    fn unparsable(&self, what: Unparsable) -> Vec<u8> {
        let problem = match what {
            Unparsable::Malformed(reason) => Problem::MalformedRequest { reason },
            // Past hyper's limit, so past this server's own too.
            Unparsable::UriTooLong => Problem::UriTooLong {
                max: self.config.max_url_bytes,
            },
            Unparsable::HeadTooLarge {
                max_bytes,
                max_headers,
            } => Problem::HeadTooLarge {
                max_bytes,
                max_headers,
            },
        };
        problem.to_closing_response_bytes()
    }

    fn event(&self, event: ConnectionEvent) {
        self.metrics.connection_event(event);
    }

    fn draining(&self) {
        // Event streams never finish by themselves: end them so the drain completes.
        self.close_streams();
    }
}

/// The answer to a request whose handler waits: a future that owns what it needs.
pub type Later = Pin<Box<dyn Future<Output = HttpResponse> + Send>>;

/// Answers one request and records it in the metrics. Never fails: every error is a
/// problem response. The price, catalogue and operational answers, the events poll and
/// the website's pages are made here, at once (`answer_now`); only a credit kept in
/// Redis, and the routes whose handlers wait, leave a future.
///
/// Inlined into the connection's service (see [`Handler::handle`]'s impl for `State`):
/// two copies of the request and one of the reply fewer, ~40-75 instructions a request.
#[inline(always)]
pub fn handle(state: &Arc<State>, req: Request<Incoming>, conn: &Arc<Connection>) -> Reply<Later> {
    let started = Stamp::now();
    // Without --trust-proxy (the default) this is one load of a flag.
    let https = crate::http::came_over_https(req.headers(), state.config.trust_proxy);
    match answer_now(state, &req, conn, started) {
        Now::Done(route, mut response) => {
            // Recorded by its status: the response itself is not moved through a call.
            record(state, route, response.status(), started);
            if https {
                strict_transport(&mut response);
            }
            Reply::Now(response)
        }
        Now::Spend(route, step) => {
            let state = Arc::clone(state);
            Reply::Later(Box::pin(async move {
                let response = step.finish(&state).await;
                over(https, recorded(&state, Some(route), response, started))
            }))
        }
        Now::Later(route) => {
            let state = Arc::clone(state);
            let conn = Arc::clone(conn);
            Reply::Later(Box::pin(async move {
                let (route, response) = dispatch(&state, req, &conn, route, started).await;
                over(https, recorded(&state, route, response, started))
            }))
        }
    }
}

/// Adds `Strict-Transport-Security` to the answer to a request that came over HTTPS
/// (`docs/WEB.md`).
fn strict_transport(response: &mut HttpResponse) {
    response
        .headers_mut()
        .insert(crate::http::HSTS, crate::http::HSTS_VALUE);
}

/// `response`, with HSTS when the request came over HTTPS.
fn over(https: bool, mut response: HttpResponse) -> HttpResponse {
    if https {
        strict_transport(&mut response);
    }
    response
}

/// `response`, recorded in the metrics under its route and status.
fn recorded(
    state: &State,
    route: Option<&'static Route>,
    response: HttpResponse,
    started: Stamp,
) -> HttpResponse {
    record(state, route, response.status(), started);
    response
}

/// Records an answer with `status` in the metrics under its route.
fn record(state: &State, route: Option<&'static Route>, status: StatusCode, started: Stamp) {
    state
        .metrics
        .record(route.map(|r| r.index), status.as_u16(), started.elapsed());
}

/// What [`answer_now`] did.
enum Now {
    /// Answered.
    Done(Option<&'static Route>, HttpResponse),
    /// Answered but for a credit kept in Redis.
    Spend(&'static Route, Step),
    /// Left to [`dispatch`]: a route whose handler waits, or no route.
    Later(Option<&'static Route>),
}

/// Size limits, route and method; then the routes answered without waiting
/// (`now:` in [`routes`]): the price, catalogue and operational endpoints, the events poll and
/// the website's pages, in this function rather than in a future of their own, which
/// every request would pay to move and poll.
fn answer_now(state: &State, req: &Request<Incoming>, conn: &Connection, started: Stamp) -> Now {
    let config = &state.config;
    // hyper refuses request lines past its own buffer (the connection layer answers
    // 414/431 and closes); below that, these limits answer and keep the connection.
    let target_len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if target_len > config.max_url_bytes {
        let problem = Problem::UriTooLong {
            max: config.max_url_bytes,
        };
        return Now::Done(None, problem.into_response());
    }
    let header_bytes: usize = req
        .headers()
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len() + 4)
        .sum();
    if header_bytes > config.max_header_bytes {
        let problem = Problem::HeadersTooLarge {
            max: config.max_header_bytes,
        };
        return Now::Done(None, problem.into_response());
    }
    let Some((route, segment)) = routes::TABLE.find(req.uri().path()) else {
        return Now::Later(None);
    };
    if !route.allows(req.method()) {
        let problem = Problem::MethodNotAllowed { allow: route.allow };
        return Now::Done(Some(route), problem.into_response());
    }
    match routes::now(state, req, route, segment, conn, started) {
        None => Now::Later(Some(route)),
        Some(Step::Done(response)) => Now::Done(Some(route), response),
        Some(step) => Now::Spend(route, step),
    }
}

/// The routes whose handlers wait (or no route: 404), after [`answer_now`] checked sizes
/// and method.
///
/// The future of every request is as large as the largest route's, and hyper moves it
/// (a copy of every byte) when it starts one. Every route's future here is boxed, so
/// that one with a large state (the live lookups' was 35 KB) does not make every
/// request copy it. A test keeps the request future small.
async fn dispatch(
    state: &State,
    req: Request<Incoming>,
    conn: &Connection,
    route: Option<&'static Route>,
    started: Stamp,
) -> (Option<&'static Route>, HttpResponse) {
    let Some(route) = route else {
        if crate::web::wants_html(&req) {
            return (
                None,
                Box::pin(crate::web::not_found(state, req, conn)).await,
            );
        }
        return (None, Problem::NotFound.into_response());
    };
    let response = match routes::later(state, req, route, conn, started).await {
        Some(response) => response,
        None => Problem::NotFound.into_response(),
    };
    (Some(route), response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_future_of_a_waiting_request_stays_small() {
        // Only the type is needed: the function is never called. The future is boxed
        // (`Later`), once per waiting request; the dispatcher's own routes box theirs.
        fn size<F, Fut>(_: F) -> usize
        where
            F: FnOnce(
                &'static State,
                Request<Incoming>,
                &'static Connection,
                Option<&'static Route>,
                Stamp,
            ) -> Fut,
        {
            std::mem::size_of::<Fut>()
        }
        let bytes = size(dispatch);
        assert!(bytes <= 4096, "the dispatch future is {bytes} bytes");
    }
}
