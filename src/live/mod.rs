//! Live domain data (docs/LIVE.md): registration data (RDAP, WHOIS), status, DNS, the TLS
//! certificate of a domain's web server, and availability — questions the snapshot
//! cannot answer, asked of registries, name servers and web servers at request time.
//!
//! A room beside the snapshot engine: nothing here reads a snapshot or knows the API's
//! requests; [`Live`] takes a name already validated and IDNA-normalised
//! ([`crate::audit::names`]) and gives back an answer, or a [`Failure`] naming the
//! upstream. `docs/LIVE.md` says where each answer comes from and what tldsnap will
//! not do.
//!
//! ```text
//!  name ──cache (moka: TTL from the answer, bounded, one lookup per key at a time)
//!       ──dns──▶ hickory-resolver (the system's, or --resolver)
//!       ──registry──▶ bootstrap: RDAP base URL? ──▶ limits (pace, permits, breaker)
//!                        │                          ──https (guard, rustls, hyper)──▶ rdap::read_answer
//!                        └─ none ──▶ IANA WHOIS referral ──▶ whois::exchange ──▶ whois::read_answer
//! ```
//!
//! # Layout
//!
//! | module | role |
//! |---|---|
//! | [`bootstrap`] | TLD → RDAP base URLs (RFC 9224), shipped IANA data or a `dns.json` |
//! | [`rdap`] | RFC 9082 query URLs, RFC 9083 domain objects read into a [`Registration`] |
//! | [`whois`] | port 43 (RFC 3912): IANA's referral, a registry's answer read into a [`Registration`] |
//! | [`registration`] | the one shape of registration data, whichever protocol brought it |
//! | [`status`] | EPP status codes: spelling, meaning, grace / hold / pending-delete |
//! | [`registry`] | the registration lookup: RDAP, else WHOIS; the status answer |
//! | [`dns`] | DNS records through hickory-resolver: TTLs, NXDOMAIN / SERVFAIL told apart; the resolver's DNSSEC verdict (AD, CD) |
//! | [`availability`] | registry and DNS as two witnesses: available only when both agree |
//! | [`tls`] | the certificate `https://{domain}` presents, parsed and judged against the roots |
//! | [`https`] | one HTTPS GET through the outbound guard, every step under a deadline |
//! | [`limits`] | per upstream: concurrency, token bucket, `Retry-After`, circuit breaker |
//! | [`cache`] | answers kept for their TTL, bounded in bytes |
//! | [`stats`] | per kind of upstream: requests by outcome, their durations (`/metrics`) |

pub mod availability;
pub mod bootstrap;
pub mod cache;
pub mod dns;
pub mod https;
pub mod limits;
pub mod rdap;
pub mod registration;
pub mod registry;
pub mod stats;
pub mod status;
pub mod tls;
pub mod whois;

use std::sync::Arc;
use std::time::Duration;

pub use bootstrap::Bootstrap;
pub use registration::Registration;

/// How the live lookups reach their upstreams. [`Config::new`] gives production's
/// defaults around a bootstrap table.
#[derive(Debug, Clone)]
pub struct Config {
    /// TLD → RDAP servers.
    pub bootstrap: Bootstrap,
    /// The server that names each TLD's WHOIS server (`host` or `host:port`).
    pub whois_referral: String,
    /// The port WHOIS servers named by the referral are asked on (43; tests use their
    /// own).
    pub whois_port: u16,
    /// The port a domain's TLS certificate is read on (443; tests use their own).
    pub tls_port: u16,
    /// The DNS resolver (`--resolver ADDR`); `None`: the system's (`/etc/resolv.conf`).
    pub resolver: Option<std::net::SocketAddr>,
    /// Trusted roots for every TLS connection (RDAP, and the verdict on a domain's
    /// certificate); `None`: Mozilla's roots (webpki-roots).
    pub tls_roots: Option<Vec<rustls::pki_types::CertificateDer<'static>>>,
    /// Allow upstreams and targets on loopback, private and link-local addresses (tests,
    /// and operators whose registries are on their own network).
    pub allow_private_targets: bool,
    /// Per-upstream pace, concurrency and breaker.
    pub limits: limits::Limits,
    /// Per-request step timeouts.
    pub timeouts: https::Timeouts,
    /// Longest time one API request spends on one lookup, waits included.
    pub budget: Duration,
    /// Largest RDAP answer read.
    pub max_body_bytes: usize,
    /// How long registration data is kept (a registered name's; a name the registry
    /// does not hold is kept [`Config::negative_ttl`]).
    pub registry_ttl: Duration,
    /// How long a negative answer (not registered, NXDOMAIN without a SOA TTL) is kept.
    pub negative_ttl: Duration,
    /// Bytes of answers the cache holds at most.
    pub cache_bytes: u64,
}

impl Config {
    /// Production's settings around `bootstrap`: IANA's WHOIS referral on port 43,
    /// Mozilla's roots, public targets only, [`limits::Limits::default`],
    /// [`https::Timeouts::default`], a 10 s budget per lookup, RDAP answers up to 1 MiB,
    /// registration data kept 10 minutes and negative answers 1 minute, 64 MiB of cache.
    pub fn new(bootstrap: Bootstrap) -> Config {
        Config {
            bootstrap,
            whois_referral: whois::IANA_SERVER.to_owned(),
            whois_port: whois::PORT,
            tls_port: tls::PORT,
            resolver: None,
            tls_roots: None,
            allow_private_targets: false,
            limits: limits::Limits::default(),
            timeouts: https::Timeouts::default(),
            budget: Duration::from_secs(10),
            max_body_bytes: 1 << 20,
            registry_ttl: Duration::from_secs(600),
            negative_ttl: Duration::from_secs(60),
            cache_bytes: 64 << 20,
        }
    }
}

