//! `tldsnap serve`: the HTTP service.
//!
//! Parses flags, opens the snapshot (or builds the shipped real data in memory), sets up
//! access (keys, plans, usage), binds, and hands over to [`tldsnap::http::server::run`] with [`tldsnap::api::State`] as the
//! request handler.
//! Signals:
//!
//! - `SIGHUP`: reload the snapshot file (opened and verified aside; a bad file is
//!   refused, logged and counted, the old snapshot keeps serving), or poll the pointer
//!   at once for a snapshot in object storage, and reload the keys file.
//! - `SIGTERM`, `SIGINT` (Ctrl-C): stop accepting, finish in-flight requests, persist
//!   usage, exit 0.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

use super::CliError;
use tldsnap::access::clock::SystemClock;
use tldsnap::access::plans::Plans;
use tldsnap::access::{Access, AccessConfig};
use tldsnap::api::{self, DEFAULT_PUBLIC_URL, State, validate_public_url};
use tldsnap::events::EventLog;
use tldsnap::events::shared::Shared;
use tldsnap::files;
use tldsnap::http::server;
use tldsnap::remote::replica::{DEFAULT_POLL_INTERVAL, Polled, Replica, Status};
use tldsnap::remote::{self, Location, Remote, RemoteError};
use tldsnap::store::{Loaded, ReloadError, Store, SwapObserver};
use tldsnap::web::session::{Secret, SignOuts};
use tldsnap::webhooks::{self, Webhooks};

/// `--webhook-retry-schedule`: a list in one value.
#[derive(Clone, Debug)]
struct Schedule(Vec<Duration>);

fn parse_schedule(text: &str) -> Result<Schedule, String> {
    webhooks::parse_schedule(text).map(Schedule)
}

