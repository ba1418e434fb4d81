//! RDAP (RFC 9082 queries, RFC 9083 answers): the query URL of a domain, and a domain
//! object read into a [`Registration`].
//!
//! Reading is strict where a mistake would mislead and lenient where registries differ:
//! an answer that is not JSON, not a `domain` object, or about another name is an
//! [`AnswerError`] (the caller reports the upstream as failing, never "registered");
//! a missing or odd optional member (a date in another format, a vCard without a name)
//! just leaves that field empty.

use serde_json::Value;

use super::registration::{
    Contact, Dnssec, Ds, MAX_LIST, Redaction, Registrar, Registration, host_name, instant, text,
};
use super::status::epp_code;

/// What an RDAP server answered about a domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A domain object: the name is registered (or reserved: [`Registration::is_reserved`]).
    Found(Box<Registration>),
    /// 404: the registry has no object of that name.
    NotFound,
}

/// Why an RDAP answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerError(pub String);

impl std::fmt::Display for AnswerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The domain query URL under a base URL (ending in `/`, from the bootstrap):
/// `{base}domain/{name}` (RFC 9082 section 3.1.3). `domain` is canonical (LDH), so it
/// needs no escaping.
pub fn domain_url(base: &str, domain: &str) -> String {
    format!("{base}domain/{domain}")
}

/// Reads an RDAP answer to a domain query for `domain` (canonical): HTTP `status` and
/// the body. 404 is [`Answer::NotFound`] whatever the body; 200 must be a domain object
/// named `domain`. Other statuses are the caller's to judge (429, 5xx) and are refused
/// here.
pub fn read_answer(domain: &str, status: u16, body: &[u8]) -> Result<Answer, AnswerError> {
    match status {
        404 => return Ok(Answer::NotFound),
        200 => {}
        other => return Err(AnswerError(format!("HTTP status {other}"))),
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| AnswerError(format!("the answer is not JSON: {e}")))?;
    let Value::Object(obj) = &value else {
        return Err(AnswerError("the answer is not a JSON object".into()));
    };
    match obj.get("objectClassName").and_then(Value::as_str) {
        Some("domain") => {}
        Some(other) => {
            return Err(AnswerError(format!(
                "the answer is an RDAP {:?} object, not a domain",
                text(other).unwrap_or_default()
            )));
        }
        None => {
            return Err(AnswerError(
                "the answer has no objectClassName: not an RDAP domain object".into(),
            ));
        }
    }
    let named = str_member(&value, "ldhName")
        .and_then(|n| host_name(&n))
        .or_else(|| str_member(&value, "unicodeName").and_then(|n| host_name(&n)));
    match named {
        Some(n) if n == domain => {}
        Some(n) => {
            return Err(AnswerError(format!(
                "the answer is about {n}, not {domain}"
            )));
        }
        None => return Err(AnswerError("the domain object has no ldhName".into())),
    }
    Ok(Answer::Found(Box::new(registration(domain, &value))))
}

