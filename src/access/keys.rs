//! The keys file: who may call the client endpoints, and on which plan.
//!
//! A JSON list of records; the raw key is never stored, only its SHA-256:
//!
//! ```json
//! [{"id": "key_3f9a1c0d2b7e", "plan": "pro", "key_sha256": "9f86d0…", "label": "acme"}]
//! ```
//!
//! Keys are `tsk_` followed by 48 hex digits (192 bits from the operating system's
//! random source), printed once by `tldsnap keys add`. The server hashes the presented
//! key and compares digests in constant time ([`ct_eq`]). The file is rewritten
//! atomically (temporary file, fsync, rename), so a server reloading it on SIGHUP reads
//! either the old or the new list, never half of one.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::AccessError;
use super::plans::Plans;

/// Prefix of every generated key, so a leaked key is recognisable in logs and scanners.
pub const KEY_PREFIX: &str = "tsk_";

/// One line of the keys file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRecord {
    /// Stable, public identifier (shown by `keys list`, used by `keys revoke`, and the
    /// name under which usage is counted).
    pub id: String,
    /// Name of the key's plan.
    pub plan: String,
    /// Lowercase hex SHA-256 of the raw key.
    pub key_sha256: String,
    /// Free text for the operator.
    #[serde(default)]
    pub label: String,
}

impl KeyRecord {
    /// The record's hash as bytes, or why it is not a SHA-256 in hex.
    pub fn digest(&self) -> Result<[u8; 32], String> {
        parse_hex32(&self.key_sha256).ok_or_else(|| {
            format!(
                "key \"{}\": key_sha256 must be 64 hex digits (a SHA-256), not {:?}",
                self.id, self.key_sha256
            )
        })
    }
}

/// The whole keys file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeysFile {
    /// The records, in file order.
    pub keys: Vec<KeyRecord>,
}

