//! `tldsnap refresh`: collect → gate → import → build → publish, once or on a schedule.

use std::path::PathBuf;
use std::time::Duration;

use super::CliError;
use tldsnap::collect::{self, config::Config};
use tldsnap::refresh::{self, Inputs, Refreshed};
use tldsnap::remote::{self, Location, Remote};

/// Arguments of `tldsnap refresh`.
#[derive(clap::Args)]
#[command(
    about = "Collect, import, build and publish the market once (or every --every)",
    long_about = "Runs `tldsnap collect` for every registrar that has a table in --config \
(quality gate included), then imports --feeds and builds the snapshot, and publishes it: \
to a file (written aside and renamed into place, so a server with --watch or SIGHUP \
picks it up) or to object storage as `tldsnap build --output s3://…` does (the \
replicas follow with --watch). A registrar whose collection fails or is quarantined \
never stops the others: its previous version is used. An [ecb] table adds the \
European Central Bank's new reference rates to the table in --fx first, so the \
import converts with them. Once, it exits 1 after \
publishing when any registrar failed or was quarantined. With --every it repeats, \
each wait drawn within ±20% of the interval, until stopped. See docs/COLLECT.md and \
docs/DEPLOY.md."
)]
pub struct Args {
    /// The collectors' TOML configuration (owner-only): one table per registrar key.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The feeds directory (collected into, then imported).
    #[arg(long, value_name = "DIR", default_value = "snapshots/feeds")]
    feeds: PathBuf,
    /// Directory with iana-tlds.txt, public_suffix_list.dat and root-zone-db.csv
    /// [default: FEEDS/../tlds].
    #[arg(long, value_name = "DIR")]
    tlds: Option<PathBuf>,
    /// Directory with the ECB reference rate table [default: FEEDS/../fx].
    #[arg(long, value_name = "DIR")]
    fx: Option<PathBuf>,
    /// Snapshot file to replace atomically, or `s3://BUCKET/PREFIX/` (or
    /// `…/NAME.snap`) to publish to object storage; credentials and endpoint from the
    /// AWS environment variables.
    #[arg(long, value_name = "FILE|s3://…")]
    output: String,
    /// Repeat every DURATION (500ms, 30s, 15m, 6h), each wait within ±20%.
    #[arg(long, value_name = "DURATION", value_parser = refresh::parse_interval)]
    every: Option<Duration>,
    /// Allow the registrars' endpoints (or their base_url) on loopback and private
    /// addresses, and plain http:// (tests, an operator's own proxy).
    #[arg(long)]
    allow_private_targets: bool,
}

/// Where the snapshot goes.
enum Target {
    File(PathBuf),
    Store(Remote),
}

/// Runs one refresh, or one every --every.
pub fn run(args: Args) -> Result<(), CliError> {
    let config = Config::load(&args.config, &collect::keys())?;
    if config.registrars.is_empty() {
        return Err(format!(
            "{}: no registrar table (known: {})",
            args.config.display(),
            collect::keys().join(", ")
        )
        .into());
    }
    let inputs = Inputs::new(args.feeds, args.tlds, args.fx, args.allow_private_targets);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let target = if remote::is_remote(&args.output) {
        remote::install_tls_provider();
        Target::Store(Remote::from_env(Location::parse(&args.output)?)?)
    } else {
        Target::File(PathBuf::from(&args.output))
    };
    let Some(every) = args.every else {
        let refreshed = once(&config, &inputs, &target, &runtime)?;
        if refreshed.problems() > 0 {
            return Err(format!(
                "{} of {} registrars failed or were quarantined (their previous versions were published)",
                refreshed.problems(),
                refreshed.outcomes.len()
            )
            .into());
        }
        return Ok(());
    };
    loop {
        if let Err(e) = once(&config, &inputs, &target, &runtime) {
            eprintln!("tldsnap: refresh failed, nothing published this round: {e}");
        }
        std::thread::sleep(tldsnap::remote::replica::jittered(every));
    }
}

/// One round: collect, import, build (on this thread), publish. Prints one line per
/// registrar, then what was built and published.
fn once(
    config: &Config,
    inputs: &Inputs,
    target: &Target,
    runtime: &tokio::runtime::Runtime,
) -> Result<Refreshed, CliError> {
    let started = std::time::Instant::now();
    let refreshed = refresh::run_blocking(config, inputs)?;
    for (key, outcome) in &refreshed.outcomes {
        println!("{}", outcome.line(key));
    }
    println!("built {}", refreshed.summary());
    match target {
        Target::File(path) => {
            tldsnap::files::write_atomic(path, &refreshed.bytes)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            println!("published {}", path.display());
        }
        Target::Store(remote) => {
            runtime.block_on(super::publish::publish_to(remote, refreshed.bytes.clone()))?;
        }
    }
    println!("refreshed in {:.2} s", started.elapsed().as_secs_f64());
    Ok(refreshed)
}
