//! `tldsnap diff`: the price-change events between two snapshots.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::CliError;
use tldsnap::events::render::{write_change, write_hash};
use tldsnap::events::{Change, Kind, Prices, diff};
use tldsnap::price::{cents_to_decimal, offered};
use tldsnap::snapshot::Snapshot;

/// Arguments of `tldsnap diff`.
#[derive(clap::Args)]
pub struct Args {
    /// The older snapshot file.
    old: PathBuf,
    /// The newer snapshot file.
    new: PathBuf,
    /// `json`: one document with every event; `jsonl`: one event per line; `table`: for
    /// people.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Json,
    Jsonl,
    Table,
}

/// Runs `tldsnap diff`. The events go to stdout; a summary with the time the diff
/// itself took (opening and verifying the files excluded) goes to stderr.
pub fn run(args: Args) -> Result<(), CliError> {
    let old = Snapshot::open(&args.old).map_err(|e| format!("{}: {e}", args.old.display()))?;
    let new = Snapshot::open(&args.new).map_err(|e| format!("{}: {e}", args.new.display()))?;
    let started = Instant::now();
    let mut changes = Vec::new();
    diff(old.data(), new.data(), &mut changes);
    let took = started.elapsed();
    let mut out = Vec::with_capacity(changes.len() * 200 + 256);
    let (from, to) = (old.header().content_hash, new.header().content_hash);
    match args.format {
        Format::Json => {
            out.extend_from_slice(b"{\"from\":\"");
            write_hash(from, &mut out);
            out.extend_from_slice(b"\",\"to\":\"");
            write_hash(to, &mut out);
            out.extend_from_slice(b"\",\"events\":[");
            for (i, c) in changes.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_change(c, &mut out);
            }
            out.extend_from_slice(b"]}\n");
        }
        Format::Jsonl => {
            for c in &changes {
                write_change(c, &mut out);
                out.push(b'\n');
            }
        }
        Format::Table => table(&changes, &mut out),
    }
    std::io::stdout().lock().write_all(&out)?;
    let count = |k: Kind| changes.iter().filter(|c| c.kind == k).count();
    eprintln!(
        "{} events ({} price.changed, {} offer.added, {} offer.removed, {} ranking.changed) from {} to {} in {:.3} ms ({} + {} offers)",
        changes.len(),
        count(Kind::PriceChanged),
        count(Kind::OfferAdded),
        count(Kind::OfferRemoved),
        count(Kind::RankingChanged),
        old.header().hash_hex(),
        new.header().hash_hex(),
        took.as_secs_f64() * 1000.0,
        old.data().offer_count(),
        new.data().offer_count(),
    );
    Ok(())
}

/// A Markdown table: one row per event, prices as `old → new`.
fn table(changes: &[Change<'_>], out: &mut Vec<u8>) {
    use std::fmt::Write as _;
    let mut s = String::from(
        "| type | tld | registrar | register | renew | transfer |\n|---|---|---|---|---|---|\n",
    );
    let price = |c: u32| offered(c).map_or_else(|| "-".to_owned(), |_| cents_to_decimal(c));
    let cell = |pick: fn(&Prices) -> u32, c: &Change<'_>| match (c.old, c.new) {
        (Some(o), Some(n)) if pick(&o) == pick(&n) && c.kind == Kind::PriceChanged => {
            price(pick(&n))
        }
        (o, n) => format!(
            "{} → {}",
            o.map_or("-".to_owned(), |o| price(pick(&o))),
            n.map_or("-".to_owned(), |n| price(pick(&n)))
        ),
    };
    for c in changes {
        let registrar = match c.kind {
            Kind::RankingChanged => format!(
                "{} → {}",
                c.previous_registrar.unwrap_or("-"),
                c.registrar.unwrap_or("-")
            ),
            _ => c.registrar.unwrap_or("-").to_owned(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            c.kind,
            c.tld,
            registrar,
            cell(|p| p.register, c),
            cell(|p| p.renew, c),
            cell(|p| p.transfer, c),
        );
    }
    out.extend_from_slice(s.as_bytes());
}
