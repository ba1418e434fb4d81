//! The registration lookup: the registry's RDAP server when the bootstrap names one,
//! else its WHOIS server (named by IANA's WHOIS server); and the status answer made of
//! it.
//!
//! RDAP: the bootstrap's base URLs in order (the next one only when one fails), up to
//! [`MAX_REDIRECTS`] redirects (RFC 7480 section 5.2; `https://` only, through the same
//! guard), `Accept: application/rdap+json`. A 429 or 503 is the upstream asking for a
//! pause: its `Retry-After` (else [`DEFAULT_PAUSE`]) is obeyed by every later lookup.

use std::sync::Arc;
use std::time::Duration;

use hyper::Uri;
use serde::Serialize;
use tokio::time::Instant;

use super::cache::{Cacheable, Fresh, Kind};
use super::https::FetchError;
use super::limits::{Outcome, Refusal, Upstream};
use super::registration::Registration;
use super::status::{self, SetBy, State};
use super::{Failure, Live, now_ms, rdap, stats, whois};

/// Most redirects followed from one RDAP query.
pub const MAX_REDIRECTS: usize = 3;

/// The pause taken after a 429 or 503 without `Retry-After`.
pub const DEFAULT_PAUSE: Duration = Duration::from_secs(30);

/// How long IANA's answer naming a TLD's WHOIS server is kept (it changes when a TLD
/// changes registry operator: rarely).
const REFERRAL_TTL: Duration = Duration::from_secs(86_400);

/// The media type of RDAP (RFC 7480 section 4.2).
const RDAP_JSON: &str = "application/rdap+json";

/// Which protocol answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// RDAP (RFC 9083).
    Rdap,
    /// WHOIS (RFC 3912).
    Whois,
}

/// Where an answer came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// RDAP or WHOIS.
    pub protocol: Protocol,
    /// The URL queried (RDAP) or the server's host name (WHOIS).
    pub server: String,
}

/// What the registry says about a domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegistryAnswer {
    /// The registrable domain asked about (canonical).
    pub domain: String,
    /// Whether the registry holds the name (reserved names included); `null` when its
    /// WHOIS answer was not recognised.
    pub registered: Option<bool>,
    /// Whether the registry marks the name as reserved.
    pub reserved: bool,
    /// The registration data, when the name is registered.
    pub registration: Option<Registration>,
    /// The WHOIS answer as it came, when tldsnap did not recognise it.
    pub raw: Option<String>,
    /// Where the answer came from.
    pub source: Source,
    /// When it was learnt (ISO 8601 UTC; cached answers keep the time they were
    /// learnt).
    pub learnt_at: String,
}

impl Cacheable for RegistryAnswer {
    const KIND: Kind = Kind::Registry;
}

/// The WHOIS server IANA names for a TLD (or that it names none).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Referral(Option<String>);

impl Cacheable for Referral {
    const KIND: Kind = Kind::WhoisReferral;
}

/// One status code of a domain and what it means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusEntry {
    /// The EPP code.
    pub code: String,
    /// What it means (`null` for a code outside EPP, such as `locked`).
    pub meaning: Option<&'static str>,
    /// Who sets it.
    pub set_by: Option<SetBy>,
    /// The state it puts the domain in.
    pub state: Option<State>,
}

/// The status answer: the codes with their meaning, and the states they add up to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusAnswer {
    /// The registrable domain.
    pub domain: String,
    /// As in [`RegistryAnswer::registered`].
    pub registered: Option<bool>,
    /// The status codes, in the registry's order.
    pub statuses: Vec<StatusEntry>,
    /// In a grace period of RFC 3915 (add, renew, auto-renew, transfer, redemption,
    /// pending restore).
    pub grace_period: bool,
    /// Out of the DNS (`clientHold`, `serverHold`, `inactive`).
    pub on_hold: bool,
    /// Waiting to be purged (`pendingDelete`).
    pub pending_delete: bool,
    /// Where the codes came from.
    pub source: Source,
    /// When they were learnt.
    pub learnt_at: String,
}

