//! `tldsnap keys add|list|revoke`: manage the keys file (docs/METERING.md).
//!
//! The raw key is printed once, on standard output alone (so `KEY=$(tldsnap keys add ...)`
//! works); only its SHA-256 is stored. Every change rewrites the file atomically
//! (temporary file, fsync, rename): a running server reloads it on SIGHUP.

use std::path::PathBuf;

use tldsnap::access::keys::KeysFile;
use tldsnap::access::month::{month_label, month_of};
use tldsnap::access::plans::Plans;
use tldsnap::access::{clock::Clock, clock::SystemClock, remote, usage};

use super::CliError;

/// Key management commands.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Create a key on a plan: prints the new key once and stores only its SHA-256.
    Add {
        /// The keys file (created if missing).
        #[arg(long, value_name = "FILE")]
        keys: PathBuf,
        /// The key's plan: free, basic, pro, enterprise (or a plan of --plans).
        #[arg(long, value_name = "PLAN")]
        plan: String,
        /// Free text shown by `keys list` (who the key is for).
        #[arg(long, value_name = "TEXT", default_value = "")]
        label: String,
        /// A plans file, when the plan is defined there (the same as `serve --plans`).
        #[arg(long, value_name = "FILE")]
        plans: Option<PathBuf>,
    },
    /// List keys: id, plan, label, and this month's usage when a usage store is given.
    List {
        /// The keys file.
        #[arg(long, value_name = "FILE")]
        keys: PathBuf,
        /// The server's data directory (embedded usage store), for this month's usage.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// The shared usage store (redis://HOST:PORT), for this month's usage.
        #[arg(long, value_name = "URL", conflicts_with = "data_dir")]
        usage_store: Option<String>,
        /// A plans file (the same as `serve --plans`), for the monthly allowances.
        #[arg(long, value_name = "FILE")]
        plans: Option<PathBuf>,
    },
    /// Remove a key by its id; a running server stops accepting it after SIGHUP.
    Revoke {
        /// The keys file.
        #[arg(long, value_name = "FILE")]
        keys: PathBuf,
        /// The id of the key, as `keys list` shows it.
        #[arg(value_name = "ID")]
        id: String,
    },
}

/// Runs one `keys` command.
pub fn run(cmd: Command) -> Result<(), CliError> {
    match cmd {
        Command::Add {
            keys,
            plan,
            label,
            plans,
        } => {
            let plans = load_plans(plans.as_ref())?;
            if plans.get(&plan).is_none() {
                return Err(format!(
                    "unknown plan {plan:?} (known: {})",
                    plans.names().join(", ")
                )
                .into());
            }
            if label.chars().any(char::is_control) {
                return Err("the label must not contain control characters".into());
            }
            let _lock = lock_keys_file(&keys)?;
            let mut file = KeysFile::load_or_empty(&keys, None)?;
            let (raw, rec) = file.add(&plan, &label)?;
            file.save(&keys)?;
            println!("{raw}");
            eprintln!(
                "added key {} (plan {}) to {}; the key above is shown only this once",
                rec.id,
                rec.plan,
                keys.display()
            );
            Ok(())
        }
        Command::List {
            keys,
            data_dir,
            usage_store,
            plans,
        } => {
            let plans = load_plans(plans.as_ref())?;
            let file = KeysFile::load(&keys, None)?;
            let now = SystemClock.now_ms();
            let month = month_of(now);
            let ids: Vec<String> = file.keys.iter().map(|k| k.id.clone()).collect();
            let used: Option<Vec<u64>> = if let Some(dir) = &data_dir {
                let map = usage::read(dir)?;
                Some(
                    ids.iter()
                        .map(|id| match map.get(id) {
                            Some(&(m, n)) if m == month => n,
                            _ => 0,
                        })
                        .collect(),
                )
            } else if let Some(url) = &usage_store {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                Some(rt.block_on(async {
                    let r = remote::Remote::new(url).await?;
                    r.totals(&ids, month).await
                })?)
            } else {
                None
            };
            let mut rows = vec![vec![
                "ID".to_string(),
                "PLAN".into(),
                "LABEL".into(),
                format!("USED {}", month_label(month)),
                "CREDITS/MONTH".into(),
            ]];
            for (i, k) in file.keys.iter().enumerate() {
                let allowance = match plans.get(&k.plan) {
                    Some(p) => match p.credits_per_month {
                        Some(c) => c.to_string(),
                        None => "unlimited".into(),
                    },
                    None => "unknown plan".into(),
                };
                rows.push(vec![
                    k.id.clone(),
                    k.plan.clone(),
                    k.label.clone(),
                    match &used {
                        Some(u) => u[i].to_string(),
                        None => "-".into(),
                    },
                    allowance,
                ]);
            }
            print_table(&rows);
            if used.is_none() {
                eprintln!("(pass --data-dir DIR or --usage-store URL to show this month's usage)");
            }
            Ok(())
        }
        Command::Revoke { keys, id } => {
            let _lock = lock_keys_file(&keys)?;
            let mut file = KeysFile::load(&keys, None)?;
            let Some(rec) = file.revoke(&id) else {
                return Err(format!("no key with id {id:?} in {}", keys.display()).into());
            };
            file.save(&keys)?;
            eprintln!(
                "revoked key {} (plan {}, label {:?}); send SIGHUP to a running server to apply",
                rec.id, rec.plan, rec.label
            );
            Ok(())
        }
    }
}

/// Serialises `keys add` / `keys revoke` runs on one keys file: each reads the file,
/// changes it and replaces it, so two at once could each drop the other's change.
fn lock_keys_file(keys: &std::path::Path) -> Result<std::fs::File, CliError> {
    Ok(tldsnap::files::lock_sidecar(keys)?)
}

fn load_plans(path: Option<&PathBuf>) -> Result<Plans, CliError> {
    Ok(match path {
        Some(p) => Plans::load(p)?,
        None => Plans::default(),
    })
}

fn print_table(rows: &[Vec<String>]) {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == cols {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        println!("{}", line.trim_end());
    }
}
