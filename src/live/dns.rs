//! DNS records through a real stub resolver (hickory-resolver): the system's
//! (`/etc/resolv.conf`) or the one given with `--resolver ADDR`. Each record type is
//! one query; its answer keeps the response code, so NXDOMAIN (no such name), NOERROR
//! without records (the name exists, not this type) and SERVFAIL (the resolver could
//! not get an answer) are told apart, with the TTLs the answer carried.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolveHosts, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError};
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{RData, RecordType};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::cache::{Cacheable, Fresh, Kind};
use super::{Failure, Live, now_ms};

/// The record types tldsnap looks up, in the order answers list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Type {
    /// IPv4 addresses.
    A,
    /// IPv6 addresses.
    Aaaa,
    /// Mail exchangers.
    Mx,
    /// Name servers.
    Ns,
    /// Text.
    Txt,
    /// Certification authority authorization (RFC 8659).
    Caa,
    /// Start of authority.
    Soa,
}

impl Type {
    /// Every type, in answer order (the default of `types`).
    pub const ALL: [Type; 7] = [
        Type::A,
        Type::Aaaa,
        Type::Mx,
        Type::Ns,
        Type::Txt,
        Type::Caa,
        Type::Soa,
    ];

    /// The type's mnemonic (`AAAA`).
    pub fn as_str(self) -> &'static str {
        match self {
            Type::A => "A",
            Type::Aaaa => "AAAA",
            Type::Mx => "MX",
            Type::Ns => "NS",
            Type::Txt => "TXT",
            Type::Caa => "CAA",
            Type::Soa => "SOA",
        }
    }

    /// The type of a mnemonic, any letter case.
    pub fn parse(s: &str) -> Option<Type> {
        Type::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s.trim_matches([' ', '\t'])))
    }

    fn record_type(self) -> RecordType {
        match self {
            Type::A => RecordType::A,
            Type::Aaaa => RecordType::AAAA,
            Type::Mx => RecordType::MX,
            Type::Ns => RecordType::NS,
            Type::Txt => RecordType::TXT,
            Type::Caa => RecordType::CAA,
            Type::Soa => RecordType::SOA,
        }
    }
}

/// Shortest time an answer is cached, whatever its TTL.
const MIN_TTL: u32 = 5;
/// Longest time a positive answer is cached (a longer TTL is cut).
const MAX_TTL: u32 = 3600;
/// Longest time a negative answer (NXDOMAIN, no records) is cached.
const MAX_NEGATIVE_TTL: u32 = 300;

/// The answer for one name and type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordSet {
    /// The record type.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The response code (`NOERROR`, `NXDOMAIN`, `SERVFAIL`, `REFUSED`, ...), or
    /// `TIMEOUT` / `ERROR` when no response came.
    pub status: String,
    /// The TTL of the records (the lowest), or of the negative answer (from the SOA);
    /// `null` when the answer had none.
    pub ttl: Option<u32>,
    /// The records, each an object of its fields (`address`; `preference`, `exchange`;
    /// `host`; `text`; `flags`, `tag`, `value`; the SOA's seven fields) and `ttl`.
    pub records: Vec<Value>,
    /// Why there is no response, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RecordSet {
    /// Whether a response came (any response code); `false` for a timeout or an error
    /// reaching the resolver.
    pub fn answered(&self) -> bool {
        !matches!(self.status.as_str(), "TIMEOUT" | "ERROR")
    }
}

/// The DNS answer for a name: one record set per type asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DnsAnswer {
    /// The name (canonical, `xn--` form).
    pub name: String,
    /// `NXDOMAIN` when the name does not exist, `SERVFAIL` when every type failed so,
    /// else `NOERROR`.
    pub status: String,
    /// One record set per type, in the order asked.
    pub records: Vec<RecordSet>,
    /// The resolver asked.
    pub resolver: String,
    /// When the oldest of the record sets was learnt.
    pub learnt_at: String,
}