impl StatusAnswer {
    /// The status answer of a registry answer.
    pub fn of(answer: &RegistryAnswer) -> StatusAnswer {
        let codes = answer
            .registration
            .as_ref()
            .map_or(&[][..], |r| &r.statuses[..]);
        let statuses: Vec<StatusEntry> = codes
            .iter()
            .map(|code| {
                let m = status::meaning(code);
                StatusEntry {
                    code: code.clone(),
                    meaning: m.map(|m| m.meaning),
                    set_by: m.map(|m| m.set_by),
                    state: m.map(|m| m.state),
                }
            })
            .collect();
        let any = |state: State| statuses.iter().any(|s| s.state == Some(state));
        StatusAnswer {
            domain: answer.domain.clone(),
            registered: answer.registered,
            grace_period: any(State::Grace),
            on_hold: any(State::Hold),
            pending_delete: any(State::PendingDelete),
            statuses,
            source: answer.source.clone(),
            learnt_at: answer.learnt_at.clone(),
        }
    }
}

impl Live {
    /// What the registry of `name`'s suffix says about it: [`Live::registry`], except
    /// that a name under a PRIVATE-section suffix tldsnap prices (`example.us.com`) is
    /// registered with the company that runs the suffix, which IANA's data does not name:
    /// no service (asking the TLD's registry would answer "not found" for a name it
    /// never held).
    pub async fn registry_of(
        &self,
        name: &crate::audit::Split,
        deadline: Instant,
    ) -> Result<Arc<RegistryAnswer>, Failure> {
        if name.private {
            return Err(Failure::NoService {
                tld: name.suffix().to_owned(),
            });
        }
        self.registry(&name.domain, deadline).await
    }

    /// What the registry says about `domain` (a registrable name, canonical), within
    /// `deadline`: from the cache, else from RDAP or WHOIS.
    pub async fn registry(
        &self,
        domain: &str,
        deadline: Instant,
    ) -> Result<Arc<RegistryAnswer>, Failure> {
        let tld = crate::tld::last_label(domain);
        let upstream = match self.config.bootstrap.lookup(domain) {
            Some(urls) => host_of(&urls[0]),
            None => format!("WHOIS of .{tld}"),
        };
        let lookup = self.cache.get_or_lookup(domain, async {
            let answer = self.registry_uncached(domain, deadline).await?;
            let ttl = match answer.registered {
                Some(true) => self.config.registry_ttl,
                _ => self.config.negative_ttl,
            };
            let bytes = serde_json::to_vec(&answer).map_or(4096, |v| v.len());
            Ok(Fresh {
                value: answer,
                ttl,
                bytes,
            })
        });
        // A caller that joined a lookup started by another request still keeps to its
        // own deadline.
        tokio::time::timeout_at(deadline, lookup)
            .await
            .unwrap_or_else(|_| {
                Err(Failure::Timeout {
                    upstream,
                    detail: "the lookup's time budget ran out".to_owned(),
                })
            })
    }

    async fn registry_uncached(
        &self,
        domain: &str,
        deadline: Instant,
    ) -> Result<RegistryAnswer, Failure> {
        match self.config.bootstrap.lookup(domain) {
            Some(urls) => {
                let mut failure = None;
                for base in urls {
                    if Instant::now() >= deadline {
                        break;
                    }
                    match self.rdap(domain, base, deadline).await {
                        Ok(answer) => return Ok(answer),
                        Err(f) => failure = Some(f),
                    }
                }
                Err(failure.unwrap_or_else(|| Failure::Timeout {
                    upstream: host_of(&urls[0]),
                    detail: "the lookup's time budget ran out".to_owned(),
                }))
            }
            None => self.whois(domain, deadline).await,
        }
    }

