//! `tldsnap build`: price source directory -> snapshot file.

use std::path::PathBuf;

use super::CliError;
use tldsnap::build::{BuildOptions, BuildReport, build, build_dir};
use tldsnap::remote::{self, Location};

/// Arguments of `tldsnap build`.
#[derive(clap::Args)]
pub struct Args {
    /// Price source directory (registrars.csv, prices.csv, optional history.csv and tlds.csv).
    #[arg(long)]
    input: PathBuf,
    /// Snapshot file to write (atomically: temp file + fsync + rename), or
    /// `s3://BUCKET/PREFIX/NAME.snap` to publish it to object storage: the object, then
    /// the pointer `PREFIX/current` replicas follow (see `tldsnap publish`).
    #[arg(long, value_name = "FILE|s3://…")]
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
    let opts = BuildOptions { built_at_ms };
    if let Some(url) = args.output.to_str().filter(|s| remote::is_remote(s)) {
        let location = Location::parse(url)?;
        let source = tldsnap::source::read_dir(&args.input)?;
        let (bytes, report) = build(&source, &opts)?;
        println!("built {}", summary(&report));
        return super::publish::publish(location, bytes);
    }
    let report = build_dir(&args.input, &args.output, &opts)?;
    println!("built {}: {}", args.output.display(), summary(&report));
    Ok(())
}

fn summary(report: &BuildReport) -> String {
    format!(
        "{} TLDs, {} registrars, {} offers ({} sellers), {} history changes, {} bytes, hash {}",
        report.tlds,
        report.registrars,
        report.offers,
        report.sellers,
        report.changes,
        report.bytes,
        report.hash_hex
    )
}
