//! Outbound connections: what the server opens to hosts someone else named.
//!
//! A webhook URL, an RDAP server, a TLS or DNS target: whenever a client (or data) chooses
//! where the server connects, the server could be made to reach addresses only it can
//! reach — its own loopback, the private network it runs in, a cloud provider's
//! metadata service (server-side request forgery). [`guard`] is the one way out:
//!
//! ```text
//!  host, port ──Guard::resolve──▶ every address checked ──Guard::connect──▶ TcpStream
//!                                 (refused if ANY is loopback,    to a checked address,
//!                                  private, link-local, metadata,  never a second lookup
//!                                  ...; unless allow_private)
//! ```
//!
//! The room knows sockets and addresses, nothing of HTTP or of what is sent.

pub mod guard;

pub use guard::{Checked, Guard, GuardError};