impl KeysFile {
    /// Reads and checks the file at `path` (it must exist). `plans`, when given, is used to
    /// check that every record names a known plan.
    pub fn load(path: &Path, plans: Option<&Plans>) -> Result<KeysFile, AccessError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                AccessError::KeysFile {
                    path: path.to_path_buf(),
                    message:
                        "no such file (create it with `tldsnap keys add --keys FILE --plan PLAN`)"
                            .into(),
                }
            } else {
                AccessError::Io {
                    path: path.to_path_buf(),
                    action: "read the keys file",
                    source: e,
                }
            }
        })?;
        Self::parse(&text, plans).map_err(|message| AccessError::KeysFile {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Like [`KeysFile::load`], but a missing file is an empty list (for `keys add`).
    pub fn load_or_empty(path: &Path, plans: Option<&Plans>) -> Result<KeysFile, AccessError> {
        if !path.exists() {
            return Ok(KeysFile::default());
        }
        Self::load(path, plans)
    }

    /// Parses and checks the file's text; the error is the message alone.
    pub fn parse(text: &str, plans: Option<&Plans>) -> Result<KeysFile, String> {
        let keys: Vec<KeyRecord> = serde_json::from_str(text).map_err(|e| {
            format!(
                "not a JSON list of {{\"id\", \"plan\", \"key_sha256\", \"label\"}} records: {e}"
            )
        })?;
        let file = KeysFile { keys };
        file.check(plans)?;
        Ok(file)
    }

    /// Checks ids (non-empty, unique), hashes (64 hex digits, unique) and plans (known).
    pub fn check(&self, plans: Option<&Plans>) -> Result<(), String> {
        let mut ids = HashSet::new();
        let mut hashes = HashSet::new();
        for (i, k) in self.keys.iter().enumerate() {
            if k.id.is_empty() || k.id.len() > 128 || k.id.chars().any(|c| c.is_control()) {
                return Err(format!(
                    "record {}: id must be 1 to 128 printable characters",
                    i + 1
                ));
            }
            if !ids.insert(k.id.as_str()) {
                return Err(format!("key \"{}\" appears twice", k.id));
            }
            let digest = k.digest()?;
            if !hashes.insert(digest) {
                return Err(format!(
                    "key \"{}\" has the same key_sha256 as an earlier record",
                    k.id
                ));
            }
            if let Some(plans) = plans
                && plans.get(&k.plan).is_none()
            {
                return Err(format!(
                    "key \"{}\": unknown plan \"{}\" (known: {})",
                    k.id,
                    k.plan,
                    plans.names().join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Writes the file atomically (temporary file in the same directory, fsync, rename).
    pub fn save(&self, path: &Path) -> Result<(), AccessError> {
        let mut text =
            serde_json::to_string_pretty(&self.keys).map_err(|e| AccessError::KeysFile {
                path: path.to_path_buf(),
                message: format!("cannot encode: {e}"),
            })?;
        text.push('\n');
        crate::files::write_atomic_mode(path, text.as_bytes(), crate::files::Mode::Private).map_err(
            |e| AccessError::Io {
                path: path.to_path_buf(),
                action: "write the keys file",
                source: e,
            },
        )
    }

    /// Adds a new random key on `plan`; returns the raw key (to show once) and its record.
    pub fn add(&mut self, plan: &str, label: &str) -> Result<(String, KeyRecord), AccessError> {
        let raw = generate_key()?;
        let mut id;
        loop {
            id = generate_id()?;
            if !self.keys.iter().any(|k| k.id == id) {
                break;
            }
        }
        let record = KeyRecord {
            id,
            plan: plan.to_string(),
            key_sha256: to_hex(&hash_key(raw.as_bytes())),
            label: label.to_string(),
        };
        self.keys.push(record.clone());
        Ok((raw, record))
    }

    /// Removes the key `id`; returns it, or `None` when there is no such key.
    pub fn revoke(&mut self, id: &str) -> Option<KeyRecord> {
        let pos = self.keys.iter().position(|k| k.id == id)?;
        Some(self.keys.remove(pos))
    }
}

/// SHA-256 of a raw key.
pub fn hash_key(raw: &[u8]) -> [u8; 32] {
    Sha256::digest(raw).into()
}

/// Compares two secrets (digests, cached raw keys) in time that does not depend on where
/// they differ: the one constant-time comparison of the crate. Slices of different
/// lengths are unequal (their lengths are not secret).
///
/// The differences of all words are OR-ed together with no branch on the data, and only
/// that one word is compared, through `subtle` (whose optimisation barrier keeps the
/// compiler from turning it into an early exit). `subtle`'s own slice comparison puts a
/// barrier on every byte: ~500 instructions for a 52-byte key on every request, against
/// ~60 here.
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a_words, a_tail) = a.as_chunks::<8>();
    let (b_words, b_tail) = b.as_chunks::<8>();
    let mut diff = 0u64;
    for (x, y) in a_words.iter().zip(b_words) {
        diff |= u64::from_ne_bytes(*x) ^ u64::from_ne_bytes(*y);
    }
    for (x, y) in a_tail.iter().zip(b_tail) {
        diff |= u64::from(x ^ y);
    }
    subtle::ConstantTimeEq::ct_eq(&diff, &0).into()
}

fn random_hex(bytes: usize) -> Result<String, AccessError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| AccessError::Random(e.to_string()))?;
    Ok(to_hex(&buf))
}

/// A new random key: `tsk_` + 48 hex digits (192 bits).
pub fn generate_key() -> Result<String, AccessError> {
    Ok(format!("{KEY_PREFIX}{}", random_hex(24)?))
}

/// A new random key id: `key_` + 12 hex digits.
pub fn generate_id() -> Result<String, AccessError> {
    Ok(format!("key_{}", random_hex(6)?))
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

fn parse_hex32(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let nib = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = (nib(b[2 * i])? << 4) | nib(b[2 * i + 1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_a_known_vector() {
        assert_eq!(
            to_hex(&hash_key(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn generated_keys_are_random_and_well_formed() {
        let a = generate_key().unwrap();
        let b = generate_key().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(KEY_PREFIX) && a.len() == 52, "{a}");
        assert!(generate_id().unwrap().starts_with("key_"));
    }

    #[test]
    fn ct_eq_compares_whole_digests() {
        let a = hash_key(b"x");
        let mut b = a;
        assert!(ct_eq(&a, &b));
        b[31] ^= 1;
        assert!(!ct_eq(&a, &b));
        assert!(!ct_eq(&a, &a[..31]));
        // Every byte counts, in the words and in the tail after them.
        let key = b"tsk_0123456789abcdef0123456789abcdef0123456789abcdef";
        for i in 0..key.len() {
            let mut other = *key;
            other[i] ^= 0x20;
            assert!(!ct_eq(key, &other), "byte {i}");
            assert!(ct_eq(&key[..i], &key[..i]));
        }
        assert!(ct_eq(b"", b""));
    }

    #[test]
    fn add_revoke_and_round_trip() {
        let dir = std::env::temp_dir().join(format!("tldsnap-keys-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys.json");
        let mut f = KeysFile::load_or_empty(&path, None).unwrap();
        let (raw, rec) = f.add("pro", "acme").unwrap();
        assert_eq!(rec.key_sha256, to_hex(&hash_key(raw.as_bytes())));
        f.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&raw), "the raw key must never be stored");
        let mut back = KeysFile::load(&path, Some(&Plans::default())).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.revoke(&rec.id).map(|r| r.id), Some(rec.id.clone()));
        assert!(back.revoke(&rec.id).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_files_are_refused_with_reasons() {
        let h = "a".repeat(64);
        let plans = Plans::default();
        let cases = [
            ("{}".to_string(), "JSON list"),
            (
                format!(r#"[{{"id":"a","plan":"gold","key_sha256":"{h}","label":""}}]"#),
                "unknown plan \"gold\"",
            ),
            (
                format!(
                    r#"[{{"id":"a","plan":"pro","key_sha256":"{h}"}},{{"id":"a","plan":"pro","key_sha256":"{}"}}]"#,
                    "b".repeat(64)
                ),
                "appears twice",
            ),
            (
                r#"[{"id":"a","plan":"pro","key_sha256":"xyz"}]"#.to_string(),
                "64 hex digits",
            ),
            (
                format!(
                    r#"[{{"id":"a","plan":"pro","key_sha256":"{h}"}},{{"id":"b","plan":"pro","key_sha256":"{h}"}}]"#
                ),
                "same key_sha256",
            ),
            (
                format!(r#"[{{"id":"","plan":"pro","key_sha256":"{h}"}}]"#),
                "id must be",
            ),
            (
                format!(r#"[{{"id":"a","plan":"pro","key_sha256":"{h}","extra":1}}]"#),
                "unknown field",
            ),
        ];
        for (text, want) in cases {
            let err = KeysFile::parse(&text, Some(&plans)).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
