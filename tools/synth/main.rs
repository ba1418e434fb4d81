//! `tldsnap-synth`: writes a synthetic price source (docs/IMPORT.md) of any size.
//!
//! ```text
//! cargo run --release --bin tldsnap-synth -- --size s --output target/synth/s
//! cargo run --release --bin tldsnap-synth -- --tlds 500 --registrars 12 --density 0.4 \
//!     --seed=7 --no-history --output /tmp/src
//! ```
//!
//! `--size` picks a standard size (S: 3,428 TLDs x 60 registrars; L: 10x S's offers); the other
//! flags override single fields of it. The same flags always give the same bytes.

// `gen` is a reserved keyword in edition 2024, hence the module name.
#[path = "gen.rs"]
mod synth;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};

/// Standard sizes.
#[derive(Clone, Copy, ValueEnum)]
enum Size {
    /// S: 3,428 TLDs x 60 registrars, ~60% dense (~123k rows).
    S,
    /// L: 34,280 TLDs x 60 registrars, ~60% dense (~1.23M rows).
    L,
}

/// Writes a synthetic, deterministic price source (registrars.csv, prices.csv,
/// history.csv) for `tldsnap build`.
#[derive(Parser)]
#[command(name = "tldsnap-synth", version, about)]
struct Args {
    /// Standard size to start from.
    #[arg(long, value_enum, default_value = "s")]
    size: Size,
    /// Number of TLDs (overrides the size's).
    #[arg(long)]
    tlds: Option<usize>,
    /// Number of registrars (overrides the size's).
    #[arg(long)]
    registrars: Option<usize>,
    /// Average share of (TLD, registrar) pairs with a row, in (0, 1] (overrides the size's).
    #[arg(long)]
    density: Option<f64>,
    /// PRNG seed; the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory to write into (created if missing).
    #[arg(long)]
    output: PathBuf,
    /// Do not write history.csv.
    #[arg(long)]
    no_history: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut cfg = match args.size {
        Size::S => synth::Config::small(),
        Size::L => synth::Config::large(),
    };
    cfg.tlds = args.tlds.unwrap_or(cfg.tlds);
    cfg.registrars = args.registrars.unwrap_or(cfg.registrars);
    cfg.density = args.density.unwrap_or(cfg.density);
    cfg.seed = args.seed;
    cfg.history = !args.no_history;

    let start = Instant::now();
    match synth::write_source(&cfg, &args.output) {
        Ok(s) => {
            eprintln!(
                "wrote {}: {} TLDs ({} unsold, {} premium), {} registrars, {} price rows \
                 ({} sellers, {} renewal-only, {} promos, {} forced ties, {} without transfer), \
                 {} history rows in {:.2} s",
                args.output.display(),
                s.tlds,
                s.unsold_tlds,
                s.premium_tlds,
                s.registrars,
                s.rows,
                s.sellers,
                s.renewal_only,
                s.promos,
                s.forced_ties,
                s.missing_transfer,
                s.history_rows,
                start.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: writing {}: {e}", args.output.display());
            ExitCode::from(1)
        }
    }
}