/// The resolver of a configuration.
pub(crate) fn resolver(
    addr: Option<SocketAddr>,
    timeout: Duration,
) -> Result<(TokioResolver, String), String> {
    let (mut builder, name) = match addr {
        Some(addr) => {
            let mut udp = ConnectionConfig::udp();
            udp.port = addr.port();
            let mut tcp = ConnectionConfig::tcp();
            tcp.port = addr.port();
            let server = NameServerConfig::new(addr.ip(), true, vec![udp, tcp]);
            (
                TokioResolver::builder_with_config(
                    ResolverConfig::from_name_servers(vec![server]),
                    TokioRuntimeProvider::default(),
                ),
                format!("resolver {addr}"),
            )
        }
        None => {
            let builder = TokioResolver::builder_tokio()
                .map_err(|e| format!("the system's DNS configuration cannot be read: {e}"))?;
            (builder, "the system resolver".to_owned())
        }
    };
    let opts = builder.options_mut();
    opts.timeout = timeout;
    opts.attempts = 2;
    // Answers are cached by tldsnap with their own TTLs; the resolver's cache only
    // spares repeated questions within a lookup.
    opts.cache_size = 1024;
    // Names are looked up in the DNS, never in this machine's hosts file.
    opts.use_hosts_file = ResolveHosts::Never;
    opts.ndots = 0;
    let resolver = builder
        .build()
        .map_err(|e| format!("the DNS resolver cannot start: {e}"))?;
    Ok((resolver, name))
}

impl Live {
    /// The records of `types` for `name` (canonical), within `deadline`. Fails only when
    /// no type got a response (the resolver timed out or could not be reached).
    pub async fn dns(
        &self,
        name: &str,
        types: &[Type],
        deadline: Instant,
    ) -> Result<DnsAnswer, Failure> {
        let sets = futures_util::future::join_all(
            types.iter().map(|t| self.record_set(name, *t, deadline)),
        )
        .await;
        if !sets.is_empty() && sets.iter().all(|s| !s.set.answered()) {
            let timeout = sets.iter().any(|s| s.set.status == "TIMEOUT");
            let detail = sets[0].set.error.clone().unwrap_or_default();
            return Err(if timeout {
                Failure::Timeout {
                    upstream: self.resolver_name.clone(),
                    detail,
                }
            } else {
                Failure::Upstream {
                    upstream: self.resolver_name.clone(),
                    detail,
                    retry_after: None,
                }
            });
        }
        let status = if sets.iter().any(|s| s.set.status == "NXDOMAIN") {
            "NXDOMAIN"
        } else if sets.iter().all(|s| s.set.status == "SERVFAIL") {
            "SERVFAIL"
        } else {
            "NOERROR"
        };
        let learnt_at = sets
            .iter()
            .map(|s| s.learnt_at_ms)
            .min()
            .unwrap_or_else(now_ms);
        Ok(DnsAnswer {
            name: name.to_owned(),
            status: status.to_owned(),
            records: sets.iter().map(|s| s.set.clone()).collect(),
            resolver: self.resolver_name.clone(),
            learnt_at: crate::time::iso_millis(learnt_at),
        })
    }

    /// The addresses of `host` (A and AAAA), for connecting to it; a name without any
    /// is a failure naming the resolver.
    pub async fn addresses(&self, host: &str, deadline: Instant) -> Result<Vec<IpAddr>, Failure> {
        let answer = self.dns(host, &[Type::A, Type::Aaaa], deadline).await?;
        let ips: Vec<IpAddr> = answer
            .records
            .iter()
            .flat_map(|set| set.records.iter())
            .filter_map(|r| r.get("address")?.as_str()?.parse().ok())
            .collect();
        if ips.is_empty() {
            return Err(Failure::Upstream {
                upstream: self.resolver_name.clone(),
                detail: format!("{host} has no address ({})", answer.status),
                retry_after: None,
            });
        }
        Ok(ips)
    }

    /// One record set, from the cache or the resolver.
    pub(crate) async fn record_set(&self, name: &str, kind: Type, deadline: Instant) -> Timed {
        let key = format!("{} {name}", kind.as_str());
        let looked = self
            .cache
            .get_or_lookup(&key, async {
                let set = self.query(name, kind, deadline).await;
                // A response is kept for its TTL (clamped, negative answers shorter); no
                // response, or SERVFAIL, is served and not kept.
                let ttl = if !set.answered() || set.status == "SERVFAIL" {
                    0
                } else if set.status == "NOERROR" && !set.records.is_empty() {
                    set.ttl.unwrap_or(MIN_TTL).clamp(MIN_TTL, MAX_TTL)
                } else {
                    set.ttl.unwrap_or(MIN_TTL).clamp(MIN_TTL, MAX_NEGATIVE_TTL)
                };
                let bytes = serde_json::to_vec(&set).map_or(1024, |v| v.len());
                Ok::<_, std::convert::Infallible>(Fresh {
                    value: Timed {
                        set,
                        learnt_at_ms: now_ms(),
                    },
                    ttl: Duration::from_secs(u64::from(ttl)),
                    bytes,
                })
            })
            .await;
        match looked {
            Ok(timed) => Timed::clone(&timed),
            Err(never) => match never {},
        }
    }

