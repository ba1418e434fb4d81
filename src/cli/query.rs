//! `tldsnap query`: prints the very body the API would serve, from a snapshot file.

use std::path::PathBuf;
use std::time::Instant;

use super::CliError;
use tldsnap::access::plans::{Plan, Plans, TldScope, is_free_tld};
use tldsnap::query::{
    self, CheapestRequest, HistoryRequest, PricesRequest, RegistrarsRequest, Shape,
};
use tldsnap::snapshot::Snapshot;

/// Query commands.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Cheapest registrars per TLD (`/api/v1/client/prices/cheapest`, or the public
    /// variant with `--public`).
    Cheapest {
        #[command(flatten)]
        common: Common,
        /// Comma-separated TLDs.
        #[arg(long)]
        tlds: String,
        /// Entries per TLD, 1 to 100.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
        limit: u16,
        /// Render the public overview variant (`/api/v1/prices/cheapest`).
        #[arg(long)]
        public: bool,
    },
    /// Prices of chosen registrars (`/api/v1/client/prices`).
    Prices {
        #[command(flatten)]
        common: Common,
        /// Comma-separated TLDs.
        #[arg(long)]
        tlds: String,
        /// Comma-separated registrar keys (default: every seller).
        #[arg(long)]
        registrars: Option<String>,
    },
    /// Registrars that sell a TLD (`/api/v1/client/registrars/tld/{tld}`).
    Registrars {
        #[command(flatten)]
        common: Common,
        /// The TLD.
        #[arg(long)]
        tld: String,
        /// Include each registrar's prices.
        #[arg(long)]
        include_prices: bool,
        /// Base of `website_url`.
        #[arg(long, default_value = tldsnap::query::DEFAULT_PUBLIC_URL)]
        public_url: String,
    },
    /// The TLD overview of seed 1.7 (averages, cheapest, lowest renewal, lowest 5 years).
    Overview {
        #[command(flatten)]
        common: Common,
        /// The TLD.
        #[arg(long)]
        tld: String,
    },
    /// Price history of a TLD per registrar.
    History {
        #[command(flatten)]
        common: Common,
        /// The TLD.
        #[arg(long)]
        tld: String,
        /// Comma-separated registrar keys (default: all with history).
        #[arg(long)]
        registrars: Option<String>,
        /// First day, YYYY-MM-DD.
        #[arg(long)]
        from: Option<String>,
        /// Last day, YYYY-MM-DD.
        #[arg(long)]
        to: Option<String>,
    },
}

/// Flags every query takes.
#[derive(clap::Args)]
pub struct Common {
    /// The snapshot file.
    #[arg(long)]
    snapshot: PathBuf,
    /// Apply this plan's rules (free TLDs only on `free`, 5 registrars on free/basic) and
    /// report it as `meta.tier`. Without it no plan rule applies.
    #[arg(long)]
    tier: Option<String>,
}

impl Common {
    fn open(&self) -> Result<(Snapshot, Option<std::sync::Arc<Plan>>), CliError> {
        let plan = match &self.tier {
            None => None,
            Some(t) => {
                let plans = Plans::default();
                let plan = plans.get(t).cloned();
                Some(plan.ok_or_else(|| {
                    format!("unknown tier {t:?} (one of: {})", plans.names().join(", "))
                })?)
            }
        };
        Ok((Snapshot::open(&self.snapshot)?, plan))
    }
}

/// Splits, normalises and de-duplicates a comma-separated TLD list (first wins).
fn tld_list(raw: &str) -> Result<Vec<String>, CliError> {
    let mut out: Vec<String> = Vec::new();
    for part in raw.split(',') {
        let t = tldsnap::tld::normalize(part).map_err(|e| format!("invalid TLD {part:?}: {e}"))?;
        if !out.iter().any(|o| *o == t) {
            out.push(t.into_owned());
        }
    }
    Ok(out)
}

