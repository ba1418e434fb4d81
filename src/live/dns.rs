//! DNS records through a real stub resolver (hickory-resolver): the system's
//! (`/etc/resolv.conf`) or the one given with `--resolver ADDR`. Each record type is
//! one query; its answer keeps the response code, so NXDOMAIN (no such name), NOERROR
//! without records (the name exists, not this type) and SERVFAIL (the resolver could
//! not get an answer) are told apart, with the TTLs the answer carried.
//!
//! Asked for the resolver's DNSSEC verdict (`dnssec=true`), each type is one query
//! of its own to the resolver's name servers with the DO (RFC 3225) and AD (RFC 6840
//! section 5.7) bits set, read whole (hickory-net's UDP client, TCP when truncated),
//! so the response's AD bit and response code are both seen: AD set is `secure`; a
//! SERVFAIL that the same query with CD (checking disabled) answers is `bogus`; no AD
//! from a resolver that authenticates the root zone is `insecure`; anything else is
//! `indeterminate`. tldsnap does not validate signatures itself: the verdict is the
//! resolver's, and only as trustworthy as the path to it (`docs/LIVE.md`).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{
    ConnectionConfig, NameServerConfig, ProtocolConfig, ResolveHosts, ResolverConfig,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::tcp::TcpClientStream;
use hickory_resolver::net::udp::UdpClientStream;
use hickory_resolver::net::xfer::FirstAnswer;
use hickory_resolver::net::{DnsError, DnsHandle, NetError};
use hickory_resolver::proto::op::{
    DnsRequest, DnsRequestOptions, DnsResponse, Query, ResponseCode,
};
use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::cache::{Cacheable, Fresh, Kind};
use super::{Failure, Live, now_ms, stats};

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
    /// The resolver's DNSSEC verdict on this answer, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dnssec: Option<Dnssec>,
}

/// The resolver's DNSSEC verdict on one answer (RFC 4035 section 4.3's words), weakest
/// first: the verdict on a whole name is the weakest of its types'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dnssec {
    /// The resolver refused the data as failing validation: SERVFAIL when it checks,
    /// an answer when asked with checking disabled (CD).
    Bogus,
    /// No verdict: the resolver does not authenticate DNSSEC data (it did not set AD on
    /// the root zone, which is signed), could not answer either way (SERVFAIL with and
    /// without CD), refused, or did not answer.
    Indeterminate,
    /// A resolver that validates answered without AD: the data is not signed (the zone,
    /// or a zone above it, is unsigned) — RFC 4035's insecure.
    Insecure,
    /// The resolver set AD: it validated the answer (the records, or the proof that
    /// there are none) from the root's trust anchor down.
    Secure,
}

/// The resolver's DNSSEC verdict on a whole name, when asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DnssecSummary {
    /// The weakest of the types' verdicts.
    pub verdict: Dnssec,
    /// Whether the resolver authenticates DNSSEC data: it set AD on the root zone's SOA
    /// (asked at most every 10 minutes); `null` when it did not answer that question.
    pub resolver_validates: Option<bool>,
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
    /// The resolver's DNSSEC verdict on the name, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dnssec: Option<DnssecSummary>,
    /// When the oldest of the record sets was learnt.
    pub learnt_at: String,
}

/// The stub resolver of a configuration, what problems call it, and its name servers
/// (where the DNSSEC queries go).
pub(crate) struct Resolver {
    pub(crate) resolver: TokioResolver,
    pub(crate) name: String,
    pub(crate) servers: Vec<SocketAddr>,
}