/// Arguments of `tldsnap serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Snapshot file to serve (from `tldsnap build`); reloaded on SIGHUP. Or
    /// `s3://BUCKET/PREFIX/`: the snapshot the pointer there names (`tldsnap publish`),
    /// downloaded into --data-dir, verified like a file, served from there; credentials
    /// and endpoint from the AWS environment variables. Without it, the real-data
    /// snapshot is built in memory from the price source shipped in the binary
    /// (snapshots/source/).
    #[arg(long, value_name = "FILE|s3://BUCKET/PREFIX/")]
    snapshot: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    addr: String,
    /// API keys file (JSON list of {id, plan, key_sha256, label}; see `tldsnap keys`).
    /// Without it every client endpoint answers 401. Reloaded on SIGHUP.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Plans file (JSON) overriding the plans it names.
    #[arg(long, value_name = "FILE")]
    plans: Option<PathBuf>,
    /// Directory where monthly usage (credits spent) is kept across restarts, the
    /// price-change event log (events.log), and the website's session secret and
    /// sign-outs. Without it, and without --usage-store, usage is held in memory only,
    /// and no events are recorded or served.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Days a price-change event is kept in the event log.
    #[arg(long, value_name = "DAYS", default_value_t = 90, value_parser = clap::value_parser!(u64).range(1..=36_500))]
    event_retention_days: u64,
    /// Shared usage store for several replicas, e.g. redis://127.0.0.1:6379.
    #[arg(long, value_name = "URL")]
    usage_store: Option<String>,
    /// Base of the `website_url` of registrar listings ({public_url}/registrars/{key}).
    #[arg(long, value_name = "URL", default_value = DEFAULT_PUBLIC_URL)]
    public_url: String,
    /// A price published more than this many days before today (UTC) is stale: marked
    /// `"stale":true` and left out of rankings (cheapest, registrar listings, overview
    /// picks, pages) unless a request asks `include_stale=true`. A request's
    /// `max_age_days` overrides it.
    #[arg(long, value_name = "DAYS", default_value_t = tldsnap::query::DEFAULT_MAX_AGE_DAYS,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(tldsnap::query::MAX_AGE_DAYS_LIMIT)))]
    max_age_days: u32,
    /// Take this day (YYYY-MM-DD, UTC) as today for staleness, `expires_soon` and the
    /// latest `at=`, instead of the clock's: answers that do not move with the date (the
    /// docs' examples are made with it). Rate limits, credits and sessions keep the clock.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = parse_day)]
    today: Option<i64>,
    /// Also reload the snapshot when its file is replaced, or when the pointer in
    /// object storage names another one (polled, see --watch-interval-ms).
    #[arg(long, requires = "snapshot")]
    watch: bool,
    /// How often --watch looks at the snapshot file, in milliseconds (default 1000), or
    /// polls the pointer in object storage (default 10000, each wait drawn within ±20%
    /// so that replicas do not poll together).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    watch_interval_ms: Option<u64>,
    /// Connections served at once. When full, a new connection closes the one idle the
    /// longest; when none is idle it is answered 503 server_busy.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// Connections served at once from one client address; more are answered 429
    /// too_many_connections. Raise it behind a proxy or NAT.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections_per_address: u64,
    /// Seconds a client has to send a request head (and may stay idle between requests).
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout: u64,
    /// Seconds a request body has to arrive in full once its endpoint starts reading
    /// it; a body still incomplete is answered 408 request_timeout and the connection
    /// closed.
    #[arg(long, value_name = "SECS", default_value_t = api::DEFAULT_BODY_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=3600))]
    body_timeout: u64,
    /// Price-change event streams one API key may hold open at once; one more is
    /// answered 429 too_many_streams (a stream keeps its connection busy, which the
    /// server never closes to make room).
    #[arg(long, value_name = "N", default_value_t = api::DEFAULT_MAX_STREAMS_PER_KEY as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_streams_per_key: u64,
    /// Requests of one API key answered at once across the server; one more is
    /// answered 429 too_many_in_flight at once (a request whose handler waits, on a
    /// webhook receiver or a registry, keeps its connection busy, which the server
    /// never closes to make room).
    #[arg(long, value_name = "N", default_value_t = api::DEFAULT_MAX_IN_FLIGHT_PER_KEY as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_in_flight_per_key: u64,
    /// File holding the secret that signs the website's session cookies and CSRF
    /// tokens (at least 32 bytes, owner-only). Without it the secret is kept in
    /// --data-dir (created there on first start); without either, a random secret is
    /// held in memory and sessions end when the server stops.
    #[arg(long, value_name = "FILE")]
    session_secret_file: Option<PathBuf>,
    /// Every request comes through a proxy that ends TLS and sets X-Forwarded-Proto
    /// (overwriting any the client sent). Only then is a request with
    /// `X-Forwarded-Proto: https` taken to have come over HTTPS: its answer carries
    /// Strict-Transport-Security and the website's cookies are Secure and named
    /// __Host-…. Without it every request is plain HTTP.
    #[arg(long)]
    trust_proxy: bool,
    /// Deliver webhooks to http:// URLs and to loopback, private, link-local and
    /// carrier-grade NAT addresses too (a test receiver, targets on your own network).
    /// Cloud metadata addresses stay refused.
    #[arg(long)]
    allow_private_webhooks: bool,
    /// Delays before each attempt at a webhook message, comma-separated (0, 500ms, 5s,
    /// 5m, 2h); when the last attempt fails the subscription is disabled.
    #[arg(long, value_name = "DELAYS", default_value = "0,5s,5m,30m,2h,5h,10h,10h", value_parser = parse_schedule)]
    webhook_retry_schedule: Schedule,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// How the worker threads serve connections: `shared`, one runtime whose workers
    /// steal each other's work (one worker: tokio's current_thread scheduler); or
    /// `per-thread`, each worker a current_thread runtime accepting from a listener of
    /// its own bound with SO_REUSEPORT (thread per core; docs/PERFORMANCE.md, "Thread
    /// per core").
    #[arg(long, value_enum, default_value_t = RuntimeKind::Shared)]
    runtime: RuntimeKind,
    #[command(flatten)]
    live: LiveArgs,
    #[command(flatten)]
    refresh: RefreshArgs,
}

/// The refresh's flags (docs/COLLECT.md, "Refresh").
#[derive(clap::Args)]
#[command(next_help_heading = "Refresh: collect, import, build and swap in (docs/COLLECT.md)")]
pub struct RefreshArgs {
    /// Collect every registrar of --config into --feeds, import, build and swap the new
    /// snapshot in every DURATION (500ms, 30s, 15m, 6h; each wait within ±20%), off the
    /// serving threads; the swap records and delivers its events like a reload. The
    /// snapshot is written to --snapshot FILE, or without it to DATA_DIR/refreshed.snap.
    #[arg(long, value_name = "DURATION", value_parser = tldsnap::refresh::parse_interval, requires_all = ["config", "feeds"])]
    refresh_every: Option<Duration>,
    /// The collectors' TOML configuration (owner-only), for --refresh-every.
    #[arg(long, value_name = "FILE", requires = "refresh_every")]
    config: Option<PathBuf>,
    /// The feeds directory the registrars are collected into. Also without
    /// --refresh-every, `/readyz` and `/metrics` report each registrar's last collection
    /// attempt recorded there.
    #[arg(long, value_name = "DIR")]
    feeds: Option<PathBuf>,
    /// IANA and Public Suffix lists for the refresh's import [default: FEEDS/../tlds].
    #[arg(long, value_name = "DIR", requires = "refresh_every")]
    tlds: Option<PathBuf>,
    /// ECB reference rates for the refresh's import [default: FEEDS/../fx].
    #[arg(long, value_name = "DIR", requires = "refresh_every")]
    fx: Option<PathBuf>,
    /// Let the collectors reach loopback and private addresses, and plain http://
    /// (tests, an operator's own proxy).
    #[arg(long, requires = "refresh_every")]
    allow_private_collect_targets: bool,
}

