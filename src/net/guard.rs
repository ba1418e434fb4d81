//! The outbound-connection guard: resolve a host, check every address, connect to a
//! checked one.
//!
//! A host named by someone else (a webhook URL, an RDAP server, a name server) may
//! resolve to an address only the server can reach. The guard refuses a host when **any**
//! of its addresses is one of these ([`classify`]):
//!
//! | reason | IPv4 | IPv6 |
//! |---|---|---|
//! | metadata | 169.254.169.254, 169.254.170.2, 169.254.170.23, 100.100.100.200 | fd00:ec2::254, fd00:ec2::23 |
//! | unspecified | 0.0.0.0 | `::` |
//! | loopback | 127.0.0.0/8 | `::1` |
//! | private | 10/8, 172.16/12, 192.168/16 | fc00::/7 (ULA), 64:ff9b:1::/48, fec0::/10 |
//! | link-local | 169.254/16 | fe80::/10 |
//! | shared address space | 100.64/10 (carrier-grade NAT) | — |
//! | multicast | 224/4 | ff00::/8 |
//! | broadcast | 255.255.255.255 | — |
//! | documentation | 192.0.2/24, 198.51.100/24, 203.0.113/24 | 2001:db8::/32, 3fff::/20 |
//! | reserved | 0/8, 192.0.0/24, 192.88.99/24, 198.18/15, 240/4 | anything outside 2000::/3, ::/96, 100::/64, 2001::/23 |
//!
//! Addresses that carry an IPv4 address are judged by it: IPv4-mapped (`::ffff:a.b.c.d`),
//! NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::`).
//!
//! With `allow_private` (tests, and operators whose targets are on their own network),
//! every reason is allowed except metadata, unspecified, multicast and broadcast: a
//! metadata service is never a legitimate target, and the other three cannot be
//! connected to as one host.
//!
//! **One resolution.** [`Guard::resolve`] looks the host up once and returns the checked
//! addresses ([`Checked`], which only the guard can make); [`Guard::connect`] connects
//! to one of those, never resolving again, so a DNS answer that changes between the check
//! and the connection (DNS rebinding) cannot slip an unchecked address through. A caller
//! that resolves by other means (its own DNS client) checks the answers with
//! [`Guard::check_addrs`].
//!
//! Every step runs under the guard's timeout: [`Guard::connect_host`] resolves and
//! connects within one deadline.
//!
//! **What a client is told.** The host named is someone else's, and so is the answer:
//! an error's [`Display`](fmt::Display) says `refused:` and why in general terms ("…
//! resolves to a non-public address (loopback, private, …)"), never an address the
//! server resolved or connected to, so the server's resolver answers no one's
//! questions about the names it can see. The address and its exact class are in
//! [`GuardError::detail`] and in the server's log (one line per refusal, written where
//! the refusal is made).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::time::Instant;

/// Why an address is not a public unicast address (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// A cloud provider's instance metadata service.
    Metadata,
    /// `0.0.0.0` or `::`.
    Unspecified,
    /// This machine.
    Loopback,
    /// A private network (RFC 1918, unique local IPv6).
    Private,
    /// Link-local (169.254/16, fe80::/10).
    LinkLocal,
    /// Carrier-grade NAT (100.64/10).
    SharedAddressSpace,
    /// A multicast group.
    Multicast,
    /// The limited broadcast address.
    Broadcast,
    /// Set aside for documentation.
    Documentation,
    /// Reserved by IANA, or not global unicast.
    Reserved,
}

impl Reason {
    /// Whether the address is refused even with `allow_private`.
    pub fn always_refused(self) -> bool {
        matches!(
            self,
            Reason::Metadata | Reason::Unspecified | Reason::Multicast | Reason::Broadcast
        )
    }

    /// The reason in words, for error messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Metadata => "a cloud metadata address",
            Reason::Unspecified => "the unspecified address",
            Reason::Loopback => "a loopback address",
            Reason::Private => "a private address",
            Reason::LinkLocal => "a link-local address",
            Reason::SharedAddressSpace => "a carrier-grade NAT address",
            Reason::Multicast => "a multicast address",
            Reason::Broadcast => "the broadcast address",
            Reason::Documentation => "a documentation address",
            Reason::Reserved => "a reserved address",
        }
    }
}