fn key_list(raw: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in raw.split(',').map(|k| k.trim().to_ascii_lowercase()) {
        if !k.is_empty() && !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

fn check_plan(plan: Option<&Plan>, tlds: &[String]) -> Result<(), CliError> {
    if let Some(p) = plan
        && p.tlds == TldScope::Free
    {
        let outside: Vec<&str> = tlds
            .iter()
            .map(String::as_str)
            .filter(|t| !is_free_tld(t))
            .collect();
        if !outside.is_empty() {
            return Err(format!(
                "tld_not_in_plan: the {} plan covers the 22 free TLDs only, not {}",
                p.name,
                outside.join(", ")
            )
            .into());
        }
    }
    Ok(())
}

fn date(flag: &str, v: &Option<String>) -> Result<Option<i64>, CliError> {
    v.as_deref()
        .map(|s| {
            tldsnap::time::parse_date(s)
                .ok_or_else(|| format!("--{flag} {s:?} is not a YYYY-MM-DD date").into())
        })
        .transpose()
}

/// Runs `tldsnap query`.
pub fn run(cmd: Command) -> Result<(), CliError> {
    let mut out = Vec::new();
    match cmd {
        Command::Cheapest {
            common,
            tlds,
            limit,
            public,
        } => {
            let (snap, plan) = common.open()?;
            let tlds = tld_list(&tlds)?;
            check_plan(plan.as_deref(), &tlds)?;
            let names: Vec<&str> = tlds.iter().map(String::as_str).collect();
            let shape = if public { Shape::Public } else { Shape::Client };
            let req = CheapestRequest {
                tlds: &names,
                limit: limit as usize,
                shape,
                tier: plan.as_ref().map(|p| p.name.as_str()),
            };
            query::cheapest(snap.data(), &req, &mut out)?;
        }
        Command::Prices {
            common,
            tlds,
            registrars,
        } => {
            let (snap, plan) = common.open()?;
            let started = Instant::now();
            let tlds = tld_list(&tlds)?;
            check_plan(plan.as_deref(), &tlds)?;
            let names: Vec<&str> = tlds.iter().map(String::as_str).collect();
            let keys = registrars.as_deref().map(key_list);
            let key_refs: Option<Vec<&str>> = keys
                .as_ref()
                .map(|k| k.iter().map(String::as_str).collect());
            let req = PricesRequest {
                tlds: &names,
                registrars: key_refs.as_deref(),
                started,
            };
            query::prices(snap.data(), &req, &mut out)?;
        }
        Command::Registrars {
            common,
            tld,
            include_prices,
            public_url,
        } => {
            let (snap, plan) = common.open()?;
            let tlds = tld_list(&tld)?;
            check_plan(plan.as_deref(), &tlds)?;
            let limit = plan
                .as_ref()
                .and_then(|p| p.registrar_list_limit)
                .map(|l| l as usize);
            let public_url = public_url.trim_end_matches('/');
            if public_url
                .bytes()
                .any(|b| b == b'"' || b == b'\\' || b < 0x20)
            {
                return Err(
                    "--public-url may not contain quotes, backslashes or control characters".into(),
                );
            }
            let req = RegistrarsRequest {
                tld: &tlds[0],
                include_prices,
                limit,
                public_url,
            };
            query::registrars(snap.data(), &req, &mut out)?;
        }
        Command::Overview { common, tld } => {
            let (snap, plan) = common.open()?;
            let tlds = tld_list(&tld)?;
            check_plan(plan.as_deref(), &tlds)?;
            query::overview(snap.data(), &tlds[0], &mut out)?;
        }
        Command::History {
            common,
            tld,
            registrars,
            from,
            to,
        } => {
            let (snap, plan) = common.open()?;
            let tlds = tld_list(&tld)?;
            check_plan(plan.as_deref(), &tlds)?;
            let keys = registrars.as_deref().map(key_list);
            let key_refs: Option<Vec<&str>> = keys
                .as_ref()
                .map(|k| k.iter().map(String::as_str).collect());
            let req = HistoryRequest {
                tld: &tlds[0],
                registrars: key_refs.as_deref(),
                from: date("from", &from)?,
                to: date("to", &to)?,
            };
            query::history(snap.data(), &req, &mut out)?;
        }
    }
    out.push(b'\n');
    use std::io::Write;
    std::io::stdout().write_all(&out)?;
    Ok(())
}
