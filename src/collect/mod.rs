//! Collectors: each registrar's own machine-readable price list, fetched and kept
//! unedited as a new dated version of its feed, behind a quality gate.
//!
//! ```text
//! config (TOML) ──▶ Collector::collect ──pages──▶ one version's bytes
//!                    (client: guard, retries,        │ parse (import's parser of that shape)
//!                     rate, size cap)                 ▼
//!        same rows as the previous? ──yes──▶ provenance "unchanged" (seen again)
//!                    │ no
//!                    ▼
//!               gate::check ──fails──▶ quarantine/<version> + .report.txt
//!                    │ passes
//!                    ▼
//!          collected/<version> + provenance "new"  ──▶ `tldsnap import` reads it
//! ```
//!
//! One collector per source, each in its own file; [`COLLECTORS`] lists them. Where the
//! versions go and how they are parsed is the import's ([`crate::import::collected`]).
//! The ECB's reference rates ([`ecb`]) are collected the same way but merged into the
//! rate table of the fx directory, behind a gate of their own.

pub mod client;
pub mod config;
pub mod dynadot;
pub mod ecb;
pub mod gate;
pub mod namecheap;
pub mod namecom;
pub mod namesilo;
pub mod openprovider;
pub mod porkbun;
pub mod route53;
pub mod status;
pub mod store;

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use client::{Client, Request};
use config::{Config, RegistrarConfig};

/// One answer of a source, as kept in the provenance record.
#[derive(Debug, Clone)]
pub struct Page {
    /// The URL without secrets.
    pub url: String,
    /// HTTP status.
    pub status: u16,
    /// The body, unedited.
    pub body: Bytes,
}

/// What a collector works with: the client, its registrar's table, the least interval
/// between two requests.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The HTTP client.
    pub client: &'a Client,
    /// The registrar's table.
    pub config: &'a RegistrarConfig,
    /// Least time between two requests (the source's rate limit, or the table's
    /// `min_interval_ms`).
    pub interval: Duration,
}

impl Ctx<'_> {
    /// Sends `request` and returns the answer as a page if it is a 2xx answer of the
    /// expected kind (`json` or `xml`), or why not: refused credentials (401/403), any
    /// other status, an HTML page.
    pub async fn fetch(&self, request: &Request, expect: &str) -> Result<Page, String> {
        let resp = self
            .client
            .send(request, self.interval)
            .await
            .map_err(|e| e.0)?;
        let url = request.public_url();
        let snippet = || snippet(&resp.body);
        match resp.status {
            200..=299 => {}
            401 | 403 => {
                return Err(format!(
                    "HTTP {}: the credentials were refused ({})",
                    resp.status,
                    snippet()
                ));
            }
            s => return Err(format!("HTTP {s} from {url}: {}", snippet())),
        }
        let head: Vec<u8> = resp
            .body
            .iter()
            .copied()
            .skip_while(u8::is_ascii_whitespace)
            .take(15)
            .map(|b| b.to_ascii_lowercase())
            .collect();
        let html = resp.content_type.to_ascii_lowercase().contains("text/html")
            || head.starts_with(b"<!doctype html")
            || head.starts_with(b"<html");
        if html {
            return Err(format!(
                "HTTP {} from {url} is an HTML page, not the API's {expect}: {}",
                resp.status,
                snippet()
            ));
        }
        Ok(Page {
            url,
            status: resp.status,
            body: resp.body,
        })
    }
}

/// The start of a body, as one line of printable text (for error messages).
pub fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(160)]);
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        "empty body".to_string()
    } else if body.len() > 160 {
        format!("{line}…")
    } else {
        line
    }
}

/// A JSON page's body as a value, or why it is not one.
pub fn json_page(page: &Page) -> Result<serde_json::Value, String> {
    serde_json::from_slice(&page.body).map_err(|e| {
        format!(
            "HTTP {} from {} is not complete JSON ({e}): {}",
            page.status,
            page.url,
            snippet(&page.body)
        )
    })
}

/// One source's collector.
pub trait Collector: Sync {
    /// Registrar key (the configuration table's name).
    fn key(&self) -> &'static str;
    /// The collector's own version, recorded in each provenance record.
    fn version(&self) -> u32;
    /// The source's documented rate: least time between two requests.
    fn min_interval(&self) -> Duration;
    /// Whether it collects the ECB's reference rates (merged into the rate table of the
    /// fx directory, [`ecb`]) rather than a registrar's price list.
    fn rates(&self) -> bool {
        false
    }
    /// Fetches the whole list (every page), checking each answer's envelope.
    fn collect<'a>(&'a self, ctx: Ctx<'a>) -> BoxFuture<'a, Result<Vec<Page>, String>>;
}

/// Every collector, by key.
pub static COLLECTORS: [&dyn Collector; 8] = [
    &dynadot::Dynadot,
    &ecb::Ecb,
    &namecheap::Namecheap,
    &namecom::NameCom,
    &namesilo::NameSilo,
    &openprovider::Openprovider,
    &porkbun::Porkbun,
    &route53::Route53,
];

/// The keys of every collector.
pub fn keys() -> Vec<&'static str> {
    COLLECTORS.iter().map(|c| c.key()).collect()
}

/// The collector of `key`.
pub fn collector(key: &str) -> Option<&'static dyn Collector> {
    COLLECTORS.iter().copied().find(|c| c.key() == key)
}

/// What a run collects.
#[derive(Debug, Clone)]
pub struct Options {
    /// The feeds directory.
    pub feeds: PathBuf,
    /// The directory of the ECB's reference rate table (`eurofxref-hist.csv`).
    pub fx: PathBuf,
    /// Only these registrars (empty: every configured one).
    pub registrars: Vec<String>,
    /// Take these registrars' quarantined versions instead of collecting them.
    pub accept: Vec<String>,
    /// Private targets (and plain http) allowed.
    pub allow_private: bool,
}

