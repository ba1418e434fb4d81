//! WHOIS over port 43 (RFC 3912), for TLDs whose registry runs no RDAP server.
//!
//! The protocol is a line sent and text read until the server closes. Which server: the
//! IANA WHOIS server names each TLD's (`whois:` in its answer for the TLD), so a lookup
//! is two queries, IANA's first ([`read_referral`]). The registry's answer has no
//! standard format; [`read_answer`] reads the `Key: value` layout that ICANN's contracts
//! made common (gTLDs and many ccTLDs) into the same [`Registration`] fields as RDAP,
//! and returns the text as it came when it recognises nothing.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::registration::{Contact, Dnssec, MAX_LIST, Registrar, Registration, host_name, text};
use super::status::epp_code;

/// The port WHOIS servers listen on (RFC 3912).
pub const PORT: u16 = 43;

/// The server that names each TLD's WHOIS server.
pub const IANA_SERVER: &str = "whois.iana.org";

/// Largest answer read: a registry's answer is a few KiB; a server that sends more is
/// cut off (and the answer refused) rather than held in memory.
pub const MAX_ANSWER_BYTES: usize = 256 << 10;

/// Longest raw text handed back when an answer is not recognised.
pub const MAX_RAW_BYTES: usize = 16 << 10;

/// What a registry's WHOIS server answered about a domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The domain's record, read into fields.
    Found(Box<Registration>),
    /// The server says it has no such domain.
    NotFound,
    /// Text tldsnap does not recognise, as it came (cut to [`MAX_RAW_BYTES`]).
    Unrecognised(String),
}

/// Sends `query` and reads the answer until the server closes the connection: at most
/// [`MAX_ANSWER_BYTES`] (more is an error). The caller bounds the time.
pub async fn exchange<S>(stream: &mut S, query: &str) -> std::io::Result<String>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    stream.write_all(format!("{query}\r\n").as_bytes()).await?;
    stream.flush().await?;
    let mut answer = Vec::with_capacity(4096);
    let mut limited = stream.take(MAX_ANSWER_BYTES as u64 + 1);
    limited.read_to_end(&mut answer).await?;
    if answer.len() > MAX_ANSWER_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the answer is longer than {MAX_ANSWER_BYTES} bytes"),
        ));
    }
    // Most servers send UTF-8; a few send Latin-1, whose bytes above 0x7f become U+FFFD
    // here rather than failing the whole answer.
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// The WHOIS server IANA's answer about a TLD names (`whois:` line; `refer:` as a
/// fallback), as a canonical host name; `None` when it names none.
pub fn read_referral(answer: &str) -> Option<String> {
    let mut refer = None;
    for (key, value) in fields(answer) {
        match key.as_str() {
            "whois" => return host_name(value),
            "refer" if refer.is_none() => refer = host_name(value),
            _ => {}
        }
    }
    refer
}

