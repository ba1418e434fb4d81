//! `tldsnap query`: prints the very body the API would serve, from a snapshot file or the
//! real data built into the binary.

use std::path::PathBuf;

use super::CliError;
use tldsnap::access::plans::{Plan, Plans, Sight};
use tldsnap::http::params::{
    self, CatalogueParams, CheapestParams, FreshnessParams, HistoryParams, PricesParams,
    RegistrarParams,
};
use tldsnap::http::problem::Problem;
use tldsnap::query::{
    self, CheapestRequest, HistoryRequest, OverviewRequest, PricesRequest, RegistrarRequest,
    RegistrarsRequest, Shape,
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
        /// Entries per TLD, 1 to 100 [default: 10].
        #[arg(long)]
        limit: Option<String>,
        /// Render the public overview variant (`/api/v1/prices/cheapest`).
        #[arg(long)]
        public: bool,
        /// Answer as of this day (YYYY-MM-DD), from the history.
        #[arg(long)]
        at: Option<String>,
        /// Rank by register, renew, total_3_year or total_5_year [default: register].
        #[arg(long)]
        sort: Option<String>,
        /// Show the prices in this currency (ISO 4217, an ECB reference rate) [default: USD].
        #[arg(long)]
        currency: Option<String>,
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
        /// Answer as of this day (YYYY-MM-DD), from the history.
        #[arg(long)]
        at: Option<String>,
        /// Show the prices in this currency (ISO 4217, an ECB reference rate) [default: USD].
        #[arg(long)]
        currency: Option<String>,
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
        /// Show the prices in this currency (ISO 4217, an ECB reference rate) [default: USD].
        #[arg(long)]
        currency: Option<String>,
    },
    /// The TLD overview (type, manager, averages, cheapest, lowest renewal,
    /// lowest 5 years). With a --tier that covers only the free TLDs, the member-only
    /// fields of other TLDs are null.
    Overview {
        #[command(flatten)]
        common: Common,
        /// The TLD.
        #[arg(long)]
        tld: String,
        /// Show the prices in this currency (ISO 4217, an ECB reference rate) [default: USD].
        #[arg(long)]
        currency: Option<String>,
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
        /// Show the prices in this currency (ISO 4217, an ECB reference rate) [default: USD].
        #[arg(long)]
        currency: Option<String>,
    },
    /// One page of the TLD catalogue (`/api/v1/client/tlds`).
    Tlds {
        #[command(flatten)]
        common: Common,
        /// A piece of the name (Unicode or xn--).
        #[arg(long)]
        q: Option<String>,
        /// IANA root zone type (generic, country-code, sponsored, infrastructure,
        /// generic-restricted, test).
        #[arg(long = "type")]
        kind: Option<String>,
        /// name, cheapest or registrars [default: name].
        #[arg(long)]
        sort: Option<String>,
        /// Entries per page, 1 to 500 [default: 100].
        #[arg(long)]
        limit: Option<String>,
        /// The next_cursor of the previous page.
        #[arg(long)]
        cursor: Option<String>,
        /// Show the prices in this currency (ISO 4217, an ECB reference rate) [default: USD].
        #[arg(long)]
        currency: Option<String>,
    },
    /// Every registrar with its coverage (`/api/v1/registrars`).
    RegistrarsList {
        #[command(flatten)]
        common: Common,
        /// Base of `website_url`.
        #[arg(long, default_value = tldsnap::query::DEFAULT_PUBLIC_URL)]
        public_url: String,
    },
    /// One registrar and a page of its price list (`/api/v1/registrars/{key}`).
    Registrar {
        #[command(flatten)]
        common: Common,
        /// The registrar key.
        #[arg(long)]
        key: String,
        /// Entries per page, 1 to 500 [default: 100].
        #[arg(long)]
        limit: Option<String>,
        /// The next_cursor of the previous page.
        #[arg(long)]
        cursor: Option<String>,
        /// Base of `website_url`.
        #[arg(long, default_value = tldsnap::query::DEFAULT_PUBLIC_URL)]
        public_url: String,
        /// Show the prices in this currency (ISO 4217, an ECB reference rate) [default: USD].
        #[arg(long)]
        currency: Option<String>,
    },
}

/// The plans in force and the one `--tier` names.
type Tier = (Plans, std::sync::Arc<Plan>);

/// Flags every query takes.
#[derive(clap::Args)]
pub struct Common {
    /// Snapshot file (from `tldsnap build`); without it, the real data shipped in the
    /// binary, as `serve` and `audit` use.
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
    /// Apply this plan's rules (free TLDs only on `free`, 5 registrars on free/basic) and
    /// report it as `meta.tier`. Without it no plan rule applies.
    #[arg(long)]
    tier: Option<String>,
    /// Plans file (as `serve --plans`) whose plans `--tier` names.
    #[arg(long, value_name = "FILE")]
    plans: Option<PathBuf>,
    /// A price older than this many days (before today, UTC) is stale: marked, and left
    /// out of rankings unless --include-stale (as the API's `max_age_days`).
    #[arg(long, value_name = "DAYS", default_value_t = tldsnap::query::DEFAULT_MAX_AGE_DAYS)]
    max_age_days: u32,
    /// Keep stale prices in rankings, marked `"stale":true` (the API's `include_stale`).
    #[arg(long)]
    include_stale: bool,
}

