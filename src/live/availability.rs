//! Availability: is a name registered, reserved, available — or is that not known?
//!
//! Two witnesses, asked at once: the registry (RDAP, else WHOIS: [`Live::registry`]) and
//! the DNS (the name's NS records: a delegated name is registered). The verdict:
//!
//! | registry says | DNS says | verdict |
//! |---|---|---|
//! | registered (a reserved status: reserved) | anything | `registered` (`reserved`) |
//! | no such name | NXDOMAIN | `available` |
//! | no such name | NS records (delegated) | `registered` (the registry's answer lags) |
//! | no such name | anything else (no NS, SERVFAIL, no answer) | `unknown` |
//! | no answer, an error, an unrecognised text, no service | NS records | `registered` |
//! | no answer, an error, an unrecognised text, no service | anything else | `unknown` |
//!
//! `available` needs both witnesses to agree: a timeout, an error or an answer tldsnap
//! does not understand is never read as "free". Every verdict carries its evidence:
//! what each witness answered, which upstream, and when.

use serde::Serialize;

use super::dns::{Timed, Type};
use super::registry::{Protocol, RegistryAnswer};
use super::{Ask, Failure, Live};

/// The verdict on a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Both the registry and the DNS say the name does not exist.
    Available,
    /// The registry holds the name, or the DNS delegates it.
    Registered,
    /// The registry holds the name back from registration.
    Reserved,
    /// The witnesses failed, disagree, or said something tldsnap does not understand.
    Unknown,
}

impl Verdict {
    /// The verdict as the answer writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Available => "available",
            Verdict::Registered => "registered",
            Verdict::Reserved => "reserved",
            Verdict::Unknown => "unknown",
        }
    }
}

/// What one witness answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// `rdap`, `whois` or `dns`.
    pub source: &'static str,
    /// Who answered (the RDAP URL, the WHOIS server, the resolver), or failed to.
    pub upstream: String,
    /// What it answered, in words (`not found (RDAP 404)`, `NXDOMAIN`, `2 NS records`,
    /// `timeout (first byte)`).
    pub answer: String,
    /// When it was learnt (`null` for a failure).
    pub learnt_at: Option<String>,
}

/// The availability of one name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Availability {
    /// The registrable domain (canonical).
    pub domain: String,
    /// The verdict.
    pub availability: Verdict,
    /// Why, for a person.
    pub reason: String,
    /// What each witness answered.
    pub evidence: Vec<Evidence>,
}

impl Live {
    /// The availability of `name`: [`Live::availability`], except that a name under a
    /// PRIVATE-section suffix has no registry witness ([`Live::registry_of`]), so it is
    /// `registered` when delegated and `unknown` otherwise.
    pub async fn availability_of(
        &self,
        name: &crate::audit::Split,
        ask: impl Into<Ask>,
    ) -> Availability {
        let ask = ask.into();
        if !name.private {
            return self.availability(&name.domain, ask).await;
        }
        let ns = self
            .record_set(&name.domain, Type::Ns, false, ask.deadline)
            .await;
        let none = Failure::NoService {
            tld: name.suffix().to_owned(),
        };
        verdict(&name.domain, Err(&none), "rdap", &ns, &self.resolver_name)
    }

    /// The availability of `domain` (a registrable name, canonical) for `ask` (its
    /// deadline, and the key whose share of the registry it takes). Never fails: a
    /// witness that fails is evidence, and the verdict is `unknown`.
    pub async fn availability(&self, domain: &str, ask: impl Into<Ask>) -> Availability {
        let ask = ask.into();
        let deadline = ask.deadline;
        let (registry, ns) = tokio::join!(
            self.registry(domain, ask.clone()),
            self.record_set(domain, Type::Ns, false, deadline)
        );
        // Which protocol a failure came from: RDAP where the bootstrap names a server.
        let protocol = if self.config.bootstrap.lookup(domain).is_some() {
            "rdap"
        } else {
            "whois"
        };
        verdict(
            domain,
            registry.as_deref(),
            protocol,
            &ns,
            &self.resolver_name,
        )
    }
}

