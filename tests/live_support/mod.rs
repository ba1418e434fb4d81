//! Real upstreams on loopback for the live lookups' tests: a test certificate
//! authority (rcgen), RDAP servers (hyper over rustls, RFC 9083 JSON), a port-43 WHOIS
//! server. Each listens on `127.0.0.1:0` on a runtime thread of its own, so the code
//! under test reaches them over real sockets, TLS and all, exactly as it reaches a
//! registry.
//!
//! The test TLDs and what their names do:
//!
//! | TLD | upstream | names |
//! |---|---|---|
//! | `lvt` | RDAP server "good" | `taken…` registered (redacted registrant), `nic…` reserved, anything else 404 |
//! | `lvs` | RDAP server "slow" | every name: the head after 30 s (the client's timeout comes first) |
//! | `lvg` | RDAP server "garbage" | `huge`: 10 MiB with Content-Length; `flood`: 10 MiB chunked; else HTML |
//! | `lvr` | RDAP server "limited" | every name: 429 with `Retry-After: 120` |
//! | `lvc` | RDAP server "closing" | as `lvt`, and an idle kept-alive connection is closed after 200 ms |
//! | `lvw` | WHOIS (IANA referral names `localhost`) | `taken…` registered, `held…` reserved, `odd…` unrecognised, else "No match" |
//! | `lvx` | none (IANA's answer names no WHOIS server) | — |
//!
//! And an authoritative DNS server (UDP, hickory's wire format) for every name of the
//! test TLDs (a label matches by its start: `taken7` is a `taken`): `taken`, `nic`,
//! `secure`, `expired`, `wronghost` and `selfsigned` have records (A 127.0.0.1; AAAA ::1,
//! MX, NS, TXT, CAA and SOA for `taken`); `intranet` has A 169.254.169.254 (a cloud
//! metadata address: refused even with --allow-private-targets); every name under a
//! `victim…` second-level name (`n7.victim.lvt`) has A 127.0.0.1; `servfail` answers
//! SERVFAIL; `slowdns` is never answered; every other name is NXDOMAIN with the zone's
//! SOA (negative TTL 60).
//!
//! It acts as a validating recursive resolver for the DNSSEC verdict (RFC 4035 section
//! 3.2, RFC 6840 section 5.7): to a query with DO or AD set it answers with AD for the
//! root zone and for every name under a `signed…` second-level name (`signed.lvt`,
//! `www.signed.lvt`: a signed zone, its names and its NXDOMAINs authenticated), and
//! without AD elsewhere (unsigned zones); `bogus` has records whose validation "fails":
//! SERVFAIL unless the query has CD (checking disabled), then the records without AD.
//! A second server (`dns_plain`) answers the same names as a resolver that does not
//! validate: never AD, `bogus` answered like any name.
//!
//! And a TLS server choosing its certificate by SNI: `secure.lvt` a valid chain to the
//! test CA, `expired.lvt` one that ended in 2020, `wronghost.lvt` one for
//! `other.example`, `selfsigned.lvt` a self-signed one, every name under `victim.lvt`
//! (which all resolve to 127.0.0.1) one for `*.victim.lvt`; it counts the connections
//! it accepts.
#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// A test certificate authority.
pub struct Ca {
    /// The CA certificate (PEM), what `--tls-roots` reads.
    pub pem: String,
    /// The CA certificate (DER).
    pub der: CertificateDer<'static>,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

/// A certificate chain and its key, for a server.
pub struct Leaf {
    /// Leaf first, then the CA.
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's private key.
    pub key: PrivateKeyDer<'static>,
}

impl Ca {
    /// A new CA: a fresh key, valid 1975 to 4096 (rcgen's defaults).
    pub fn new() -> Ca {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "tldsnap test CA");
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap();
        Ca {
            pem: cert.pem(),
            der: cert.der().clone(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// A server certificate for `names` (DNS names or IP addresses), signed by the CA,
    /// valid 1975 to 4096 unless `expired` (then it ended on 2020-01-01).
    pub fn leaf(&self, names: &[&str], expired: bool) -> Leaf {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, names[0]);
        if expired {
            params.not_before = rcgen::date_time_ymd(2019, 1, 1);
            params.not_after = rcgen::date_time_ymd(2020, 1, 1);
        }
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            chain: vec![cert.der().clone(), self.der.clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        }
    }

    /// Writes the CA certificate to `dir/ca.pem`.
    pub fn write_pem(&self, dir: &Path) -> PathBuf {
        let path = dir.join("ca.pem");
        std::fs::write(&path, &self.pem).unwrap();
        path
    }
}

/// A rustls server configuration serving `leaf`.
pub fn server_config(leaf: Leaf) -> Arc<rustls::ServerConfig> {
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(leaf.chain, leaf.key)
    .unwrap();
    Arc::new(config)
}

/// How an RDAP server behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Answers by name (see the module table).
    Good,
    /// Sends the response head after 30 s.
    Slow,
    /// HTML, or 10 MiB.
    Garbage,
    /// 429 with `Retry-After: 120`.
    Limited,
}

/// The upstreams of one test, on a runtime thread of their own.
pub struct Upstreams {
    /// The CA every server's certificate chains to.
    pub ca: Ca,
    /// The RDAP servers by behaviour.
    pub rdap: HashMap<&'static str, SocketAddr>,
    /// The WHOIS server (IANA's referral and the registry's, on one port).
    pub whois: SocketAddr,
    /// The DNS server of the test TLDs (UDP), a validating resolver.
    pub dns: SocketAddr,
    /// The same names from a resolver that does not validate DNSSEC.
    pub dns_plain: SocketAddr,
    /// The TLS server (certificates by SNI).
    pub tls: SocketAddr,
    /// Connections the TLS server accepted.
    pub tls_accepts: Arc<std::sync::atomic::AtomicUsize>,
    /// Requests each RDAP server received, by path.
    pub hits: Arc<Mutex<HashMap<String, usize>>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Upstreams {
    /// Starts every upstream.
    pub fn start() -> Upstreams {
        let ca = Ca::new();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let mut rdap = HashMap::new();
        for (name, behaviour, idle_close) in [
            ("good", Behaviour::Good, None),
            ("slow", Behaviour::Slow, None),
            ("garbage", Behaviour::Garbage, None),
            ("limited", Behaviour::Limited, None),
            ("closing", Behaviour::Good, Some(Duration::from_millis(200))),
        ] {
            let config = server_config(ca.leaf(&["localhost"], false));
            let addr =
                runtime.block_on(serve_rdap(config, behaviour, Arc::clone(&hits), idle_close));
            rdap.insert(name, addr);
        }
        let whois = runtime.block_on(serve_whois());
        let dns = runtime.block_on(serve_dns(true));
        let dns_plain = runtime.block_on(serve_dns(false));
        let tls_accepts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let tls = runtime.block_on(serve_tls(&ca, Arc::clone(&tls_accepts)));
        Upstreams {
            ca,
            rdap,
            whois,
            dns,
            dns_plain,
            tls,
            tls_accepts,
            hits,
            runtime: Some(runtime),
        }
    }

    /// The RDAP bootstrap (IANA `dns.json` format) that sends each test TLD to its
    /// server.
    pub fn bootstrap_json(&self) -> String {
        let url = |name: &str| format!("https://localhost:{}/rdap/", self.rdap[name].port());
        serde_json::json!({
            "version": "1.0",
            "publication": "2026-01-01T00:00:00Z",
            "services": [
                [["lvt"], [url("good")]],
                [["lvs"], [url("slow")]],
                [["lvg"], [url("garbage")]],
                [["lvr"], [url("limited")]],
                [["lvc"], [url("closing")]],
            ]
        })
        .to_string()
    }

    /// The configuration a server gets from `--live --rdap-bootstrap`, `--tls-roots`,
    /// `--allow-private-targets` and the WHOIS flags pointing at these upstreams, with
    /// limits lifted (every test sends many lookups to one server) and timeouts short
    /// enough for tests: 500 ms to the first byte, 1 s a request, 2 s a lookup.
    pub fn config(&self) -> tldsnap::live::Config {
        use tldsnap::live::{Bootstrap, Config, https::Timeouts, limits::Limits};
        let mut config =
            Config::new(Bootstrap::from_dns_json(&self.bootstrap_json(), "test").unwrap());
        config.whois_referral = format!("127.0.0.1:{}", self.whois.port());
        config.whois_port = self.whois.port();
        config.resolver = Some(self.dns);
        config.tls_port = self.tls.port();
        config.tls_roots = Some(vec![self.ca.der.clone()]);
        config.allow_private_targets = true;
        config.limits = Limits {
            concurrency: 8,
            rate_per_second: 1000,
            burst: 1000,
            per_key: 8,
            breaker_failures: 1000,
            ..Limits::default()
        };
        config.timeouts = Timeouts {
            connect: Duration::from_secs(1),
            tls: Duration::from_secs(1),
            // Generous for the healthy test upstreams on a loaded 2-core machine (a
            // debug build, tests in parallel), short beside the slow one's 30 s.
            first_byte: Duration::from_secs(1),
            whole: Duration::from_secs(2),
        };
        config.budget = Duration::from_secs(3);
        config
    }

    /// Requests the RDAP servers received for `path` (`/rdap/domain/taken.lvt`).
    pub fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    /// TLS handshakes (connections) the RDAP server `name` ("good", ...) accepted.
    pub fn handshakes(&self, name: &str) -> usize {
        self.hits(&format!("handshake {}", self.rdap[name].port()))
    }
}

impl Drop for Upstreams {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

type Body = Either<Full<Bytes>, http_body_util::channel::Channel<Bytes>>;

/// An RDAP server; `idle_close`: it closes a kept-alive connection that sends no
/// request for that long (silently, as servers' keep-alive timeouts do).
async fn serve_rdap(
    config: Arc<rustls::ServerConfig>,
    behaviour: Behaviour,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    idle_close: Option<Duration>,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let acceptor = acceptor.clone();
            let hits = Arc::clone(&hits);
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                *hits
                    .lock()
                    .unwrap()
                    .entry(format!("handshake {}", addr.port()))
                    .or_default() += 1;
                let service =
                    hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let hits = Arc::clone(&hits);
                        async move {
                            *hits
                                .lock()
                                .unwrap()
                                .entry(req.uri().path().to_owned())
                                .or_default() += 1;
                            Ok::<_, Infallible>(rdap_answer(behaviour, &req).await)
                        }
                    });
                let mut builder = hyper::server::conn::http1::Builder::new();
                if let Some(idle) = idle_close {
                    builder
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(idle);
                }
                let _ = builder.serve_connection(TokioIo::new(tls), service).await;
            });
        }
    });
    addr
}