/// A refresh inside the server: what it runs, and the file it writes.
struct Refresher {
    every: Duration,
    config: Arc<tldsnap::collect::config::Config>,
    inputs: tldsnap::refresh::Inputs,
    output: PathBuf,
}

impl RefreshArgs {
    /// The refresh these flags ask for (`None` without --refresh-every).
    fn refresher(
        &self,
        snapshot: Option<&std::path::Path>,
        data_dir: Option<&std::path::Path>,
    ) -> Result<Option<Refresher>, CliError> {
        let (Some(every), Some(config), Some(feeds)) =
            (self.refresh_every, &self.config, &self.feeds)
        else {
            return Ok(None);
        };
        let output = match (snapshot, data_dir) {
            (Some(path), _) if path.to_str().is_some_and(remote::is_remote) => {
                return Err(
                    "--refresh-every publishes the snapshot itself: it cannot follow one in \
                     object storage (--snapshot s3://…); run `tldsnap refresh --output s3://…` \
                     as the publisher instead"
                        .into(),
                );
            }
            (Some(path), _) => path.to_path_buf(),
            (None, Some(dir)) => dir.join("refreshed.snap"),
            (None, None) => {
                return Err(
                    "--refresh-every needs --snapshot FILE or --data-dir, where it writes the snapshot".into(),
                );
            }
        };
        let keys = tldsnap::collect::keys();
        let config = tldsnap::collect::config::Config::load(config, &keys)?;
        if config.registrars.is_empty() {
            return Err(format!(
                "{}: no registrar table (known: {})",
                self.config.as_deref().unwrap_or(feeds).display(),
                keys.join(", ")
            )
            .into());
        }
        Ok(Some(Refresher {
            every,
            config: Arc::new(config),
            inputs: tldsnap::refresh::Inputs::new(
                feeds.clone(),
                self.tlds.clone(),
                self.fx.clone(),
                self.allow_private_collect_targets,
            ),
            output,
        }))
    }
}

impl Refresher {
    /// Refreshes every interval (each wait jittered) until the task is aborted: the
    /// collection, import and build on a thread of their own, the snapshot written
    /// aside and renamed into place, then opened, verified and swapped in through the
    /// store as a reload is (events recorded before it serves).
    async fn run(self, store: Arc<Store>, warmer: Warmer) {
        loop {
            tokio::time::sleep(tldsnap::remote::replica::jittered(self.every)).await;
            let (config, inputs, output) = (
                Arc::clone(&self.config),
                self.inputs.clone(),
                self.output.clone(),
            );
            let built = tldsnap::blocking::run(move || {
                let refreshed = tldsnap::refresh::run_blocking(&config, &inputs)?;
                files::write_atomic(&output, &refreshed.bytes)
                    .map_err(|e| format!("{}: {e}", output.display()))?;
                Ok::<_, String>(refreshed)
            })
            .await
            .unwrap_or_else(|panic| {
                Err(format!(
                    "the refresh panicked: {}",
                    tldsnap::blocking::panic_message(&*panic)
                ))
            });
            let refreshed = match built {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("tldsnap: refresh failed, still serving the previous snapshot: {e}");
                    continue;
                }
            };
            for (key, outcome) in &refreshed.outcomes {
                eprintln!("tldsnap: refresh: {}", outcome.line(key));
            }
            eprintln!("tldsnap: refresh: built {}", refreshed.summary());
            let source = self.output.display().to_string();
            let outcome = if store.path() == Some(self.output.as_path()) {
                store.reload_async().await
            } else {
                let opened = Store::verify_async(&self.output).await;
                store.install(opened).await
            };
            report(&outcome, &source);
            if outcome.is_ok() {
                warmer.ask();
            }
        }
    }
}

/// `--runtime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum RuntimeKind {
    Shared,
    PerThread,
}

