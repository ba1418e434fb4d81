//! The TLS certificate `https://{domain}` presents: the name resolved through the same
//! resolver as the DNS lookups, every address checked by the outbound guard, a TLS
//! handshake with rustls, the chain parsed with x509-parser and judged against the
//! trusted roots (webpki-roots, or `--tls-roots`).
//!
//! The handshake must go through even when the certificate is not valid (an expired or
//! wrong-host certificate is exactly what a caller wants to see), so the connection's
//! verifier records the real verdict of rustls' WebPKI verifier and lets the handshake
//! continue; the handshake's own signatures are still checked (a peer must hold the key
//! of the certificate it shows). Nothing is sent over the connection but the handshake,
//! and it is closed at once.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use serde::Serialize;
use tokio::time::Instant;

use super::cache::{Cacheable, Fresh, Kind};
use super::https::{FetchError, connect_each};
use super::limits::Outcome;
use super::{Ask, Failure, Live, now_ms, stats};

/// The port `https://` connects to.
pub const PORT: u16 = 443;

/// How long a certificate answer is kept: a server changes certificates rarely, and a
/// caller checking a renewal asks again after minutes, not seconds.
const TTL: Duration = Duration::from_secs(300);

/// Longest chain reported.
const MAX_CHAIN: usize = 8;

/// One certificate, as parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Certificate {
    /// The subject's distinguished name (RFC 4514 form).
    pub subject: String,
    /// The issuer's distinguished name.
    pub issuer: String,
    /// The DNS names and IP addresses of the subject alternative names.
    pub sans: Vec<String>,
    /// Start of validity (ISO 8601 UTC).
    pub not_before: String,
    /// End of validity.
    pub not_after: String,
    /// Whole days from now to the end of validity (negative once expired).
    pub days_to_expiry: i64,
    /// Serial number, hexadecimal bytes separated by `:`.
    pub serial: String,
    /// The signature algorithm's OID.
    pub signature_algorithm: String,
}

/// The TLS answer for a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TlsAnswer {
    /// The host (canonical).
    pub domain: String,
    /// The port connected to.
    pub port: u16,
    /// The address connected to.
    pub address: String,
    /// The negotiated protocol version (`TLS 1.3`, `TLS 1.2`).
    pub protocol: String,
    /// The negotiated cipher suite.
    pub cipher_suite: String,
    /// Whether the chain is valid for the host against the trusted roots, now.
    pub valid: bool,
    /// Why not: `expired`, `not_yet_valid`, `not_valid_for_name`, `unknown_issuer`,
    /// `revoked`, `bad_signature`, `invalid_purpose` or `invalid`.
    pub error: Option<&'static str>,
    /// The verifier's words, when not valid.
    pub error_detail: Option<String>,
    /// The end-entity certificate.
    pub certificate: Certificate,
    /// The rest of the chain as presented (intermediates, perhaps a root), in order.
    pub chain: Vec<Certificate>,
    /// When it was learnt.
    pub learnt_at: String,
}

impl Cacheable for TlsAnswer {
    const KIND: Kind = Kind::Tls;
}

/// A verifier that records what rustls' WebPKI verifier says of the chain and lets the
/// handshake go on; the handshake's signatures are verified for real.
#[derive(Debug)]
struct Recording {
    inner: Arc<WebPkiServerVerifier>,
    verdict: Mutex<Option<Result<(), rustls::Error>>>,
}

