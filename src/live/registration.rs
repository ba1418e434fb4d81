//! Registration data in one shape, whichever protocol brought it: RDAP (RFC 9083) or
//! WHOIS (RFC 3912). The fields are what a registry publishes about a domain; a field
//! the registry did not publish, or redacted, is `None` (and RDAP's `redacted` list says
//! which were redacted and how). Nothing is ever filled in from elsewhere.

use serde::Serialize;

/// Longest list of one kind (statuses, name servers, DS records, redactions) kept from
/// an answer: real domains have a handful; a longer list is an upstream's mistake and
/// is cut rather than echoed.
pub const MAX_LIST: usize = 32;

/// Longest text field kept (a name, an e-mail address, a reason), in bytes.
pub const MAX_TEXT: usize = 512;

/// What a registry publishes about a registered domain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Registration {
    /// The domain, canonical (`xn--` form, lowercase), as the registry named it.
    pub domain: String,
    /// The registry's handle (repository object id), when given.
    pub handle: Option<String>,
    /// The sponsoring registrar.
    pub registrar: Option<Registrar>,
    /// When the domain was registered (ISO 8601 UTC with milliseconds).
    pub created: Option<String>,
    /// When the registration was last changed.
    pub updated: Option<String>,
    /// When the registration expires.
    pub expires: Option<String>,
    /// EPP status codes ([`super::status::epp_code`] spelling), in the registry's order.
    pub statuses: Vec<String>,
    /// Name servers, canonical, in the registry's order.
    pub nameservers: Vec<String>,
    /// DNSSEC delegation data, when the registry says.
    pub dnssec: Option<Dnssec>,
    /// The registrant as published: redacted fields stay as the registry served them
    /// (absent, empty, or its placeholder text).
    pub registrant: Option<Contact>,
    /// Fields the registry says it redacted (RFC 9537), in its order.
    pub redacted: Vec<Redaction>,
}

/// The sponsoring registrar.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Registrar {
    /// Its name.
    pub name: Option<String>,
    /// Its IANA registrar id.
    pub iana_id: Option<String>,
    /// Its abuse contact's e-mail address.
    pub abuse_email: Option<String>,
}

/// A contact as published.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Contact {
    /// Full name.
    pub name: Option<String>,
    /// Organisation.
    pub organization: Option<String>,
    /// Country (ISO 3166 code when the registry gives one, else its text).
    pub country: Option<String>,
    /// E-mail address (often a registrar's relay form or redacted).
    pub email: Option<String>,
}

/// DNSSEC delegation data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Dnssec {
    /// Whether the parent zone holds a DS record for the domain.
    pub delegation_signed: bool,
    /// The DS records.
    pub ds: Vec<Ds>,
}

/// One DS record (RFC 4034 section 5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ds {
    /// Key tag.
    pub key_tag: u16,
    /// Algorithm number.
    pub algorithm: u8,
    /// Digest type number.
    pub digest_type: u8,
    /// Digest, hexadecimal.
    pub digest: String,
}

/// One redacted field (RFC 9537).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redaction {
    /// Which field (`Registrant Name`, or the registry's description).
    pub field: String,
    /// `removal`, `emptyValue`, `partialValue` or `replacementValue`.
    pub method: Option<String>,
    /// Why, when the registry says.
    pub reason: Option<String>,
}

impl Registration {
    /// Whether the registry marks the name as reserved (a status holding the word, such
    /// as `reserved` or `registry reserved`): held back from registration, not
    /// registered by anyone.
    pub fn is_reserved(&self) -> bool {
        self.statuses
            .iter()
            .any(|s| s.to_ascii_lowercase().contains("reserved"))
    }
}

/// `s` trimmed and cut to [`MAX_TEXT`] bytes on a character boundary; `None` when
/// nothing is left.
pub fn text(s: &str) -> Option<String> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let mut end = s.len().min(MAX_TEXT);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Some(s[..end].to_owned())
}

/// A date as the project writes instants (ISO 8601 UTC with milliseconds), from an
/// RFC 3339 timestamp or a bare `YYYY-MM-DD`; `None` for anything else.
pub fn instant(s: &str) -> Option<String> {
    let s = s.trim();
    let ms = crate::time::parse_rfc3339(s)
        .or_else(|| crate::time::parse_date(s).map(|d| d * crate::time::MS_PER_DAY))?;
    Some(crate::time::iso_millis(ms))
}

/// A host name as a registry wrote it, in canonical form (`NS1.Example.COM.` →
/// `ns1.example.com`); `None` when it is not a host name.
pub fn host_name(s: &str) -> Option<String> {
    crate::audit::names::canonical(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_dates_and_hosts_are_normalised() {
        assert_eq!(text("  x "), Some("x".to_owned()));
        assert_eq!(text("   "), None);
        assert_eq!(text(&"é".repeat(1000)).unwrap().len(), MAX_TEXT);
        assert_eq!(
            instant("1997-09-15T04:00:00Z").as_deref(),
            Some("1997-09-15T04:00:00.000Z")
        );
        assert_eq!(
            instant("2028-09-14").as_deref(),
            Some("2028-09-14T00:00:00.000Z")
        );
        assert_eq!(instant("14-Sep-2028"), None);
        assert_eq!(
            host_name("NS1.Example.COM.").as_deref(),
            Some("ns1.example.com")
        );
        assert_eq!(host_name("not a host"), None);
    }

    #[test]
    fn reserved_is_a_status() {
        let mut r = Registration::default();
        assert!(!r.is_reserved());
        r.statuses = vec!["serverHold".into(), "registryReserved".into()];
        assert!(r.is_reserved());
    }
}