/// The live lookups' flags (docs/LIVE.md).
#[derive(clap::Args)]
#[command(next_help_heading = "Live domain data (docs/LIVE.md)")]
pub struct LiveArgs {
    /// Answer the live endpoints (registration data, status, DNS, availability, TLS) by
    /// asking registries (RDAP, WHOIS), a DNS resolver and the domains' web servers.
    /// Without it they answer 404 live_unavailable and the server opens no outbound
    /// connection.
    #[arg(long)]
    live: bool,
    /// RDAP bootstrap in IANA's dns.json format (RFC 9224), instead of the IANA data
    /// shipped in the binary (snapshots/tlds/root-zone-db.csv).
    #[arg(long, value_name = "FILE", requires = "live")]
    rdap_bootstrap: Option<PathBuf>,
    /// The WHOIS server that names each TLD's WHOIS server (HOST or HOST:PORT).
    #[arg(long, value_name = "HOST[:PORT]", requires = "live")]
    whois_referral: Option<String>,
    /// The port of the WHOIS servers it names.
    #[arg(long, value_name = "PORT", requires = "live")]
    whois_port: Option<u16>,
    /// The port a domain's TLS certificate is read on (the TLS lookup; tests).
    #[arg(long, value_name = "PORT", requires = "live")]
    tls_port: Option<u16>,
    /// The DNS resolver the live lookups ask (IP:PORT), instead of the system's
    /// (/etc/resolv.conf).
    #[arg(long, value_name = "IP:PORT", requires = "live")]
    resolver: Option<std::net::SocketAddr>,
    /// PEM file of the root certificates trusted for every TLS connection of the live
    /// lookups, instead of Mozilla's roots (webpki-roots).
    #[arg(long, value_name = "FILE", requires = "live")]
    tls_roots: Option<PathBuf>,
    /// Let the live lookups connect to loopback, private and link-local addresses (tests,
    /// registries on your own network). Metadata addresses stay refused.
    #[arg(long, requires = "live")]
    allow_private_targets: bool,
    /// Requests per second tldsnap sends to one upstream (a registry's RDAP or WHOIS
    /// server), sustained.
    #[arg(long, value_name = "N", requires = "live", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    upstream_rate: Option<u32>,
    /// Requests tldsnap may send to one upstream at once after a quiet period.
    #[arg(long, value_name = "N", requires = "live", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    upstream_burst: Option<u32>,
    /// Requests in flight to one upstream at once.
    #[arg(long, value_name = "N", requires = "live", value_parser = clap::value_parser!(u32).range(1..=1_000))]
    upstream_concurrency: Option<u32>,
    /// Requests of one API key held at one upstream at once, waiting for their turn or
    /// in flight (its share; default: half of --upstream-concurrency, at least 1).
    #[arg(long, value_name = "N", requires = "live", value_parser = clap::value_parser!(u32).range(1..=1_000))]
    upstream_per_key: Option<u32>,
    /// Longest time one request spends on a live lookup, waits included, in
    /// milliseconds (each step has its own shorter timeout).
    #[arg(long, value_name = "MS", requires = "live", value_parser = clap::value_parser!(u64).range(100..=60_000))]
    live_budget_ms: Option<u64>,
}

impl LiveArgs {
    /// The live lookups these flags ask for (`None` without --live).
    fn config(&self) -> Result<Option<tldsnap::live::Config>, CliError> {
        use tldsnap::live::{Bootstrap, Config};
        if !self.live {
            return Ok(None);
        }
        let bootstrap = match &self.rdap_bootstrap {
            Some(path) => Bootstrap::load(path)?,
            None => Bootstrap::shipped(),
        };
        let mut config = Config::new(bootstrap);
        if let Some(referral) = &self.whois_referral {
            config.whois_referral = referral.clone();
        }
        if let Some(port) = self.whois_port {
            config.whois_port = port;
        }
        config.resolver = self.resolver;
        if let Some(port) = self.tls_port {
            config.tls_port = port;
        }
        if let Some(path) = &self.tls_roots {
            config.tls_roots = Some(tldsnap::live::https::read_roots(path)?);
        }
        config.allow_private_targets = self.allow_private_targets;
        if let Some(rate) = self.upstream_rate {
            config.limits.rate_per_second = rate;
        }
        if let Some(burst) = self.upstream_burst {
            config.limits.burst = burst;
        }
        if let Some(n) = self.upstream_concurrency {
            config.limits.concurrency = n as usize;
            config.limits.per_key = tldsnap::live::limits::Limits::half_of(n as usize);
        }
        if let Some(n) = self.upstream_per_key {
            config.limits.per_key = n as usize;
        }
        if let Some(ms) = self.live_budget_ms {
            config.budget = Duration::from_millis(ms);
        }
        Ok(Some(config))
    }
}

/// `--today`'s value: a day as days since 1970-01-01.
fn parse_day(s: &str) -> Result<i64, String> {
    tldsnap::time::parse_date(s).ok_or_else(|| format!("{s:?} is not a date (YYYY-MM-DD)"))
}

/// Runs the service until SIGTERM or SIGINT.
pub fn run(args: Args) -> Result<(), CliError> {
    let public_url = validate_public_url(&args.public_url)?;
    // One worker (`--threads 1`, or a process confined to one core, as the load harness
    // pins it): tokio's current_thread scheduler. Its one run queue serves ready
    // connections in turn; the multi-thread scheduler with a single worker keeps up to
    // 256 woken tasks in its local queue and sends the rest to a global queue it visits
    // once every 61 polls, and at 1,000 busy connections the ones parked there waited
    // 150-300 ms (p99) where the current_thread baseline's p99 was 20-30 ms
    // (docs/PERFORMANCE.md, "1,000 connections").
    let workers = match args.threads {
        Some(n) => usize::try_from(n)?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    // Per thread: the serving threads are `server::run_threads`'; this runtime keeps the
    // setup and the background work (reloads, usage flushes, webhooks).
    let mut runtime = if workers == 1 || args.runtime == RuntimeKind::PerThread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(workers);
        b
    };
    runtime.enable_all().thread_keep_alive(BLOCKING_KEEP_ALIVE);
    let runtime = runtime
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(serve(args, public_url, workers))
}

