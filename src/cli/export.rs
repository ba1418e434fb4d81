//! `tldsnap export`: the price grid as CSV, the bytes `GET /api/v1/client/export`
//! streams, written to standard output or, whole or not at all, to `--output`.

use std::io::Write;
use std::path::PathBuf;

use tldsnap::http::params::{self, ExportParams};
use tldsnap::query::export::{self, ExportRequest};

use super::CliError;
use super::query::{Common, check_plan, param, sight};

/// `tldsnap export`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// Comma-separated TLDs (default: every TLD the --tier plan shows).
    #[arg(long)]
    tlds: Option<String>,
    /// Write the amounts in this currency (ISO 4217, an ECB reference rate) [default: USD].
    #[arg(long)]
    currency: Option<String>,
    /// Write to this file (atomically: the whole grid or nothing) instead of standard output.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Runs `tldsnap export`.
pub fn run(args: Args) -> Result<(), CliError> {
    let values = params::values_of([args.tlds.as_deref(), args.currency.as_deref()]);
    let p = param(ExportParams::from_values(&values))?;
    let (snap, plan) = args.common.open()?;
    if let Some((_, plan)) = &plan
        && !plan.export
    {
        return Err(format!(
            "export_not_in_plan: the {} plan does not include the export",
            plan.name
        )
        .into());
    }
    let names: Option<Vec<String>> = p
        .tlds
        .as_ref()
        .map(|l| l.iter().map(|t| t.to_string()).collect());
    if let Some(names) = &names {
        check_plan(plan.as_ref(), names)?;
    }
    let refs: Option<Vec<&str>> = names
        .as_ref()
        .map(|n| n.iter().map(String::as_str).collect());
    let data = snap.data();
    let money = match &p.currency {
        Some(c) => tldsnap::query::money(data, c)?,
        None => tldsnap::query::Money::USD,
    };
    let request = ExportRequest {
        tlds: refs.as_deref(),
        sight: sight(plan.as_ref()),
        money,
    };
    let positions = export::covered(data, &request);
    if refs.is_some() && positions.is_empty() {
        return Err("unknown_tld: none of the TLDs asked for is known".into());
    }
    let mut out = Vec::new();
    export::header(&mut out);
    export::rows(data, &request, &positions, 0, usize::MAX, &mut out);
    match &args.output {
        Some(path) => tldsnap::files::write_atomic(path, &out)
            .map_err(|e| format!("{}: {e}", path.display()))?,
        None => std::io::stdout().lock().write_all(&out)?,
    }
    Ok(())
}