impl Reason {
    /// The reason in general terms, for a client: one phrase for every reason
    /// `allow_private` lifts, one for those it never lifts, so that a refusal does not
    /// tell what a name resolves to beyond "not public".
    pub fn general(self) -> &'static str {
        if self.always_refused() {
            "an address no connection is ever made to (a cloud metadata, unspecified, \
             multicast or broadcast address)"
        } else {
            "a non-public address (loopback, private, link-local, carrier-grade NAT, \
             documentation or reserved)"
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the guard did not give a connection.
#[derive(Debug)]
pub enum GuardError {
    /// The host is neither a DNS name nor an IP address literal.
    InvalidHost {
        /// The host as given.
        host: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The name did not resolve.
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        source: std::io::Error,
    },
    /// The name resolved to no address.
    NoAddress {
        /// The host.
        host: String,
    },
    /// An address of the host is not allowed.
    Forbidden {
        /// The host.
        host: String,
        /// The address refused (the first refused one of its answer).
        addr: IpAddr,
        /// Why.
        reason: Reason,
    },
    /// Resolving and connecting took longer than the guard's timeout.
    Timeout {
        /// The host.
        host: String,
        /// The timeout.
        after: Duration,
    },
    /// No checked address accepted the connection.
    Connect {
        /// The host.
        host: String,
        /// The last address tried.
        addr: SocketAddr,
        /// Its error.
        source: std::io::Error,
    },
}

impl fmt::Display for GuardError {
    /// What a client may be told: a refusal says `refused:` and why in general terms,
    /// never an address the server resolved (nor which address of an answer, nor its
    /// exact class); [`GuardError::detail`] has those, for the server's log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_refusal() {
            f.write_str("refused: ")?;
        }
        f.write_str(&self.why())
    }
}

impl std::error::Error for GuardError {}

impl GuardError {
    /// Whether the error is the guard's refusal (a bad host or a forbidden address),
    /// not a network failure that may pass: a refusal will not change on retry.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            GuardError::InvalidHost { .. } | GuardError::Forbidden { .. }
        )
    }

    /// Why, in the words a client may read ([`fmt::Display`] without the `refused:`):
    /// the host as given, never an address it resolved to.
    pub fn why(&self) -> String {
        match self {
            GuardError::InvalidHost { host, why } => format!("host {host:?} {why}"),
            GuardError::Resolve { host, source } => format!("{host} does not resolve: {source}"),
            GuardError::NoAddress { host } => format!("{host} resolves to no address"),
            GuardError::Forbidden { host, addr, reason } if is_literal(host, *addr) => {
                format!("the host is {}", reason.general())
            }
            GuardError::Forbidden { host, reason, .. } => {
                format!("{host} resolves to {}", reason.general())
            }
            GuardError::Timeout { host, after } => {
                format!("{host}: no connection within {} s", after.as_secs_f64())
            }
            GuardError::Connect { host, source, .. } => {
                format!("{host}: cannot connect: {source}")
            }
        }
    }

    /// The error with the address involved and its exact class, for the server's log
    /// only (a client is told [`fmt::Display`]).
    pub fn detail(&self) -> String {
        match self {
            GuardError::Forbidden { host, addr, reason } if is_literal(host, *addr) => {
                format!("{addr} is {reason}")
            }
            GuardError::Forbidden { host, addr, reason } => {
                format!("{host} resolves to {addr}, {reason}")
            }
            GuardError::Connect { host, addr, source } => {
                format!("{host} ({addr}): cannot connect: {source}")
            }
            other => other.why(),
        }
    }
}

/// Whether `host` is `addr` written as a literal (with or without brackets, or as an
/// IPv4-mapped IPv6 address the guard judged as IPv4).
fn is_literal(host: &str, addr: IpAddr) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse::<IpAddr>()
        .is_ok_and(|ip| ip.to_canonical() == addr.to_canonical())
}

/// Addresses of one host, every one checked by a [`Guard`]. Only the guard makes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    host: String,
    addrs: Vec<SocketAddr>,
}