    /// One RDAP query under `base`, following redirects.
    async fn rdap(
        &self,
        domain: &str,
        base: &str,
        deadline: Instant,
    ) -> Result<RegistryAnswer, Failure> {
        let mut url = rdap::domain_url(base, domain);
        for _ in 0..=MAX_REDIRECTS {
            let uri: Uri = url.parse().map_err(|_| Failure::Upstream {
                upstream: host_of(base),
                detail: format!("{url:?} is not a URL"),
                retry_after: None,
            })?;
            let name = uri
                .authority()
                .map_or_else(|| host_of(&url), |a| a.as_str().to_owned());
            let upstream = self.upstreams.get(&name);
            let permit = upstream.admit(deadline).await.map_err(|r| {
                self.stats
                    .count(stats::Upstream::Rdap, stats::Outcome::Refused);
                refused(&name, r, &self.config.limits)
            })?;
            let started = Instant::now();
            let fetched = self.https.get(&uri, RDAP_JSON, deadline).await;
            let took = started.elapsed();
            drop(permit);
            let sent = |outcome| self.stats.sent(stats::Upstream::Rdap, outcome, took);
            let fetched = match fetched {
                Ok(f) => f,
                Err(e) => {
                    self.fetch_failed(stats::Upstream::Rdap, &e, took);
                    return Err(fetch_failure(&upstream, &name, e));
                }
            };
            match fetched.status {
                200 | 404 => {
                    return match rdap::read_answer(domain, fetched.status, &fetched.body) {
                        Ok(answer) => {
                            upstream.record(Outcome::Success);
                            sent(match answer {
                                rdap::Answer::Found(_) => stats::Outcome::Ok,
                                rdap::Answer::NotFound => stats::Outcome::NotFound,
                            });
                            Ok(registry_answer(domain, answer, &url))
                        }
                        Err(e) => {
                            upstream.record(Outcome::Failure);
                            sent(stats::Outcome::Error);
                            Err(Failure::Upstream {
                                upstream: name,
                                detail: format!("answered with what is not RDAP: {e}"),
                                retry_after: None,
                            })
                        }
                    };
                }
                301 | 302 | 303 | 307 | 308 => {
                    upstream.record(Outcome::Success);
                    sent(stats::Outcome::Ok);
                    let next = fetched.location.as_deref().and_then(|l| redirect(&uri, l));
                    url = next.ok_or_else(|| Failure::Upstream {
                        upstream: name.clone(),
                        detail: format!(
                            "redirected ({}) to {:?}, which is not an https:// URL",
                            fetched.status,
                            fetched.location.as_deref().unwrap_or("nowhere")
                        ),
                        retry_after: None,
                    })?;
                }
                status @ (429 | 503) => {
                    let pause = fetched
                        .retry_after
                        .as_deref()
                        .and_then(|v| super::limits::parse_retry_after(v, now_ms()))
                        .unwrap_or(DEFAULT_PAUSE)
                        .min(self.config.limits.max_retry_after);
                    upstream.record(Outcome::RetryAfter(pause));
                    sent(stats::Outcome::RateLimited);
                    return Err(Failure::Upstream {
                        upstream: name,
                        detail: format!(
                            "answered HTTP {status} ({}); tldsnap waits {} s before asking it again",
                            if status == 429 {
                                "too many requests"
                            } else {
                                "unavailable"
                            },
                            pause.as_secs()
                        ),
                        retry_after: Some(pause.as_secs().max(1)),
                    });
                }
                status => {
                    upstream.record(Outcome::Failure);
                    sent(stats::Outcome::Error);
                    return Err(Failure::Upstream {
                        upstream: name,
                        detail: format!("answered HTTP {status}"),
                        retry_after: None,
                    });
                }
            }
        }
        Err(Failure::Upstream {
            upstream: host_of(base),
            detail: format!("more than {MAX_REDIRECTS} redirects"),
            retry_after: None,
        })
    }

    /// WHOIS: IANA's referral for the TLD, then the registry's server.
    async fn whois(&self, domain: &str, deadline: Instant) -> Result<RegistryAnswer, Failure> {
        let tld = crate::tld::last_label(domain);
        let referral = self
            .cache
            .get_or_lookup(tld, async {
                let (host, port) = split_host_port(&self.config.whois_referral, whois::PORT);
                let text = self.whois_exchange(host, port, tld, deadline).await?;
                self.stats.count(stats::Upstream::Whois, stats::Outcome::Ok);
                let server = whois::read_referral(&text);
                let bytes = server.as_ref().map_or(0, String::len);
                Ok::<_, Failure>(Fresh {
                    value: Referral(server),
                    ttl: REFERRAL_TTL,
                    bytes,
                })
            })
            .await?;
        let Some(server) = referral.0.as_deref() else {
            return Err(Failure::NoService {
                tld: tld.to_owned(),
            });
        };
        let text = self
            .whois_exchange(server, self.config.whois_port, domain, deadline)
            .await?;
        let (registered, registration, raw) = match whois::read_answer(domain, &text) {
            whois::Answer::Found(r) => (Some(true), Some(*r), None),
            whois::Answer::NotFound => (Some(false), None, None),
            whois::Answer::Unrecognised(raw) => (None, None, Some(raw)),
        };
        let outcome = match registered {
            Some(false) => stats::Outcome::NotFound,
            _ => stats::Outcome::Ok,
        };
        self.stats.count(stats::Upstream::Whois, outcome);
        Ok(RegistryAnswer {
            domain: domain.to_owned(),
            registered,
            reserved: registration.as_ref().is_some_and(Registration::is_reserved),
            registration,
            raw,
            source: Source {
                protocol: Protocol::Whois,
                server: server.to_owned(),
            },
            learnt_at: crate::time::iso_millis(now_ms()),
        })
    }

