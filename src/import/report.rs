//! What `tldsnap import` prints: the per-feed summary (rows read, kept, dropped by
//! reason, what the history holds) and, with `--report`, the data-quality report
//! (per registrar what was kept and dropped and why, and every flagged row).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::flags::Flagged;
use super::{DropReason, FeedSummary, Import};
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
            "- {}: free transfer {}, no transfer price {}, PSL private-section suffixes {}{}",
            f.registrar,
            f.free_transfer,
            f.no_transfer,
            f.private_suffix,
            conversions(f).map_or(String::new(), |c| format!(", {c}"))
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

/// `converted from GBP 36 at the rates of 2026-04-13`, or `None` without conversions.
fn conversions(f: &FeedSummary) -> Option<String> {
    let (first, last) = f.rate_days?;
    let counts: Vec<String> = f
        .converted
        .iter()
        .map(|(c, n)| format!("{c} {n}"))
        .collect();
    let rates = if first == last {
        format!("the rates of {}", time::date_string(first))
    } else {
        format!(
            "rates of {} .. {}",
            time::date_string(first),
            time::date_string(last)
        )
    };
    let age = f.date_ms.div_euclid(time::MS_PER_DAY) - last;
    let age = if age > 0 {
        format!(", {age} days older than the data")
    } else {
        String::new()
    };
    Some(format!(
        "converted to USD from {} at {rates}{age}",
        counts.join(", ")
    ))
}

/// How many names of a list are shown before "and N more".
const SHOWN_NAMES: usize = 6;

/// `not a public suffix: 2 (`et.io`, `adio.io`)`
fn reasons(f: &FeedSummary) -> String {
    if f.dropped.is_empty() {
        return "none".into();
    }
    let mut by_reason: BTreeMap<DropReason, Vec<&str>> = BTreeMap::new();
    for (key, reason) in &f.dropped_rows {
        by_reason.entry(*reason).or_default().push(key);
    }
    DropReason::ALL
        .iter()
        .filter_map(|r| {
            let names = by_reason.get(r)?;
            let mut shown: Vec<String> = names
                .iter()
                .take(SHOWN_NAMES)
                .map(|n| format!("`{n}`"))
                .collect();
            if names.len() > SHOWN_NAMES {
                shown.push(format!("and {} more", names.len() - SHOWN_NAMES));
            }
            Some(format!("{r}: {} ({})", names.len(), shown.join(", ")))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The data-quality report (Markdown): per registrar what was kept and dropped and why,
/// the flags counted per registrar, then every flagged row.
pub fn render_quality(import: &Import) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Kept and dropped, per registrar");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| registrar | data date | read | kept | dropped | why dropped | currency |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---|---|");
    for f in &import.feeds {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            f.registrar,
            time::date_string(f.date_ms.div_euclid(time::MS_PER_DAY)),
            f.read,
            f.kept,
            f.dropped_total(),
            reasons(f),
            conversions(f).unwrap_or_else(|| "USD".into()),
        );
    }
    let kinds = [
        "far from the median",
        "renewal below first year",
        "moved more than 50%",
        "rate older than 30 days",
    ];
    let _ = writeln!(out);
    let _ = writeln!(out, "### Flags, per registrar");
    let _ = writeln!(out);
    let _ = writeln!(out, "| registrar | {} |", kinds.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(kinds.len()));
    let mut totals = [0usize; 4];
    for f in &import.feeds {
        let mut counts = [0usize; 4];
        for flag in import.flags.iter().filter(|x| x.registrar == f.registrar) {
            if let Some(i) = kinds.iter().position(|k| *k == flag.flag.kind()) {
                counts[i] += 1;
                totals[i] += 1;
            }
        }
        let cells: Vec<String> = counts.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "| {} | {} |", f.registrar, cells.join(" | "));
    }
    let cells: Vec<String> = totals.iter().map(|n| format!("**{n}**")).collect();
    let _ = writeln!(out, "| **all** | {} |", cells.join(" | "));
    for kind in kinds {
        let flagged: Vec<&Flagged> = import
            .flags
            .iter()
            .filter(|f| f.flag.kind() == kind)
            .collect();
        let _ = writeln!(out);
        let _ = writeln!(out, "### {kind} ({})", flagged.len());
        let _ = writeln!(out);
        if flagged.is_empty() {
            let _ = writeln!(out, "- none");
        }
        for f in flagged {
            let _ = writeln!(out, "- {}", f.describe());
        }
    }
    out
}