async fn serve(args: Args, public_url: String, workers: usize) -> Result<(), CliError> {
    let live = match args.live.config()? {
        Some(config) => {
            eprintln!(
                "tldsnap: live lookups on: RDAP bootstrap {} ({} suffixes), WHOIS referral {}{}",
                config.bootstrap.source(),
                config.bootstrap.len(),
                config.whois_referral,
                if config.allow_private_targets {
                    ", private targets allowed"
                } else {
                    ""
                }
            );
            Some(Arc::new(tldsnap::live::Live::new(config)?))
        }
        None => None,
    };
    let refresher = args
        .refresh
        .refresher(args.snapshot.as_deref(), args.data_dir.as_deref())?;
    let plans = match &args.plans {
        Some(path) => Plans::load(path)?,
        None => Plans::default(),
    };
    // First of all that uses the data directory: it locks it for this process (and with
    // a usage store, hands back the leases of an earlier run that crashed).
    let access = Arc::new(
        Access::new(AccessConfig {
            plans,
            keys_path: args.keys.clone(),
            data_dir: args.data_dir.clone(),
            usage_store: args.usage_store.clone(),
            clock: Arc::new(SystemClock),
        })
        .await?,
    );
    let events = match &args.data_dir {
        Some(dir) => {
            let retention_ms =
                i64::try_from(args.event_retention_days)? * tldsnap::time::MS_PER_DAY;
            let log = EventLog::open(dir, retention_ms, Arc::new(SystemClock))?;
            if log.dropped_on_open() > 0 {
                eprintln!(
                    "tldsnap: event log: dropped a torn last record ({} bytes) left by a crash",
                    log.dropped_on_open()
                );
            }
            // With a shared usage store, replicas share one event sequence through it.
            let log = match &args.usage_store {
                Some(url) => {
                    let shown = tldsnap::access::remote::redact(url);
                    let shared = Shared::connect(url)
                        .map_err(|e| format!("the shared event sequence at {shown}: {e}"))?;
                    let log = Arc::new(log.with_shared(shared)?);
                    log.start_mirror(url.clone());
                    eprintln!("tldsnap: event log: a mirror of the sequence shared at {shown}");
                    log
                }
                None => Arc::new(log),
            };
            Some(log)
        }
        None => None,
    };
    let remote = match args.snapshot.as_deref().and_then(|p| p.to_str()) {
        Some(url) if remote::is_remote(url) => {
            let location = Location::parse(url)?;
            let dir = args.data_dir.clone().ok_or_else(|| {
                format!(
                    "--snapshot {url} needs --data-dir, where the snapshot is downloaded and kept"
                )
            })?;
            files::create_dir(&dir, files::Mode::Private)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            remote::install_tls_provider();
            let status = Arc::new(Status::new(location.prefix_url()));
            Some((Remote::from_env(location)?, dir, status))
        }
        _ => None,
    };
    let store = match (&remote, &args.snapshot) {
        (Some((remote, dir, status)), _) => match Replica::open_cache(dir) {
            Ok(Some(cached)) => {
                eprintln!(
                    "tldsnap: {}: serving the copy cached in {} ({}) until the store answers",
                    remote.location().prefix_url(),
                    dir.display(),
                    cached.snapshot.header().hash_hex()
                );
                status.serving_cached(cached.pointer);
                Store::with_snapshot(cached.snapshot, None)
            }
            Ok(None) => Store::empty(None),
            Err(e) => {
                eprintln!(
                    "tldsnap: the cached copy in {} is not served ({e}); not ready until a download from {} verifies",
                    dir.display(),
                    remote.location().prefix_url()
                );
                Store::empty(None)
            }
        },
        (None, Some(path)) => Store::open(path.clone())?,
        (None, None) => {
            let snapshot = tldsnap::blocking::run(tldsnap::build::default_snapshot)
                .await
                .map_err(|panic| {
                    format!(
                        "building the built-in snapshot panicked: {}",
                        tldsnap::blocking::panic_message(&*panic)
                    )
                })?
                .map_err(|e| format!("the built-in snapshot could not be built: {e}"))?;
            Store::with_snapshot(snapshot, None)
        }
    };
    if let (Some(log), Some(loaded)) = (&events, store.load()) {
        let served = loaded.snapshot.header().content_hash;
        if log.last_snapshot().is_some_and(|last| last != served) {
            eprintln!(
                "tldsnap: event log: the last swap recorded went to another snapshot than \
                 {}; changes made while the server was down have no events",
                loaded.snapshot.header().hash_hex()
            );
        }
    }
    // Every later swap records its events (fsynced) before the new snapshot serves.
    let store = Arc::new(match &events {
        Some(log) => store.observed(Arc::clone(log) as Arc<dyn SwapObserver>),
        None => store,
    });

    // Signal handlers are installed before the listener is bound, so a signal sent as
    // soon as the port answers is never missed (or fatal).
    let mut hangup = signal(SignalKind::hangup())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;

    let listen_error = |e: std::io::Error| format!("cannot listen on {}: {e}", args.addr);
    let listeners = match args.runtime {
        RuntimeKind::Shared => {
            Listeners::One(TcpListener::bind(&args.addr).await.map_err(listen_error)?)
        }
        RuntimeKind::PerThread => {
            let addr = tokio::net::lookup_host(&args.addr)
                .await
                .map_err(listen_error)?
                .next()
                .ok_or_else(|| format!("cannot listen on {}: no address", args.addr))?;
            Listeners::PerThread(server::reuseport_listeners(addr, workers).map_err(listen_error)?)
        }
    };
    let local: SocketAddr = match &listeners {
        Listeners::One(listener) => listener.local_addr()?,
        Listeners::PerThread(listeners) => listeners[0].local_addr()?,
    };
    let session_secret = match (&args.session_secret_file, &args.data_dir) {
        (Some(path), _) => Secret::read_file(path)?,
        (None, Some(dir)) => Secret::load_or_create(dir)?,
        (None, None) => {
            eprintln!(
                "tldsnap: no --session-secret-file or --data-dir: website sessions end when the server stops"
            );
            Secret::random()
        }
    };
    let sign_outs = match &args.data_dir {
        Some(dir) => SignOuts::load_or_create(dir)?,
        None => {
            if args.session_secret_file.is_some() {
                eprintln!(
                    "tldsnap: no --data-dir: website sign-outs are held in memory, and a \
                     signed-out session cookie is good again after a restart until it expires"
                );
            }
            SignOuts::default()
        }
    };
    let config = api::Config {
        public_url,
        session_secret,
        sign_outs: Arc::new(sign_outs),
        trust_proxy: args.trust_proxy,
        max_age_days: args.max_age_days,
        today: args.today,
        body_timeout: Duration::from_secs(args.body_timeout),
        max_streams_per_key: usize::try_from(args.max_streams_per_key)?,
        max_in_flight_per_key: usize::try_from(args.max_in_flight_per_key)?,
        ..api::Config::default()
    };
    let connections = server::Config {
        max_connections: usize::try_from(args.max_connections)?,
        max_connections_per_address: usize::try_from(args.max_connections_per_address)?,
        idle_timeout: Duration::from_secs(args.header_timeout),
        ..server::Config::default()
    };
    let state = State::new(Arc::clone(&store), Arc::clone(&access), config);
    // Webhooks keep their subscriptions beside the event log they deliver.
    let hooks = match (&events, &args.data_dir) {
        (Some(log), Some(dir)) => {
            let config = webhooks::Config {
                data_dir: dir.clone(),
                sender: webhooks::Sender::new(args.allow_private_webhooks),
                schedule: args.webhook_retry_schedule.0.clone(),
                owner_check: api::webhooks::owner_check(Arc::clone(&access)),
            };
            let hooks = Webhooks::open(config, Arc::clone(log), Arc::new(SystemClock))?;
            Some(Arc::new(hooks))
        }
        _ => None,
    };
    let state = match &events {
        Some(log) => state.with_events(Arc::clone(log)),
        None => state,
    };
    let state = match &hooks {
        Some(hooks) => state.with_webhooks(Arc::clone(hooks)),
        None => state,
    };
    let state = match live {
        Some(live) => state.with_live(live),
        None => state,
    };
    let state = match &remote {
        Some((_, _, status)) => state.with_remote(Arc::clone(status)),
        None => state,
    };
    let state = Arc::new(match &args.refresh.feeds {
        Some(feeds) => state.with_feeds(feeds.clone()),
        None => state,
    });
    if let Some(hooks) = &hooks {
        hooks.start();
        eprintln!(
            "tldsnap: {} webhook subscription(s){}",
            hooks.count(),
            if args.allow_private_webhooks {
                "; http:// and private addresses allowed (--allow-private-webhooks)"
            } else {
                ""
            }
        );
    }
    let replica = remote.map(|(remote, dir, status)| {
        Arc::new(Replica::new(remote, Arc::clone(&store), dir, status))
    });
    let source = match (&replica, store.path()) {
        (Some(replica), _) => replica.remote().location().prefix_url(),
        (None, Some(path)) => path.display().to_string(),
        (None, None) => "built-in real data".to_owned(),
    };

    if let Some(loaded) = store.load() {
        eprintln!("tldsnap: serving {}", describe(&loaded, &source));
    }
    if let Some(field) = access.usage_store_replica() {
        eprintln!(
            "tldsnap: usage store: this replica's credits are field {field} of each key's hash"
        );
    }
    let warmer = Warmer::start(Arc::clone(&state));
    warmer.ask();
    start_trimmer(Arc::clone(&state));
    eprintln!(
        "tldsnap: {} API key(s); listening on http://{local} (SIGHUP reloads, SIGTERM stops)",
        access.key_count()
    );

    let reloader = {
        let store = Arc::clone(&store);
        let access = Arc::clone(&access);
        let warmer = warmer.clone();
        let replica = replica.clone();
        let source = source.clone();
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                eprintln!("tldsnap: SIGHUP: reloading");
                if let Some(replica) = &replica {
                    let outcome = replica.poll().await;
                    report_poll(&outcome, &warmer, &source);
                } else if store.path().is_some() {
                    let outcome = store.reload_async().await;
                    report(&outcome, &source);
                    if outcome.is_ok() {
                        warmer.ask();
                    }
                }
                match access.reload_keys() {
                    Ok(n) => eprintln!("tldsnap: keys reloaded: {n} key(s) in force"),
                    Err(e) => eprintln!("tldsnap: keys reload refused, old keys kept: {e}"),
                }
            }
        })
    };
    let watcher = if let Some(replica) = &replica {
        // Always started: without --watch it stops once a snapshot is served (it
        // retries until then); with --watch it keeps polling.
        let warmer = warmer.clone();
        let source = source.clone();
        let every = args
            .watch_interval_ms
            .map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis);
        Some(tokio::spawn(Arc::clone(replica).run(
            every,
            args.watch,
            std::future::pending::<()>(),
            move |outcome| report_poll(outcome, &warmer, &source),
        )))
    } else {
        args.watch.then(|| {
            let store = Arc::clone(&store);
            let warmer = warmer.clone();
            let source = source.clone();
            tokio::spawn(store.watch(
                Duration::from_millis(args.watch_interval_ms.unwrap_or(1000)),
                std::future::pending::<()>(),
                move |outcome| {
                    report(outcome, &source);
                    if outcome.is_ok() {
                        warmer.ask();
                    }
                },
            ))
        })
    };

    let refreshing = refresher.map(|refresher| {
        eprintln!(
            "tldsnap: refreshing every {:?} (±20%) from {} into {}",
            refresher.every,
            refresher.inputs.feeds.display(),
            refresher.output.display()
        );
        tokio::spawn(refresher.run(Arc::clone(&store), warmer.clone()))
    });

    let shutdown = async move {
        tokio::select! {
            _ = terminate.recv() => eprintln!("tldsnap: SIGTERM: finishing in-flight requests"),
            _ = interrupt.recv() => eprintln!("tldsnap: SIGINT: finishing in-flight requests"),
        }
    };
    let served = match listeners {
        Listeners::One(listener) => server::run(listener, state, connections, shutdown).await,
        Listeners::PerThread(listeners) => {
            server::run_threads(listeners, state, connections, shutdown).await
        }
    };
    reloader.abort();
    if let Some(watcher) = watcher {
        watcher.abort();
    }
    if let Some(refreshing) = refreshing {
        refreshing.abort();
    }
    if let Some(hooks) = &hooks {
        hooks.shutdown().await;
    }
    let persisted = access.shutdown().await;
    served?;
    persisted?;
    eprintln!("tldsnap: stopped");
    Ok(())
}