fn full(status: u16, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Either::Left(Full::new(body.into())))
        .unwrap()
}

async fn rdap_answer(behaviour: Behaviour, req: &Request<hyper::body::Incoming>) -> Response<Body> {
    let name = req
        .uri()
        .path()
        .strip_prefix("/rdap/domain/")
        .unwrap_or("")
        .to_ascii_lowercase();
    let label = name.split('.').next().unwrap_or("");
    let label = kind_of(label);
    match behaviour {
        Behaviour::Slow => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            full(404, "application/rdap+json", "{}")
        }
        Behaviour::Limited => Response::builder()
            .status(429)
            .header("retry-after", "120")
            .body(Either::Left(Full::new(Bytes::from_static(b"{}"))))
            .unwrap(),
        Behaviour::Garbage if label == "huge" => {
            full(200, "application/rdap+json", vec![b'{'; 10 << 20])
        }
        Behaviour::Garbage if label == "flood" => {
            let (mut tx, body) = http_body_util::channel::Channel::<Bytes>::new(4);
            tokio::spawn(async move {
                let chunk = Bytes::from(vec![b'['; 64 << 10]);
                for _ in 0..160 {
                    if tx.send_data(chunk.clone()).await.is_err() {
                        break;
                    }
                }
            });
            Response::builder()
                .status(200)
                .header("content-type", "application/rdap+json")
                .body(Either::Right(body))
                .unwrap()
        }
        Behaviour::Garbage => full(
            200,
            "text/html",
            "<html><body>Service temporarily busy</body></html>",
        ),
        Behaviour::Good => match label {
            "taken" => full(200, "application/rdap+json", taken_json(&name)),
            "nic" => full(
                200,
                "application/rdap+json",
                serde_json::json!({
                    "objectClassName": "domain",
                    "ldhName": name,
                    "status": ["server hold", "reserved"],
                    "rdapConformance": ["rdap_level_0"]
                })
                .to_string(),
            ),
            _ => full(
                404,
                "application/rdap+json",
                serde_json::json!({"errorCode": 404, "title": "Not Found"}).to_string(),
            ),
        },
    }
}

