//! The page templates (maud: compiled with the binary, every spliced value escaped).
//!
//! Each function takes the data it shows and returns the whole document. Nothing here
//! reads the snapshot, the request or the clock.

use maud::{DOCTYPE, Markup, html};

use super::assets::assets;
use super::chart;
use super::data::{Cheapest, Row, TldPage};
use super::format::{Cash, count, money, query_value};
use crate::query::view::{
    CatalogueEntry, CataloguePage, Pick, QuotedPrices, RegistrarFacts, RegistrarPage,
};
use crate::query::{CatalogueSort, Ranking, TYPES};
use crate::sight::Sight;
use crate::snapshot::schema::{NONE, OfferTerms};
use crate::time;

/// Who is looking, as far as a page's content goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Viewer {
    /// Signed in with an API key.
    pub signed_in: bool,
    /// The plan whose rules apply (`public` for visitors).
    pub plan: std::borrow::Cow<'static, str>,
    /// What the plan shows of the prices.
    pub sight: Sight,
}

impl Viewer {
    /// A visitor (no session) under the default `public` plan: for the pages that show
    /// no prices (errors before the plans are at hand).
    pub fn visitor() -> Viewer {
        Viewer::of(&crate::access::plans::Plans::default().public(), false)
    }

    /// A viewer under `plan`, signed in or not.
    pub fn of(plan: &crate::access::plans::Plan, signed_in: bool) -> Viewer {
        Viewer {
            signed_in,
            plan: plan.name.clone().into(),
            sight: plan.sight(),
        }
    }
}

/// What every page shows around its content.
pub struct Chrome<'a> {
    /// The viewer.
    pub viewer: &'a Viewer,
    /// The data date, `YYYY-MM-DD`.
    pub data_date: &'a str,
    /// The path of this page (for the sign-in link's way back).
    pub path: &'a str,
    /// The currency prices are shown in.
    pub cash: Cash<'a>,
    /// The currencies a price page offers to show (empty: no choice on this page).
    pub currencies: &'a [&'a str],
}

fn signin_href(path: &str) -> String {
    if path == "/" || path.starts_with("/signin") {
        "/signin".to_owned()
    } else {
        format!("/signin?next={}", query_value(path))
    }
}

/// The document around `content`.
pub fn layout(chrome: &Chrome<'_>, title: &str, content: Markup) -> Markup {
    let a = assets();
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · tldsnap" }
                meta name="description" content="Domain registration, renewal and transfer prices of every TLD across registrars.";
                link rel="stylesheet" href=(a.css.path);
                link rel="icon" type="image/svg+xml" href=(a.icon.path);
                script src=(a.js.path) defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.site {
                    nav aria-label="Site" {
                        a.brand href="/" { "tldsnap" }
                        ul {
                            li { a href="/tlds" { "TLDs" } }
                            li { a href="/registrars" { "Registrars" } }
                            li {
                                @if chrome.viewer.signed_in {
                                    a href="/signin" { "Account (" (chrome.viewer.plan) ")" }
                                } @else {
                                    a href=(signin_href(chrome.path)) { "Sign in" }
                                }
                            }
                        }
                    }
                }
                main #main { (content) }
                footer {
                    "Prices as registrars publish them, in US dollars unless a page says otherwise; data as of "
                    (chrome.data_date) ". The same data as JSON: "
                    a href="/docs/api" { "the API" } ", described by "
                    a href="/openapi.json" { "its OpenAPI document" } "."
                }
            }
        }
    }
}

/// The placeholder of a member-only value.
fn members(viewer: &Viewer, path: &str) -> Markup {
    html! {
        @if viewer.signed_in {
            span.members title={ "Not shown on your plan (" (viewer.plan) ")" } { "Members" }
        } @else {
            a.members href=(signin_href(path)) title="Sign in with an API key to see member prices" { "Members" }
        }
    }
}

/// A price in USD cents, in the page's currency.
fn price(cash: &Cash<'_>, cents: Option<u64>) -> Markup {
    amount(cash, cents.map(|c| cash.convert(c)))
}

/// An amount already in hundredths of the page's currency (a converted total, a
/// converted history).
fn amount(cash: &Cash<'_>, hundredths: Option<u64>) -> Markup {
    html! {
        @match hundredths {
            Some(c) => (cash.amount(c, false)),
            None => span.muted title="Not offered" { "—" },
        }
    }
}