/// What became of one registrar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A new version was written (relative path, TLDs).
    New(String, usize),
    /// The source answered the same list as the current version (its path, TLDs).
    Unchanged(String, usize),
    /// The gate refused the version: where it is, its report, the rules that failed.
    Quarantined(String, String, Vec<String>),
    /// A quarantined version was taken (its new path).
    Accepted(String),
    /// The ECB's answer added days to the rate table.
    Rates {
        /// The table (relative to the fx directory's parent).
        table: String,
        /// The answer as kept.
        version: String,
        /// Days added.
        added: usize,
        /// The table's newest day now.
        newest: String,
    },
    /// Every day of the ECB's answer is in the rate table already (the table, its
    /// newest day).
    RatesUnchanged(String, String),
    /// Nothing collected: why.
    Failed(String),
}

impl Outcome {
    /// One line for the terminal.
    pub fn line(&self, key: &str) -> String {
        match self {
            Outcome::New(f, n) => format!("{key}: new version {f} ({n} TLDs)"),
            Outcome::Unchanged(f, n) => {
                format!("{key}: unchanged, same list as {f} ({n} TLDs), recorded as seen again")
            }
            Outcome::Quarantined(f, report, rules) => format!(
                "{key}: quarantined {f}: {}; report {report}; the previous version stays in use",
                rules.join("; ")
            ),
            Outcome::Accepted(f) => format!("{key}: accepted {f}"),
            Outcome::Rates {
                table,
                version,
                added,
                newest,
            } => format!(
                "{key}: {added} new {} of rates added to {table} (newest {newest}), answer kept as {version}",
                if *added == 1 { "day" } else { "days" }
            ),
            Outcome::RatesUnchanged(table, newest) => format!(
                "{key}: unchanged, every day answered is in {table} already (newest {newest}), recorded as seen again"
            ),
            Outcome::Failed(why) => format!("{key}: failed: {why}"),
        }
    }

    /// Whether the command should exit non-zero for it.
    pub fn is_problem(&self) -> bool {
        matches!(self, Outcome::Quarantined(..) | Outcome::Failed(_))
    }
}

/// Runs the collection: accepts, then collects each selected registrar in key order.
/// Every message has the configuration's secret values replaced by `***`.
pub async fn run(config: &Config, opts: &Options) -> Vec<(String, Outcome)> {
    let secrets: Vec<String> = config
        .registrars
        .values()
        .flat_map(|r| r.secret_values().map(str::to_string))
        .filter(|s| s.len() >= 3)
        .collect();
    let scrub = |o: Outcome| match o {
        Outcome::Failed(why) => Outcome::Failed(scrub(&why, &secrets)),
        o => o,
    };
    let mut out = Vec::new();
    let mut accepted = Vec::new();
    for key in &opts.accept {
        let o = match collector(key) {
            None => Outcome::Failed(format!(
                "no collector is known as {key:?} (known: {})",
                keys().join(", ")
            )),
            Some(c) if c.rates() => {
                ecb::accept(&opts.fx, c, &config.gate).unwrap_or_else(Outcome::Failed)
            }
            Some(c) => store::accept(&opts.feeds, c).unwrap_or_else(Outcome::Failed),
        };
        out.push((key.clone(), scrub(o)));
        accepted.push(key.clone());
    }
    let selected: Vec<String> = if opts.registrars.is_empty() {
        if opts.accept.is_empty() {
            config.registrars.keys().cloned().collect()
        } else {
            Vec::new()
        }
    } else {
        opts.registrars.clone()
    };
    let client = match Client::new(config.http, opts.allow_private) {
        Ok(c) => c,
        Err(e) => {
            for key in selected {
                out.push((key, Outcome::Failed(e.clone())));
            }
            return out;
        }
    };
    for key in selected {
        if accepted.contains(&key) {
            continue;
        }
        let outcome = match (collector(&key), config.registrars.get(&key)) {
            (None, _) => Outcome::Failed(format!(
                "no collector is known as {key:?} (known: {})",
                keys().join(", ")
            )),
            (Some(_), None) => Outcome::Failed(format!("the configuration has no [{key}] table")),
            (Some(c), Some(rc)) => {
                let ctx = Ctx {
                    client: &client,
                    config: rc,
                    interval: rc.min_interval.unwrap_or_else(|| c.min_interval()),
                };
                let fetched_at = crate::time::now_ms();
                let outcome = if c.rates() {
                    ecb::collect_and_keep(c, ctx, &opts.fx, &config.gate, fetched_at)
                        .await
                        .unwrap_or_else(Outcome::Failed)
                } else {
                    match c.collect(ctx).await {
                        Err(why) => Outcome::Failed(why),
                        Ok(pages) => store::keep(&opts.feeds, c, &config.gate, &pages, fetched_at)
                            .unwrap_or_else(Outcome::Failed),
                    }
                };
                let outcome = scrub(outcome);
                if let Outcome::Failed(why) = &outcome {
                    // The attempt and its reason stay readable from the feeds directory
                    // (`status`); a feeds directory that cannot be written already
                    // failed the collection.
                    let _ = if c.rates() {
                        ecb::record_failure(&opts.fx, c, fetched_at, why)
                    } else {
                        store::record_failure(&opts.feeds, c, fetched_at, why)
                    };
                }
                outcome
            }
        };
        out.push((key, scrub(outcome)));
    }
    out
}

/// `text` with every secret replaced by `***`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "***");
        }
    }
    out
}