/// What the registry witness says, in three words.
enum Registry {
    Holds { reserved: bool },
    HasNone,
    DoesNotSay,
}

fn verdict(
    domain: &str,
    registry: Result<&RegistryAnswer, &Failure>,
    protocol: &'static str,
    ns: &Timed,
    resolver: &str,
) -> Availability {
    let mut evidence = Vec::with_capacity(2);
    let said = match registry {
        Ok(a) => {
            let source = match a.source.protocol {
                Protocol::Rdap => "rdap",
                Protocol::Whois => "whois",
            };
            let (said, answer) = match (a.registered, a.reserved) {
                (Some(true), true) => (
                    Registry::Holds { reserved: true },
                    "found: the registry marks the name reserved".to_owned(),
                ),
                (Some(true), false) => (
                    Registry::Holds { reserved: false },
                    "found: registered".to_owned(),
                ),
                (Some(false), _) if a.source.protocol == Protocol::Rdap => {
                    (Registry::HasNone, "not found (RDAP 404)".to_owned())
                }
                (Some(false), _) => (Registry::HasNone, "not found (no match)".to_owned()),
                (None, _) => (
                    Registry::DoesNotSay,
                    "an answer tldsnap does not recognise".to_owned(),
                ),
            };
            evidence.push(Evidence {
                source,
                upstream: a.source.server.clone(),
                answer,
                learnt_at: Some(a.learnt_at.clone()),
            });
            said
        }
        Err(f) => {
            let (upstream, answer) = match f {
                Failure::Timeout { upstream, detail } => {
                    (upstream.clone(), format!("timeout ({detail})"))
                }
                Failure::Upstream {
                    upstream, detail, ..
                } => (upstream.clone(), format!("error: {detail}")),
                Failure::NoService { tld } => (
                    "IANA".to_owned(),
                    format!("no RDAP or WHOIS service is known for .{tld}"),
                ),
                Failure::Refused { target, detail } => {
                    (target.clone(), format!("not asked: {detail}"))
                }
            };
            evidence.push(Evidence {
                source: protocol,
                upstream,
                answer,
                learnt_at: None,
            });
            Registry::DoesNotSay
        }
    };
    let ns_records = ns.set.records.len();
    let delegated = ns.set.status == "NOERROR" && ns_records > 0;
    let nxdomain = ns.set.status == "NXDOMAIN";
    evidence.push(Evidence {
        source: "dns",
        upstream: resolver.to_owned(),
        answer: match (&ns.set.status[..], ns_records) {
            ("NOERROR", 0) => "NOERROR, no NS records".to_owned(),
            ("NOERROR", n) => format!("{n} NS record{}", if n == 1 { "" } else { "s" }),
            (status, _) => match &ns.set.error {
                Some(e) => format!("{status}: {e}"),
                None => status.to_owned(),
            },
        },
        learnt_at: ns
            .set
            .answered()
            .then(|| crate::time::iso_millis(ns.learnt_at_ms)),
    });
    let (availability, reason) = match said {
        Registry::Holds { reserved: true } => (
            Verdict::Reserved,
            "the registry holds the name back from registration",
        ),
        Registry::Holds { reserved: false } => (Verdict::Registered, "the registry holds the name"),
        Registry::HasNone if nxdomain => (
            Verdict::Available,
            "the registry has no such name and the DNS has no such name",
        ),
        Registry::HasNone if delegated => (
            Verdict::Registered,
            "the name is delegated in the DNS although the registry's answer has no such name",
        ),
        Registry::HasNone => (
            Verdict::Unknown,
            "the registry has no such name but the DNS did not confirm it (no answer, or an answer that is not NXDOMAIN)",
        ),
        Registry::DoesNotSay if delegated => (
            Verdict::Registered,
            "the name is delegated in the DNS (the registry gave no clear answer)",
        ),
        Registry::DoesNotSay => (
            Verdict::Unknown,
            "the registry gave no clear answer, and the DNS alone cannot show that a name is free",
        ),
    };
    Availability {
        domain: domain.to_owned(),
        availability,
        reason: reason.to_owned(),
        evidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::dns::RecordSet;
    use crate::live::registry::Source;

    fn registry(registered: Option<bool>, reserved: bool) -> RegistryAnswer {
        RegistryAnswer {
            domain: "x.test".into(),
            registered,
            reserved,
            registration: None,
            raw: None,
            source: Source {
                protocol: Protocol::Rdap,
                server: "https://rdap.test/domain/x.test".into(),
            },
            learnt_at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    fn ns(status: &str, records: usize) -> Timed {
        Timed {
            set: RecordSet {
                kind: "NS",
                status: status.into(),
                ttl: Some(60),
                records: (0..records)
                    .map(|i| serde_json::json!({ "host": format!("ns{i}.x.test"), "ttl": 60 }))
                    .collect(),
                error: (status == "TIMEOUT").then(|| "no answer".to_owned()),
                dnssec: None,
            },
            seen: None,
            learnt_at_ms: 0,
        }
    }

    #[test]
    fn available_needs_both_witnesses() {
        let v = |r: Result<&RegistryAnswer, &Failure>, n: &Timed| {
            verdict("x.test", r, "rdap", n, "resolver").availability
        };
        let none = registry(Some(false), false);
        let held = registry(Some(true), false);
        let reserved = registry(Some(true), true);
        let odd = registry(None, false);
        let timeout = Failure::Timeout {
            upstream: "rdap.test".into(),
            detail: "first byte".into(),
        };
        let no_service = Failure::NoService { tld: "test".into() };
        use Verdict::*;
        assert_eq!(v(Ok(&none), &ns("NXDOMAIN", 0)), Available);
        assert_eq!(v(Ok(&none), &ns("NOERROR", 2)), Registered);
        assert_eq!(v(Ok(&none), &ns("NOERROR", 0)), Unknown);
        assert_eq!(v(Ok(&none), &ns("SERVFAIL", 0)), Unknown);
        assert_eq!(v(Ok(&none), &ns("TIMEOUT", 0)), Unknown);
        assert_eq!(v(Ok(&held), &ns("NXDOMAIN", 0)), Registered);
        assert_eq!(v(Ok(&reserved), &ns("NXDOMAIN", 0)), Reserved);
        assert_eq!(v(Ok(&odd), &ns("NXDOMAIN", 0)), Unknown);
        assert_eq!(v(Ok(&odd), &ns("NOERROR", 1)), Registered);
        // A failing registry is never "available", whatever the DNS says.
        assert_eq!(v(Err(&timeout), &ns("NXDOMAIN", 0)), Unknown);
        assert_eq!(v(Err(&timeout), &ns("NOERROR", 2)), Registered);
        assert_eq!(v(Err(&no_service), &ns("NXDOMAIN", 0)), Unknown);
    }

    #[test]
    fn the_evidence_says_who_answered_what() {
        let a = verdict(
            "x.test",
            Err(&Failure::Timeout {
                upstream: "rdap.test:443".into(),
                detail: "first byte".into(),
            }),
            "rdap",
            &ns("NXDOMAIN", 0),
            "resolver 127.0.0.1:53",
        );
        assert_eq!(a.evidence.len(), 2);
        assert_eq!(a.evidence[0].upstream, "rdap.test:443");
        assert_eq!(a.evidence[0].answer, "timeout (first byte)");
        assert_eq!(a.evidence[0].learnt_at, None);
        assert_eq!(a.evidence[1].source, "dns");
        assert_eq!(a.evidence[1].answer, "NXDOMAIN");
        assert!(a.evidence[1].learnt_at.is_some());
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["availability"], "unknown");
    }
}