/// Reads a registry's answer about `domain` (canonical).
pub fn read_answer(domain: &str, answer: &str) -> Answer {
    let mut r = Registration {
        domain: domain.to_owned(),
        ..Registration::default()
    };
    let mut named = false;
    let mut registrar = Registrar::default();
    let mut registrant = Contact::default();
    for (key, value) in fields(answer) {
        let set = |slot: &mut Option<String>, v: Option<String>| {
            if slot.is_none() {
                *slot = v;
            }
        };
        match key.as_str() {
            "domain name" | "domain" | "domain_name" | "domainname" => {
                named |= host_name(value).is_some_and(|n| n == domain);
            }
            "registry domain id" | "roid" => set(&mut r.handle, text(value)),
            "registrar" | "sponsoring registrar" | "registrar name" => {
                set(&mut registrar.name, text(value));
            }
            "registrar iana id" => set(&mut registrar.iana_id, text(value)),
            "registrar abuse contact email" => set(&mut registrar.abuse_email, text(value)),
            "creation date"
            | "created"
            | "created on"
            | "registered on"
            | "registered"
            | "registration time"
            | "domain registration date"
            | "registration date" => {
                set(&mut r.created, date(value));
            }
            "updated date" | "last updated" | "last modified" | "changed" | "last updated on"
            | "modified" | "last-update" => set(&mut r.updated, date(value)),
            "registry expiry date"
            | "registrar registration expiration date"
            | "expiry date"
            | "expiration date"
            | "expires"
            | "expires on"
            | "expire date"
            | "paid-till"
            | "renewal date"
            | "registry expiration date" => set(&mut r.expires, date(value)),
            "domain status" | "status" | "state" => {
                let code = epp_code(value);
                if !code.is_empty() && r.statuses.len() < MAX_LIST && !r.statuses.contains(&code) {
                    r.statuses.push(code);
                }
            }
            "name server" | "nserver" | "nameserver" | "name servers" | "nameservers" => {
                // `ns1.example.com 192.0.2.1`: the host name is the first word.
                let host = value.split_whitespace().next().and_then(host_name);
                if let Some(h) = host.filter(|h| !r.nameservers.contains(h))
                    && r.nameservers.len() < MAX_LIST
                {
                    r.nameservers.push(h);
                }
            }
            "dnssec" => {
                let v = value.trim().to_ascii_lowercase();
                let signed = v.starts_with("signed") || v == "yes" || v == "true";
                r.dnssec
                    .get_or_insert_with(Dnssec::default)
                    .delegation_signed |= signed;
            }
            "registrant name" | "registrant" => set(&mut registrant.name, text(value)),
            "registrant organization" | "registrant organisation" | "org" => {
                set(&mut registrant.organization, text(value));
            }
            "registrant country" | "registrant country code" => {
                set(&mut registrant.country, text(value));
            }
            "registrant email" => set(&mut registrant.email, text(value)),
            _ => {}
        }
    }
    let lower = answer.to_ascii_lowercase();
    if !named && NOT_FOUND.iter().any(|m| lower.contains(m)) {
        return Answer::NotFound;
    }
    if RESERVED.iter().any(|m| lower.contains(m)) && !r.is_reserved() {
        r.statuses.push("reserved".to_owned());
        named = true;
    }
    if !named {
        return Answer::Unrecognised(raw(answer));
    }
    if registrar != Registrar::default() {
        r.registrar = Some(registrar);
    }
    if registrant != Contact::default() {
        r.registrant = Some(registrant);
    }
    Answer::Found(Box::new(r))
}

/// What registries write for a name they do not hold (lowercase).
const NOT_FOUND: [&str; 12] = [
    "no match for",
    "not found",
    "no data found",
    "no entries found",
    "no object found",
    "nothing found",
    "no matching record",
    "status: free",
    "status: available",
    "is available for registration",
    "the queried object does not exist",
    "domain not registered",
];

/// What registries write for a name they hold back from registration (lowercase).
const RESERVED: [&str; 4] = [
    "reserved by the registry",
    "is a reserved name",
    "this domain is reserved",
    "status: reserved",
];

/// `value` as an instant; WHOIS servers write dates in more ways than RDAP.
fn date(value: &str) -> Option<String> {
    super::registration::instant(value).or_else(|| {
        let v = value.trim();
        // `2023-08-14 07:01:44` (UTC by convention) or `2023-08-14 (YYYY-MM-DD)`.
        if v.len() >= 19
            && v.as_bytes()[10] == b' '
            && let Some(t) = v
                .get(..19)
                .and_then(|t| super::registration::instant(&format!("{t}Z")))
        {
            return Some(t);
        }
        if v.len() > 10 && matches!(v.as_bytes()[10], b' ' | b'T') {
            return super::registration::instant(&v[..10]);
        }
        // `14-Aug-2023`, `2023.08.14`, `14.08.2023`.
        let parts: Vec<&str> = v.split(['-', '.', '/']).collect();
        let [a, b, c] = parts[..] else {
            return None;
        };
        let month = |m: &str| {
            const MONTHS: [&str; 12] = [
                "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
            ];
            let m = m.to_ascii_lowercase();
            MONTHS
                .iter()
                .position(|n| m.starts_with(n))
                .map(|i| format!("{:02}", i + 1))
                .or_else(|| (m.len() <= 2 && m.parse::<u8>().is_ok()).then(|| format!("{m:0>2}")))
        };
        let iso = if a.len() == 4 {
            format!("{a}-{}-{c:0>2}", month(b)?)
        } else if c.len() == 4 {
            format!("{c}-{}-{a:0>2}", month(b)?)
        } else {
            return None;
        };
        super::registration::instant(&iso)
    })
}

