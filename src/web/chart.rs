//! The price-history chart: an SVG drawn on the server, no script and no chart library.
//!
//! One step-shaped line per registrar: a price holds from the day it was first seen
//! until the next change, so each price is a horizontal *tread* and each change a
//! vertical rise. A change whose registration price is the same as the one before
//! (only the renewal or transfer moved) adds no tread; a change without a registration
//! price (the registrar stopped selling) ends the line until a later price starts a new
//! one. Each tread starts with a dot, so a price first seen on the last day of the data
//! is still visible. A registrar's line ends on the day of its newest prices (its data
//! ends there), not at the snapshot's data date: an old price is not drawn as current.
//!
//! The chart is drawn twice, for a narrow (phone) and a wide screen, and the stylesheet
//! shows one of them: text in an SVG scales with it, so one drawing cannot be readable
//! at both 375 and 1440 pixels. The colours are dark enough for 3:1 contrast on white
//! and repeat with a dash pattern after twelve lines; the legend and the `<details>`
//! table under the chart say the same in text.

use std::fmt::Write;

use maud::{Markup, html};

use super::data::Series;
use super::format::Cash;
use crate::time;

/// Line colours, each at least 3:1 against white.
pub const COLOURS: [&str; 12] = [
    "#1b5e9e", "#c0392b", "#1e7b34", "#7b3fa0", "#8a5a00", "#b0277a", "#006d77", "#4d4d4d",
    "#c25400", "#3b4cc0", "#5a7300", "#a0522d",
];

/// Dash patterns, taken in turn after each round of colours.
pub const DASHES: [Option<&str>; 3] = [None, Some("7 4"), Some("2 3")];

/// The colour and dash pattern of the `i`-th line.
pub fn style(i: usize) -> (&'static str, Option<&'static str>) {
    (
        COLOURS[i % COLOURS.len()],
        DASHES[(i / COLOURS.len()) % DASHES.len()],
    )
}

/// One horizontal piece of a line: a price from `from` (a day) until `to` (exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tread {
    /// First day.
    pub from: i64,
    /// Day after the last.
    pub to: i64,
    /// Registration price, cents.
    pub cents: u64,
    /// Whether it continues the tread before (a rise), or starts a new line.
    pub joined: bool,
}

/// The treads of one registrar's changes (oldest first), up to `end` (exclusive) or to
/// the day its data ends, whichever is first.
pub fn treads(series: &Series<'_>, end: i64) -> Vec<Tread> {
    // Exclusive, as `end`: the line covers the whole of its last day.
    let end = series.last_seen.map_or(end, |last| end.min(last + 1));
    let mut out: Vec<Tread> = Vec::new();
    let mut open = false;
    for change in &series.changes {
        let day = change.date;
        if let Some(last) = out.last_mut().filter(|_| open) {
            last.to = day;
        }
        match change.prices.register {
            Some(c) if open && out.last().is_some_and(|t| t.cents == c) => {
                // Same registration price: the tread goes on.
            }
            Some(c) => {
                out.push(Tread {
                    from: day,
                    to: end,
                    cents: c,
                    joined: open,
                });
                open = true;
            }
            None => open = false,
        }
    }
    if let Some(last) = out.last_mut().filter(|_| open) {
        last.to = end.max(last.from + 1);
    }
    out
}

/// A series with its treads and style.
pub struct Line<'a> {
    /// The registrar.
    pub series: &'a Series<'a>,
    /// Its treads.
    pub treads: Vec<Tread>,
    /// Stroke colour.
    pub colour: &'static str,
    /// Dash pattern.
    pub dash: Option<&'static str>,
}