/// A registered domain's RFC 9083 object, with the registrant redacted (RFC 9537).
pub fn taken_json(name: &str) -> String {
    serde_json::json!({
        "objectClassName": "domain",
        "handle": "TAKEN-LVT",
        "ldhName": name.to_ascii_uppercase(),
        "rdapConformance": ["rdap_level_0", "redacted"],
        "status": ["client transfer prohibited", "auto renew period"],
        "events": [
            {"eventAction": "registration", "eventDate": "2001-02-03T04:05:06Z"},
            {"eventAction": "expiration", "eventDate": "2030-02-03T04:05:06Z"},
            {"eventAction": "last changed", "eventDate": "2025-12-01T00:00:00Z"}
        ],
        "entities": [
            {"objectClassName": "entity", "roles": ["registrar"],
             "publicIds": [{"type": "IANA Registrar ID", "identifier": "9999"}],
             "vcardArray": ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", "Test Registrar"]]]},
            {"objectClassName": "entity", "roles": ["registrant"],
             "vcardArray": ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", "REDACTED FOR PRIVACY"]]]}
        ],
        "nameservers": [
            {"objectClassName": "nameserver", "ldhName": "NS1.TAKEN.LVT"},
            {"objectClassName": "nameserver", "ldhName": "ns2.taken.lvt"}
        ],
        "secureDNS": {"delegationSigned": false},
        "redacted": [
            {"name": {"type": "Registrant Name"}, "method": "replacementValue",
             "reason": {"type": "Server policy"}},
            {"name": {"type": "Registrant Email"}, "method": "removal"}
        ]
    })
    .to_string()
}

async fn serve_whois() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let mut reader = BufReader::new(tcp);
                let mut line = String::new();
                if reader.read_line(&mut line).await.is_err() {
                    return;
                }
                let query = line.trim().to_ascii_lowercase();
                let answer = whois_answer(&query);
                let mut tcp = reader.into_inner();
                let _ = tcp.write_all(answer.as_bytes()).await;
                let _ = tcp.shutdown().await;
            });
        }
    });
    addr
}

