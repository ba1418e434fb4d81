//! `tldsnap collect`: the registrars' own price lists -> new dated feed versions; the
//! ECB's reference rates -> the rate table.

use std::path::PathBuf;

use super::CliError;
use tldsnap::collect::{self, Options, config::Config};

/// Arguments of `tldsnap collect`.
#[derive(clap::Args)]
#[command(
    about = "Fetch the registrars' own price lists into new dated versions of their feeds",
    long_about = "Fetches the price list of every registrar that has a table in --config (or \
only those named with --registrar) from the registrar's own API, and keeps it unedited as a \
new dated version beside the registrar's feed in --feeds (<feed>/collected/), with a \
provenance record, so that `tldsnap import` reads it. A list equal to the one in use writes \
no new version and is recorded as seen again. A version that fails the quality gate (it must \
parse completely, keep 80% of the previous TLDs, move at most 10% of prices by more than 50%, \
lose no price to zero, keep its currency) is quarantined (<feed>/quarantine/) with a report, \
and the previous version stays in use; --accept KEY takes it after a person has looked. \
An [ecb] table collects the European Central Bank's reference rates instead: its last 90 \
days are checked against the rate table in --fx (known days must agree, no gap, no \
future day, no rate doubling or halving from one day to the next) and the new days \
added to it; a refused answer is quarantined in <fx>/quarantine/ and the table left \
as it was. \
Prints one line per registrar and exits 1 when any failed or was quarantined. The \
configuration file holds credentials and must be readable by its owner only. See \
docs/COLLECT.md."
)]
pub struct Args {
    /// The collectors' TOML configuration (owner-only): one table per registrar key.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The feeds directory.
    #[arg(long, value_name = "DIR", default_value = "snapshots/feeds")]
    feeds: PathBuf,
    /// Directory with the ECB reference rate table that an [ecb] table's rates are
    /// merged into [default: FEEDS/../fx].
    #[arg(long, value_name = "DIR")]
    fx: Option<PathBuf>,
    /// Collect only this registrar (repeatable) [default: every configured one].
    #[arg(long = "registrar", value_name = "KEY")]
    registrars: Vec<String>,
    /// Take this registrar's quarantined version into use instead of collecting it
    /// (repeatable).
    #[arg(long, value_name = "KEY")]
    accept: Vec<String>,
    /// Allow the registrars' endpoints (or their base_url) on loopback and private
    /// addresses, and plain http:// (tests, an operator's own proxy).
    #[arg(long)]
    allow_private_targets: bool,
}

/// Runs the collection and prints one line per registrar.
pub fn run(args: Args) -> Result<(), CliError> {
    let config = Config::load(&args.config, &collect::keys())?;
    if config.registrars.is_empty() && args.accept.is_empty() {
        return Err(format!(
            "{}: no registrar table (known: {})",
            args.config.display(),
            collect::keys().join(", ")
        )
        .into());
    }
    let opts = Options {
        fx: args.fx.unwrap_or_else(|| args.feeds.join("..").join("fx")),
        feeds: args.feeds,
        registrars: args.registrars,
        accept: args.accept,
        allow_private: args.allow_private_targets,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcomes = runtime.block_on(collect::run(&config, &opts));
    let mut problems = 0;
    for (key, outcome) in &outcomes {
        println!("{}", outcome.line(key));
        if outcome.is_problem() {
            problems += 1;
        }
    }
    if problems > 0 {
        return Err(format!(
            "{problems} of {} registrars failed or were quarantined",
            outcomes.len()
        )
        .into());
    }
    Ok(())
}