/// The `key: value` lines of an answer, keys trimmed and lowercased (`>>> Last update`
/// and `%`/`#` comment lines are not fields).
fn fields(answer: &str) -> impl Iterator<Item = (String, &str)> {
    answer.lines().filter_map(|line| {
        let line = line.trim();
        if line.starts_with(['%', '#', '>']) {
            return None;
        }
        let (key, value) = line.split_once(':')?;
        let value = value.trim();
        if value.is_empty() || key.len() > 64 {
            return None;
        }
        Some((key.trim().to_ascii_lowercase(), value))
    })
}

fn raw(answer: &str) -> String {
    let mut end = answer.len().min(MAX_RAW_BYTES);
    while !answer.is_char_boundary(end) {
        end -= 1;
    }
    answer[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gTLD-style answer (the layout of ICANN's registry agreement).
    pub(crate) const GTLD: &str = "   Domain Name: EXAMPLE.IO\r
   Registry Domain ID: D503300000040403495-LRMS\r
   Registrar WHOIS Server: whois.registrar.test\r
   Updated Date: 2025-06-03T09:12:41Z\r
   Creation Date: 2012-04-11T15:25:20Z\r
   Registry Expiry Date: 2027-04-11T15:25:20Z\r
   Registrar: Example Registrar, LLC\r
   Registrar IANA ID: 9999\r
   Registrar Abuse Contact Email: abuse@registrar.test\r
   Domain Status: clientTransferProhibited https://icann.org/epp#clientTransferProhibited\r
   Domain Status: autoRenewPeriod https://icann.org/epp#autoRenewPeriod\r
   Registrant Name: REDACTED FOR PRIVACY\r
   Registrant Organization: \r
   Registrant Country: GB\r
   Name Server: NS1.EXAMPLE.NET\r
   Name Server: ns2.example.net 192.0.2.53\r
   DNSSEC: unsigned\r
>>> Last update of WHOIS database: 2026-01-01T00:00:00Z <<<\r
\r
% The WHOIS service is provided for information purposes only.\r
";

    #[test]
    fn a_gtld_style_answer_is_read_into_the_rdap_fields() {
        let Answer::Found(r) = read_answer("example.io", GTLD) else {
            panic!()
        };
        assert_eq!(r.handle.as_deref(), Some("D503300000040403495-LRMS"));
        assert_eq!(r.created.as_deref(), Some("2012-04-11T15:25:20.000Z"));
        assert_eq!(r.updated.as_deref(), Some("2025-06-03T09:12:41.000Z"));
        assert_eq!(r.expires.as_deref(), Some("2027-04-11T15:25:20.000Z"));
        assert_eq!(r.statuses, ["clientTransferProhibited", "autoRenewPeriod"]);
        assert_eq!(r.nameservers, ["ns1.example.net", "ns2.example.net"]);
        let reg = r.registrar.as_ref().unwrap();
        assert_eq!(reg.name.as_deref(), Some("Example Registrar, LLC"));
        assert_eq!(reg.iana_id.as_deref(), Some("9999"));
        assert_eq!(reg.abuse_email.as_deref(), Some("abuse@registrar.test"));
        // Redacted stays redacted: the registry's placeholder, as served.
        let who = r.registrant.as_ref().unwrap();
        assert_eq!(who.name.as_deref(), Some("REDACTED FOR PRIVACY"));
        assert_eq!(who.organization, None);
        assert_eq!(who.country.as_deref(), Some("GB"));
        assert_eq!(r.dnssec.as_ref().map(|d| d.delegation_signed), Some(false));
    }

    #[test]
    fn not_found_reserved_and_unrecognised() {
        assert_eq!(
            read_answer("free.io", "NOT FOUND\n>>> Last update: x <<<\n"),
            Answer::NotFound
        );
        assert_eq!(
            read_answer("free.io", "No match for \"FREE.IO\".\r\n"),
            Answer::NotFound
        );
        let Answer::Found(r) = read_answer(
            "nic.io",
            "Domain Name: nic.io\nStatus: reserved\nThis domain is reserved by the registry.\n",
        ) else {
            panic!()
        };
        assert!(r.is_reserved());
        let Answer::Found(r) =
            read_answer("held.io", "The name held.io is reserved by the registry.\n")
        else {
            panic!()
        };
        assert!(r.is_reserved());
        let odd = "Welcome! holder: someone\nwe have it since 1999\n";
        assert_eq!(
            read_answer("x.io", odd),
            Answer::Unrecognised(odd.to_owned())
        );
        // An answer about another name is not this name's record.
        assert!(matches!(
            read_answer("x.io", "Domain Name: y.io\nRegistrar: R\n"),
            Answer::Unrecognised(_)
        ));
        let long = "x".repeat(MAX_RAW_BYTES * 2);
        let Answer::Unrecognised(cut) = read_answer("x.io", &long) else {
            panic!()
        };
        assert_eq!(cut.len(), MAX_RAW_BYTES);
    }

    #[test]
    fn iana_names_the_tld_server() {
        let iana = "% IANA WHOIS server\n\ndomain:       IO\n\norganisation: Internet Computer Bureau Limited\n\
                    whois:        whois.nic.io\n\nstatus:       ACTIVE\n";
        assert_eq!(read_referral(iana).as_deref(), Some("whois.nic.io"));
        assert_eq!(
            read_referral("refer: whois.nic.test\n").as_deref(),
            Some("whois.nic.test")
        );
        assert_eq!(read_referral("domain: XX\nstatus: ACTIVE\n"), None);
        assert_eq!(read_referral("whois: not a host!\n"), None);
    }

    #[test]
    fn whois_dates() {
        for (given, want) in [
            ("2023-08-14T07:01:44Z", "2023-08-14T07:01:44.000Z"),
            ("2023-08-14 07:01:44", "2023-08-14T07:01:44.000Z"),
            ("2023-08-14 (YYYY-MM-DD)", "2023-08-14T00:00:00.000Z"),
            ("14-Aug-2023", "2023-08-14T00:00:00.000Z"),
            ("2023.08.14", "2023-08-14T00:00:00.000Z"),
            ("14.08.2023", "2023-08-14T00:00:00.000Z"),
            ("2023-08-14", "2023-08-14T00:00:00.000Z"),
            // A time cut inside a character keeps the date (and does not panic).
            ("2023-08-14 07:01:4é", "2023-08-14T00:00:00.000Z"),
        ] {
            assert_eq!(date(given).as_deref(), Some(want), "{given}");
        }
        for bad in ["", "soon", "31-Feb-2023", "2023-13-01", "1-2-3", "é-é-éééé"] {
            assert_eq!(date(bad), None, "{bad}");
        }
    }

    #[tokio::test]
    async fn the_exchange_is_a_line_out_and_text_until_close() {
        let (mut client, mut server) = tokio::io::duplex(1 << 20);
        let served = tokio::spawn(async move {
            let mut line = Vec::new();
            let mut byte = [0u8; 1];
            while !line.ends_with(b"\r\n") {
                server.read_exact(&mut byte).await.unwrap();
                line.push(byte[0]);
            }
            server.write_all(b"Domain Name: a.io\n").await.unwrap();
            drop(server);
            line
        });
        let answer = exchange(&mut client, "a.io").await.unwrap();
        assert_eq!(served.await.unwrap(), b"a.io\r\n");
        assert_eq!(answer, "Domain Name: a.io\n");
        // A server that sends more than the limit is refused, not held in memory.
        let (mut client, mut server) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            let mut buf = [0u8; 64];
            let _ = server.read(&mut buf).await;
            let chunk = vec![b'x'; 1 << 16];
            for _ in 0..(MAX_ANSWER_BYTES / chunk.len() + 2) {
                if server.write_all(&chunk).await.is_err() {
                    break;
                }
            }
        });
        let err = exchange(&mut client, "a.io").await.unwrap_err();
        assert!(err.to_string().contains("longer than"), "{err}");
    }
}
