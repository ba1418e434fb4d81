//! The domain owner's questions, answered from the snapshot: what will my domains cost
//! next year, where would they be cheaper, which are renewal traps (portfolio audit);
//! what does registering these names cost (bulk lookup); which TLDs are cheapest for a
//! name I want (domain search). `docs/AUDIT.md` explains every field.
//!
//! Like [`crate::query`], everything here is a pure function of an archived snapshot
//! and plain parameters: no HTTP, no keys. Plans reach it only as a predicate "may this
//! caller see this TLD" and as numbers (limits) checked by the caller.
//!
//! # Layout
//!
//! | module | role |
//! |---|---|
//! | [`names`] | full domain names: normalisation ([`crate::tld`] rules), PSL split |
//! | [`portfolio`] | portfolio input (JSON, CSV), the audit, its JSON / CSV / table output |
//! | [`lookup`] | bulk lookup: per name, the cheapest-registration entries of its suffix |
//! | [`search`] | domain search over the snapshot's cheapest-first catalogue order |
//!
//! Prices are integer cents throughout (`u32` per price, `u64` for sums) and are written
//! with [`crate::price`]'s writers.

pub mod lookup;
pub mod names;
pub mod portfolio;
pub mod search;

pub use names::{NameError, Names, Split};

/// Most names in one bulk lookup (spec 8.1's bulk limit).
pub const LOOKUP_MAX: usize = 100;

/// Longest echo of an input that is not a domain name (longer ones are cut and end in `…`):
/// a 100,000-character "name" is refused, not sent back.
pub const MAX_ECHO_BYTES: usize = 256;

/// `input`, cut to [`MAX_ECHO_BYTES`] at a character boundary.
pub fn echo(input: &str) -> std::borrow::Cow<'_, str> {
    if input.len() <= MAX_ECHO_BYTES {
        return input.into();
    }
    let mut end = MAX_ECHO_BYTES;
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &input[..end]).into()
}

/// Whether an offer is a renewal trap: the yearly renewal costs at least twice the first
/// year (`renew >= 2 x register`), and more than it (a free
/// first year renewed free is no trap). One rule for the audit's `renewal_trap` flag, the
/// domain search's flag and the website's mark, so they never disagree.
pub fn is_renewal_trap(register: u32, renew: u32) -> bool {
    let (register, renew) = (u64::from(register), u64::from(renew));
    renew >= 2 * register && renew > register
}

/// The 5-year cost of registering at an offer: first year plus four renewals (spec 2.1).
pub fn five_year(register: u32, renew: u32) -> u64 {
    u64::from(register) + 4 * u64::from(renew)
}

/// The 5-year cost of moving a domain to a registrar: the transfer, which adds one year
/// to the registration, then four renewals. A transfer priced 0 is one that adds no year
/// (`.uk`, `.de` and other registries where a transfer only changes the registrar), so
/// all five years are paid as renewals.
pub fn transfer_five_year(transfer: u32, renew: u32) -> u64 {
    if transfer == 0 {
        5 * u64::from(renew)
    } else {
        u64::from(transfer) + 4 * u64::from(renew)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_are_bounded() {
        assert_eq!(echo("abc"), "abc");
        let long = "é".repeat(1000);
        let e = echo(&long);
        assert!(e.len() <= MAX_ECHO_BYTES + "…".len());
        assert!(e.ends_with('…'));
    }

    #[test]
    fn renewal_traps() {
        assert!(is_renewal_trap(101, 1182)); // .xyz at Porkbun: 1.01 then 11.82
        assert!(is_renewal_trap(1000, 2000)); // exactly 2x
        assert!(!is_renewal_trap(1000, 1999));
        assert!(is_renewal_trap(99, 199)); // 2x, even in cents
        assert!(!is_renewal_trap(977, 977));
        assert!(!is_renewal_trap(1000, 1500)); // 1.5x
        assert!(is_renewal_trap(0, 200));
        assert!(!is_renewal_trap(0, 0)); // free, then free
    }

    #[test]
    fn five_year_costs() {
        assert_eq!(five_year(977, 977), 4885);
        assert_eq!(transfer_five_year(1088, 1088), 5440);
        assert_eq!(transfer_five_year(0, 566), 2830);
        assert_eq!(
            five_year(u32::MAX - 1, u32::MAX - 1),
            5 * u64::from(u32::MAX - 1)
        );
    }
}