/// The kind a test label names: its known start (`taken7` → `taken`), else itself.
pub fn kind_of(label: &str) -> &str {
    const KINDS: [&str; 17] = [
        "taken",
        "nic",
        "free",
        "huge",
        "flood",
        "held",
        "odd",
        "secure",
        "expired",
        "wronghost",
        "selfsigned",
        "intranet",
        "servfail",
        "slowdns",
        "signed",
        "bogus",
        "victim",
    ];
    KINDS
        .into_iter()
        .find(|k| label.starts_with(k))
        .unwrap_or(label)
}

fn whois_answer(query: &str) -> String {
    let (label, rest) = query.split_once('.').unwrap_or((query, ""));
    let kind = if rest.is_empty() {
        query
    } else {
        kind_of(label)
    };
    let upper = query.to_ascii_uppercase();
    match (kind, rest) {
        ("taken", "lvw") => format!(
            "Domain Name: {upper}\r\nRegistrar: Test Registrar\r\nCreation Date: 2010-05-06T07:08:09Z\r\n\
             Registry Expiry Date: 2031-05-06T07:08:09Z\r\nDomain Status: clientHold https://icann.org/epp#clientHold\r\n\
             Name Server: ns1.{query}\r\nRegistrant Name: REDACTED FOR PRIVACY\r\nDNSSEC: unsigned\r\n"
        ),
        ("held", "lvw") => format!("The name {query} is reserved by the registry.\n"),
        ("odd", "lvw") => "Welcome to the LVW registry. holder: someone\n".into(),
        _ => whois_iana(query),
    }
}

