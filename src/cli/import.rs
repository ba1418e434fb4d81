//! `tldsnap import`: real registrar feeds -> the canonical price source.

use std::path::PathBuf;

use super::CliError;
use tldsnap::import::{self, fx::Rates, report, tlds::TldList, write};

/// Arguments of `tldsnap import`.
#[derive(clap::Args)]
#[command(
    about = "Real registrar feeds -> price source directory (registrars.csv, prices.csv, history.csv, tlds.csv)",
    long_about = "Reads the feed folders under --feeds (dynadot, porkbun, openprovider, \
namecheap, nira, aws-route53, cloudflare, each with an optional history/ of dated versions; \
domainpricing, one CSV per registrar; glauca, dated GBP versions), keeps the real, priced TLDs \
(checked against the IANA root zone list and the Public Suffix List in --tlds), converts prices \
in other currencies to USD at the ECB reference rate of the price's date (--fx), and writes \
registrars.csv, prices.csv, history.csv and tlds.csv (the IANA list with each TLD's type and \
manager from --tlds/root-zone-db.csv) to --output. Prints, per registrar, rows read, kept \
and dropped by reason; --report adds the data-quality report (outlier flags). Feed files that \
carry no date of their own are dated by --feeds/dates.csv (file,date,evidence). A feed that \
cannot be read at all fails the import (exit 1) and nothing is written. See docs/IMPORT.md."
)]
pub struct Args {
    /// Directory with one folder per registrar feed (e.g. snapshots/feeds).
    #[arg(long, value_name = "DIR")]
    feeds: PathBuf,
    /// Price source directory to write (created if missing; the four files are replaced).
    #[arg(long, value_name = "SRC_DIR")]
    output: PathBuf,
    /// Directory with iana-tlds.txt, public_suffix_list.dat and (optional) root-zone-db.csv
    /// [default: FEEDS/../tlds].
    #[arg(long, value_name = "DIR")]
    tlds: Option<PathBuf>,
    /// Directory with the ECB reference rate table eurofxref-hist.csv [default: FEEDS/../fx].
    #[arg(long, value_name = "DIR")]
    fx: Option<PathBuf>,
    /// Also print the data-quality report: per registrar the TLDs kept and dropped and
    /// why, and every flagged row (outliers, renewals below the first year, jumps between
    /// versions, conversions at old rates). Markdown.
    #[arg(long)]
    report: bool,
    /// Do not print the summary.
    #[arg(long, short)]
    quiet: bool,
    /// Also print every dropped row of the current feed files (registrar, key as the
    /// feed wrote it, reason), tab-separated.
    #[arg(long)]
    list_dropped: bool,
}

/// Runs the import: read and check every feed, print the summary, write the source.
pub fn run(args: Args) -> Result<(), CliError> {
    let tlds_dir = args
        .tlds
        .unwrap_or_else(|| args.feeds.join("..").join("tlds"));
    let tlds = TldList::load(&tlds_dir)?;
    let fx_dir = args.fx.unwrap_or_else(|| args.feeds.join("..").join("fx"));
    let rates = Rates::load(&fx_dir)?;
    let ctx = import::Context {
        tlds: &tlds,
        rates: &rates,
    };
    let result = import::import(&args.feeds, &ctx)?;
    write::write_source(&args.output, &result.source).map_err(|e| {
        format!(
            "{}: cannot write the price source: {e}",
            args.output.display()
        )
    })?;
    if !args.quiet {
        print!("{}", report::render(&result));
        println!("Wrote {}.", args.output.display());
    }
    if args.report {
        print!("{}", report::render_quality(&result));
    }
    if args.list_dropped {
        print!("{}", report::render_dropped(&result));
    }
    Ok(())
}