    async fn query(&self, name: &str, kind: Type, deadline: Instant) -> RecordSet {
        let fqdn = format!("{name}.");
        let looked =
            tokio::time::timeout_at(deadline, self.resolver.lookup(fqdn, kind.record_type())).await;
        let lookup = match looked {
            Err(_) => return failed(kind, "TIMEOUT", "no answer within the lookup's time".into()),
            Ok(Err(e)) => return from_error(kind, &e),
            Ok(Ok(lookup)) => lookup,
        };
        let want = kind.record_type();
        let records: Vec<(u32, Value)> = lookup
            .answers()
            .iter()
            .filter(|r| r.record_type() == want)
            .take(super::registration::MAX_LIST * 4)
            .filter_map(|r| record_value(&r.data).map(|v| (r.ttl, v)))
            .collect();
        let ttl = records.iter().map(|(ttl, _)| *ttl).min();
        RecordSet {
            kind: kind.as_str(),
            status: "NOERROR".to_owned(),
            ttl,
            records: records
                .into_iter()
                .map(|(ttl, mut v)| {
                    v["ttl"] = json!(ttl);
                    v
                })
                .collect(),
            error: None,
        }
    }
}

/// A record set and when it was learnt (cached answers keep their time).
#[derive(Debug, Clone)]
pub(crate) struct Timed {
    pub(crate) set: RecordSet,
    pub(crate) learnt_at_ms: i64,
}

impl Cacheable for Timed {
    const KIND: Kind = Kind::Dns;
}

fn failed(kind: Type, status: &str, error: String) -> RecordSet {
    RecordSet {
        kind: kind.as_str(),
        status: status.to_owned(),
        ttl: None,
        records: Vec::new(),
        error: Some(error),
    }
}

/// The record set of a lookup that ended without records.
fn from_error(kind: Type, e: &NetError) -> RecordSet {
    match e {
        NetError::Dns(DnsError::NoRecordsFound(none)) => RecordSet {
            kind: kind.as_str(),
            status: rcode(none.response_code),
            ttl: none.negative_ttl,
            records: Vec::new(),
            error: None,
        },
        NetError::Dns(DnsError::ResponseCode(code)) => RecordSet {
            kind: kind.as_str(),
            status: rcode(*code),
            ttl: None,
            records: Vec::new(),
            error: None,
        },
        NetError::Timeout => failed(
            kind,
            "TIMEOUT",
            "the resolver did not answer in time".into(),
        ),
        other => failed(kind, "ERROR", other.to_string()),
    }
}

/// A response code as DNS tools print it.
fn rcode(code: ResponseCode) -> String {
    match code {
        ResponseCode::NoError => "NOERROR".to_owned(),
        ResponseCode::NXDomain => "NXDOMAIN".to_owned(),
        ResponseCode::ServFail => "SERVFAIL".to_owned(),
        ResponseCode::Refused => "REFUSED".to_owned(),
        ResponseCode::FormErr => "FORMERR".to_owned(),
        ResponseCode::NotImp => "NOTIMP".to_owned(),
        other => format!("{other:?}").to_ascii_uppercase(),
    }
}

/// A name as the answer writes it: without the root's dot.
fn host(name: &hickory_resolver::proto::rr::Name) -> String {
    name.to_ascii().trim_end_matches('.').to_ascii_lowercase()
}

/// The fields of one record.
fn record_value(data: &RData) -> Option<Value> {
    Some(match data {
        RData::A(a) => json!({ "address": a.0.to_string() }),
        RData::AAAA(a) => json!({ "address": a.0.to_string() }),
        RData::MX(mx) => json!({ "preference": mx.preference, "exchange": host(&mx.exchange) }),
        RData::NS(ns) => json!({ "host": host(&ns.0) }),
        RData::TXT(txt) => {
            let text: String = txt
                .txt_data
                .iter()
                .map(|part| String::from_utf8_lossy(part))
                .collect();
            json!({ "text": text })
        }
        RData::CAA(caa) => json!({
            "flags": if caa.issuer_critical { 128 } else { 0 } | caa.reserved_flags,
            "tag": caa.tag,
            "value": String::from_utf8_lossy(&caa.value),
        }),
        RData::SOA(soa) => json!({
            "mname": host(&soa.mname), "rname": host(&soa.rname), "serial": soa.serial,
            "refresh": soa.refresh, "retry": soa.retry, "expire": soa.expire, "minimum": soa.minimum,
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_read_back() {
        for t in Type::ALL {
            assert_eq!(Type::parse(t.as_str()), Some(t));
            assert_eq!(Type::parse(&t.as_str().to_ascii_lowercase()), Some(t));
        }
        assert_eq!(Type::parse("PTR"), None);
        assert_eq!(Type::parse(""), None);
    }
}