impl Common {
    /// The staleness rule of these flags, today by the system clock.
    fn fresh(&self) -> Result<tldsnap::query::Freshness, CliError> {
        let days = self.max_age_days.to_string();
        let asked = param(FreshnessParams::from_values(
            Some(&days),
            Some(if self.include_stale { "true" } else { "false" }),
        ))?;
        Ok(asked.at(
            tldsnap::query::DEFAULT_MAX_AGE_DAYS,
            tldsnap::time::now_ms(),
        ))
    }

    /// The snapshot (`--snapshot`, or the built-in one) and the plan `--tier` names.
    pub(super) fn open(&self) -> Result<(Snapshot, Option<Tier>), CliError> {
        let plans = match &self.plans {
            Some(path) => Plans::load(path)?,
            None => Plans::default(),
        };
        let plan = match &self.tier {
            None => None,
            Some(t) => {
                let plan = plans.get(t).cloned().ok_or_else(|| {
                    format!("unknown tier {t:?} (one of: {})", plans.names().join(", "))
                })?;
                Some((plans, plan))
            }
        };
        let snap = match &self.snapshot {
            Some(path) => Snapshot::open(path)?,
            None => tldsnap::build::default_snapshot()?,
        };
        Ok((snap, plan))
    }
}

/// The HTTP parameter rules (`tldsnap::http::params`), with a problem as the error.
pub(super) fn param<T>(r: Result<T, Problem>) -> Result<T, CliError> {
    r.map_err(|p| p.detail().into())
}

/// The money of a `--currency` flag (USD without one), as the API's `currency`.
fn money_flag<'s>(
    snap: &'s Snapshot,
    currency: Option<&str>,
) -> Result<query::Money<'s>, CliError> {
    Ok(match currency {
        Some(c) => query::money(snap.data(), c)?,
        None => query::Money::USD,
    })
}

fn one_tld(raw: &str) -> Result<String, CliError> {
    Ok(param(params::path_tld(raw))?.into_owned())
}

fn public_url(raw: &str) -> Result<&str, CliError> {
    let url = raw.trim_end_matches('/');
    if url.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return Err(
            "--public-url may not contain quotes, backslashes or control characters".into(),
        );
    }
    Ok(url)
}

/// What the plan (if any) shows; without a plan no rule applies.
/// What `--tier`'s plan shows (everything without one).
pub(super) fn sight(plan: Option<&(Plans, std::sync::Arc<Plan>)>) -> Sight {
    plan.map_or(Sight::ALL, |(_, p)| p.sight())
}