impl ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verdict = self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map(|_| ());
        *self.verdict.lock().unwrap_or_else(|e| e.into_inner()) = Some(verdict);
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The verifier of the trusted roots, built once per [`Live`].
pub(crate) fn webpki_verifier(
    roots: Option<&[CertificateDer<'static>]>,
) -> Result<Arc<WebPkiServerVerifier>, String> {
    let store = super::https::root_store(roots)?;
    WebPkiServerVerifier::builder_with_provider(
        Arc::new(store),
        Arc::new(rustls::crypto::ring::default_provider()),
    )
    .build()
    .map_err(|e| format!("TLS verifier: {e}"))
}

impl Live {
    /// The certificate `host` (canonical) presents on the TLS port, for `ask` (its
    /// deadline, and the key whose share of the address it takes).
    pub async fn tls(
        &self,
        host: &str,
        ask: impl Into<Ask>,
    ) -> Result<std::sync::Arc<TlsAnswer>, Failure> {
        let ask = ask.into();
        let port = self.config.tls_port;
        let lookup = self.cache.get_or_lookup(host, async {
            let answer = self.tls_uncached(host, port, &ask).await?;
            Ok(Fresh {
                bytes: serde_json::to_vec(&answer).map_or(4096, |v| v.len()),
                value: answer,
                ttl: TTL,
            })
        });
        tokio::time::timeout_at(ask.deadline, lookup)
            .await
            .unwrap_or_else(|_| {
                Err(Failure::Timeout {
                    upstream: format!("{host}:{port}"),
                    detail: "the lookup's time budget ran out".to_owned(),
                })
            })
    }

    async fn tls_uncached(&self, host: &str, port: u16, ask: &Ask) -> Result<TlsAnswer, Failure> {
        let deadline = ask.deadline;
        let target = format!("{host}:{port}");
        let ips: Vec<IpAddr> = self.addresses(host, deadline).await?;
        let guard = self.guard();
        let refused = || {
            self.stats
                .count(stats::Upstream::Tls, stats::Outcome::Refused)
        };
        let checked = guard
            .check_addrs(host, ips.iter().map(|ip| SocketAddr::new(*ip, port)))
            .map_err(|e| {
                refused();
                Failure::Refused {
                    target: host.to_owned(),
                    detail: e.to_string(),
                }
            })?;
        // Each address in turn, paced as that address (every name resolving to it
        // shares its pace and its breaker): the next one when it is resting or does not
        // accept. A server that never accepts counts against it, as a refused connect
        // and a stalled handshake do (and as RDAP's and WHOIS's timeouts do).
        let started = Instant::now();
        let pace = |addr| self.admit_address(addr, ask);
        let connect = self.config.timeouts.connect;
        let (tcp, permit) = connect_each(&guard, &checked, deadline, connect, &pace)
            .await
            .map_err(|e| {
                let outcome = match e {
                    FetchError::Held(_) => {
                        refused();
                        None
                    }
                    FetchError::Timeout(_) => Some(stats::Outcome::Timeout),
                    _ => Some(stats::Outcome::Error),
                };
                if let Some(outcome) = outcome {
                    self.stats
                        .sent(stats::Upstream::Tls, outcome, started.elapsed());
                }
                match e {
                    FetchError::Held(refusal) => {
                        super::registry::refused(&target, refusal, &self.config.limits)
                    }
                    FetchError::Timeout(_) => Failure::Timeout {
                        upstream: target.clone(),
                        detail: "connect".to_owned(),
                    },
                    e => Failure::Upstream {
                        upstream: target.clone(),
                        detail: e.to_string(),
                        retry_after: None,
                    },
                }
            })?;
        let upstream = permit.upstream();
        let sent = |outcome| {
            self.stats
                .sent(stats::Upstream::Tls, outcome, started.elapsed());
        };
        let address = tcp
            .peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_default();
        let recording = Arc::new(Recording {
            inner: Arc::clone(&self.webpki),
            verdict: Mutex::new(None),
        });
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| Failure::Upstream {
            upstream: target.clone(),
            detail: format!("TLS configuration: {e}"),
            retry_after: None,
        })?
        .dangerous()
        .with_custom_certificate_verifier(Arc::clone(&recording) as Arc<dyn ServerCertVerifier>)
        .with_no_client_auth();
        let name = ServerName::try_from(host.to_owned()).map_err(|_| Failure::Refused {
            target: host.to_owned(),
            detail: "not a TLS server name".to_owned(),
        })?;
        let tls_by = deadline.min(Instant::now() + self.config.timeouts.tls);
        let stream = tokio::time::timeout_at(
            tls_by,
            tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp),
        )
        .await
        .map_err(|_| {
            upstream.record(Outcome::Failure);
            sent(stats::Outcome::Timeout);
            Failure::Timeout {
                upstream: target.clone(),
                detail: "TLS handshake".to_owned(),
            }
        })?
        .map_err(|e| {
            upstream.record(Outcome::Failure);
            sent(stats::Outcome::Error);
            Failure::Upstream {
                upstream: target.clone(),
                detail: format!("TLS handshake: {e}"),
                retry_after: None,
            }
        })?;
        upstream.record(Outcome::Success);
        let (_, session) = stream.get_ref();
        let protocol = match session.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLS 1.3".to_owned(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLS 1.2".to_owned(),
            Some(other) => format!("{other:?}"),
            None => String::new(),
        };
        let cipher_suite = session
            .negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite()))
            .unwrap_or_default();
        let presented: Vec<CertificateDer<'static>> = session
            .peer_certificates()
            .map(|c| c.iter().map(|c| c.clone().into_owned()).collect())
            .unwrap_or_default();
        drop(stream);
        let now = now_ms();
        let mut parsed = presented
            .iter()
            .take(MAX_CHAIN)
            .map(|der| parse(der, now))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                sent(stats::Outcome::Error);
                Failure::Upstream {
                    upstream: target.clone(),
                    detail: format!("the certificate does not parse: {e}"),
                    retry_after: None,
                }
            })?;
        if parsed.is_empty() {
            sent(stats::Outcome::Error);
            return Err(Failure::Upstream {
                upstream: target,
                detail: "no certificate was presented".to_owned(),
                retry_after: None,
            });
        }
        let certificate = parsed.remove(0);
        let verdict = recording
            .verdict
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or(Err(rustls::Error::General("not verified".into())));
        let (valid, error, error_detail) = match verdict {
            Ok(()) => (true, None, None),
            Err(e) => (false, Some(error_code(&e)), Some(e.to_string())),
        };
        // A handshake that showed a certificate is an answer, valid or not.
        sent(stats::Outcome::Ok);
        Ok(TlsAnswer {
            domain: host.to_owned(),
            port,
            address,
            protocol,
            cipher_suite,
            valid,
            error,
            error_detail,
            certificate,
            chain: parsed,
            learnt_at: crate::time::iso_millis(now),
        })
    }
}

