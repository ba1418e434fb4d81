//! `tldsnap build`: price source directory -> snapshot file.

use std::path::PathBuf;

use super::CliError;
use tldsnap::build::{BuildOptions, build_dir};

/// Arguments of `tldsnap build`.
#[derive(clap::Args)]
pub struct Args {
    /// Price source directory (registrars.csv, prices.csv, optional history.csv).
    #[arg(long)]
    input: PathBuf,
    /// Snapshot file to write (atomically: temp file + fsync + rename).
    #[arg(long)]
    output: PathBuf,
    /// Record this RFC 3339 time in the header as the build time. Without it the same
    /// input always gives the same bytes.
    #[arg(long, value_name = "RFC3339")]
    built_at: Option<String>,
}

/// Runs `tldsnap build`.
pub fn run(args: Args) -> Result<(), CliError> {
    let built_at_ms = match &args.built_at {
        None => None,
        Some(s) => Some(
            tldsnap::time::parse_rfc3339(s)
                .ok_or_else(|| format!("--built-at {s:?} is not an RFC 3339 timestamp"))?,
        ),
    };
    let report = build_dir(&args.input, &args.output, &BuildOptions { built_at_ms })?;
    println!(
        "built {}: {} TLDs, {} registrars, {} offers ({} sellers), {} history changes, {} bytes, hash {}",
        args.output.display(),
        report.tlds,
        report.registrars,
        report.offers,
        report.sellers,
        report.changes,
        report.bytes,
        report.hash_hex
    );
    Ok(())
}