impl Checked {
    /// The host they belong to.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The addresses, in the resolver's order (never empty).
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }
}

/// The rules of outbound connections: whether private targets are allowed, and how long
/// a resolution and connection may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard {
    /// Allow every address but metadata, unspecified, multicast and broadcast.
    pub allow_private: bool,
    /// Longest time for resolving, and for connecting (together, in
    /// [`Guard::connect_host`]).
    pub timeout: Duration,
}

impl Default for Guard {
    /// Public addresses only, 10 s.
    fn default() -> Guard {
        Guard {
            allow_private: false,
            timeout: Duration::from_secs(10),
        }
    }
}

/// A host, parsed: an IP literal needs no resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host<'a> {
    Ip(IpAddr),
    Name(&'a str),
}

impl Guard {
    /// The guard that allows private targets or not, with the default timeout.
    pub fn new(allow_private: bool) -> Guard {
        Guard {
            allow_private,
            ..Guard::default()
        }
    }

    /// Whether `ip` may be connected to; the reason it may not.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Reason> {
        match classify(ip) {
            Some(reason) if reason.always_refused() || !self.allow_private => Err(reason),
            _ => Ok(()),
        }
    }

    /// Checks every address of an answer for `host`: all must pass.
    pub fn check_addrs(
        &self,
        host: &str,
        addrs: impl IntoIterator<Item = SocketAddr>,
    ) -> Result<Checked, GuardError> {
        let mut checked = Vec::new();
        for addr in addrs {
            // A mapped address is connected to as the IPv4 address it is.
            let addr = SocketAddr::new(addr.ip().to_canonical(), addr.port());
            if let Err(reason) = self.check_ip(addr.ip()) {
                let refused = GuardError::Forbidden {
                    host: host.to_owned(),
                    addr: addr.ip(),
                    reason,
                };
                // The address goes to the log; the caller's client is told `refused`.
                eprintln!("tldsnap: outbound connection refused: {}", refused.detail());
                return Err(refused);
            }
            if !checked.contains(&addr) {
                checked.push(addr);
            }
        }
        if checked.is_empty() {
            return Err(GuardError::NoAddress {
                host: host.to_owned(),
            });
        }
        Ok(Checked {
            host: host.to_owned(),
            addrs: checked,
        })
    }

    /// Checks the form of `host` (a DNS name, an IPv4 literal, an IPv6 literal with or
    /// without brackets) without resolving it; an IP literal is checked too.
    pub fn check_host(&self, host: &str) -> Result<(), GuardError> {
        match parse_host(host)? {
            Host::Ip(ip) => self.check_addrs(host, [SocketAddr::new(ip, 0)]).map(|_| ()),
            Host::Name(_) => Ok(()),
        }
    }

    /// Resolves `host` once and checks every address (see the module docs).
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Checked, GuardError> {
        self.resolve_by(host, port, Instant::now() + self.timeout)
            .await
    }

    async fn resolve_by(
        &self,
        host: &str,
        port: u16,
        deadline: Instant,
    ) -> Result<Checked, GuardError> {
        let name = match parse_host(host)? {
            Host::Ip(ip) => return self.check_addrs(host, [SocketAddr::new(ip, port)]),
            Host::Name(name) => name,
        };
        let answer = tokio::time::timeout_at(deadline, tokio::net::lookup_host((name, port)))
            .await
            .map_err(|_| GuardError::Timeout {
                host: host.to_owned(),
                after: self.timeout,
            })?
            .map_err(|source| GuardError::Resolve {
                host: host.to_owned(),
                source,
            })?;
        self.check_addrs(host, answer)
    }

    /// Connects to one of the checked addresses, in order, within the timeout; never
    /// resolves the name again.
    pub async fn connect(&self, checked: &Checked) -> Result<TcpStream, GuardError> {
        self.connect_by(checked, Instant::now() + self.timeout)
            .await
    }

    async fn connect_by(
        &self,
        checked: &Checked,
        deadline: Instant,
    ) -> Result<TcpStream, GuardError> {
        let mut last = None;
        for &addr in &checked.addrs {
            let attempt = tokio::time::timeout_at(deadline, TcpStream::connect(addr)).await;
            match attempt {
                Err(_) => {
                    return Err(GuardError::Timeout {
                        host: checked.host.clone(),
                        after: self.timeout,
                    });
                }
                Ok(Ok(stream)) => {
                    // Requests are small and written at once: do not wait for acks.
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Ok(Err(source)) => last = Some((addr, source)),
            }
        }
        let (addr, source) = last.expect("a Checked has at least one address");
        Err(GuardError::Connect {
            host: checked.host.clone(),
            addr,
            source,
        })
    }

    /// Resolves `host`, checks every address and connects to a checked one, all within
    /// one timeout. Returns the stream (its `peer_addr` is the address used).
    pub async fn connect_host(&self, host: &str, port: u16) -> Result<TcpStream, GuardError> {
        let deadline = Instant::now() + self.timeout;
        let checked = self.resolve_by(host, port, deadline).await?;
        self.connect_by(&checked, deadline).await
    }
}

