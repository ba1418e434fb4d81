//! One refresh of the market: collect every configured registrar (through the quality
//! gate), import the feeds directory, build the snapshot, in memory, ready to publish.
//!
//! ```text
//! collect::run ──▶ feeds dir (new / unchanged / quarantined / failed per registrar)
//!                      │ import::import (every feed; a registrar whose collection failed
//!                      ▼  or was quarantined keeps its previous version)
//!                 build::build ──▶ snapshot bytes ──▶ the caller publishes them
//! ```
//!
//! `tldsnap refresh` publishes the bytes to a file (atomic replace) or to object
//! storage; `tldsnap serve --refresh-every` writes them beside the server and swaps them
//! in through the store. Both call [`run_blocking`] on a thread of its own: the
//! collection runs on a current-thread runtime there, and the import and build are CPU
//! work that must not hold a serving worker.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::build::{self, BuildOptions, BuildReport};
use crate::collect::{self, Outcome, config::Config};
use crate::import::{self, fx::Rates, tlds::TldList, write};

/// Where a refresh reads from.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The feeds directory the collectors write into and the import reads.
    pub feeds: PathBuf,
    /// IANA and Public Suffix lists (`import --tlds`).
    pub tlds: PathBuf,
    /// ECB reference rates (`import --fx`).
    pub fx: PathBuf,
    /// Private targets (and plain http) allowed for the collectors.
    pub allow_private: bool,
}

impl Inputs {
    /// `feeds`, with the import's defaults for the lists and rates it needs:
    /// `FEEDS/../tlds` and `FEEDS/../fx`.
    pub fn new(
        feeds: PathBuf,
        tlds: Option<PathBuf>,
        fx: Option<PathBuf>,
        allow_private: bool,
    ) -> Inputs {
        Inputs {
            tlds: tlds.unwrap_or_else(|| feeds.join("..").join("tlds")),
            fx: fx.unwrap_or_else(|| feeds.join("..").join("fx")),
            feeds,
            allow_private,
        }
    }
}

/// What one refresh produced.
#[derive(Debug)]
pub struct Refreshed {
    /// Per registrar, what its collection became.
    pub outcomes: Vec<(String, Outcome)>,
    /// The snapshot.
    pub bytes: Vec<u8>,
    /// What the build reports of it.
    pub report: BuildReport,
    /// Wall time of the collection.
    pub collect_time: Duration,
    /// Wall time and CPU time of the import.
    pub import_time: (Duration, Duration),
    /// Wall time and CPU time of the build.
    pub build_time: (Duration, Duration),
}

impl Refreshed {
    /// Registrars whose collection failed or was quarantined (each kept its previous
    /// version).
    pub fn problems(&self) -> usize {
        self.outcomes.iter().filter(|(_, o)| o.is_problem()).count()
    }

    /// One line: the snapshot, and where the time went.
    pub fn summary(&self) -> String {
        let r = &self.report;
        format!(
            "snapshot {} ({} TLDs, {} registrars, {} offers, {} history changes, {} bytes); \
             collect {:.2} s, import {:.2} s ({:.2} s CPU), build {:.2} s ({:.2} s CPU)",
            r.hash_hex,
            r.tlds,
            r.registrars,
            r.offers,
            r.changes,
            r.bytes,
            self.collect_time.as_secs_f64(),
            self.import_time.0.as_secs_f64(),
            self.import_time.1.as_secs_f64(),
            self.build_time.0.as_secs_f64(),
            self.build_time.1.as_secs_f64(),
        )
    }
}

/// Collects, imports and builds, blocking the calling thread (which must not be a
/// runtime's worker). A registrar that fails or is quarantined never stops the others:
/// the import reads its previous version. `Err` when the import or the build fails
/// (nothing to publish then).
pub fn run_blocking(config: &Config, inputs: &Inputs) -> Result<Refreshed, String> {
    let opts = collect::Options {
        feeds: inputs.feeds.clone(),
        fx: inputs.fx.clone(),
        registrars: Vec::new(),
        accept: Vec::new(),
        allow_private: inputs.allow_private,
    };
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the collectors' runtime: {e}"))?;
    let outcomes = runtime.block_on(collect::run(config, &opts));
    drop(runtime);
    let collect_time = started.elapsed();

    let (cpu, wall) = (thread_cpu(), Instant::now());
    let tlds = TldList::load(&inputs.tlds).map_err(|e| e.to_string())?;
    let rates = Rates::load(&inputs.fx).map_err(|e| e.to_string())?;
    let ctx = import::Context {
        tlds: &tlds,
        rates: &rates,
    };
    let imported = import::import(&inputs.feeds, &ctx).map_err(|e| format!("import: {e}"))?;
    let import_time = (wall.elapsed(), thread_cpu().saturating_sub(cpu));

    let (cpu, wall) = (thread_cpu(), Instant::now());
    // The price source as `tldsnap import` writes it and `tldsnap build` reads it, in
    // memory: the same files, the same validation.
    let s = &imported.source;
    let (registrars, prices, history, tld_rows) = (
        write::registrars_csv(s),
        write::prices_csv(s),
        write::history_csv(s),
        write::tlds_csv(s),
    );
    let source = crate::source::read_all(
        &registrars[..],
        &prices[..],
        Some(&history[..]),
        Some(&tld_rows[..]),
    )
    .and_then(|mut source| {
        source.rates = crate::source::read_rates(&write::rates_csv(s)[..])?;
        Ok(source)
    })
    .map_err(|e| format!("the imported price source was refused: {e}"))?;
    let (bytes, report) =
        build::build(&source, &BuildOptions::default()).map_err(|e| format!("build: {e}"))?;
    let build_time = (wall.elapsed(), thread_cpu().saturating_sub(cpu));
    Ok(Refreshed {
        outcomes,
        bytes,
        report,
        collect_time,
        import_time,
        build_time,
    })
}

/// CPU time the calling thread has used.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call, and
    // CLOCK_THREAD_CPUTIME_ID is a clock every Linux and BSD kernel provides.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

/// Parses an interval like `30s`, `15m`, `6h` or `500ms` (the units of the webhook
/// retry schedule); zero is refused.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    match crate::webhooks::parse_schedule(text)?.as_slice() {
        [one] if !one.is_zero() => Ok(*one),
        _ => Err(format!(
            "{text:?} is not one interval above zero like 500ms, 30s, 15m or 6h"
        )),
    }
}