/// Why a live lookup has no answer. Every variant names what failed, for the problem
/// the API answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// An upstream did not answer in time.
    Timeout {
        /// The upstream (`rdap.verisign.com`, `whois.nic.io`, the resolver).
        upstream: String,
        /// What was happening (`connect`, `first byte`, ...).
        detail: String,
    },
    /// An upstream answered with an error, garbage, too much, or not at all (connection
    /// refused, TLS failure); or tldsnap is holding back from it (its breaker is open,
    /// it asked for a pause, its pace leaves no room in the budget).
    Upstream {
        /// The upstream.
        upstream: String,
        /// What went wrong, for a person.
        detail: String,
        /// When asking again makes sense, in seconds, when known.
        retry_after: Option<u64>,
    },
    /// No registration data service is known for the TLD (no RDAP server in the
    /// bootstrap, and IANA names no WHOIS server).
    NoService {
        /// The TLD (or public suffix) of the name.
        tld: String,
    },
    /// The target resolves to an address tldsnap does not connect to (loopback,
    /// private, link-local, metadata, ...).
    Refused {
        /// The target.
        target: String,
        /// Why, for a person.
        detail: String,
    },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Timeout { upstream, detail } => {
                write!(f, "{upstream} did not answer in time ({detail})")
            }
            Failure::Upstream {
                upstream, detail, ..
            } => write!(f, "{upstream}: {detail}"),
            Failure::NoService { tld } => {
                write!(f, "no registration data service is known for .{tld}")
            }
            Failure::Refused { target, detail } => write!(f, "{target}: {detail}"),
        }
    }
}

/// The live lookups of one server: configuration, HTTPS client, DNS resolver,
/// per-upstream limits and the cache. One per process, shared by every request.
pub struct Live {
    config: Config,
    https: https::Client,
    /// Upstreams by name: a registry's RDAP or WHOIS server.
    upstreams: limits::Upstreams,
    /// Upstreams by the address connected to (RDAP, WHOIS, the TLS lookup's hosts).
    addresses: limits::Upstreams,
    cache: cache::Cache,
    resolver: hickory_resolver::TokioResolver,
    /// The verdict on a domain's certificate chain (the trusted roots).
    webpki: std::sync::Arc<rustls::client::WebPkiServerVerifier>,
    /// The resolver as problems name it.
    resolver_name: String,
    /// The resolver's name servers, asked directly for the DNSSEC verdict.
    dns_servers: Vec<std::net::SocketAddr>,
    /// What the lookups did, for `/metrics`.
    stats: stats::Stats,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("config", &self.config)
            .field("resolver", &self.resolver_name)
            .finish_non_exhaustive()
    }
}

impl Live {
    /// Sets up the lookups of `config` (its TLS roots are checked here).
    pub fn new(config: Config) -> Result<Live, String> {
        let tls = https::client_config(config.tls_roots.as_deref())?;
        let guard = crate::net::Guard::new(config.allow_private_targets);
        let dns = dns::resolver(config.resolver, config.timeouts.first_byte)?;
        let webpki = tls::webpki_verifier(config.tls_roots.as_deref())?;
        Ok(Live {
            webpki,
            resolver: dns.resolver,
            resolver_name: dns.name,
            dns_servers: dns.servers,
            https: https::Client::new(tls, guard, config.timeouts, config.max_body_bytes),
            upstreams: limits::Upstreams::new(config.limits),
            addresses: limits::Upstreams::new(config.limits),
            cache: cache::Cache::new(config.cache_bytes),
            stats: stats::Stats::default(),
            config,
        })
    }

    /// What the lookups did since start: requests per kind of upstream and outcome,
    /// their durations, and the cache's hits and misses.
    pub fn report(&self) -> stats::Report {
        stats::Report {
            upstreams: self.stats.counts(),
            cache: self.cache.counts(),
            cache_entries: self.cache.len(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The outbound guard of every connection.
    fn guard(&self) -> crate::net::Guard {
        crate::net::Guard {
            allow_private: self.config.allow_private_targets,
            timeout: self.config.timeouts.connect,
        }
    }

    /// The deadline of a lookup started now.
    pub fn deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + self.config.budget
    }

    /// A lookup for `key` started now (its deadline: [`Live::deadline`]).
    pub fn ask(&self, key: Option<Arc<str>>) -> Ask {
        Ask {
            deadline: self.deadline(),
            key,
        }
    }

    /// Leave to send one request to `addr` (the address a connection goes to, after
    /// resolution) for `ask`: every name that resolves to it shares its pace.
    pub(crate) async fn admit_address(
        &self,
        addr: std::net::SocketAddr,
        ask: &Ask,
    ) -> Result<limits::Permit, limits::Refusal> {
        let addr = std::net::SocketAddr::new(addr.ip().to_canonical(), addr.port());
        self.addresses
            .get(&addr.to_string())?
            .admit(ask.key.as_ref(), ask.deadline)
            .await
    }
}

/// Who a lookup is for, and until when: its deadline, and the API key whose share of
/// each upstream it takes (`None`: no key's share applies, as for the room used alone).
/// An [`Instant`](tokio::time::Instant) is a lookup for no key.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The lookup's deadline, waits included.
    pub deadline: tokio::time::Instant,
    /// The key asking.
    pub key: Option<Arc<str>>,
}

impl From<tokio::time::Instant> for Ask {
    fn from(deadline: tokio::time::Instant) -> Ask {
        Ask {
            deadline,
            key: None,
        }
    }
}

/// Milliseconds since the Unix epoch now: when an answer was learnt.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