/// The resolver of a configuration: `addr`, else the system's.
pub(crate) fn resolver(addr: Option<SocketAddr>, timeout: Duration) -> Result<Resolver, String> {
    let (config, mut opts, name) = match addr {
        Some(addr) => {
            let mut udp = ConnectionConfig::udp();
            udp.port = addr.port();
            let mut tcp = ConnectionConfig::tcp();
            tcp.port = addr.port();
            let server = NameServerConfig::new(addr.ip(), true, vec![udp, tcp]);
            (
                ResolverConfig::from_name_servers(vec![server]),
                hickory_resolver::config::ResolverOpts::default(),
                format!("resolver {addr}"),
            )
        }
        None => {
            let (config, opts) = hickory_resolver::system_conf::read_system_conf()
                .map_err(|e| format!("the system's DNS configuration cannot be read: {e}"))?;
            (config, opts, "the system resolver".to_owned())
        }
    };
    let servers = config
        .name_servers()
        .iter()
        .map(|s| {
            let port = s
                .connections
                .iter()
                .find(|c| matches!(c.protocol, ProtocolConfig::Udp))
                .map_or(53, |c| c.port);
            SocketAddr::new(s.ip, port)
        })
        .collect();
    opts.timeout = timeout;
    opts.attempts = 2;
    // Answers are cached by tldsnap with their own TTLs; the resolver's cache only
    // spares repeated questions within a lookup.
    opts.cache_size = 1024;
    // Names are looked up in the DNS, never in this machine's hosts file.
    opts.use_hosts_file = ResolveHosts::Never;
    opts.ndots = 0;
    let mut builder = TokioResolver::builder_with_config(config, TokioRuntimeProvider::default());
    *builder.options_mut() = opts;
    let resolver = builder
        .build()
        .map_err(|e| format!("the DNS resolver cannot start: {e}"))?;
    Ok(Resolver {
        resolver,
        name,
        servers,
    })
}

/// How long the answer to "does the resolver validate?" is kept.
const PROBE_TTL: Duration = Duration::from_secs(600);

impl Live {
    /// The records of `types` for `name` (canonical), within `deadline`; with the
    /// resolver's DNSSEC verdict when `dnssec`. Fails only when no type got a response
    /// (the resolver timed out or could not be reached).
    pub async fn dns(
        &self,
        name: &str,
        types: &[Type],
        dnssec: bool,
        deadline: Instant,
    ) -> Result<DnsAnswer, Failure> {
        let (sets, validates) = tokio::join!(
            futures_util::future::join_all(
                types
                    .iter()
                    .map(|t| self.record_set(name, *t, dnssec, deadline)),
            ),
            async {
                match dnssec {
                    true => Some(Box::pin(self.resolver_validates(deadline)).await),
                    false => None,
                }
            }
        );
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
        let records: Vec<RecordSet> = sets
            .iter()
            .map(|s| {
                let mut set = s.set.clone();
                if let (Some(seen), Some(validates)) = (s.seen, validates) {
                    set.dnssec = Some(seen.verdict(validates));
                }
                set
            })
            .collect();
        let dnssec = validates.map(|validates| DnssecSummary {
            verdict: records
                .iter()
                .filter_map(|s| s.dnssec)
                .min()
                .unwrap_or(Dnssec::Indeterminate),
            resolver_validates: validates,
        });
        Ok(DnsAnswer {
            name: name.to_owned(),
            status: status.to_owned(),
            records,
            resolver: self.resolver_name.clone(),
            dnssec,
            learnt_at: crate::time::iso_millis(learnt_at),
        })
    }