/// The fields of a domain object.
fn registration(domain: &str, v: &Value) -> Registration {
    let mut r = Registration {
        domain: domain.to_owned(),
        handle: str_member(v, "handle"),
        ..Registration::default()
    };
    for event in array(v, "events") {
        let (Some(action), Some(date)) = (
            event.get("eventAction").and_then(Value::as_str),
            event.get("eventDate").and_then(Value::as_str),
        ) else {
            continue;
        };
        let slot = match action {
            "registration" => &mut r.created,
            "expiration" => &mut r.expires,
            "last changed" => &mut r.updated,
            _ => continue,
        };
        if slot.is_none() {
            *slot = instant(date);
        }
    }
    r.statuses = array(v, "status")
        .filter_map(Value::as_str)
        .map(epp_code)
        .filter(|s| !s.is_empty())
        .take(MAX_LIST)
        .collect();
    r.nameservers = array(v, "nameservers")
        .filter_map(|ns| {
            ns.get("ldhName")
                .or_else(|| ns.get("unicodeName"))
                .and_then(Value::as_str)
        })
        .filter_map(host_name)
        .take(MAX_LIST)
        .collect();
    if let Some(sd) = v.get("secureDNS").filter(|s| s.is_object()) {
        let ds: Vec<Ds> = array(sd, "dsData")
            .filter_map(ds_record)
            .take(MAX_LIST)
            .collect();
        r.dnssec = Some(Dnssec {
            delegation_signed: sd
                .get("delegationSigned")
                .and_then(Value::as_bool)
                .unwrap_or(!ds.is_empty()),
            ds,
        });
    }
    for entity in entities(v) {
        let roles: Vec<&str> = array(entity, "roles").filter_map(Value::as_str).collect();
        if roles.contains(&"registrar") && r.registrar.is_none() {
            let card = VCard::of(entity);
            let iana_id = array(entity, "publicIds")
                .find(|p| {
                    p.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.eq_ignore_ascii_case("IANA Registrar ID"))
                })
                .and_then(|p| p.get("identifier"))
                .and_then(|i| match i {
                    Value::String(s) => text(s),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                });
            let abuse_email = entities(entity)
                .find(|e| array(e, "roles").any(|r| r.as_str() == Some("abuse")))
                .and_then(|e| VCard::of(e).email);
            r.registrar = Some(Registrar {
                name: card.name.or_else(|| str_member(entity, "handle")),
                iana_id,
                abuse_email,
            });
        }
        if roles.contains(&"registrant") && r.registrant.is_none() {
            let card = VCard::of(entity);
            r.registrant = Some(Contact {
                name: card.name,
                organization: card.organization,
                country: card.country,
                email: card.email,
            });
        }
    }
    r.redacted = array(v, "redacted")
        .filter_map(redaction)
        .take(MAX_LIST)
        .collect();
    r
}

/// The entities of an object and of its entities, one level down (registries put the
/// registrar's abuse contact inside the registrar, some put the registrar inside a
/// reseller); at most [`MAX_LIST`] in all.
fn entities(v: &Value) -> impl Iterator<Item = &Value> {
    array(v, "entities")
        .flat_map(|e| std::iter::once(e).chain(array(e, "entities")))
        .filter(|e| e.is_object())
        .take(MAX_LIST)
}

fn ds_record(d: &Value) -> Option<Ds> {
    let num = |name: &str| d.get(name).and_then(Value::as_u64);
    Some(Ds {
        key_tag: u16::try_from(num("keyTag")?).ok()?,
        algorithm: u8::try_from(num("algorithm")?).ok()?,
        digest_type: u8::try_from(num("digestType")?).ok()?,
        digest: d
            .get("digest")
            .and_then(Value::as_str)
            .and_then(text)?
            .to_ascii_lowercase(),
    })
}

fn redaction(r: &Value) -> Option<Redaction> {
    let described = |v: Option<&Value>| {
        v.and_then(|n| {
            n.get("type")
                .or_else(|| n.get("description"))
                .and_then(Value::as_str)
                .and_then(text)
        })
    };
    Some(Redaction {
        field: described(r.get("name"))?,
        method: str_member(r, "method"),
        reason: described(r.get("reason")),
    })
}

/// The members of a jCard (RFC 7095) that tldsnap reports.
#[derive(Default)]
struct VCard {
    name: Option<String>,
    organization: Option<String>,
    country: Option<String>,
    email: Option<String>,
}

impl VCard {
    /// Reads `vcardArray: ["vcard", [[name, params, type, value...], ...]]`.
    fn of(entity: &Value) -> VCard {
        let mut card = VCard::default();
        let props = entity
            .get("vcardArray")
            .and_then(|a| a.get(1))
            .and_then(Value::as_array);
        for prop in props.into_iter().flatten().take(64) {
            let Some(name) = prop.get(0).and_then(Value::as_str) else {
                continue;
            };
            let value = prop.get(3);
            match name.to_ascii_lowercase().as_str() {
                "fn" if card.name.is_none() => card.name = value.and_then(first_text),
                "org" if card.organization.is_none() => {
                    card.organization = value.and_then(first_text);
                }
                "email" if card.email.is_none() => card.email = value.and_then(first_text),
                "adr" if card.country.is_none() => {
                    // The country code parameter (RFC 8605), else the country name:
                    // the seventh component of the structured value.
                    card.country = prop
                        .get(1)
                        .and_then(|p| p.get("cc"))
                        .and_then(Value::as_str)
                        .and_then(text)
                        .or_else(|| value.and_then(|v| v.get(6)).and_then(first_text));
                }
                _ => {}
            }
        }
        card
    }
}

