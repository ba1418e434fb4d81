//! `tldsnap audit`: the portfolio audit of `POST /api/v1/client/portfolio/audit`,
//! offline, for people who will never run the server.

use std::io::{Read, Write};
use std::path::PathBuf;

use super::CliError;
use tldsnap::access::plans::{Plans, Sight};
use tldsnap::audit::Names;
use tldsnap::audit::portfolio::{self, InputError};
use tldsnap::snapshot::Snapshot;

/// Output formats.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// The API's JSON answer.
    Json,
    /// The API's CSV answer (one row per domain).
    Csv,
    /// A table for people.
    Table,
}

/// Arguments of `tldsnap audit`.
#[derive(clap::Args)]
pub struct Args {
    /// The portfolio: CSV (header domain[,registrar][,renew_price][,expires]) or JSON
    /// ({"domains": [...]}); `-` reads standard input. A file ending in .json, or whose
    /// first non-blank byte is `{`, is JSON; anything else is CSV.
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Snapshot file; without it, the real data shipped in the binary.
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
    /// Apply this plan's rules (its audit limit; free TLDs only on `free`) and report it
    /// as `meta.tier`. Without it no plan rule applies.
    #[arg(long)]
    tier: Option<String>,
}

/// Runs `tldsnap audit`.
pub fn run(args: Args) -> Result<(), CliError> {
    let mut body = Vec::new();
    if args.file.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut body)?;
    } else {
        body = std::fs::read(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    }
    let plan = match &args.tier {
        None => None,
        Some(t) => {
            let plans = Plans::default();
            let plan = plans.get(t).cloned();
            Some(plan.ok_or_else(|| {
                format!("unknown tier {t:?} (one of: {})", plans.names().join(", "))
            })?)
        }
    };
    let limit = plan.as_ref().map_or(usize::MAX, |p| p.audit_limit as usize);
    let is_json = args.file.extension().is_some_and(|e| e == "json")
        || body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let parsed = if is_json {
        portfolio::parse_json(&body, limit)
    } else {
        portfolio::parse_csv(&body, limit)
    };
    let parsed = parsed.map_err(|e| match e {
        InputError::TooMany { limit } => format!(
            "too_many_domains: the {} plan audits at most {limit} domains at once",
            args.tier.as_deref().unwrap_or("")
        ),
        InputError::Invalid(m) => format!("{}: {m}", args.file.display()),
    })?;
    let snap = match &args.snapshot {
        Some(path) => Snapshot::open(path)?,
        None => tldsnap::build::default_snapshot()?,
    };
    let names = Names::embedded();
    let fresh = tldsnap::query::Freshness::new(
        tldsnap::time::now_ms(),
        tldsnap::query::DEFAULT_MAX_AGE_DAYS,
        false,
    );
    let sight = plan.as_ref().map_or(Sight::ALL, |p| p.sight());
    let audit = portfolio::audit(snap.data(), &names, &parsed, fresh, sight);
    let mut out = Vec::new();
    match args.format {
        Format::Json => {
            portfolio::write_json(
                snap.data(),
                &audit,
                plan.as_ref().map(|p| p.name.as_str()),
                &mut out,
            );
            out.push(b'\n');
        }
        Format::Csv => portfolio::write_csv(snap.data(), &audit, &mut out),
        Format::Table => portfolio::write_table(snap.data(), &audit, &mut out),
    }
    std::io::stdout().write_all(&out)?;
    Ok(())
}