fn parse_host(host: &str) -> Result<Host<'_>, GuardError> {
    let invalid = |why| GuardError::InvalidHost {
        host: host.to_owned(),
        why,
    };
    if let Some(inner) = host.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| invalid("has an unclosed '['"))?;
        return inner
            .parse::<Ipv6Addr>()
            .map(|ip| Host::Ip(IpAddr::V6(ip)))
            .map_err(|_| invalid("is not an IPv6 address inside its brackets"));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(Host::Ip(ip));
    }
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.is_empty() {
        return Err(invalid("is empty"));
    }
    if name.len() > 253 {
        return Err(invalid("is longer than 253 characters"));
    }
    for label in name.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(invalid("has a label that is empty or over 63 characters"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(invalid(
                "is not a DNS name (letters, digits, '-' and '_'; IDNs in their xn-- form)",
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(invalid("has a label that starts or ends with '-'"));
        }
    }
    // The resolver reads "127.1", "2130706433" or "0x7f.1" as IPv4 addresses (inet_aton):
    // a name whose last label is a number is one of those forms, not a DNS name.
    let last = name.rsplit('.').next().unwrap_or(name);
    if last.bytes().all(|b| b.is_ascii_digit())
        || (last.len() > 2 && last[..2].eq_ignore_ascii_case("0x"))
    {
        return Err(invalid(
            "is an IPv4 address in a non-standard form (write it as a.b.c.d)",
        ));
    }
    Ok(Host::Name(name))
}

/// Why `ip` is not a public unicast address, or `None` when it is.
pub fn classify(ip: IpAddr) -> Option<Reason> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Reason> {
    const METADATA: [Ipv4Addr; 4] = [
        Ipv4Addr::new(169, 254, 169, 254), // AWS, GCP, Azure, OpenStack, Oracle
        Ipv4Addr::new(169, 254, 170, 2),   // AWS ECS task metadata
        Ipv4Addr::new(169, 254, 170, 23),  // AWS EKS pod identity
        Ipv4Addr::new(100, 100, 100, 200), // Alibaba Cloud
    ];
    let o = ip.octets();
    let within = |net: [u8; 4], bits: u32| {
        let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
        u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
    };
    Some(if METADATA.contains(&ip) {
        Reason::Metadata
    } else if ip.is_unspecified() {
        Reason::Unspecified
    } else if ip.is_broadcast() {
        Reason::Broadcast
    } else if o[0] == 127 {
        Reason::Loopback
    } else if o[0] == 10 || within([172, 16, 0, 0], 12) || within([192, 168, 0, 0], 16) {
        Reason::Private
    } else if within([100, 64, 0, 0], 10) {
        Reason::SharedAddressSpace
    } else if within([169, 254, 0, 0], 16) {
        Reason::LinkLocal
    } else if within([192, 0, 2, 0], 24)
        || within([198, 51, 100, 0], 24)
        || within([203, 0, 113, 0], 24)
    {
        Reason::Documentation
    } else if within([224, 0, 0, 0], 4) {
        Reason::Multicast
    } else if o[0] == 0
        || within([192, 0, 0, 0], 24)
        || within([192, 88, 99, 0], 24)
        || within([198, 18, 0, 0], 15)
        || within([240, 0, 0, 0], 4)
    {
        Reason::Reserved
    } else {
        return None;
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<Reason> {
    const METADATA: [Ipv6Addr; 2] = [
        Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254), // AWS
        Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23),  // AWS EKS pod identity
    ];
    let s = ip.segments();
    let bits = u128::from(ip);
    let within = |net: u128, len: u32| {
        let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
        bits & mask == net & mask
    };
    let v4 = |x: u32| classify_v4(Ipv4Addr::from(x));
    if METADATA.contains(&ip) {
        return Some(Reason::Metadata);
    }
    if ip.is_unspecified() {
        return Some(Reason::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Reason::Loopback);
    }
    if let Some(mapped) = ip.to_ipv4_mapped() {
        return classify_v4(mapped);
    }
    // NAT64 well-known prefix: the IPv4 address it reaches decides.
    if within(0x0064_ff9b << 96, 96) {
        return v4(bits as u32);
    }
    // 6to4: 2002:AABB:CCDD::/48 reaches AA.BB.CC.DD.
    if s[0] == 0x2002 {
        return v4((bits >> 80) as u32);
    }
    Some(if s[0] & 0xff00 == 0xff00 {
        Reason::Multicast
    } else if s[0] & 0xffc0 == 0xfe80 {
        Reason::LinkLocal
    } else if s[0] & 0xfe00 == 0xfc00
        || s[0] & 0xffc0 == 0xfec0
        || within(0x0064_ff9b_0001 << 80, 48)
    {
        Reason::Private
    } else if within(0x2001_0db8 << 96, 32) || within(0x3fff << 112, 20) {
        Reason::Documentation
    } else if s[0] & 0xe000 != 0x2000 || within(0x2001 << 112, 23) {
        // Outside 2000::/3 nothing is global unicast (this covers ::/96 and 100::/64);
        // 2001::/23 is IETF protocol assignments (Teredo, benchmarking, ORCHID).
        Reason::Reserved
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn classify_knows_every_range() {
        let cases: &[(&str, Option<Reason>)] = &[
            ("169.254.169.254", Some(Reason::Metadata)),
            ("169.254.170.2", Some(Reason::Metadata)),
            ("100.100.100.200", Some(Reason::Metadata)),
            ("fd00:ec2::254", Some(Reason::Metadata)),
            ("::ffff:169.254.169.254", Some(Reason::Metadata)),
            ("0.0.0.0", Some(Reason::Unspecified)),
            ("::", Some(Reason::Unspecified)),
            ("127.0.0.1", Some(Reason::Loopback)),
            ("127.255.255.254", Some(Reason::Loopback)),
            ("::1", Some(Reason::Loopback)),
            ("::ffff:127.0.0.1", Some(Reason::Loopback)),
            ("10.0.0.1", Some(Reason::Private)),
            ("172.16.0.1", Some(Reason::Private)),
            ("172.31.255.255", Some(Reason::Private)),
            ("192.168.1.1", Some(Reason::Private)),
            ("fc00::1", Some(Reason::Private)),
            ("fd12:3456::1", Some(Reason::Private)),
            ("fec0::1", Some(Reason::Private)),
            ("64:ff9b:1::1", Some(Reason::Private)),
            ("::ffff:10.1.2.3", Some(Reason::Private)),
            ("64:ff9b::10.0.0.1", Some(Reason::Private)),
            ("2002:c0a8:0101::1", Some(Reason::Private)),
            ("169.254.0.1", Some(Reason::LinkLocal)),
            ("fe80::1", Some(Reason::LinkLocal)),
            ("febf::1", Some(Reason::LinkLocal)),
            ("100.64.0.1", Some(Reason::SharedAddressSpace)),
            ("100.127.255.255", Some(Reason::SharedAddressSpace)),
            ("224.0.0.1", Some(Reason::Multicast)),
            ("239.255.255.255", Some(Reason::Multicast)),
            ("ff02::1", Some(Reason::Multicast)),
            ("255.255.255.255", Some(Reason::Broadcast)),
            ("192.0.2.1", Some(Reason::Documentation)),
            ("198.51.100.7", Some(Reason::Documentation)),
            ("203.0.113.9", Some(Reason::Documentation)),
            ("2001:db8::1", Some(Reason::Documentation)),
            ("3fff::1", Some(Reason::Documentation)),
            ("0.1.2.3", Some(Reason::Reserved)),
            ("192.0.0.8", Some(Reason::Reserved)),
            ("198.18.0.1", Some(Reason::Reserved)),
            ("198.19.255.255", Some(Reason::Reserved)),
            ("240.0.0.1", Some(Reason::Reserved)),
            ("::1.2.3.4", Some(Reason::Reserved)),
            ("100::1", Some(Reason::Reserved)),
            ("2001::1", Some(Reason::Reserved)),
            ("4000::1", Some(Reason::Reserved)),
            // Public unicast, including neighbours of the ranges above.
            ("1.1.1.1", None),
            ("8.8.8.8", None),
            ("93.184.216.34", None),
            ("172.15.255.255", None),
            ("172.32.0.0", None),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("169.253.255.255", None),
            ("198.17.255.255", None),
            ("198.20.0.0", None),
            ("223.255.255.255", None),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::8.8.8.8", None),
            ("2002:0808:0808::1", None),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4001::1", None),
            ("2001:4860::1", None),
        ];
        for &(addr, want) in cases {
            assert_eq!(classify(ip(addr)), want, "{addr}");
        }
    }

    #[test]
    fn allow_private_keeps_refusing_what_is_never_a_host() {
        let open = Guard::new(true);
        let strict = Guard::new(false);
        for a in [
            "127.0.0.1",
            "10.0.0.1",
            "fe80::1",
            "100.64.0.1",
            "192.0.2.1",
        ] {
            assert!(open.check_ip(ip(a)).is_ok(), "{a}");
            assert!(strict.check_ip(ip(a)).is_err(), "{a}");
        }
        for a in [
            "169.254.169.254",
            "fd00:ec2::254",
            "0.0.0.0",
            "::",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(open.check_ip(ip(a)).is_err(), "{a}");
        }
        assert!(strict.check_ip(ip("1.1.1.1")).is_ok());
    }

    #[test]
    fn one_bad_address_refuses_the_whole_answer() {
        let g = Guard::new(false);
        let public: SocketAddr = "93.184.216.34:443".parse().unwrap();
        let private: SocketAddr = "10.0.0.7:443".parse().unwrap();
        let err = g
            .check_addrs("rebind.example", [public, private])
            .unwrap_err();
        assert!(
            matches!(err, GuardError::Forbidden { addr, reason: Reason::Private, .. } if addr == private.ip()),
            "{err}"
        );
        assert_eq!(
            err.detail(),
            "rebind.example resolves to 10.0.0.7, a private address"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "refused: rebind.example resolves to {}",
                Reason::Private.general()
            )
        );
        assert!(err.is_refusal());
        let ok = g.check_addrs("ok.example", [public, public]).unwrap();
        assert_eq!(ok.addrs(), [public]);
        assert_eq!(ok.host(), "ok.example");
        assert!(matches!(
            g.check_addrs("none.example", []),
            Err(GuardError::NoAddress { .. })
        ));
        // A mapped address is checked, and connected to, as IPv4.
        let mapped: SocketAddr = "[::ffff:10.0.0.7]:80".parse().unwrap();
        assert!(g.check_addrs("m.example", [mapped]).is_err());
        let mapped: SocketAddr = "[::ffff:8.8.8.8]:80".parse().unwrap();
        assert_eq!(
            g.check_addrs("m.example", [mapped]).unwrap().addrs(),
            ["8.8.8.8:80".parse::<SocketAddr>().unwrap()]
        );
    }

    #[test]
    fn hosts_are_names_or_literals() {
        let g = Guard::new(false);
        for good in [
            "example.com",
            "EXAMPLE.com.",
            "xn--bcher-kva.example",
            "a_b.example",
            "93.184.216.34",
            "[2606:4700::1111]",
            "2606:4700::1111",
        ] {
            assert!(g.check_host(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            ".",
            "a..b",
            "-a.example",
            "a-.example",
            "exa mple.com",
            "bücher.example",
            "a/b",
            "[::1",
            "[example.com]",
            "127.1",
            "2130706433",
            "0x7f.0.0.1",
            "host.0x7f",
            &"a".repeat(64),
            &format!("{}.com", vec!["a".repeat(60); 5].join(".")),
        ] {
            let err = g.check_host(bad).unwrap_err();
            assert!(
                matches!(err, GuardError::InvalidHost { .. }),
                "{bad}: {err}"
            );
        }
        for literal in ["127.0.0.1", "[::1]", "::ffff:127.0.0.1", "169.254.169.254"] {
            let err = g.check_host(literal).unwrap_err();
            assert!(matches!(err, GuardError::Forbidden { .. }), "{literal}");
        }
        let err = g.check_host("10.1.1.1").unwrap_err();
        assert_eq!(err.detail(), "10.1.1.1 is a private address");
        assert_eq!(
            err.to_string(),
            format!("refused: the host is {}", Reason::Private.general())
        );
    }

    /// What a client reads of a guard's error names no address: not the one refused,
    /// not the one that did not answer, not the literal it was given.
    #[test]
    fn what_a_client_reads_names_no_address() {
        let g = Guard::new(false);
        let mut errors = vec![
            g.check_addrs("runsc", ["127.0.0.1:443".parse().unwrap()])
                .unwrap_err(),
            g.check_addrs("v6.example", ["[::1]:443".parse().unwrap()])
                .unwrap_err(),
            g.check_addrs("meta.example", ["169.254.169.254:80".parse().unwrap()])
                .unwrap_err(),
            GuardError::Connect {
                host: "down.example".into(),
                addr: "93.184.216.34:443".parse().unwrap(),
                source: std::io::ErrorKind::ConnectionRefused.into(),
            },
        ];
        for literal in [
            "10.0.0.1",
            "[::1]",
            "::1",
            "::ffff:10.0.0.1",
            "[fd00:ec2::254]",
        ] {
            errors.push(g.check_host(literal).unwrap_err());
        }
        for err in &errors {
            let told = err.to_string();
            for word in told.split(|c: char| !(c.is_ascii_hexdigit() || c == '.' || c == ':')) {
                let trimmed = word.trim_matches(['.', ':']);
                assert!(
                    trimmed.parse::<IpAddr>().is_err() && !word.contains("::"),
                    "{told:?} names {word:?}"
                );
            }
            assert_ne!(told, err.detail(), "the log has the address");
            if err.is_refusal() {
                assert!(told.starts_with("refused: "), "{told}");
            }
        }
    }

    #[tokio::test]
    async fn resolve_refuses_loopback_names_unless_allowed() {
        // `localhost` resolves from /etc/hosts: no network needed.
        let err = Guard::new(false)
            .resolve("localhost", 80)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                GuardError::Forbidden {
                    reason: Reason::Loopback,
                    ..
                }
            ),
            "{err}"
        );
        let checked = Guard::new(true).resolve("localhost", 80).await.unwrap();
        assert!(
            checked
                .addrs()
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 80)
        );
        let err = Guard::new(false).resolve("[::1]", 80).await.unwrap_err();
        assert!(err.is_refusal());
    }

    #[tokio::test]
    async fn connect_goes_to_the_checked_address() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Guard::new(true);
        let stream = open.connect_host("127.0.0.1", port).await.unwrap();
        assert_eq!(stream.peer_addr().unwrap(), listener.local_addr().unwrap());
        let checked = open.resolve("127.0.0.1", port).await.unwrap();
        let stream = open.connect(&checked).await.unwrap();
        assert_eq!(stream.peer_addr().unwrap().port(), port);
        let err = Guard::new(false)
            .connect_host("127.0.0.1", port)
            .await
            .unwrap_err();
        assert!(err.is_refusal(), "{err}");
        // A closed port: a connection error naming the address, not a refusal.
        drop(listener);
        let err = open.connect(&checked).await.unwrap_err();
        assert!(
            matches!(&err, GuardError::Connect { addr, .. } if addr.port() == port),
            "{err}"
        );
        assert!(!err.is_refusal());
    }
}