/// How long a blocking thread of the runtime waits for more work before it ends
/// (tokio's default is 10 s). The periodic blocking jobs run on threads of their own
/// ([`tldsnap::blocking`]), which end with their work; what is left on tokio's pool (a
/// replica's download writer) comes seldom. While any other thread lives the process's
/// file table is shared: Linux then takes and drops a reference on the socket's file in
/// every system call of the serving thread (`fdget`/`fput`: ~0.6% of a request's CPU,
/// ~60 ns, measured with `perf record`).
const BLOCKING_KEEP_ALIVE: Duration = Duration::from_millis(50);

/// How often the trimmer looks at the connections that have ended.
const TRIM_INTERVAL: Duration = Duration::from_secs(1);

/// Connections ended since the last trim that make the trimmer trim again.
const TRIM_AFTER_ENDED: u64 = 256;

/// Gives the heap's free pages back to the kernel (glibc's `malloc_trim`, from a
/// blocking thread): once a second after start (what start-up freed: the keys file and
/// its parse), then whenever 256 connections have ended since the last trim. glibc
/// keeps the pages of freed memory inside the heap; every connection frees ~20 KB when
/// it ends (hyper's two 8 KiB buffers, its task), and the next connections, placed
/// elsewhere in those chunks, write into pages the first ones never touched, so after a
/// thousand connections come and go the process stays as large as its busiest moment
/// and grows with churn. A trim costs nothing per request; it holds each malloc arena's
/// lock while it runs (0.2 ms after start, 1.2-1.6 ms after 1,000 connections ended,
/// measured 2026-11-26), at most once a second (docs/PERFORMANCE.md, "Memory at 1,000
/// connections"). Elsewhere than glibc, nothing.
fn start_trimmer(state: Arc<State>) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    tokio::spawn(async move {
        let start = tokio::time::Instant::now() + TRIM_INTERVAL;
        let mut every = tokio::time::interval_at(start, TRIM_INTERVAL);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut trimmed_at: Option<u64> = None;
        loop {
            every.tick().await;
            let ended = state.metrics.connections_ended();
            if trimmed_at.is_some_and(|at| ended < at + TRIM_AFTER_ENDED) {
                continue;
            }
            trimmed_at = Some(ended);
            // SAFETY: malloc_trim takes no pointer and only locks and trims glibc's own
            // arenas; it is safe to call from any thread at any time.
            let _ = tldsnap::blocking::run(|| unsafe { libc::malloc_trim(0) }).await;
        }
    });
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = state;
}