fn whois_iana(query: &str) -> String {
    match query {
        // IANA's answers about TLDs.
        "lvw" => "% IANA WHOIS server\n\ndomain:       LVW\nwhois:        localhost\nstatus:       ACTIVE\n".into(),
        "lvx" => "% IANA WHOIS server\n\ndomain:       LVX\nstatus:       ACTIVE\n".into(),
        q => format!("No match for \"{}\".\r\n", q.to_ascii_uppercase()),
    }
}

/// A DNS server on UDP; `validating`: as a resolver that validates DNSSEC.
async fn serve_dns(validating: bool) -> SocketAddr {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let socket = Arc::new(socket);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        loop {
            let Ok((len, from)) = socket.recv_from(&mut buf).await else {
                continue;
            };
            if let Some(answer) = dns_answer(&buf[..len], validating) {
                let _ = socket.send_to(&answer, from).await;
            }
        }
    });
    addr
}

/// The answer to one DNS query, or `None` to leave it unanswered.
fn dns_answer(query: &[u8], validating: bool) -> Option<Vec<u8>> {
    use hickory_resolver::proto::op::{Edns, Message, OpCode, ResponseCode};
    use hickory_resolver::proto::rr::rdata::{A, AAAA, CAA, MX, NS, SOA, TXT};
    use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};
    let request = Message::from_vec(query).ok()?;
    let q = request.queries.first()?.clone();
    let qname = q.name().to_ascii().to_ascii_lowercase();
    let qname = qname.trim_end_matches('.');
    let label = kind_of(qname.split('.').next().unwrap_or(""));
    let tld = qname.rsplit('.').next().unwrap_or("");
    let mut response = Message::response(request.metadata.id, OpCode::Query);
    response.metadata.authoritative = true;
    response.metadata.recursion_desired = request.metadata.recursion_desired;
    response.metadata.recursion_available = true;
    response.add_query(q.clone());
    // DNSSEC: the client says it understands AD with DO (RFC 3225) or AD (RFC 6840).
    let dnssec_ok = request.edns.as_ref().is_some_and(|e| e.flags().dnssec_ok);
    let wants_ad = dnssec_ok || request.metadata.authentic_data;
    if request.edns.is_some() {
        let mut edns = Edns::new();
        edns.set_max_payload(1232).set_dnssec_ok(dnssec_ok);
        response.set_edns(edns);
    }
    let signed = qname.is_empty() || kind_of(qname.rsplit('.').nth(1).unwrap_or("")) == "signed";
    let bogus = label == "bogus" && validating && !request.metadata.checking_disabled;
    let name = |n: &str| Name::from_ascii(n).unwrap();
    let owner = q.name().clone();
    // The zone of the name: its TLD, or the root ("").
    let zone = if tld.is_empty() {
        String::new()
    } else {
        format!("{tld}.")
    };
    let zone_soa = Record::from_rdata(
        name(if zone.is_empty() { "." } else { &zone }),
        60,
        RData::SOA(SOA::new(
            name(&format!("ns.nic.{zone}")),
            name(&format!("hostmaster.nic.{zone}")),
            2026010101,
            3600,
            600,
            86400,
            60,
        )),
    );
    let record = |ttl: u32, data: RData| Record::from_rdata(owner.clone(), ttl, data);
    // Every name under `victim…` (`n7.victim.lvt`) is one host's: A 127.0.0.1.
    let victim = kind_of(qname.rsplit('.').nth(1).unwrap_or("")) == "victim";
    let exists = victim
        || matches!(
            label,
            "taken"
                | "nic"
                | "secure"
                | "expired"
                | "wronghost"
                | "selfsigned"
                | "intranet"
                | "signed"
                | "bogus"
        ) && qname.matches('.').count() == 1;
    match label {
        "slowdns" => return None,
        "servfail" => response.metadata.response_code = ResponseCode::ServFail,
        _ if bogus => response.metadata.response_code = ResponseCode::ServFail,
        _ if !exists && qname != tld => {
            response.metadata.response_code = ResponseCode::NXDomain;
            response.add_authority(zone_soa);
        }
        _ => {
            let answers: Vec<Record> = match (label, q.query_type()) {
                ("intranet", RecordType::A) => {
                    vec![record(300, RData::A(A("169.254.169.254".parse().unwrap())))]
                }
                (_, RecordType::A) if label != "intranet" && qname != tld => {
                    vec![record(300, RData::A(A("127.0.0.1".parse().unwrap())))]
                }
                ("taken", RecordType::AAAA) => {
                    vec![record(300, RData::AAAA(AAAA("::1".parse().unwrap())))]
                }
                ("taken", RecordType::MX) => vec![
                    record(
                        3600,
                        RData::MX(MX::new(10, name(&format!("mail.{qname}.")))),
                    ),
                    record(
                        3600,
                        RData::MX(MX::new(20, name(&format!("backup.{qname}.")))),
                    ),
                ],
                ("taken", RecordType::NS) => vec![
                    record(86400, RData::NS(NS(name(&format!("ns1.{qname}."))))),
                    record(86400, RData::NS(NS(name(&format!("ns2.{qname}."))))),
                ],
                ("taken", RecordType::TXT) => {
                    vec![record(
                        120,
                        RData::TXT(TXT::new(vec!["v=spf1 -all".into()])),
                    )]
                }
                ("taken", RecordType::CAA) => vec![record(
                    3600,
                    RData::CAA(CAA::new_issue(false, Some(name("letsencrypt.org")), vec![])),
                )],
                (_, RecordType::SOA) if qname.is_empty() => vec![record(
                    86400,
                    RData::SOA(SOA::new(
                        name("a.root-servers.net."),
                        name("nstld.verisign-grs.com."),
                        2026010100,
                        1800,
                        900,
                        604800,
                        86400,
                    )),
                )],
                ("taken", RecordType::SOA) => vec![record(
                    3600,
                    RData::SOA(SOA::new(
                        name(&format!("ns1.{qname}.")),
                        name(&format!("hostmaster.{qname}.")),
                        7,
                        7200,
                        900,
                        1209600,
                        300,
                    )),
                )],
                _ => Vec::new(),
            };
            if answers.is_empty() {
                response.add_authority(zone_soa);
            } else {
                response.add_answers(answers);
            }
        }
    }
    // A validating resolver sets AD on answers it authenticated (NXDOMAIN included:
    // authenticated denial), never on a SERVFAIL.
    response.metadata.authentic_data = validating
        && wants_ad
        && signed
        && response.metadata.response_code != ResponseCode::ServFail;
    response.to_vec().ok()
}