/// A first-year price; a promotion is marked as one, with the regular first-year price
/// beside it (in words, not by colour).
fn first_year(cash: &Cash<'_>, cents: Option<u64>, terms: &OfferTerms) -> Markup {
    html! {
        (price(cash, cents))
        @if cents.is_some() && terms.promotion() {
            @if terms.regular_register == NONE {
                " " span.promo {
                    abbr title="A promotional first-year price; the registrar's list does not state its regular price" { "Promo" }
                }
            } @else {
                @let regular = cash.price(u64::from(terms.regular_register));
                " " span.promo {
                    abbr title={ "A promotional first-year price; the regular first-year price is " (regular) } { "Promo" }
                    ", regular " (regular)
                }
            }
        }
    }
}

/// What a registrar's list offers beside the price for everyone: a published coupon
/// code and its first-year price, the prices of its paid membership.
fn conditional_prices(cash: &Cash<'_>, terms: &OfferTerms) -> Markup {
    html! {
        @if terms.coupon_register != NONE {
            " " span.coupon {
                "with code " code { (terms.coupon_code) } ": " (cash.price(u64::from(terms.coupon_register)))
            }
        }
        @if terms.member.0 != NONE {
            " " span.member {
                "members: " (cash.price(u64::from(terms.member.0)))
            }
        }
    }
}

/// Whether the prices include the ICANN fee, where the registrar's list states the fee.
fn icann_fee(cash: &Cash<'_>, terms: &OfferTerms) -> Markup {
    html! {
        @if terms.icann_fee != NONE {
            @let fee = cash.price(u64::from(terms.icann_fee));
            " " span.fee {
                @if terms.icann_fee_included { "ICANN fee " (fee) " included" } @else { "plus ICANN fee " (fee) }
            }
        }
    }
}

/// The line naming the currency of the prices and the rate date, and the form that
/// chooses the currency (a GET of this page; `keep` are the page's other parameters).
fn currency_bar(chrome: &Chrome<'_>, keep: &[(&str, String)]) -> Markup {
    let code = chrome.cash.code();
    html! {
        div.currency-bar {
            p.muted #currency-note {
                @match chrome.cash.money.rate_day() {
                    Some(day) => {
                        "Prices in " strong { (code) } ", converted from US dollars at the ECB euro reference rates of "
                        (time::date_string(day)) "."
                    }
                    None => { "Prices in " strong { "US dollars" } "." }
                }
            }
            @if !chrome.currencies.is_empty() {
                form.inline.currency method="get" action=(chrome.path) {
                    @for (name, value) in keep {
                        input type="hidden" name=(name) value=(value);
                    }
                    div {
                        label for="currency" { "Currency" }
                        select #currency name="currency" {
                            @for c in chrome.currencies {
                                option value=(c) selected[*c == code] { (c) }
                            }
                        }
                    }
                    button type="submit" { "Show prices" }
                }
            }
        }
    }
}

/// How a pick's price is shown.
enum PickPrice<'t> {
    /// A price, converted.
    Plain,
    /// A first-year price with its offer's terms.
    FirstYear(&'t OfferTerms<'t>),
    /// A total already in the page's currency (the sum of converted prices).
    Total(Option<u64>),
}

/// A price in cents, as the sort key of its cell.
fn value_attr(cents: Option<u64>) -> String {
    cents.map(|c| c.to_string()).unwrap_or_default()
}

/// An amount in hundredths of `currency` ([`money`] takes it in whole units).
fn quoted(currency: &str, hundredths: u64) -> String {
    money(currency, hundredths as f64 / 100.0)
}

/// The day (`YYYY-MM-DD`) of a time in Unix milliseconds.
fn day_of(ms: i64) -> String {
    time::iso_millis(ms)[..10].to_owned()
}

fn tld_link(name: &str, unicode: &str) -> Markup {
    html! {
        a href={ "/tld/" (name) } {
            "." (unicode)
            @if unicode != name { " " span.muted { "(" (name) ")" } }
        }
    }
}

/// An average: `None` among hidden averages is a member's.
fn average(v: Option<u64>, hidden: bool, chrome: &Chrome<'_>) -> Markup {
    match v {
        None if hidden => members(chrome.viewer, chrome.path),
        v => price(&chrome.cash, v),
    }
}