/// Where connections come from: one listener for the shared runtime, or one per serving
/// thread.
enum Listeners {
    One(TcpListener),
    PerThread(Vec<std::net::TcpListener>),
}

/// Renders the most visited web pages of the snapshot just loaded, off the request
/// path (a blocking thread), so their first visitor does not wait for them.
/// Renders the website's most visited pages for the snapshot served now, after a start
/// and after each reload: one task on the runtime that renders a page at a time and
/// yields between pages ([`tldsnap::web::warm_in_steps`]), so requests are answered in
/// between. On a blocking thread (even one at `SCHED_IDLE` priority) the kernel gave it
/// whole scheduler slices (4 ms) on a worker's core after every reload: hot swap every
/// 100 ms under load had p99 4.0 ms instead of 1.7 ms without warming
/// (docs/PERFORMANCE.md, "Hot swap"). Asks while it renders are folded into one more
/// round, for the snapshot served by then.
#[derive(Clone)]
struct Warmer {
    state: Arc<State>,
    /// One pending ask at most: a full channel means a round is already due.
    asks: tokio::sync::mpsc::Sender<()>,
}

impl Warmer {
    /// Starts the warming task (on the current runtime).
    fn start(state: Arc<State>) -> Warmer {
        let (asks, mut rounds) = tokio::sync::mpsc::channel::<()>(1);
        let for_task = Arc::clone(&state);
        tokio::spawn(async move {
            while rounds.recv().await.is_some() {
                tldsnap::web::warm_in_steps(&for_task).await;
            }
        });
        Warmer { state, asks }
    }