    /// Counts a request that got no answer ([`FetchError`]): timed when it was sent,
    /// not when the outbound guard refused the address.
    pub(crate) fn fetch_failed(&self, kind: stats::Upstream, e: &FetchError, took: Duration) {
        match e {
            FetchError::Refused(_) => self.stats.count(kind, stats::Outcome::Refused),
            FetchError::Timeout(_) => self.stats.sent(kind, stats::Outcome::Timeout, took),
            FetchError::Failed(_) | FetchError::TooLarge(_) => {
                self.stats.sent(kind, stats::Outcome::Error, took);
            }
        }
    }

    /// One WHOIS query to `host:port`, paced and bounded like an RDAP query. A failure
    /// is counted here; an answer is timed here and counted by the caller, which knows
    /// what it said.
    async fn whois_exchange(
        &self,
        host: &str,
        port: u16,
        query: &str,
        deadline: Instant,
    ) -> Result<String, Failure> {
        let upstream = self.upstreams.get(&format!("{host}:{port}"));
        let _permit = upstream.admit(deadline).await.map_err(|r| {
            self.stats
                .count(stats::Upstream::Whois, stats::Outcome::Refused);
            refused(host, r, &self.config.limits)
        })?;
        let started = Instant::now();
        let deadline = deadline.min(Instant::now() + self.config.timeouts.whole);
        let guard = self.guard();
        let exchange = async {
            let mut stream = guard.connect_host(host, port).await.map_err(|e| match e {
                crate::net::GuardError::Timeout { .. } => {
                    FetchError::Timeout(super::https::Step::Connect)
                }
                e if e.is_refusal() => FetchError::Refused(e.why()),
                e => FetchError::Failed(e.to_string()),
            })?;
            whois::exchange(&mut stream, query)
                .await
                .map_err(|e| FetchError::Failed(format!("WHOIS: {e}")))
        };
        let result = tokio::time::timeout_at(deadline, exchange)
            .await
            .unwrap_or(Err(FetchError::Timeout(super::https::Step::Body)));
        let took = started.elapsed();
        match result {
            Ok(text) => {
                upstream.record(Outcome::Success);
                self.stats.took(stats::Upstream::Whois, took);
                Ok(text)
            }
            Err(e) => {
                self.fetch_failed(stats::Upstream::Whois, &e, took);
                Err(fetch_failure(&upstream, host, e))
            }
        }
    }
}

/// The answer of an RDAP query.
fn registry_answer(domain: &str, answer: rdap::Answer, url: &str) -> RegistryAnswer {
    let registration = match answer {
        rdap::Answer::Found(r) => Some(*r),
        rdap::Answer::NotFound => None,
    };
    RegistryAnswer {
        domain: domain.to_owned(),
        registered: Some(registration.is_some()),
        reserved: registration.as_ref().is_some_and(Registration::is_reserved),
        registration,
        raw: None,
        source: Source {
            protocol: Protocol::Rdap,
            server: url.to_owned(),
        },
        learnt_at: crate::time::iso_millis(now_ms()),
    }
}

/// The failure of a request that got no answer, recorded against its upstream (a
/// refusal by the guard is tldsnap's own doing and counts against nobody).
fn fetch_failure(upstream: &Upstream, name: &str, e: FetchError) -> Failure {
    match e {
        FetchError::Timeout(step) => {
            upstream.record(Outcome::Failure);
            Failure::Timeout {
                upstream: name.to_owned(),
                detail: step.as_str().to_owned(),
            }
        }
        FetchError::Refused(why) => Failure::Refused {
            target: name.to_owned(),
            detail: why,
        },
        e @ (FetchError::Failed(_) | FetchError::TooLarge(_)) => {
            upstream.record(Outcome::Failure);
            Failure::Upstream {
                upstream: name.to_owned(),
                detail: e.to_string(),
                retry_after: None,
            }
        }
    }
}

