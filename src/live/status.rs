//! EPP domain status codes: what each means, who sets it, and what state it puts a
//! domain in (RFC 5731 section 2.3, RFC 3915 for the grace periods, ICANN's "EPP Status
//! Codes: What Do They Mean"), and the RDAP spelling of each (RFC 8056 section 2:
//! `client transfer prohibited` is `clientTransferProhibited`, `active` is `ok`).

/// Who may set a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SetBy {
    /// The sponsoring registrar (the `client…` codes).
    Registrar,
    /// The registry (the `server…` codes, grace periods, pending states).
    Registry,
}

/// What a status says about the domain's life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Nothing pending, nothing prohibited (`ok`).
    Normal,
    /// An operation is prohibited (delete, renew, transfer, update).
    Lock,
    /// A grace period of RFC 3915 (add, renew, auto-renew, transfer, redemption, and
    /// the restore that ends a redemption).
    Grace,
    /// The domain is not published in the DNS (`clientHold`, `serverHold`, `inactive`).
    Hold,
    /// The domain will be purged at the end of the registry's pending-delete time.
    PendingDelete,
    /// A create, renew, transfer or update waits for action.
    Pending,
}

/// One status code and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meaning {
    /// The EPP code (`clientTransferProhibited`).
    pub code: &'static str,
    /// What it means, for a person.
    pub meaning: &'static str,
    /// Who sets it.
    pub set_by: SetBy,
    /// What state it puts the domain in.
    pub state: State,
}

const fn m(code: &'static str, set_by: SetBy, state: State, meaning: &'static str) -> Meaning {
    Meaning {
        code,
        meaning,
        set_by,
        state,
    }
}

use SetBy::{Registrar as R, Registry as Y};
use State::{Grace, Hold, Lock, Normal, Pending, PendingDelete};

/// Every EPP domain status of RFC 5731 and RFC 3915.
pub const MEANINGS: [Meaning; 23] = [
    m(
        "ok",
        Y,
        Normal,
        "standard status: no operation is pending or prohibited",
    ),
    m(
        "inactive",
        Y,
        Hold,
        "the domain has no name servers, so it is not published in the DNS",
    ),
    m(
        "clientDeleteProhibited",
        R,
        Lock,
        "the registrar refuses requests to delete the domain",
    ),
    m(
        "clientHold",
        R,
        Hold,
        "the registrar took the domain out of the DNS (often unpaid, disputed or in a legal case)",
    ),
    m(
        "clientRenewProhibited",
        R,
        Lock,
        "the registrar refuses requests to renew the domain",
    ),
    m(
        "clientTransferProhibited",
        R,
        Lock,
        "the registrar refuses requests to transfer the domain to another registrar (a registrar lock)",
    ),
    m(
        "clientUpdateProhibited",
        R,
        Lock,
        "the registrar refuses requests to update the domain",
    ),
    m(
        "serverDeleteProhibited",
        Y,
        Lock,
        "the registry refuses requests to delete the domain",
    ),
    m(
        "serverHold",
        Y,
        Hold,
        "the registry took the domain out of the DNS",
    ),
    m(
        "serverRenewProhibited",
        Y,
        Lock,
        "the registry refuses requests to renew the domain",
    ),
    m(
        "serverTransferProhibited",
        Y,
        Lock,
        "the registry refuses requests to transfer the domain to another registrar",
    ),
    m(
        "serverUpdateProhibited",
        Y,
        Lock,
        "the registry refuses requests to update the domain",
    ),
    m(
        "pendingCreate",
        Y,
        Pending,
        "a request to create the domain was received and is being processed",
    ),
    m(
        "pendingDelete",
        Y,
        PendingDelete,
        "the domain will be deleted and released for registration at the end of the pending-delete time (about five days); it can no longer be restored",
    ),
    m(
        "pendingRenew",
        Y,
        Pending,
        "a request to renew the domain was received and is being processed",
    ),
    m(
        "pendingTransfer",
        Y,
        Pending,
        "a transfer to another registrar was requested and is being processed",
    ),
    m(
        "pendingUpdate",
        Y,
        Pending,
        "a request to update the domain was received and is being processed",
    ),
    m(
        "addPeriod",
        Y,
        Grace,
        "grace period after the first registration (usually 5 days): deleting now refunds the registration",
    ),
    m(
        "autoRenewPeriod",
        Y,
        Grace,
        "grace period after the registry renewed the domain on expiry (usually up to 45 days): deleting now refunds the renewal",
    ),
    m(
        "renewPeriod",
        Y,
        Grace,
        "grace period after an explicit renewal (usually 5 days): deleting now refunds the renewal",
    ),
    m(
        "transferPeriod",
        Y,
        Grace,
        "grace period after a transfer to another registrar (usually 5 days)",
    ),
    m(
        "redemptionPeriod",
        Y,
        Grace,
        "the registrar asked to delete the domain; for about 30 days it can still be restored (redeemed), at a fee, before it goes to pendingDelete",
    ),
    m(
        "pendingRestore",
        Y,
        Grace,
        "a restore out of the redemption period was requested and waits for the registrar's report",
    ),
];