    fn ask(&self) {
        // Full: a round not yet started will see the snapshot served now.
        let _ = self.asks.try_send(());
    }
}

fn describe(loaded: &Loaded, from: &str) -> String {
    let header = loaded.snapshot.header();
    let data = loaded.snapshot.data();
    format!(
        "snapshot {} ({from}): {} TLDs, {} registrars, {} offers, data as of {}",
        header.hash_hex(),
        data.tld_count(),
        data.registrar_count(),
        data.offer_count(),
        tldsnap::time::iso_millis(header.data_updated_ms)
    )
}

fn report(outcome: &Result<Arc<Loaded>, ReloadError>, source: &str) {
    match outcome {
        Ok(loaded) => eprintln!(
            "tldsnap: reloaded: now serving {}",
            describe(loaded, source)
        ),
        Err(err) => {
            eprintln!("tldsnap: reload refused, still serving the previous snapshot: {err}")
        }
    }
}

/// Logs a poll of the pointer in object storage (a 304 is silent), and renders the pages of a snapshot swapped in.
fn report_poll(outcome: &Result<Polled, RemoteError>, warmer: &Warmer, source: &str) {
    let state = &warmer.state;
    match outcome {
        Ok(Polled::Swapped(loaded)) => {
            eprintln!(
                "tldsnap: reloaded: now serving {}",
                describe(loaded, source)
            );
            warmer.ask();
        }
        Ok(Polled::Unchanged) => {
            if let Some(loaded) = state.store.load() {
                eprintln!(
                    "tldsnap: {source}: the pointer names the snapshot served ({})",
                    loaded.snapshot.header().hash_hex()
                );
            }
        }
        Ok(Polled::NotModified) => {}
        Err(err) => match state.store.load() {
            Some(loaded) => eprintln!(
                "tldsnap: {source}: {err}; still serving {}",
                loaded.snapshot.header().hash_hex()
            ),
            None => eprintln!("tldsnap: {source}: {err}; not ready, retrying"),
        },
    }
}