fn pick(p: &Option<Pick<'_>>, hidden: bool, chrome: &Chrome<'_>, how: PickPrice<'_>) -> Markup {
    let cash = &chrome.cash;
    html! {
        @if hidden {
            (members(chrome.viewer, chrome.path))
        } @else {
            @match p {
                Some(p) => {
                    @match how {
                        PickPrice::Plain => (price(cash, p.price)),
                        PickPrice::FirstYear(terms) => (first_year(cash, p.price, terms)),
                        PickPrice::Total(total) => (amount(cash, total.or(p.price.map(|c| cash.convert(c))))),
                    }
                    " at "
                    a href={ "/registrars/" (p.registrar_key) } { (p.registrar_name) }
                    @if let Some(o) = &p.original {
                        @if let Some(amount) = o.price {
                            " " span.muted { "(" (quoted(o.currency, amount)) " at the " (time::date_string(o.rate_date)) " rate)" }
                        }
                    }
                }
                None => span.muted { "—" },
            }
        }
    }
}

/// `/`: search, the free TLDs, the data date and counts.
pub fn home(
    chrome: &Chrome<'_>,
    free: &[Cheapest<'_>],
    tlds_sold: usize,
    tlds_priced: usize,
    catalogue_size: usize,
    registrar_count: usize,
) -> Markup {
    let cash = &chrome.cash;
    let content = html! {
        h1 { "Domain prices across registrars" }
        p.lead {
            "Registration, renewal and transfer prices of " strong { (count(tlds_sold as u64)) }
            " TLDs on sale from " strong { (registrar_count) } " registrars (and renewal "
            "prices only of " (count(tlds_priced.saturating_sub(tlds_sold) as u64))
            " more), among the "
            (count(catalogue_size as u64)) " TLDs of the catalogue; data as of "
            strong { (chrome.data_date) } "."
        }
        form.inline role="search" action="/tlds" method="get" {
            div {
                label for="q" { "Find a TLD" }
                input #q type="search" name="q" required
                    placeholder="com, .co.uk, рф or xn--p1ai" autocomplete="off";
            }
            button type="submit" { "Search" }
        }
        h2 { "The 22 free TLDs" }
        p { "Their prices are open to everyone. Every other TLD shows its registrar count and averages to all, and its prices to members. "
            "The 3-year cost is the first year and two renewals, at the registrar where it is lowest." }
        (currency_bar(chrome, &[]))
        div.table-wrap {
            table.sortable #free {
                thead { tr {
                    th scope="col" { "TLD" }
                    th.num scope="col" { "Cheapest registration" }
                    th scope="col" { "Registrar" }
                    th.num scope="col" { "Cheapest 3 years" }
                    th scope="col" { "3-year registrar" }
                    th.num scope="col" { "Registrars" }
                } }
                tbody {
                    @for c in free {
                        @let three = c.three_year.as_ref();
                        @let three_total = three.and_then(|o| cash.total(o.prices.register, o.prices.renew, 2));
                        tr {
                            th scope="row" { a href={ "/tld/" (c.tld) } { "." (c.tld) } }
                            td.num data-value=(value_attr(c.price)) { (first_year(cash, c.price, &c.terms)) }
                            td { (c.registrar_name) }
                            td.num data-value=(value_attr(three_total)) { (amount(cash, three_total)) }
                            td { @if let Some(o) = three { (o.registrar_name) } }
                            td.num data-value=(c.registrar_count) { (c.registrar_count) }
                        }
                    }
                }
            }
        }
    };
    layout(chrome, "Domain prices across registrars", content)
}

fn original(o: &QuotedPrices<'_>) -> Markup {
    let p = &o.prices;
    html! {
        span.muted {
            "Quoted in " (o.currency) ": "
            @for (i, (label, v)) in [("register", p.register), ("renew", p.renew), ("transfer", p.transfer)].into_iter().enumerate() {
                @if i > 0 { ", " }
                (label) " " @match v { Some(v) => (quoted(o.currency, v)), None => "—" }
            }
            " (rate of " (time::date_string(o.rate_date)) ")"
        }
    }
}

fn trap(row: &Row<'_>) -> bool {
    match (row.offer.prices.register, row.offer.prices.renew) {
        (Some(reg), Some(ren)) => crate::audit::is_renewal_trap(reg as u32, ren as u32),
        _ => false,
    }
}

/// What each ranking of the TLD page is called on its link.
fn ranking_label(r: Ranking) -> &'static str {
    match r {
        Ranking::Register => "First year",
        Ranking::Renew => "Renewal",
        Ranking::Total3Year => "3 years",
        Ranking::Total5Year => "5 years",
    }
}

/// What the table of a ranking lists first.
fn ranking_lead(r: Ranking) -> &'static str {
    match r {
        Ranking::Register => "Cheapest first registration first.",
        Ranking::Renew => "Cheapest renewal first.",
        Ranking::Total3Year => "Cheapest 3 years first.",
        Ranking::Total5Year => "Cheapest 5 years first.",
    }
}