/// A string, or the first non-empty string of an array of them.
fn first_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => text(s),
        Value::Array(items) => items.iter().find_map(first_text),
        _ => None,
    }
}

fn str_member(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).and_then(text)
}

/// The items of an array member, none when it is absent or not an array.
fn array<'a>(v: &'a Value, name: &str) -> impl Iterator<Item = &'a Value> {
    v.get(name)
        .and_then(Value::as_array)
        .map(|a| a.iter())
        .into_iter()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RFC 9083 domain object shaped like the `.com` registry's answers, with an
    /// RFC 9537 redaction list like a registrar's.
    pub(crate) const EXAMPLE: &str = r#"{
      "objectClassName": "domain",
      "handle": "2336799_DOMAIN_COM-VRSN",
      "ldhName": "EXAMPLE.COM",
      "rdapConformance": ["rdap_level_0", "redacted"],
      "status": ["client delete prohibited", "client transfer prohibited", "active"],
      "events": [
        {"eventAction": "registration", "eventDate": "1995-08-14T04:00:00Z"},
        {"eventAction": "expiration", "eventDate": "2026-08-13T04:00:00Z"},
        {"eventAction": "last changed", "eventDate": "2025-08-14T07:01:44+02:00"},
        {"eventAction": "last update of RDAP database", "eventDate": "2026-01-01T00:00:00Z"}
      ],
      "entities": [
        {"objectClassName": "entity", "handle": "376", "roles": ["registrar"],
         "publicIds": [{"type": "IANA Registrar ID", "identifier": "376"}],
         "vcardArray": ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", "RESERVED-Internet Assigned Numbers Authority"]]],
         "entities": [{"objectClassName": "entity", "roles": ["abuse"],
           "vcardArray": ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", ""],
             ["email", {}, "text", "abuse@iana.test"]]]}]},
        {"objectClassName": "entity", "roles": ["registrant"],
         "vcardArray": ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", ""],
           ["org", {}, "text", "Example Org"],
           ["adr", {"cc": "US"}, "text", ["", "", "", "", "CA", "", ""]]]]}
      ],
      "nameservers": [
        {"objectClassName": "nameserver", "ldhName": "A.IANA-SERVERS.NET"},
        {"objectClassName": "nameserver", "ldhName": "b.iana-servers.net."}
      ],
      "secureDNS": {"delegationSigned": true,
        "dsData": [{"keyTag": 370, "algorithm": 13, "digestType": 2,
                    "digest": "BE74359954660069D5C63D200C39F5603827D7DD02B56F120EE9F3A86764247C"}]},
      "redacted": [
        {"name": {"type": "Registrant Name"}, "prePath": "$.entities[?(@.roles[0]=='registrant')].vcardArray[1][?(@[0]=='fn')][3]",
         "method": "emptyValue", "reason": {"type": "Server policy"}},
        {"name": {"description": "Registrant Email"}, "method": "removal"}
      ]
    }"#;

    #[test]
    fn a_domain_object_is_read_into_its_fields() {
        let Answer::Found(r) = read_answer("example.com", 200, EXAMPLE.as_bytes()).unwrap() else {
            panic!("not found")
        };
        assert_eq!(r.domain, "example.com");
        assert_eq!(r.handle.as_deref(), Some("2336799_DOMAIN_COM-VRSN"));
        assert_eq!(r.created.as_deref(), Some("1995-08-14T04:00:00.000Z"));
        assert_eq!(r.expires.as_deref(), Some("2026-08-13T04:00:00.000Z"));
        assert_eq!(r.updated.as_deref(), Some("2025-08-14T05:01:44.000Z"));
        assert_eq!(
            r.statuses,
            ["clientDeleteProhibited", "clientTransferProhibited", "ok"]
        );
        assert_eq!(r.nameservers, ["a.iana-servers.net", "b.iana-servers.net"]);
        let reg = r.registrar.as_ref().unwrap();
        assert_eq!(
            reg.name.as_deref(),
            Some("RESERVED-Internet Assigned Numbers Authority")
        );
        assert_eq!(reg.iana_id.as_deref(), Some("376"));
        assert_eq!(reg.abuse_email.as_deref(), Some("abuse@iana.test"));
        let dnssec = r.dnssec.as_ref().unwrap();
        assert!(dnssec.delegation_signed);
        assert_eq!(dnssec.ds[0].key_tag, 370);
        assert!(dnssec.ds[0].digest.starts_with("be7435"));
        // Redacted fields stay redacted: the empty name is no name, nothing is guessed.
        let registrant = r.registrant.as_ref().unwrap();
        assert_eq!(registrant.name, None);
        assert_eq!(registrant.email, None);
        assert_eq!(registrant.organization.as_deref(), Some("Example Org"));
        assert_eq!(registrant.country.as_deref(), Some("US"));
        assert_eq!(r.redacted.len(), 2);
        assert_eq!(r.redacted[0].field, "Registrant Name");
        assert_eq!(r.redacted[0].method.as_deref(), Some("emptyValue"));
        assert_eq!(r.redacted[0].reason.as_deref(), Some("Server policy"));
        assert_eq!(r.redacted[1].field, "Registrant Email");
        assert!(!r.is_reserved());
    }

    #[test]
    fn not_found_and_reserved() {
        assert_eq!(
            read_answer("nope.com", 404, b"garbage").unwrap(),
            Answer::NotFound
        );
        let reserved = r#"{"objectClassName": "domain", "ldhName": "nic.test",
            "status": ["server hold", "reserved"]}"#;
        let Answer::Found(r) = read_answer("nic.test", 200, reserved.as_bytes()).unwrap() else {
            panic!()
        };
        assert!(r.is_reserved());
        assert_eq!(r.statuses, ["serverHold", "reserved"]);
        assert_eq!(r.registrar, None);
    }

    #[test]
    fn answers_that_are_not_a_domain_object_are_errors() {
        for (status, body, want) in [
            (200, &b"<html>busy</html>"[..], "not JSON"),
            (200, b"[1,2]", "not a JSON object"),
            (200, b"{}", "no objectClassName"),
            (
                200,
                br#"{"objectClassName": "entity", "handle": "x"}"#,
                "entity",
            ),
            (
                200,
                br#"{"objectClassName": "domain", "ldhName": "other.com"}"#,
                "about other.com",
            ),
            (200, br#"{"objectClassName": "domain"}"#, "no ldhName"),
            (429, b"{}", "status 429"),
            (500, b"", "status 500"),
        ] {
            let err = read_answer("example.com", status, body).unwrap_err();
            assert!(err.0.contains(want), "{status} {body:?}: {err}");
        }
        // Deeply nested garbage is refused by the parser's depth limit, not a stack.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(read_answer("example.com", 200, deep.as_bytes()).is_err());
    }

    #[test]
    fn odd_members_leave_fields_empty() {
        let odd = r#"{"objectClassName": "domain", "unicodeName": "Bücher.example",
            "events": [{"eventAction": "registration", "eventDate": "yesterday"}, 7],
            "status": "active", "nameservers": [{"ldhName": "not a host"}, {}],
            "secureDNS": {"dsData": [{"keyTag": 99999}]},
            "entities": [{"roles": ["registrar"], "handle": "R-1", "vcardArray": 3}]}"#;
        let Answer::Found(r) = read_answer("xn--bcher-kva.example", 200, odd.as_bytes()).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.created, None);
        assert!(r.statuses.is_empty());
        assert!(r.nameservers.is_empty());
        assert_eq!(
            r.dnssec,
            Some(Dnssec {
                delegation_signed: false,
                ds: vec![]
            })
        );
        assert_eq!(r.registrar.unwrap().name.as_deref(), Some("R-1"));
    }

    #[test]
    fn urls_follow_rfc_9082() {
        assert_eq!(
            domain_url("https://rdap.verisign.com/com/v1/", "example.com"),
            "https://rdap.verisign.com/com/v1/domain/example.com"
        );
    }
}
