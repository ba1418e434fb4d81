//! What a viewer may see of the prices: the one place every door asks.
//!
//! A plan (`crate::access::plans::Plan::sight`) comes down to two facts: which TLDs'
//! prices it shows (every TLD, or the 22 free ones) and how many sellers of a TLD it
//! shows (the N cheapest, or all). Every endpoint, page and tool that writes a price, a
//! registrar of a TLD, a rank, an average or an order asks a [`Sight`], so that what one
//! door withholds no other door shows:
//!
//! - **Offers.** Of a TLD whose prices the plan shows, it sees the sellers ranked
//!   1..=N by first-year price (N = [`Sight::shown`]); of any other TLD, none. An offer
//!   it does not see (its registrar, its prices, its rank, its history, its price on a
//!   past day) appears nowhere: not in a ranking, a price list, a registrar's price list,
//!   an audit, a lookup or a price-change event, nor as the pick of an aggregate (lowest
//!   renewal, lowest 5-year cost). Renewal-only rows are seen only by a plan that sees every seller.
//! - **Counts** (sellers of a TLD, TLDs of a registrar) are public facts.
//! - **Averages** over the sellers are shown unless exactly one of the prices averaged
//!   is hidden: then the average and the shown prices would give it
//!   ([`Sight::average_shown`] for registration and renewal, which every seller has;
//!   [`Sight::average_of`] for transfer, which not every seller quotes).
//! - **Orders.** A listing ordered by price places what it hides after everything it
//!   shows, in name order ([`Sight::price_shown`]).
//!
//! The type knows no HTTP, no keys and no snapshot: the query layer takes it as a plain
//! parameter.

/// What one viewer may see. `Copy` and two words: built per request for free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sight {
    /// Whether the prices of every TLD are shown (else only the 22 free TLDs').
    all_tlds: bool,
    /// Most sellers shown per TLD (`None`: all, with the renewal-only rows).
    sellers: Option<u32>,
}

impl Sight {
    /// Sees everything: the command line without `--tier`, a plan without limits.
    pub const ALL: Sight = Sight {
        all_tlds: true,
        sellers: None,
    };

    /// A viewer who sees every TLD's prices (or only the free TLDs') and at most
    /// `sellers` sellers of each (`None`: all; `Some(0)` is taken as 1, since the
    /// cheapest seller of a shown TLD is always shown).
    pub fn new(all_tlds: bool, sellers: Option<u32>) -> Sight {
        Sight {
            all_tlds,
            sellers: sellers.map(|n| n.max(1)),
        }
    }

    /// Whether the prices of every TLD are shown.
    pub fn all_tlds(&self) -> bool {
        self.all_tlds
    }

    /// The most sellers shown per TLD (`None`: all).
    pub fn seller_limit(&self) -> Option<u32> {
        self.sellers
    }

    /// Whether the prices of `tld` (canonical) are shown at all.
    #[inline]
    pub fn price_shown(&self, tld: &str) -> bool {
        self.all_tlds || crate::tld::is_free(tld)
    }

    /// How many of `tld`'s `sellers` (ranked, cheapest first) are shown: none when its
    /// prices are not, else the first N.
    #[inline]
    pub fn shown(&self, tld: &str, sellers: usize) -> usize {
        if !self.price_shown(tld) {
            return 0;
        }
        match self.sellers {
            None => sellers,
            Some(n) => sellers.min(n as usize),
        }
    }

    /// Whether the row at `row` of `tld`'s offers (the sellers ranked first, 0-based,
    /// then the renewal-only rows) is shown.
    #[inline]
    pub fn row_shown(&self, tld: &str, row: usize, sellers: usize) -> bool {
        match self.sellers {
            None => self.price_shown(tld),
            Some(_) => row < self.shown(tld, sellers),
        }
    }

    /// Whether every row of every shown TLD is shown (no seller cut).
    pub fn every_seller(&self) -> bool {
        self.sellers.is_none()
    }

    /// Whether an average over `tld`'s `sellers` (a price every seller has) may be
    /// shown: unless exactly one of them is hidden, whose price the average and the
    /// shown prices would give.
    #[inline]
    pub fn average_shown(&self, tld: &str, sellers: usize) -> bool {
        Sight::average_of(sellers - self.shown(tld, sellers))
    }

    /// Whether an average of prices of which `hidden` are hidden may be shown.
    #[inline]
    pub fn average_of(hidden: usize) -> bool {
        hidden != 1
    }

    /// Whether this viewer is told to become a member for more of `tld`: some of its
    /// `sellers` are hidden. A TLD nobody sells hides nothing.
    pub fn hides_any(&self, tld: &str, sellers: usize) -> bool {
        self.shown(tld, sellers) < sellers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules() {
        let public = Sight::new(false, Some(5));
        assert_eq!(public.shown("com", 17), 5);
        assert_eq!(public.shown("com", 3), 3);
        assert_eq!(public.shown("museum", 4), 0);
        assert!(public.row_shown("com", 4, 17) && !public.row_shown("com", 5, 17));
        // A renewal-only row (after the sellers) is hidden from a capped plan.
        assert!(!public.row_shown("com", 3, 3));
        assert!(Sight::ALL.row_shown("museum", 20, 4));
        // One hidden seller: its price would be the average's remainder.
        assert!(!public.average_shown("museum", 1));
        assert!(public.average_shown("museum", 4));
        assert!(!public.average_shown("com", 6));
        assert!(public.average_shown("com", 7) && public.average_shown("com", 5));
        assert!(Sight::ALL.average_shown("museum", 1));
        // Nothing hidden where nobody sells.
        assert!(!public.hides_any("aarp", 0));
        assert!(public.hides_any("museum", 1) && public.hides_any("com", 6));
        assert!(!public.hides_any("com", 5));
        assert_eq!(Sight::new(true, Some(0)).shown("com", 3), 1);
    }
}