/// The TLD page's address in ranking `r` (the first-year ranking is the bare page).
fn ranking_href(tld: &str, r: Ranking) -> String {
    match r {
        Ranking::Register => format!("/tld/{tld}"),
        r => format!("/tld/{tld}?sort={}", r.name()),
    }
}

/// `/tld/{tld}`.
pub fn tld(chrome: &Chrome<'_>, page: &TldPage<'_>, data_end: i64) -> Markup {
    let cash = &chrome.cash;
    let o = &page.overview;
    let f = &o.facts;
    let hidden = |field: &str| o.hides(field);
    let lines = chart::lines(&page.history, data_end);
    let any_trap = page.rows.iter().any(trap);
    let any_fee = page.rows.iter().any(|r| r.offer.terms.icann_fee != NONE);
    let any_promo = page.rows.iter().any(|r| r.offer.terms.promotion());
    // The lowest 5-year cost in the page's currency as its seller's row sums it.
    let lowest_5 = o.lowest_5_year.as_ref().and_then(|p| {
        let row = page
            .rows
            .iter()
            .find(|r| r.offer.registrar_key == p.registrar_key)?;
        cash.total(row.offer.prices.register, row.offer.prices.renew, 4)
    });
    let keep: Vec<(&str, String)> = match page.ranking {
        Ranking::Register => Vec::new(),
        r => vec![("sort", r.name().to_owned())],
    };
    let content = html! {
        h1 {
            "." (f.unicode)
            @if f.unicode != f.tld { " " span.muted { "(" (f.tld) ")" } }
        }
        @if !page.prices_shown && o.registrar_count > 0 {
            p.notice {
                "Prices of ." (f.unicode) " are for members. "
                @if chrome.viewer.signed_in {
                    "Your plan (" (chrome.viewer.plan) ") covers the 22 free TLDs only."
                } @else {
                    a href=(signin_href(chrome.path)) { "Sign in with an API key" }
                    " to see them; the registrar count and averages are open to everyone."
                }
            }
        }
        (currency_bar(chrome, &keep))
        dl.facts {
            dt { "Type" } dd { (f.kind.unwrap_or("unknown")) }
            dt { "Manager" } dd { (f.manager.unwrap_or("unknown")) }
            dt { "Free TLD" } dd { @if f.free { "yes: prices open to everyone" } @else { "no" } }
            dt { "Registrars" } dd { (o.registrar_count) }
            dt { "Average registration" } dd { (average(o.avg_prices.register, hidden("avg_prices"), chrome)) }
            dt { "Average renewal" } dd { (average(o.avg_prices.renew, hidden("avg_prices"), chrome)) }
            dt { "Average transfer" } dd { (average(o.avg_prices.transfer, hidden("avg_prices"), chrome)) }
            dt { "Cheapest registration" } dd { (pick(&o.cheapest_register, hidden("cheapest_register"), chrome, PickPrice::FirstYear(&page.cheapest_terms))) }
            dt { "Lowest renewal" } dd { (pick(&o.lowest_renew, hidden("lowest_renew"), chrome, PickPrice::Plain)) }
            dt { "Lowest 5-year cost" } dd { (pick(&o.lowest_5_year, hidden("lowest_5_year"), chrome, PickPrice::Total(lowest_5))) }
            dt { "Data as of" } dd { (page.data_date) }
        }
        h2 #registrars { "Registrars" }
        @if o.registrar_count == 0 {
            p { "No registrar sells ." (f.unicode) " in this data." }
        }
        @if !page.rows.is_empty() {
            nav.ranking aria-label="Order of the registrars" {
                span.label { "Order by" }
                ul {
                    @for r in Ranking::ALL {
                        li {
                            a href=(ranking_href(f.tld, r)) aria-current=[(r == page.ranking).then_some("true")] {
                                (ranking_label(r))
                            }
                        }
                    }
                }
            }
            p.muted #ranking-note {
                (ranking_lead(page.ranking))
                " The 3- and 5-year costs are the first year and two or four renewals."
                @if any_promo {
                    " " span.promo { "Promo" } " marks a promotional first-year price, with the regular one beside it."
                }
                @if any_fee {
                    " Where a registrar states the ICANN fee, the first-year cell says whether its prices include it."
                }
                @if any_trap {
                    " " span.trap { "Renewal trap" }
                    " marks a renewal at least twice the first year."
                }
            }
            div.table-wrap {
                table.sortable #prices data-ranking=(page.ranking.name()) {
                    thead { tr {
                        th.num scope="col" { "Rank" }
                        th scope="col" { "Registrar" }
                        th.num scope="col" { "Register" }
                        th.num scope="col" { "Renew" }
                        th.num scope="col" { "Transfer" }
                        th.num scope="col" { "3 years" }
                        th.num scope="col" { "5 years" }
                        th scope="col" { "Price date" }
                    } }
                    tbody {
                        @for row in &page.rows {
                            @let offer = &row.offer;
                            tr {
                                td.num data-value=(row.rank) { (row.rank) }
                                th scope="row" {
                                    a href={ "/registrars/" (offer.registrar_key) } { (offer.registrar_name) }
                                    @if let Some(orig) = &offer.original { br; (original(orig)) }
                                }
                                td.num data-value=(value_attr(offer.prices.register)) {
                                    (first_year(cash, offer.prices.register, &offer.terms))
                                    (icann_fee(cash, &offer.terms))
                                    (conditional_prices(cash, &offer.terms))
                                }
                                td.num data-value=(value_attr(offer.prices.renew)) {
                                    (price(cash, offer.prices.renew))
                                    @if trap(row) { " " span.trap title="Renewal costs at least twice the first year" { "Renewal trap" } }
                                }
                                td.num data-value=(value_attr(offer.prices.transfer)) { (price(cash, offer.prices.transfer)) }
                                td.num data-value=(value_attr(offer.total_3_year())) { (amount(cash, cash.total(offer.prices.register, offer.prices.renew, 2))) }
                                td.num data-value=(value_attr(offer.total_5_year())) { (amount(cash, cash.total(offer.prices.register, offer.prices.renew, 4))) }
                                td {
                                    (day_of(offer.updated_ms))
                                    @if offer.stale { " " span.stale title="This registrar's prices have not been seen for longer than the server's age limit: they may no longer hold" { "Old price" } }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if page.hidden > 0 {
            p.notice #more-registrars {
                @if page.rows.is_empty() {
                    @if page.hidden == 1 { "The registrar of ." } @else { "The " (page.hidden) " registrars of ." }
                    (f.unicode) " and their prices are for members: "
                } @else {
                    (page.hidden) @if page.hidden == 1 { " more registrar sells ." } @else { " more registrars sell ." }
                    (f.unicode) "; their names and prices are for members of a plan that lists every seller: "
                }
                (members(chrome.viewer, chrome.path))
            }
        }
        h2 #history { "Price history" }
        @if !page.prices_shown && o.registrar_count > 0 {
            p { "The price history of ." (f.unicode) " is for members: " (members(chrome.viewer, chrome.path)) }
        } @else if !page.prices_shown {
            p { "Nobody sells ." (f.unicode) " in this data." }
        } @else if lines.is_empty() {
            p { "No price change of ." (f.unicode) " is recorded in this data." }
        } @else {
            p.muted { "Registration price per registrar: each step is a price change, each dot the day a price was first seen." }
            figure.chart-box {
                (chart::render(f.tld, &lines, data_end, *cash))
            }
            ul.legend aria-label="Legend" {
                @for line in &lines {
                    li {
                        svg width="28" height="10" aria-hidden="true" {
                            line x1="0" y1="5" x2="28" y2="5" stroke=(line.colour) stroke-width="3"
                                stroke-dasharray=[line.dash] {}
                        }
                        a href={ "/registrars/" (line.series.key) } { (line.series.name) }
                    }
                }
            }
            details {
                summary { "The price history as a table" }
                div.table-wrap {
                    table.sortable {
                        caption.muted { "Every recorded change of ." (f.unicode) ", oldest first" }
                        thead { tr {
                            th scope="col" { "Registrar" }
                            th scope="col" { "Date" }
                            th.num scope="col" { "Register" }
                            th.num scope="col" { "Renew" }
                            th.num scope="col" { "Transfer" }
                        } }
                        tbody {
                            @for s in &page.history {
                                @for c in &s.changes {
                                    tr {
                                        th scope="row" { (s.name) }
                                        td { (time::date_string(c.date)) }
                                        td.num data-value=(value_attr(c.prices.register)) { (amount(cash, c.prices.register)) }
                                        td.num data-value=(value_attr(c.prices.renew)) { (amount(cash, c.prices.renew)) }
                                        td.num data-value=(value_attr(c.prices.transfer)) { (amount(cash, c.prices.transfer)) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    let title = if f.unicode != f.tld {
        format!(".{} ({}) domain prices", f.unicode, f.tld)
    } else {
        format!(".{} domain prices", f.tld)
    };
    layout(chrome, &title, content)
}

/// The filters of a catalogue page, as given.
#[derive(Debug, Clone, Default)]
pub struct CatalogueFilters {
    /// Name contains.
    pub q: Option<String>,
    /// IANA type.
    pub kind: Option<String>,
    /// Order.
    pub sort: Option<CatalogueSort>,
    /// Entries per page.
    pub limit: usize,
    /// Whether this is a later page (came with a cursor).
    pub paged: bool,
}

impl CatalogueFilters {
    /// The query string of these filters, with `extra` appended.
    pub fn query(&self, extra: &[(&str, &str)]) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(q) = &self.q {
            parts.push(format!("q={}", query_value(q)));
        }
        if let Some(k) = &self.kind {
            parts.push(format!("type={}", query_value(k)));
        }
        if let Some(s) = self.sort {
            parts.push(format!("sort={}", s.as_str()));
        }
        if self.limit != crate::query::DEFAULT_PAGE {
            parts.push(format!("limit={}", self.limit));
        }
        for (k, v) in extra {
            parts.push(format!("{k}={}", query_value(v)));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }
}

fn catalogue_row(e: &CatalogueEntry<'_>, terms: &OfferTerms, chrome: &Chrome<'_>) -> Markup {
    let hidden = e.hides("cheapest_register");
    let average_hidden = e.hides("avg_register_price");
    html! {
        tr {
            th scope="row" { (tld_link(e.facts.tld, e.facts.unicode)) }
            td { (e.facts.kind.unwrap_or("unknown")) }
            td.num data-value=(e.registrar_count) { (e.registrar_count) }
            @if average_hidden {
                td.num data-value="" { (members(chrome.viewer, chrome.path)) }
            } @else {
                td.num data-value=(value_attr(e.avg_register_price)) { (price(&chrome.cash, e.avg_register_price)) }
            }
            td data-value=(if hidden { String::new() } else { value_attr(e.cheapest_register.as_ref().and_then(|p| p.price)) }) {
                (pick(&e.cheapest_register, hidden, chrome, PickPrice::FirstYear(terms)))
            }
        }
    }
}

/// `/tlds`.
pub fn catalogue(
    chrome: &Chrome<'_>,
    filters: &CatalogueFilters,
    page: &CataloguePage<'_>,
    terms: &[OfferTerms],
    exact: Option<(&str, &str)>,
) -> Markup {
    let sort = filters.sort.unwrap_or(CatalogueSort::Name);
    let mut keep: Vec<(&str, String)> = Vec::new();
    if let Some(q) = &filters.q {
        keep.push(("q", q.clone()));
    }
    if let Some(k) = &filters.kind {
        keep.push(("type", k.clone()));
    }
    if let Some(s) = filters.sort {
        keep.push(("sort", s.as_str().to_owned()));
    }
    if filters.limit != crate::query::DEFAULT_PAGE {
        keep.push(("limit", filters.limit.to_string()));
    }
    let content = html! {
        h1 { "TLD catalogue" }
        form.inline method="get" action="/tlds" {
            div {
                label for="q" { "Name contains" }
                input #q type="search" name="q" value=[filters.q.as_deref()] autocomplete="off";
            }
            div {
                label for="type" { "Type" }
                select #type name="type" {
                    option value="" selected[filters.kind.is_none()] { "Any" }
                    @for t in TYPES {
                        option value=(t) selected[filters.kind.as_deref() == Some(t)] { (t) }
                    }
                }
            }
            div {
                label for="sort" { "Order" }
                select #sort name="sort" {
                    @for (s, label) in [(CatalogueSort::Name, "Name"), (CatalogueSort::Cheapest, "Cheapest registration"), (CatalogueSort::Registrars, "Most registrars")] {
                        option value=(s.as_str()) selected[s == sort] { (label) }
                    }
                }
            }
            button type="submit" { "Show" }
        }
        @if let Some((name, unicode)) = exact {
            p.notice { "Exact match: " strong { (tld_link(name, unicode)) } }
        }
        p {
            (count(page.total as u64)) " TLD" @if page.total != 1 { "s" }
            @if filters.q.is_some() || filters.kind.is_some() { " match" } @else { " in the catalogue" }
            "; " (page.tlds.len()) " on this page."
        }
        @if !page.tlds.is_empty() {
            (currency_bar(chrome, &keep))
            div.table-wrap {
                table.sortable {
                    thead { tr {
                        th scope="col" { "TLD" }
                        th scope="col" { "Type" }
                        th.num scope="col" { "Registrars" }
                        th.num scope="col" { "Average registration" }
                        th scope="col" { "Cheapest registration" }
                    } }
                    tbody {
                        @for (i, e) in page.tlds.iter().enumerate() {
                            (catalogue_row(e, terms.get(i).unwrap_or(&OfferTerms::NONE), chrome))
                        }
                    }
                }
            }
        }
        nav.pages aria-label="Pages" {
            @if filters.paged { a href={ "/tlds" (filters.query(&[])) } { "First page" } }
            @if let Some(next) = &page.next_cursor {
                a href={ "/tlds" (filters.query(&[("cursor", &next.to_string())])) } rel="next" { "Next page" }
            }
        }
    };
    layout(chrome, "TLD catalogue", content)
}

/// `/registrars`.
pub fn registrars(chrome: &Chrome<'_>, list: &[RegistrarFacts<'_>]) -> Markup {
    let content = html! {
        h1 { "Registrars" }
        p { (list.len()) " registrars whose published prices are in this data." }
        div.table-wrap {
            table.sortable {
                thead { tr {
                    th scope="col" { "Registrar" }
                    th.num scope="col" { "TLDs sold" }
                    th.num scope="col" { "Cheapest in" }
                    th scope="col" { "Prices from" }
                    th scope="col" { "Last updated" }
                } }
                tbody {
                    @for r in list {
                        tr {
                            th scope="row" { a href={ "/registrars/" (r.key) } { (r.name) } }
                            td.num data-value=(r.tlds_sold) { (count(r.tlds_sold)) }
                            td.num data-value=(r.cheapest_in) { (count(r.cheapest_in)) }
                            td { @if let Some(c) = &r.coverage { (time::date_string(c.first)) } }
                            td { @if let Some(ms) = r.last_updated_ms { (day_of(ms)) } }
                        }
                    }
                }
            }
        }
    };
    layout(chrome, "Registrars", content)
}

/// `/registrars/{key}`.
pub fn registrar(
    chrome: &Chrome<'_>,
    page: &RegistrarPage<'_>,
    terms: &[OfferTerms],
    paged: bool,
    cursor: Option<&str>,
) -> Markup {
    let cash = &chrome.cash;
    let r = &page.registrar;
    let keep: Vec<(&str, String)> = cursor
        .map(|c| ("cursor", c.to_owned()))
        .into_iter()
        .collect();
    let any_fee = terms.iter().any(|t| t.icann_fee != NONE);
    // The list holds the offers this viewer sees; the rest are counted, not named.
    let hidden = (r.tlds_sold + r.renewal_only).saturating_sub(page.total as u64);
    let content = html! {
        h1 { (r.name) }
        dl.facts {
            dt { "Website" }
            dd { @match r.homepage {
                Some(h) if h.starts_with("https://") || h.starts_with("http://") => a href=(h) rel="nofollow noopener noreferrer" { (h) },
                Some(h) => (h),
                None => "unknown",
            } }
            dt { "TLDs sold" } dd { (count(r.tlds_sold)) }
            @if r.renewal_only > 0 { dt { "Renewal price only" } dd { (count(r.renewal_only)) " TLDs" } }
            dt { "Cheapest registration in" } dd { (count(r.cheapest_in)) " TLDs" }
            @if let Some(c) = &r.coverage { dt { "Price lists" } dd { "from " (time::date_string(c.first)) " to " (time::date_string(c.last)) } }
            @if let Some(ms) = r.last_updated_ms { dt { "Last updated" } dd { (day_of(ms)) } }
        }
        h2 { "Prices" }
        @if hidden > 0 {
            p.notice #more-prices {
                "Prices of " (count(hidden)) " more TLDs of " (r.name) " are for members: "
                (members(chrome.viewer, chrome.path))
                " (the 22 free TLDs are open to everyone, each with its cheapest sellers)."
            }
        }
        p {
            (count(page.total as u64)) " TLDs, in name order; " (page.prices.len()) " on this page. "
            @if terms.iter().any(|t| t.promotion()) {
                span.promo { "Promo" } " marks a promotional first-year price, with the regular one beside it."
            }
            @if any_fee { " Where the list states the ICANN fee, the first-year cell says whether the prices include it." }
        }
        (currency_bar(chrome, &keep))
        div.table-wrap {
            table.sortable {
                thead { tr {
                    th scope="col" { "TLD" }
                    th.num scope="col" { "Register" }
                    th.num scope="col" { "Renew" }
                    th.num scope="col" { "Transfer" }
                    th scope="col" { "Price date" }
                } }
                tbody {
                    @for (i, p) in page.prices.iter().enumerate() {
                        @let t = terms.get(i).unwrap_or(&OfferTerms::NONE);
                        tr {
                            th scope="row" { a href={ "/tld/" (p.tld) } { "." (p.tld) } }
                            td.num data-value=(value_attr(p.prices.register)) {
                                (first_year(cash, p.prices.register, t))
                                (icann_fee(cash, t))
                                (conditional_prices(cash, t))
                            }
                            td.num data-value=(value_attr(p.prices.renew)) { (price(cash, p.prices.renew)) }
                            td.num data-value=(value_attr(p.prices.transfer)) { (price(cash, p.prices.transfer)) }
                            td { (day_of(p.updated_ms)) }
                        }
                    }
                }
            }
        }
        nav.pages aria-label="Pages" {
            @if paged { a href={ "/registrars/" (r.key) } { "First page" } }
            @if let Some(next) = &page.next_cursor {
                a href={ "/registrars/" (r.key) "?cursor=" (next) } rel="next" { "Next page" }
            }
        }
    };
    layout(chrome, r.name, content)
}

/// What the sign-in page says.
pub enum SignIn<'a> {
    /// The form; `error` after a refused key.
    Form {
        /// The CSRF token.
        csrf: &'a str,
        /// Where to go after signing in.
        next: Option<&'a str>,
        /// Why the last attempt failed.
        error: Option<&'a str>,
    },
    /// Signed in: who, and the sign-out form.
    Account {
        /// The CSRF token.
        csrf: &'a str,
        /// The key's id.
        key_id: &'a str,
    },
}

/// `/signin`.
pub fn signin(chrome: &Chrome<'_>, state: &SignIn<'_>) -> Markup {
    let content = html! {
        @match state {
            SignIn::Form { csrf, next, error } => {
                h1 { "Sign in" }
                p { "Members see the prices their plan covers. Sign in with your API key: it is checked once, and the session cookie holds only the key's id, never the key." }
                p { "No key yet? Ask whoever runs this server for one. They make it with "
                    code { "tldsnap keys add --keys FILE --plan PLAN" }
                    " (the built-in plans are free, basic, pro and enterprise), in the keys file the server is started with ("
                    code { "tldsnap serve --keys FILE" } "), and send the server SIGHUP to take it up. "
                    "The key is printed once, when it is made; the server keeps only its SHA-256." }
                @if let Some(e) = error { p.error role="alert" { (e) } }
                form.stack method="post" action="/signin" {
                    input type="hidden" name="csrf" value=(csrf);
                    @if let Some(n) = next { input type="hidden" name="next" value=(n); }
                    p {
                        label for="key" { "API key" }
                        input #key type="password" name="key" required autocomplete="off" spellcheck="false";
                    }
                    button type="submit" { "Sign in" }
                }
            }
            SignIn::Account { csrf, key_id } => {
                h1 { "Your account" }
                dl.facts {
                    dt { "API key" } dd { code { (key_id) } }
                    dt { "Plan" } dd { (chrome.viewer.plan) }
                    dt { "Prices shown" } dd {
                        @if chrome.viewer.sight.all_tlds() { "every TLD" } @else { "the 22 free TLDs" }
                    }
                }
                p.muted { "Page views spend no credits." }
                form.inline method="post" action="/signout" {
                    input type="hidden" name="csrf" value=(csrf);
                    button type="submit" { "Sign out" }
                }
            }
        }
    };
    layout(chrome, "Sign in", content)
}

/// The 404 page, with close names when there are any.
pub fn not_found(chrome: &Chrome<'_>, what: Option<&str>, close: &[String]) -> Markup {
    let content = html! {
        @match what {
            Some(name) => h1 { "No TLD ." (name) },
            None => h1 { "Page not found" },
        }
        @if !close.is_empty() {
            p { "Did you mean:" }
            ul.suggest {
                @for c in close { li { a href={ "/tld/" (c) } { "." (c) } } }
            }
        }
        p {
            @if let Some(name) = what {
                a href={ "/tlds?q=" (query_value(name)) } { "Search the catalogue for “" (name) "”" } ", "
            }
            "browse " a href="/tlds" { "every TLD" } " or go to the " a href="/" { "home page" } "."
        }
    };
    layout(chrome, "Not found", content)
}

/// An error page: a title and what happened.
pub fn error(chrome: &Chrome<'_>, title: &str, detail: &str) -> Markup {
    let content = html! {
        h1 { (title) }
        p.error { (detail) }
        p { a href="/" { "Home page" } }
    };
    layout(chrome, title, content)
}