/// The meaning of an EPP code (as [`epp_code`] writes it).
pub fn meaning(code: &str) -> Option<&'static Meaning> {
    MEANINGS.iter().find(|m| m.code == code)
}

/// The EPP spelling of a status as RDAP (`client transfer prohibited`, `active`) or
/// WHOIS (`clientTransferProhibited https://icann.org/epp#…`, `ACTIVE`) writes it.
/// Statuses that are not EPP codes come back in the same camel case (`locked`,
/// `renewProhibited`), so an answer lists every status in one spelling.
pub fn epp_code(status: &str) -> String {
    // WHOIS appends the ICANN explanation URL after the code.
    let status = status.trim();
    let words: Vec<&str> = if status.contains(' ') && !status.contains("://") {
        status.split_whitespace().collect()
    } else {
        vec![status.split_whitespace().next().unwrap_or("")]
    };
    if words.len() == 1 {
        let word = words[0];
        if word.eq_ignore_ascii_case("active") || word.eq_ignore_ascii_case("ok") {
            return "ok".to_owned();
        }
        // One word: keep an EPP code's camel case, lower a shouted one (`ACTIVE`).
        if let Some(m) = MEANINGS.iter().find(|m| m.code.eq_ignore_ascii_case(word)) {
            return m.code.to_owned();
        }
        if word.bytes().any(|b| b.is_ascii_lowercase()) {
            let mut chars = word.chars();
            return chars.next().map_or_else(String::new, |c| {
                c.to_lowercase().chain(chars).collect::<String>()
            });
        }
        return word.to_lowercase();
    }
    let mut out = String::with_capacity(status.len());
    for (i, word) in words.iter().enumerate() {
        let lower = word.to_lowercase();
        if i == 0 {
            out.push_str(&lower);
        } else {
            let mut chars = lower.chars();
            if let Some(c) = chars.next() {
                out.extend(c.to_uppercase());
                out.push_str(chars.as_str());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdap_and_whois_spellings_become_epp_codes() {
        for (given, want) in [
            ("client transfer prohibited", "clientTransferProhibited"),
            ("server hold", "serverHold"),
            ("active", "ok"),
            ("ACTIVE", "ok"),
            ("ok", "ok"),
            ("auto renew period", "autoRenewPeriod"),
            ("redemption period", "redemptionPeriod"),
            ("pending delete", "pendingDelete"),
            (
                "clientTransferProhibited https://icann.org/epp#clientTransferProhibited",
                "clientTransferProhibited",
            ),
            ("CLIENTHOLD", "clientHold"),
            ("locked", "locked"),
            ("renew prohibited", "renewProhibited"),
            ("Reserved", "reserved"),
            ("  inactive ", "inactive"),
        ] {
            assert_eq!(epp_code(given), want, "{given}");
        }
    }

    #[test]
    fn every_code_has_one_meaning() {
        let mut codes: Vec<&str> = MEANINGS.iter().map(|m| m.code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), MEANINGS.len());
        assert_eq!(meaning("clientHold").unwrap().state, State::Hold);
        assert_eq!(meaning("redemptionPeriod").unwrap().state, State::Grace);
        assert_eq!(
            meaning("pendingDelete").unwrap().state,
            State::PendingDelete
        );
        assert_eq!(
            meaning("clientTransferProhibited").unwrap().set_by,
            SetBy::Registrar
        );
        assert!(meaning("locked").is_none());
        // Every EPP code reads back as itself.
        for m in &MEANINGS {
            assert_eq!(epp_code(m.code), m.code);
        }
    }
}
