//! Live domain data (issue 15): registration data (RDAP, WHOIS), status, DNS, the TLS
//! certificate of a domain's web server, and availability — questions the snapshot
//! cannot answer, asked of registries, name servers and web servers at request time.
//!
//! A room beside the snapshot engine: nothing here reads a snapshot or knows HTTP
//! requests of the API; it takes a validated domain name and gives back an answer or a
//! failure naming the upstream. `docs/LIVE.md` says where each answer
//! comes from and what tldsnap will not do.
//!
//! # Layout
//!
//! | module | role |
//! |---|---|
//! | [`bootstrap`] | TLD → RDAP base URLs (RFC 9224), shipped IANA data or a `dns.json` |
//! | [`rdap`] | RFC 9082 query URLs, RFC 9083 domain objects read into a [`Registration`] |
//! | [`registration`] | the one shape of registration data, whichever protocol brought it |
//! | [`status`] | EPP status codes: spelling, meaning, grace / hold / pending-delete |
//! | [`whois`] | port 43 (RFC 3912): IANA's referral, a registry's answer read into a [`Registration`] |

pub mod bootstrap;
pub mod rdap;
pub mod registration;
pub mod status;
pub mod whois;

pub use bootstrap::Bootstrap;
pub use registration::Registration;
