//! `tldsnap inspect`: what a snapshot holds.

use std::path::PathBuf;

use super::CliError;
use tldsnap::snapshot::{HEADER_LEN, Snapshot};
use tldsnap::time::iso_millis;

/// Arguments of `tldsnap inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The snapshot file.
    file: PathBuf,
    /// The feeds directory the registrars are collected into: adds each registrar's
    /// last collection attempt (when, and how it ended) from its records there.
    #[arg(long, value_name = "DIR")]
    feeds: Option<PathBuf>,
}

/// Runs `tldsnap inspect`.
pub fn run(args: Args) -> Result<(), CliError> {
    let snap = Snapshot::open(&args.file)?;
    print!("{}", report(&snap));
    if let Some(feeds) = &args.feeds {
        print!("{}", collections(feeds));
    }
    Ok(())
}

/// The inspection report as text (header, counts, per-registrar coverage as a Markdown table).
pub fn report(snap: &Snapshot) -> String {
    use std::fmt::Write;
    let h = snap.header();
    let d = snap.data();
    let mut s = String::new();
    let sellers = d
        .offers
        .iter()
        .filter(|o| o.register != tldsnap::snapshot::schema::NONE)
        .count();
    let _ = writeln!(s, "format version   {}", h.version);
    let _ = writeln!(s, "content hash     xxh3-128:{}", h.hash_hex());
    let _ = writeln!(
        s,
        "size             {} bytes (header {HEADER_LEN} + payload {})",
        snap.len(),
        h.payload_len
    );
    let _ = writeln!(s, "data date        {}", iso_millis(h.data_updated_ms));
    let built = h
        .built_at_ms
        .map_or_else(|| "not recorded".to_string(), iso_millis);
    let _ = writeln!(s, "built at         {built}");
    let _ = writeln!(s, "TLDs             {}", d.tld_count());
    let sold = d.sold_tld_count();
    let _ = writeln!(s, "  with a seller  {sold}");
    let five = d.tlds.iter().filter(|t| t.sellers.to_native() >= 5).count();
    let _ = writeln!(s, "  with 5+        {five}");
    let most = d
        .tlds
        .iter()
        .map(|t| t.sellers.to_native())
        .max()
        .unwrap_or(0);
    let _ = writeln!(s, "  most sellers   {most}");
    let _ = writeln!(s, "registrars       {}", d.registrar_count());
    let _ = writeln!(
        s,
        "offers           {} ({} sellers, {} renewal-only)",
        d.offer_count(),
        sellers,
        d.offer_count() - sellers
    );
    let _ = writeln!(s, "history changes  {}", d.history.len());
    match d.rates.first() {
        None => {
            let _ = writeln!(s, "exchange rates   none (prices in USD only)");
        }
        Some(r) => {
            let day = i64::from(r.date.to_native()) * tldsnap::time::MS_PER_DAY;
            let _ = writeln!(
                s,
                "exchange rates   {} currencies, ECB reference rates of {}",
                d.rates.len(),
                &iso_millis(day)[..10]
            );
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| registrar | name | TLDs sold | renewal-only | data date |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---|");
    for r in d.registrars.iter() {
        let date = match r.updated_ms.to_native() {
            0 => "-".to_string(),
            ms => iso_millis(ms)[..10].to_string(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            d.span_str(&r.key),
            d.span_str(&r.name),
            r.sells.to_native(),
            r.renewal_only.to_native(),
            date
        );
    }
    s
}

/// Each registrar's last collection attempt recorded under `feeds`, as a Markdown table.
pub fn collections(feeds: &std::path::Path) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s);
    let attempts = tldsnap::collect::status::last_attempts(feeds);
    if attempts.is_empty() {
        let _ = writeln!(s, "no collection recorded in {}", feeds.display());
        return s;
    }
    let _ = writeln!(s, "| registrar | last collection | outcome | reason |");
    let _ = writeln!(s, "|---|---|---|---|");
    for a in &attempts {
        let reason = a.reason.as_deref().unwrap_or("").replace('|', "\\|");
        let _ = writeln!(
            s,
            "| {} | {} | {} | {reason} |",
            a.key,
            iso_millis(a.at_ms),
            a.outcome.as_str()
        );
    }
    s
}