/// The API's plan check ([`Problem::tld_not_in_plan`]); without a plan no rule applies.
pub(super) fn check_plan(
    plan: Option<&(Plans, std::sync::Arc<Plan>)>,
    tlds: &[String],
) -> Result<(), CliError> {
    match plan
        .and_then(|(plans, p)| Problem::tld_not_in_plan(plans, p, tlds.iter().map(String::as_str)))
    {
        Some(problem) => Err(format!("{}: {}", problem.code(), problem.detail()).into()),
        None => Ok(()),
    }
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
            at,
            sort,
            currency,
        } => {
            let values = params::values_of([
                Some(&tlds),
                limit.as_deref(),
                at.as_deref(),
                None,
                None,
                sort.as_deref(),
                currency.as_deref(),
            ]);
            let p = param(CheapestParams::from_values(&values))?;
            let (snap, plan) = common.open()?;
            let money = money_flag(&snap, p.currency.as_deref())?;
            let tlds: Vec<String> = p.tlds.iter().map(|t| t.to_string()).collect();
            check_plan(plan.as_ref(), &tlds)?;
            let names: Vec<&str> = tlds.iter().map(String::as_str).collect();
            let shape = if public { Shape::Public } else { Shape::Client };
            let req = CheapestRequest {
                tlds: &names,
                limit: p.limit,
                shape,
                tier: plan.as_ref().map(|(_, p)| p.name.as_str()),
                fresh: common.fresh()?,
                sight: sight(plan.as_ref()),
            };
            let how = query::Presentation {
                ranking: p.sort,
                money,
            };
            match p.at {
                None => query::cheapest_in(snap.data(), &req, how, &mut out)?,
                Some(day) => query::cheapest_at_in(snap.data(), &req, day, how, &mut out)?,
            }
        }
        Command::Prices {
            common,
            tlds,
            registrars,
            at,
            currency,
        } => {
            let values = params::values_of([
                Some(&tlds),
                registrars.as_deref(),
                at.as_deref(),
                None,
                currency.as_deref(),
            ]);
            let p = param(PricesParams::from_values(&values))?;
            let (snap, plan) = common.open()?;
            let money = money_flag(&snap, p.currency.as_deref())?;
            let started = tldsnap::time::Stamp::now();
            let tlds: Vec<String> = p.tlds.iter().map(|t| t.to_string()).collect();
            check_plan(plan.as_ref(), &tlds)?;
            let names: Vec<&str> = tlds.iter().map(String::as_str).collect();
            let key_refs: Option<Vec<&str>> = p
                .registrars
                .as_ref()
                .map(|k| k.iter().map(|k| k.as_ref()).collect());
            let req = PricesRequest {
                tlds: &names,
                registrars: key_refs.as_deref(),
                started,
                fresh: common.fresh()?,
                sight: sight(plan.as_ref()),
            };
            match p.at {
                None => query::prices_in(snap.data(), &req, money, &mut out)?,
                Some(day) => query::prices_at_in(snap.data(), &req, day, money, &mut out)?,
            }
        }
        Command::Registrars {
            common,
            tld,
            include_prices,
            public_url: url,
            currency,
        } => {
            let (snap, plan) = common.open()?;
            let currency = param(params::currency(currency.as_deref()))?;
            let money = money_flag(&snap, currency.as_deref())?;
            let tld = one_tld(&tld)?;
            check_plan(plan.as_ref(), std::slice::from_ref(&tld))?;
            let req = RegistrarsRequest {
                tld: &tld,
                include_prices,
                sight: sight(plan.as_ref()),
                public_url: public_url(&url)?,
                fresh: common.fresh()?,
            };
            query::registrars_in(snap.data(), &req, money, &mut out)?;
        }
        Command::Overview {
            common,
            tld,
            currency,
        } => {
            let (snap, plan) = common.open()?;
            let money = money_flag(&snap, currency.as_deref())?;
            let tld = one_tld(&tld)?;
            let req = OverviewRequest {
                tld: &tld,
                fresh: common.fresh()?,
                sight: sight(plan.as_ref()),
            };
            query::overview_in(snap.data(), &req, money, &mut out)?;
        }
        Command::History {
            common,
            tld,
            registrars,
            from,
            to,
            currency,
        } => {
            let values = params::values_of([
                registrars.as_deref(),
                from.as_deref(),
                to.as_deref(),
                currency.as_deref(),
            ]);
            let p = param(HistoryParams::from_values(&values))?;
            let (snap, plan) = common.open()?;
            let money = money_flag(&snap, p.currency.as_deref())?;
            let tld = one_tld(&tld)?;
            check_plan(plan.as_ref(), std::slice::from_ref(&tld))?;
            let key_refs: Option<Vec<&str>> = p
                .registrars
                .as_ref()
                .map(|k| k.iter().map(|k| k.as_ref()).collect());
            let req = HistoryRequest {
                tld: &tld,
                registrars: key_refs.as_deref(),
                from: p.from,
                to: p.to,
                sight: sight(plan.as_ref()),
            };
            query::history_in(snap.data(), &req, money, &mut out)?;
        }
        Command::Tlds {
            common,
            q,
            kind,
            sort,
            limit,
            cursor,
            currency,
        } => {
            let values = params::values_of([
                q.as_deref(),
                kind.as_deref(),
                sort.as_deref(),
                limit.as_deref(),
                cursor.as_deref(),
                currency.as_deref(),
            ]);
            let p = param(CatalogueParams::from_values(&values))?;
            let (snap, plan) = common.open()?;
            let money = money_flag(&snap, p.currency.as_deref())?;
            let req = p.request(sight(plan.as_ref()), snap.header().content_hash as u64);
            query::catalogue_in(snap.data(), &req, money, &mut out)?;
        }
        Command::RegistrarsList {
            common,
            public_url: url,
        } => {
            let (snap, _) = common.open()?;
            query::registrars_list(snap.data(), public_url(&url)?, &mut out);
        }
        Command::Registrar {
            common,
            key,
            limit,
            cursor,
            public_url: url,
            currency,
        } => {
            let key = param(params::path_registrar(&key))?.into_owned();
            let values =
                params::values_of([limit.as_deref(), cursor.as_deref(), currency.as_deref()]);
            let p = param(RegistrarParams::from_values(&values))?;
            let (snap, plan) = common.open()?;
            let money = money_flag(&snap, p.currency.as_deref())?;
            let req = RegistrarRequest {
                key: &key,
                limit: p.limit,
                cursor: p.cursor,
                sight: sight(plan.as_ref()),
                public_url: public_url(&url)?,
                snapshot: snap.header().content_hash as u64,
            };
            query::registrar_in(snap.data(), &req, money, &mut out)?;
        }
    }
    out.push(b'\n');
    use std::io::Write;
    std::io::stdout().write_all(&out)?;
    Ok(())
}
