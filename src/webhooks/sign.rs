//! Standard Webhooks signatures (<https://www.standardwebhooks.com>).
//!
//! A secret is `whsec_` followed by the base64 of 32 random bytes. A delivery carries
//!
//! ```text
//! webhook-id:        msg_17_04594ca576bd          (the same on every attempt of one message)
//! webhook-timestamp: 1795262400                   (Unix seconds of this attempt)
//! webhook-signature: v1,<base64 of HMAC-SHA256(secret bytes, "{id}.{timestamp}.{body}")>
//! ```
//!
//! After a secret is rotated, deliveries are signed with the new secret *and* the old
//! one for a grace period (space-separated `v1,` signatures, as the specification
//! allows), so a receiver can switch secrets without refusing a delivery.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Prefix of every signing secret.
pub const SECRET_PREFIX: &str = "whsec_";
/// Random bytes in a secret.
pub const SECRET_BYTES: usize = 32;

/// A signing secret: the raw bytes, and the `whsec_` text shown to the subscriber.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A new random secret from the operating system.
    pub fn generate() -> Result<Secret, getrandom::Error> {
        let mut bytes = vec![0u8; SECRET_BYTES];
        getrandom::fill(&mut bytes)?;
        Ok(Secret { bytes })
    }

    /// The secret of its `whsec_` text.
    pub fn parse(text: &str) -> Option<Secret> {
        let b64 = text.strip_prefix(SECRET_PREFIX)?;
        let bytes = STANDARD.decode(b64).ok()?;
        (bytes.len() >= 24 && bytes.len() <= 64).then_some(Secret { bytes })
    }

    /// `whsec_` and the base64 of the bytes.
    pub fn to_text(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.bytes))
    }

    /// `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.bytes).expect("HMAC takes any key");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(itoa::Buffer::new().format(timestamp).as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// The `webhook-signature` value: one `v1,` signature per secret, space-separated.
pub fn signature_header<'a>(
    secrets: impl IntoIterator<Item = &'a Secret>,
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .into_iter()
        .map(|s| s.sign(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specifications_example_signature() {
        // The test vector of the Standard Webhooks reference libraries.
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn secrets_round_trip_and_refuse_bad_text() {
        let s = Secret::generate().unwrap();
        let text = s.to_text();
        assert!(text.starts_with("whsec_") && text.len() == 6 + 44);
        assert_eq!(Secret::parse(&text), Some(s.clone()));
        assert_ne!(Secret::generate().unwrap(), s);
        for bad in ["", "whsec_", "whsec_!!!!", "sk_abc", "whsec_YWJj"] {
            assert!(Secret::parse(bad).is_none(), "{bad}");
        }
        let other = Secret::generate().unwrap();
        let both = signature_header([&s, &other], "msg_1", 5, b"{}");
        let parts: Vec<&str> = both.split(' ').collect();
        assert_eq!(
            parts,
            [s.sign("msg_1", 5, b"{}"), other.sign("msg_1", 5, b"{}")]
        );
        assert_ne!(parts[0], parts[1]);
        assert!(format!("{s:?}").find(&text[6..]).is_none());
    }
}