/// The lines to draw: every series with at least one tread, styled in order.
pub fn lines<'a>(history: &'a [Series<'a>], end: i64) -> Vec<Line<'a>> {
    history
        .iter()
        .map(|s| (s, treads(s, end)))
        .filter(|(_, t)| !t.is_empty())
        .enumerate()
        .map(|(i, (series, treads))| {
            let (colour, dash) = style(i);
            Line {
                series,
                treads,
                colour,
                dash,
            }
        })
        .collect()
}

/// The geometry of one drawing.
#[derive(Debug, Clone, Copy)]
struct Frame {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    font: f64,
    stroke: f64,
    x_ticks: usize,
    y_ticks: usize,
}

const WIDE: Frame = Frame {
    width: 960.0,
    height: 400.0,
    left: 64.0,
    right: 20.0,
    top: 16.0,
    bottom: 40.0,
    font: 13.0,
    stroke: 2.0,
    x_ticks: 9,
    y_ticks: 7,
};

const NARROW: Frame = Frame {
    width: 360.0,
    height: 300.0,
    left: 50.0,
    right: 12.0,
    top: 12.0,
    bottom: 36.0,
    font: 12.0,
    stroke: 2.0,
    x_ticks: 4,
    y_ticks: 5,
};

/// A "nice" step (1, 2, 2.5 or 5 times a power of ten cents) giving at most `n` ticks.
fn y_step(span: u64, n: usize) -> u64 {
    let mut unit = 1u64;
    loop {
        for m in [1, 2, 5] {
            let step = unit * m;
            if span / step < n as u64 {
                return step;
            }
        }
        if unit > u64::MAX / 100 {
            return unit;
        }
        unit *= 10;
    }
}

/// Calendar ticks between `lo` and `hi` (days): the first day of every `months`-th
/// month, or every `days`-th day for short ranges.
fn x_ticks(lo: i64, hi: i64, n: usize) -> (Vec<i64>, bool) {
    let span = (hi - lo).max(1);
    for months in [1i64, 2, 3, 6, 12, 24, 60, 120] {
        if span / (months * 30) < n as i64 {
            if span < 60 {
                break;
            }
            let (y, m, _) = time::civil_from_days(lo);
            let mut index = y * 12 + i64::from(m - 1);
            index = (index + months - 1) / months * months;
            let mut out = Vec::new();
            loop {
                let (yy, mm) = (index.div_euclid(12), index.rem_euclid(12) as u32 + 1);
                let day = time::days_from_civil(yy, mm, 1);
                if day < lo {
                    index += months;
                    continue;
                }
                if day > hi {
                    break;
                }
                out.push(day);
                index += months;
            }
            return (out, months >= 12);
        }
    }
    // Short ranges: days.
    let step = [1i64, 2, 7, 14]
        .into_iter()
        .find(|s| span / s < n as i64)
        .unwrap_or(30);
    ((lo..=hi).step_by(step as usize).collect(), false)
}

fn x_label(day: i64, years_only: bool, span: i64) -> String {
    let date = time::date_string(day);
    if years_only {
        date[..4].to_owned()
    } else if span >= 60 {
        date[..7].to_owned()
    } else {
        date[5..].to_owned()
    }
}

/// The chart of `lines`, from the first change to `end` (the day after the data date),
/// drawn for both screen sizes. `id` makes the element ids unique on the page.
/// The prices of `lines` are in the currency of `cash`.
pub fn render(tld: &str, lines: &[Line<'_>], end: i64, cash: Cash<'_>) -> Markup {
    html! {
        (draw(tld, lines, end, &NARROW, "narrow", cash))
        (draw(tld, lines, end, &WIDE, "wide", cash))
    }
}

fn draw(tld: &str, lines: &[Line<'_>], end: i64, f: &Frame, size: &str, cash: Cash<'_>) -> Markup {
    let first = lines
        .iter()
        .filter_map(|l| l.treads.first().map(|t| t.from))
        .min()
        .unwrap_or(end - 1);
    // At least a month on screen, so a history of a few days is not a smear.
    let lo = first.min(end - 30);
    let hi = end;
    let (min_c, max_c) = lines
        .iter()
        .flat_map(|l| l.treads.iter().map(|t| t.cents))
        .fold((u64::MAX, 0), |(a, b), c| (a.min(c), b.max(c)));
    let (min_c, max_c) = if min_c > max_c {
        (0, 100)
    } else {
        (min_c, max_c)
    };
    let step = y_step((max_c - min_c).max(1), f.y_ticks - 1);
    let y_lo = min_c / step * step;
    let mut y_hi = max_c.div_ceil(step) * step;
    if y_hi == y_lo {
        y_hi += step;
    }
    let plot_w = f.width - f.left - f.right;
    let plot_h = f.height - f.top - f.bottom;
    let x = |day: i64| f.left + (day - lo) as f64 * plot_w / (hi - lo) as f64;
    let y = |c: u64| f.top + plot_h - (c - y_lo) as f64 * plot_h / (y_hi - y_lo) as f64;
    let (ticks, years) = x_ticks(lo, hi, f.x_ticks);
    let title_id = format!("chart-{size}-title");
    let desc_id = format!("chart-{size}-desc");
    let n = lines.len();
    html! {
        svg class={ "chart chart-" (size) } xmlns="http://www.w3.org/2000/svg"
            viewBox={ "0 0 " (f.width) " " (f.height) } role="img"
            aria-labelledby={ (title_id) " " (desc_id) } data-lines=(n) {
            title id=(title_id) {
                "Registration price of ." (tld) " by registrar over time"
                @if !cash.is_usd() { ", in " (cash.code()) }
            }
            desc id=(desc_id) {
                (n) " registrars; step lines from " (time::date_string(lo)) " to "
                (time::date_string(hi - 1)) ". The table below the chart lists every change."
            }
            g class="grid" font-size=(f.font) fill="#333" {
                @for c in (y_lo..=y_hi).step_by(step as usize) {
                    line x1=(f.left) x2=(f.width - f.right) y1=(fix(y(c))) y2=(fix(y(c)))
                        stroke="#d0d0d0" stroke-width="1" {}
                    text x=(f.left - 6.0) y=(fix(y(c) + f.font * 0.35)) text-anchor="end" {
                        (cash.axis_label(c, step.is_multiple_of(100)))
                    }
                }
                @for day in &ticks {
                    line x1=(fix(x(*day))) x2=(fix(x(*day))) y1=(f.top) y2=(f.top + plot_h + 5.0)
                        stroke="#d0d0d0" stroke-width="1" {}
                    text x=(fix(x(*day))) y=(fix(f.top + plot_h + 5.0 + f.font * 1.2))
                        text-anchor="middle" { (x_label(*day, years, hi - lo)) }
                }
                line x1=(f.left) x2=(f.width - f.right) y1=(f.top + plot_h) y2=(f.top + plot_h)
                    stroke="#555" stroke-width="1" {}
            }
            @for line in lines {
                @let d = path(&line.treads, &x, &y);
                @let last = line.treads.last().map(|t| (t.cents, t.from));
                g class="registrar" data-key=(line.series.key) {
                    path class="series" d=(d) fill="none" stroke=(line.colour)
                        stroke-width=(f.stroke) stroke-dasharray=[line.dash]
                        stroke-linejoin="round" {
                        title {
                            (line.series.name)
                            @if let Some((c, from)) = last {
                                ": " (cash.amount(c, false)) " since " (time::date_string(from))
                            }
                        }
                    }
                    @for t in &line.treads {
                        circle class="mark" cx=(fix(x(t.from))) cy=(fix(y(t.cents))) r="3"
                            fill=(line.colour) {}
                    }
                }
            }
        }
    }
}

/// Two decimals are plenty for coordinates.
fn fix(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// `M x y H x V y H x ...`: one `H` per tread, `M` where a line (re)starts.
fn path(treads: &[Tread], x: &impl Fn(i64) -> f64, y: &impl Fn(u64) -> f64) -> String {
    let mut d = String::new();
    for t in treads {
        if t.joined {
            let _ = write!(d, "V{}", fix(y(t.cents)));
        } else {
            if !d.is_empty() {
                d.push(' ');
            }
            let _ = write!(d, "M{} {}", fix(x(t.from)), fix(y(t.cents)));
        }
        let _ = write!(d, "H{}", fix(x(t.to)));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::view::{Change, Triple};

    fn series(changes: &[(&str, Option<u64>)]) -> Series<'static> {
        Series {
            key: "k",
            name: "K",
            changes: changes
                .iter()
                .map(|(date, cents)| Change {
                    date: time::parse_date(date).unwrap(),
                    prices: Triple {
                        register: *cents,
                        ..Triple::default()
                    },
                })
                .collect(),
            last_seen: None,
        }
    }

    #[test]
    fn a_tread_per_price_merging_repeats_and_breaking_at_gaps() {
        let end = time::parse_date("2025-01-01").unwrap();
        let d = |s: &str| time::parse_date(s).unwrap();
        let s = series(&[
            ("2024-01-01", Some(999)),
            ("2024-02-01", Some(999)), // renewal moved only
            ("2024-03-01", Some(1099)),
            ("2024-04-01", None), // stopped selling
            ("2024-05-01", Some(800)),
        ]);
        let t = treads(&s, end);
        assert_eq!(
            t,
            [
                Tread {
                    from: d("2024-01-01"),
                    to: d("2024-03-01"),
                    cents: 999,
                    joined: false
                },
                Tread {
                    from: d("2024-03-01"),
                    to: d("2024-04-01"),
                    cents: 1099,
                    joined: true
                },
                Tread {
                    from: d("2024-05-01"),
                    to: end,
                    cents: 800,
                    joined: false
                },
            ]
        );
        let p = path(&t, &|day| (day - d("2024-01-01")) as f64, &|c| c as f64);
        assert_eq!(p.matches('H').count(), 3);
        assert_eq!(p.matches('M').count(), 2);
        assert_eq!(p.matches('V').count(), 1);
    }

    #[test]
    fn a_price_of_the_last_day_still_has_a_tread() {
        let end = time::parse_date("2026-08-23").unwrap();
        let t = treads(&series(&[("2026-08-22", Some(900))]), end);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].to - t[0].from, 1);
    }

    #[test]
    fn a_line_ends_where_its_data_ends() {
        let end = time::parse_date("2026-08-23").unwrap();
        let mut s = series(&[("2023-10-17", Some(900)), ("2024-01-01", Some(950))]);
        s.last_seen = time::parse_date("2024-01-07");
        let t = treads(&s, end);
        assert_eq!(
            t.last().unwrap().to,
            time::parse_date("2024-01-08").unwrap()
        );
        s.last_seen = None;
        assert_eq!(treads(&s, end).last().unwrap().to, end);
    }

    #[test]
    fn y_steps_are_round() {
        assert_eq!(y_step(1100, 6), 200);
        assert_eq!(y_step(50, 4), 20);
        assert_eq!(y_step(300_000, 6), 100_000);
        assert_eq!(y_step(1, 4), 1);
    }

    #[test]
    fn x_ticks_fall_on_month_starts_inside_the_range() {
        let lo = time::parse_date("2021-11-22").unwrap();
        let hi = time::parse_date("2026-08-23").unwrap();
        let (ticks, years) = x_ticks(lo, hi, 9);
        assert!(years);
        assert!(ticks.len() <= 9 && ticks.len() >= 3, "{ticks:?}");
        for t in ticks {
            assert!(t >= lo && t <= hi);
            assert!(time::date_string(t).ends_with("-01-01"));
        }
        let (ticks, _) = x_ticks(hi - 40, hi, 4);
        assert!(!ticks.is_empty() && ticks.len() <= 4);
    }
}
