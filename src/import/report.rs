//! The per-feed summary that `tldsnap import` prints: rows read, kept, dropped by
//! reason, and what the history holds.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::{DropReason, Import};
use crate::time;

/// The summary as a plain-text (and Markdown-compatible) table plus drop details.
pub fn render(import: &Import) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| feed | file | data date | read | kept | selling | renewal-only | dropped | history versions | history rows |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---|---:|");
    for f in &import.feeds {
        let days = if f.versions > 1 {
            format!(
                "{} ({} .. {})",
                f.versions,
                time::date_string(f.version_days.0),
                time::date_string(f.version_days.1)
            )
        } else {
            "1".to_string()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            f.registrar,
            f.file,
            time::date_string(f.date_ms.div_euclid(time::MS_PER_DAY)),
            f.read,
            f.kept,
            f.selling,
            f.renewal_only,
            f.dropped_total(),
            days,
            f.history_rows,
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Dropped rows by reason:");
    let _ = writeln!(out);
    let mut any = false;
    for f in &import.feeds {
        if f.dropped.is_empty() {
            continue;
        }
        any = true;
        let parts: Vec<String> = DropReason::ALL
            .iter()
            .filter_map(|r| f.dropped.get(r).map(|n| format!("{r}: {n}")))
            .collect();
        let _ = writeln!(out, "- {}: {}", f.registrar, parts.join(", "));
    }
    if !any {
        let _ = writeln!(out, "- none");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Kept rows worth knowing about:");
    let _ = writeln!(out);
    for f in &import.feeds {
        let _ = writeln!(
            out,
            "- {}: free transfer {}, no transfer price {}, PSL private-section suffixes {}",
            f.registrar, f.free_transfer, f.no_transfer, f.private_suffix
        );
    }
    let s = &import.source;
    let tlds: BTreeSet<&str> = s.prices.iter().map(|p| p.tld.as_str()).collect();
    let sold: BTreeSet<&str> = s
        .prices
        .iter()
        .filter(|p| p.offer.register.is_some())
        .map(|p| p.tld.as_str())
        .collect();
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Total: {} registrars, {} price rows, {} TLDs, {} TLDs with a seller, {} history rows.",
        s.registrars.len(),
        s.prices.len(),
        tlds.len(),
        sold.len(),
        s.history.len()
    );
    for folder in &import.unknown_folders {
        let _ = writeln!(
            out,
            "Note: folder {folder:?} has no importer and was not read."
        );
    }
    out
}

/// Every dropped row of every feed's current file, one per line:
/// `registrar<TAB>key as written<TAB>reason`.
pub fn render_dropped(import: &Import) -> String {
    let mut out = String::new();
    for f in &import.feeds {
        for (key, reason) in &f.dropped_rows {
            let _ = writeln!(out, "{}\t{}\t{}", f.registrar, key, reason);
        }
    }
    out
}