    /// The addresses of `host` (A and AAAA), for connecting to it; a name without any
    /// is a failure naming the resolver.
    pub async fn addresses(&self, host: &str, deadline: Instant) -> Result<Vec<IpAddr>, Failure> {
        let answer = self
            .dns(host, &[Type::A, Type::Aaaa], false, deadline)
            .await?;
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

    /// One record set, from the cache or the resolver; with what the resolver said of
    /// its DNSSEC status when `dnssec`.
    pub(crate) async fn record_set(
        &self,
        name: &str,
        kind: Type,
        dnssec: bool,
        deadline: Instant,
    ) -> Timed {
        let key = match dnssec {
            true => format!("{} {name} +dnssec", kind.as_str()),
            false => format!("{} {name}", kind.as_str()),
        };
        let looked = self
            .cache
            .get_or_lookup(&key, async {
                // Boxed: the DNSSEC exchange's state is large, and every caller of a
                // plain lookup (the TLS lookup's addresses, availability) would carry it.
                let (set, seen) = match dnssec {
                    true => {
                        let (set, seen) = Box::pin(self.query_dnssec(name, kind, deadline)).await;
                        (set, Some(seen))
                    }
                    false => (self.query(name, kind, deadline).await, None),
                };
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
                        seen,
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

    /// One type through the stub resolver.
    async fn query(&self, name: &str, kind: Type, deadline: Instant) -> RecordSet {
        let fqdn = format!("{name}.");
        let started = Instant::now();
        let looked =
            tokio::time::timeout_at(deadline, self.resolver.lookup(fqdn, kind.record_type())).await;
        let set = match looked {
            Err(_) => failed(kind, "TIMEOUT", "no answer within the lookup's time".into()),
            Ok(Err(e)) => from_error(kind, &e),
            Ok(Ok(lookup)) => records_of(kind, "NOERROR", lookup.answers(), None),
        };
        self.stats.sent(
            stats::Upstream::Dns,
            outcome(&set.status),
            started.elapsed(),
        );
        set
    }

    /// One type asked with DO and AD (and, after a SERVFAIL, again with CD): the records
    /// and what the response said of their DNSSEC status.
    async fn query_dnssec(&self, name: &str, kind: Type, deadline: Instant) -> (RecordSet, Seen) {
        let response = match self
            .exchange(name, kind.record_type(), false, deadline)
            .await
        {
            Ok(response) => response,
            Err((status, error)) => return (failed(kind, status, error), Seen::Nothing),
        };
        let code = response.metadata.response_code;
        match code {
            ResponseCode::NoError | ResponseCode::NXDomain => {
                let set = records_of(
                    kind,
                    &rcode(code),
                    &response.answers,
                    response.negative_ttl(),
                );
                let seen = match response.metadata.authentic_data {
                    true => Seen::Authenticated,
                    false => Seen::Unauthenticated,
                };
                (set, seen)
            }
            ResponseCode::ServFail => {
                // Checking disabled: an answer now means the resolver's validation is
                // what failed before.
                let unchecked = self
                    .exchange(name, kind.record_type(), true, deadline)
                    .await;
                let seen = match unchecked {
                    Ok(r)
                        if matches!(
                            r.metadata.response_code,
                            ResponseCode::NoError | ResponseCode::NXDomain
                        ) =>
                    {
                        Seen::Bogus
                    }
                    _ => Seen::Nothing,
                };
                (records_of(kind, "SERVFAIL", &[], None), seen)
            }
            other => (records_of(kind, &rcode(other), &[], None), Seen::Nothing),
        }
    }

    /// Whether the resolver authenticates DNSSEC data: AD on the root zone's SOA (the
    /// root is signed), kept [`PROBE_TTL`]; `None` when it did not answer.
    async fn resolver_validates(&self, deadline: Instant) -> Option<bool> {
        let probe = self
            .cache
            .get_or_lookup("", async {
                let response = self.exchange("", RecordType::SOA, false, deadline).await?;
                let validates = response.metadata.response_code == ResponseCode::NoError
                    && response.metadata.authentic_data;
                Ok::<_, (&'static str, String)>(Fresh {
                    value: Validates(validates),
                    ttl: PROBE_TTL,
                    bytes: 8,
                })
            })
            .await;
        probe.ok().map(|v| v.0)
    }

    /// One query for `name` (canonical; `""`: the root) to the resolver's name servers
    /// in turn, with DO and AD set (CD too when `checking_disabled`), the whole response
    /// read: UDP, then TCP when it comes back truncated. Errs with the status a record
    /// set shows (`TIMEOUT`, `ERROR`) and why.
    async fn exchange(
        &self,
        name: &str,
        record_type: RecordType,
        checking_disabled: bool,
        deadline: Instant,
    ) -> Result<DnsResponse, (&'static str, String)> {
        let qname = Name::from_ascii(format!("{name}."))
            .map_err(|e| ("ERROR", format!("not a DNS name: {e}")))?;
        let mut options = DnsRequestOptions::default();
        options.use_edns = true;
        options.edns_set_dnssec_ok = true;
        options.recursion_desired = true;
        let mut request = DnsRequest::from_query(Query::query(qname, record_type), options);
        request.metadata.authentic_data = true;
        request.metadata.checking_disabled = checking_disabled;
        let mut failure = ("ERROR", "no name server is configured".to_owned());
        for server in &self.dns_servers {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let by = deadline.min(now + self.config.timeouts.first_byte);
            let exchanged =
                tokio::time::timeout_at(by, exchange_with(*server, request.clone(), by - now))
                    .await;
            let sent = |status: &str| {
                self.stats
                    .sent(stats::Upstream::Dns, outcome(status), now.elapsed());
            };
            match exchanged {
                Ok(Ok(response)) => {
                    sent(&rcode(response.metadata.response_code));
                    return Ok(response);
                }
                Err(_) | Ok(Err(NetError::Timeout)) => {
                    failure = ("TIMEOUT", "the resolver did not answer in time".to_owned());
                }
                Ok(Err(e)) => failure = ("ERROR", e.to_string()),
            }
            sent(failure.0);
        }
        Err(failure)
    }
}

/// One request to one name server over UDP, again over TCP when the answer was
/// truncated (DNSSEC answers are larger).
async fn exchange_with(
    server: SocketAddr,
    request: DnsRequest,
    timeout: Duration,
) -> Result<DnsResponse, NetError> {
    let provider = TokioRuntimeProvider::default();
    let udp = UdpClientStream::builder(server, provider.clone())
        .with_timeout(Some(timeout))
        .exchange();
    let response = udp.send(request.clone()).first_answer().await?;
    if !response.metadata.truncation {
        return Ok(response);
    }
    let tcp = TcpClientStream::exchange(server, None, timeout, None, provider).await?;
    tcp.send(request).first_answer().await
}

/// What a DNSSEC query's response said, before the resolver's own standing is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// An answer with AD.
    Authenticated,
    /// An answer without AD.
    Unauthenticated,
    /// SERVFAIL, and an answer with checking disabled.
    Bogus,
    /// No answer either way, or another response code.
    Nothing,
}

impl Seen {
    /// The verdict, given whether the resolver validates (`None`: unknown).
    fn verdict(self, validates: Option<bool>) -> Dnssec {
        match self {
            Seen::Authenticated => Dnssec::Secure,
            Seen::Unauthenticated if validates == Some(true) => Dnssec::Insecure,
            Seen::Bogus => Dnssec::Bogus,
            Seen::Unauthenticated | Seen::Nothing => Dnssec::Indeterminate,
        }
    }
}

/// Whether the resolver validates (the root probe's answer).
struct Validates(bool);

impl Cacheable for Validates {
    const KIND: Kind = Kind::DnssecProbe;
}

/// A record set and when it was learnt (cached answers keep their time).
#[derive(Debug, Clone)]
pub(crate) struct Timed {
    pub(crate) set: RecordSet,
    /// What the response said of its DNSSEC status, when asked.
    pub(crate) seen: Option<Seen>,
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
        dnssec: None,
    }
}

/// The record set of a response: its records of the type asked (CNAMEs and
/// signatures left out) with their TTLs; without records, the negative answer's TTL.
fn records_of(
    kind: Type,
    status: &str,
    answers: &[Record],
    negative_ttl: Option<u32>,
) -> RecordSet {
    let want = kind.record_type();
    let records: Vec<(u32, Value)> = answers
        .iter()
        .filter(|r| r.record_type() == want)
        .take(super::registration::MAX_LIST * 4)
        .filter_map(|r| record_value(&r.data).map(|v| (r.ttl, v)))
        .collect();
    let ttl = match records.iter().map(|(ttl, _)| *ttl).min() {
        Some(ttl) => Some(ttl),
        None => negative_ttl,
    };
    RecordSet {
        kind: kind.as_str(),
        status: status.to_owned(),
        ttl,
        records: records
            .into_iter()
            .map(|(ttl, mut v)| {
                v["ttl"] = json!(ttl);
                v
            })
            .collect(),
        error: None,
        dnssec: None,
    }
}

/// The record set of a lookup that ended without records.
fn from_error(kind: Type, e: &NetError) -> RecordSet {
    match e {
        NetError::Dns(DnsError::NoRecordsFound(none)) => {
            records_of(kind, &rcode(none.response_code), &[], none.negative_ttl)
        }
        NetError::Dns(DnsError::ResponseCode(code)) => records_of(kind, &rcode(*code), &[], None),
        NetError::Timeout => failed(
            kind,
            "TIMEOUT",
            "the resolver did not answer in time".into(),
        ),
        other => failed(kind, "ERROR", other.to_string()),
    }
}

/// What a DNS request came to, by the status its record set shows.
fn outcome(status: &str) -> stats::Outcome {
    match status {
        "NOERROR" => stats::Outcome::Ok,
        "NXDOMAIN" => stats::Outcome::NotFound,
        "TIMEOUT" => stats::Outcome::Timeout,
        _ => stats::Outcome::Error,
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