/// The short name of why a chain is not valid.
fn error_code(e: &rustls::Error) -> &'static str {
    match e {
        rustls::Error::InvalidCertificate(c) => {
            match c {
                CertificateError::Expired | CertificateError::ExpiredContext { .. } => "expired",
                CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                    "not_yet_valid"
                }
                CertificateError::NotValidForName
                | CertificateError::NotValidForNameContext { .. } => "not_valid_for_name",
                CertificateError::UnknownIssuer => "unknown_issuer",
                CertificateError::Revoked => "revoked",
                CertificateError::BadSignature => "bad_signature",
                CertificateError::InvalidPurpose
                | CertificateError::InvalidPurposeContext { .. } => "invalid_purpose",
                _ => "invalid",
            }
        }
        _ => "invalid",
    }
}

/// The fields of one DER certificate.
fn parse(der: &CertificateDer<'_>, now_ms: i64) -> Result<Certificate, String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).map_err(|e| e.to_string())?;
    let mut sans = Vec::new();
    if let Ok(Some(ext)) = cert.subject_alternative_name() {
        for name in ext.value.general_names.iter().take(100) {
            match name {
                x509_parser::extensions::GeneralName::DNSName(n) => sans.push((*n).to_owned()),
                x509_parser::extensions::GeneralName::IPAddress(bytes) => {
                    if let Ok(v4) = <[u8; 4]>::try_from(*bytes) {
                        sans.push(IpAddr::from(v4).to_string());
                    } else if let Ok(v6) = <[u8; 16]>::try_from(*bytes) {
                        sans.push(IpAddr::from(v6).to_string());
                    }
                }
                _ => {}
            }
        }
    }
    let validity = cert.validity();
    let not_before = validity.not_before.timestamp().saturating_mul(1000);
    let not_after = validity.not_after.timestamp().saturating_mul(1000);
    Ok(Certificate {
        subject: cert.subject().to_string(),
        issuer: cert.issuer().to_string(),
        sans,
        not_before: crate::time::iso_millis(not_before),
        not_after: crate::time::iso_millis(not_after),
        days_to_expiry: (not_after - now_ms).div_euclid(crate::time::MS_PER_DAY),
        serial: cert.raw_serial_as_string(),
        signature_algorithm: cert.signature_algorithm.algorithm.to_id_string(),
    })
}