/// Certificates by SNI name; a name without one gets no certificate.
#[derive(Debug)]
struct BySni(HashMap<String, Arc<rustls::sign::CertifiedKey>>);

impl rustls::server::ResolvesServerCert for BySni {
    fn resolve(
        &self,
        hello: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        let name = hello.server_name()?;
        let wildcard = name
            .split_once('.')
            .map(|(_, parent)| format!("*.{parent}"));
        self.0.get(name).or_else(|| self.0.get(&wildcard?)).cloned()
    }
}

async fn serve_tls(ca: &Ca, accepts: Arc<std::sync::atomic::AtomicUsize>) -> SocketAddr {
    let provider = rustls::crypto::ring::default_provider();
    let certified = |leaf: Leaf| {
        Arc::new(rustls::sign::CertifiedKey::from_der(leaf.chain, leaf.key, &provider).unwrap())
    };
    let self_signed = {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["selfsigned.lvt".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        Leaf {
            chain: vec![cert.der().clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        }
    };
    let by_sni = BySni(HashMap::from([
        (
            "secure.lvt".to_owned(),
            certified(ca.leaf(&["secure.lvt"], false)),
        ),
        (
            "expired.lvt".to_owned(),
            certified(ca.leaf(&["expired.lvt"], true)),
        ),
        (
            "wronghost.lvt".to_owned(),
            certified(ca.leaf(&["other.example"], false)),
        ),
        ("selfsigned.lvt".to_owned(), certified(self_signed)),
        (
            "*.victim.lvt".to_owned(),
            certified(ca.leaf(&["*.victim.lvt"], false)),
        ),
    ]));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(provider.clone()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(by_sni));
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            accepts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // The handshake is all a client of this server wants.
                if let Ok(mut tls) = acceptor.accept(tcp).await {
                    let mut buf = [0u8; 64];
                    let _ = tokio::io::AsyncReadExt::read(&mut tls, &mut buf).await;
                }
            });
        }
    });
    addr
}