/// The failure of a request tldsnap held back.
fn refused(name: &str, refusal: Refusal, limits: &super::limits::Limits) -> Failure {
    let secs = |d: Duration| d.as_secs() + u64::from(d.subsec_nanos() > 0);
    match refusal {
        Refusal::Resting {
            retry_after,
            asked_by_upstream: true,
        } => Failure::Upstream {
            upstream: name.to_owned(),
            detail: format!(
                "asked tldsnap to wait (Retry-After); it is not asked again for {} s",
                secs(retry_after)
            ),
            retry_after: Some(secs(retry_after)),
        },
        Refusal::Resting { retry_after, .. } => Failure::Upstream {
            upstream: name.to_owned(),
            detail: format!(
                "failed {} times in a row; tldsnap gives it a rest of {} s (circuit breaker)",
                limits.breaker_failures,
                secs(retry_after)
            ),
            retry_after: Some(secs(retry_after)),
        },
        Refusal::Busy { retry_after } => Failure::Upstream {
            upstream: name.to_owned(),
            detail: format!(
                "tldsnap sends it at most {} requests a second and {} at once; the next \
                 slot comes after this request's time budget",
                limits.rate_per_second, limits.concurrency
            ),
            retry_after: Some(secs(retry_after).max(1)),
        },
    }
}

/// The URL a redirect goes to: an absolute `https://` URL, or a path on the same
/// server.
fn redirect(from: &Uri, location: &str) -> Option<String> {
    if location.starts_with("https://") {
        return Some(location.to_owned());
    }
    if location.starts_with('/') && !location.starts_with("//") {
        return Some(format!("https://{}{location}", from.authority()?));
    }
    None
}

/// The `host[:port]` of a URL, for naming an upstream.
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

/// `host` and `port` of `host[:port]` (`[v6]:port` too), `default` when none is given.
fn split_host_port(s: &str, default: u16) -> (&str, u16) {
    if let Some((host, port)) = s.rsplit_once(':')
        && let Ok(port) = port.parse::<u16>()
        && (!host.contains(':') || host.ends_with(']'))
    {
        return (host, port);
    }
    (s, default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_ports_and_redirects() {
        assert_eq!(host_of("https://rdap.test:8443/v1/"), "rdap.test:8443");
        assert_eq!(host_of("https://rdap.test/"), "rdap.test");
        assert_eq!(
            split_host_port("whois.iana.org", 43),
            ("whois.iana.org", 43)
        );
        assert_eq!(split_host_port("127.0.0.1:4343", 43), ("127.0.0.1", 4343));
        assert_eq!(split_host_port("[::1]:4343", 43), ("[::1]", 4343));
        assert_eq!(split_host_port("::1", 43), ("::1", 43));
        let from: Uri = "https://rdap.test:8443/domain/a.com".parse().unwrap();
        assert_eq!(
            redirect(&from, "/v2/domain/a.com").as_deref(),
            Some("https://rdap.test:8443/v2/domain/a.com")
        );
        assert_eq!(
            redirect(&from, "https://other.test/domain/a.com").as_deref(),
            Some("https://other.test/domain/a.com")
        );
        assert_eq!(redirect(&from, "http://other.test/"), None);
        assert_eq!(redirect(&from, "//other.test/x"), None);
    }

    #[test]
    fn the_status_answer_adds_up_the_states() {
        let answer = RegistryAnswer {
            domain: "example.com".into(),
            registered: Some(true),
            reserved: false,
            registration: Some(Registration {
                domain: "example.com".into(),
                statuses: vec![
                    "clientTransferProhibited".into(),
                    "redemptionPeriod".into(),
                    "serverHold".into(),
                    "locked".into(),
                ],
                ..Registration::default()
            }),
            raw: None,
            source: Source {
                protocol: Protocol::Rdap,
                server: "https://rdap.test/domain/example.com".into(),
            },
            learnt_at: "2026-01-01T00:00:00.000Z".into(),
        };
        let s = StatusAnswer::of(&answer);
        assert!(s.grace_period && s.on_hold && !s.pending_delete);
        assert_eq!(s.statuses.len(), 4);
        assert_eq!(s.statuses[0].set_by, Some(SetBy::Registrar));
        assert_eq!(s.statuses[3].meaning, None);
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["statuses"][1]["state"], "grace");
        assert_eq!(v["source"]["protocol"], "rdap");
    }
}
