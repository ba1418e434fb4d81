//! Sign-in sessions and CSRF tokens: HMAC-SHA256 over short texts, with a server secret.
//!
//! A session cookie holds no API key. It holds the key's id, the key's session
//! generation at sign-in, an expiry and a random nonce, and a MAC over them:
//!
//! ```text
//! v2.<hex of the key id>.<generation>.<expiry, Unix seconds>.<nonce, 32 hex>.<HMAC-SHA256, 64 hex>
//! ```
//!
//! A cookie is valid when its MAC verifies (compared in constant time by
//! [`hmac::Mac::verify_slice`]), it has not expired, its generation is the key's
//! current one ([`SignOuts`]), and its key id is still in the keys file, which the
//! handler checks on every request so that a revoked key's session stops at the next
//! page view. Signing out moves the key to its next generation: every cookie made
//! before, a copied one included, is then a visitor's. The generations are kept in
//! `DATA_DIR/session-generations.json` (written atomically before the sign-out is
//! answered), so a restart does not bring a signed-out cookie back.
//!
//! Cookie names ([`session_cookie`], [`csrf_cookie`]): over HTTPS (a trusted proxy says
//! so) they carry the `__Host-` prefix, which a browser accepts only with `Secure`,
//! `Path=/` and no `Domain`, so no other host, subdomain or plain-HTTP page can plant or
//! overwrite them; over plain HTTP (a local run) the browser would refuse such a cookie,
//! and the plain names are used. A request reads only the names of its own scheme.
//!
//! CSRF: every form carries a token, `HMAC(secret, "csrf" | csrf cookie nonce | session
//! nonce)`, next to a random CSRF cookie (`SameSite=Lax`, `HttpOnly`). A POST is
//! accepted only with the cookie, a token made from it (and from the session it was
//! shown in), and no foreign `Origin`. A page on another site can neither read the
//! cookie nor compute the token, and a `SameSite=Lax` cookie is not sent with its
//! cross-site POST at all.
//!
//! Each use of the secret is domain-separated (`session`, `csrf`), so a MAC made for one
//! purpose never verifies for the other.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError, RwLock};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::access::keys::to_hex;
use crate::files::{self, Mode};

type HmacSha256 = Hmac<Sha256>;

/// Name of the session cookie over plain HTTP.
pub const SESSION_COOKIE: &str = "tldsnap_session";
/// Name of the CSRF cookie over plain HTTP.
pub const CSRF_COOKIE: &str = "tldsnap_csrf";
/// Name of the session cookie over HTTPS.
pub const HOST_SESSION_COOKIE: &str = "__Host-tldsnap_session";
/// Name of the CSRF cookie over HTTPS.
pub const HOST_CSRF_COOKIE: &str = "__Host-tldsnap_csrf";
/// Name of the file of session generations `serve` keeps in `--data-dir`.
pub const GENERATIONS_FILE: &str = "session-generations.json";

/// The session cookie's name for a request that came over HTTPS or not.
pub fn session_cookie(https: bool) -> &'static str {
    if https {
        HOST_SESSION_COOKIE
    } else {
        SESSION_COOKIE
    }
}

/// The CSRF cookie's name for a request that came over HTTPS or not.
pub fn csrf_cookie(https: bool) -> &'static str {
    if https { HOST_CSRF_COOKIE } else { CSRF_COOKIE }
}

/// How long a session lasts after sign-in (7 days).
pub const SESSION_SECS: i64 = 7 * 24 * 3600;
/// Name of the secret file `serve` creates in `--data-dir`.
pub const SECRET_FILE: &str = "session-secret";
/// Fewest bytes a secret may have (256 bits).
pub const MIN_SECRET_BYTES: usize = 32;

/// The server secret that signs sessions and CSRF tokens.
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.write_str("Secret(..)")
    }
}

impl Default for Secret {
    /// A random secret, held in memory only: sessions end when the process does.
    fn default() -> Secret {
        Secret::random()
    }
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    // The OS random source failing is not something a web page can recover from.
    getrandom::fill(&mut b).expect("the operating system's random source works");
    b
}

impl Secret {
    /// 32 random bytes from the operating system.
    pub fn random() -> Secret {
        Secret(random_bytes::<32>().to_vec())
    }

    /// A secret from a file's text: at least [`MIN_SECRET_BYTES`] bytes after trimming
    /// surrounding whitespace (the file `serve` writes holds 64 hex digits).
    pub fn from_text(text: &[u8]) -> Result<Secret, String> {
        let trimmed = text.trim_ascii();
        if trimmed.len() < MIN_SECRET_BYTES {
            return Err(format!(
                "a session secret must hold at least {MIN_SECRET_BYTES} bytes, this one has {}",
                trimmed.len()
            ));
        }
        Ok(Secret(trimmed.to_vec()))
    }

    /// Reads `--session-secret-file`. The file must not be readable by group or others.
    pub fn read_file(path: &Path) -> Result<Secret, String> {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path)
            .map_err(|e| format!("cannot read the session secret {}: {e}", path.display()))?;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(format!(
                "the session secret {} is readable by other users; make it owner-only (chmod 600)",
                path.display()
            ));
        }
        let text = std::fs::read(path)
            .map_err(|e| format!("cannot read the session secret {}: {e}", path.display()))?;
        Secret::from_text(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The secret kept in `dir` ([`SECRET_FILE`]), created (owner-only, written
    /// atomically) when missing, so sessions survive restarts.
    pub fn load_or_create(dir: &Path) -> Result<Secret, String> {
        let path = dir.join(SECRET_FILE);
        match std::fs::metadata(&path) {
            Ok(_) => Secret::read_file(&path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                files::create_dir(dir, Mode::Private)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                let mut text = to_hex(&random_bytes::<32>());
                text.push('\n');
                files::write_atomic_mode(&path, text.as_bytes(), Mode::Private)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Secret::from_text(text.as_bytes())
            }
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn mac(&self, domain: &str, parts: &[&[u8]]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(domain.as_bytes());
        for p in parts {
            // Length-prefixed, so that no two different part lists hash the same bytes.
            mac.update(&(p.len() as u64).to_le_bytes());
            mac.update(p);
        }
        mac
    }

    /// The cookie value of `session`.
    pub fn seal(&self, session: &Session) -> String {
        let payload = session.payload();
        let tag = self.mac("session", &[payload.as_bytes()]).finalize();
        format!("{payload}.{}", to_hex(&tag.into_bytes()))
    }

    /// The session in a cookie value, if its MAC verifies and it has not expired at
    /// `now_secs`.
    pub fn open(&self, cookie: &str, now_secs: i64) -> Option<Session> {
        let (payload, tag) = cookie.rsplit_once('.')?;
        let tag = from_hex(tag)?;
        self.mac("session", &[payload.as_bytes()])
            .verify_slice(&tag)
            .ok()?;
        let session = Session::parse(payload)?;
        (session.expires > now_secs).then_some(session)
    }

    /// The CSRF token of a form shown to the holder of the CSRF cookie `csrf_nonce`,
    /// inside the session whose nonce is `session_nonce` (if signed in).
    pub fn csrf_token(&self, csrf_nonce: &str, session_nonce: Option<&str>) -> String {
        let tag = self
            .mac(
                "csrf",
                &[
                    csrf_nonce.as_bytes(),
                    session_nonce.unwrap_or("").as_bytes(),
                ],
            )
            .finalize();
        to_hex(&tag.into_bytes())
    }

    /// Whether `token` is the CSRF token for these nonces (constant-time comparison).
    pub fn check_csrf(&self, token: &str, csrf_nonce: &str, session_nonce: Option<&str>) -> bool {
        let Some(tag) = from_hex(token) else {
            return false;
        };
        self.mac(
            "csrf",
            &[
                csrf_nonce.as_bytes(),
                session_nonce.unwrap_or("").as_bytes(),
            ],
        )
        .verify_slice(&tag)
        .is_ok()
    }
}

/// A new random nonce: 32 hex digits (128 bits).
pub fn new_nonce() -> String {
    to_hex(&random_bytes::<16>())
}

/// Whether `s` looks like a nonce this module made (so a cookie is not echoed blindly).
pub fn is_nonce(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// A signed-in session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The id of the API key that signed in (never the key).
    pub key_id: String,
    /// The key's session generation at sign-in ([`SignOuts`]).
    pub generation: u64,
    /// When it ends, Unix seconds.
    pub expires: i64,
    /// Random, per sign-in: binds CSRF tokens to this session.
    pub nonce: String,
}

impl Session {
    /// A new session for `key_id` in its session `generation`, from `now_secs` for
    /// [`SESSION_SECS`].
    pub fn new(key_id: &str, generation: u64, now_secs: i64) -> Session {
        Session {
            key_id: key_id.to_owned(),
            generation,
            expires: now_secs + SESSION_SECS,
            nonce: new_nonce(),
        }
    }

    fn payload(&self) -> String {
        format!(
            "v2.{}.{}.{}.{}",
            to_hex(self.key_id.as_bytes()),
            self.generation,
            self.expires,
            self.nonce
        )
    }

    fn parse(payload: &str) -> Option<Session> {
        let mut parts = payload.split('.');
        let (Some("v2"), Some(id), Some(generation), Some(expires), Some(nonce), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let key_id = String::from_utf8(from_hex(id)?).ok()?;
        let generation = generation.parse().ok()?;
        let expires = expires.parse().ok()?;
        is_nonce(nonce).then(|| Session {
            key_id,
            generation,
            expires,
            nonce: nonce.to_owned(),
        })
    }
}

/// The session generation of each key id: a session is good only in its key's current
/// generation, and signing out moves the key to the next one, ending every session made
/// before (in every browser the key signed in with). One number per key that ever
/// signed out, so what is kept is bounded by the keys file, however many sessions
/// there were.
///
/// With a file ([`SignOuts::load_or_create`]) every sign-out is written
/// ([`files::write_atomic_mode`], owner-only) before it is answered, so a restart keeps
/// it; without one ([`SignOuts::default`]) they are held in memory.
#[derive(Debug, Default)]
pub struct SignOuts {
    generations: RwLock<HashMap<String, u64>>,
    path: Option<PathBuf>,
    /// Held while the file is written, so that the last writer writes the latest map.
    writing: Mutex<()>,
}

impl SignOuts {
    /// The generations kept in `dir` ([`GENERATIONS_FILE`]); none yet when the file is
    /// missing. A file that cannot be read is an error: ignoring it would bring back
    /// every session signed out.
    pub fn load_or_create(dir: &Path) -> Result<SignOuts, String> {
        let path = dir.join(GENERATIONS_FILE);
        let generations = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice::<HashMap<String, u64>>(&bytes).map_err(|e| {
                format!(
                    "{}: not a map of API key ids to session generations: {e}",
                    path.display()
                )
            })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                files::create_dir(dir, Mode::Private)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                HashMap::new()
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        Ok(SignOuts {
            generations: RwLock::new(generations),
            path: Some(path),
            writing: Mutex::new(()),
        })
    }

    /// The current session generation of `key_id` (0 until it first signs out).
    pub fn generation(&self, key_id: &str) -> u64 {
        let generations = self
            .generations
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        generations.get(key_id).copied().unwrap_or(0)
    }

    /// Whether `session` is in its key's current generation.
    pub fn is_current(&self, session: &Session) -> bool {
        self.generation(&session.key_id) == session.generation
    }

    /// Ends every session of `key_id`: from now on only a new sign-in is good. In force
    /// at once; written to the file (when there is one) before this returns, which
    /// blocks on the disk: call it off the serving threads.
    pub fn end_sessions(&self, key_id: &str) -> io::Result<()> {
        {
            let mut generations = self
                .generations
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            *generations.entry(key_id.to_owned()).or_insert(0) += 1;
        }
        let Some(path) = &self.path else {
            return Ok(());
        };
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let sorted: BTreeMap<String, u64> = self
            .generations
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(k, g)| (k.clone(), *g))
            .collect();
        let mut bytes = serde_json::to_vec_pretty(&sorted).map_err(io::Error::other)?;
        bytes.push(b'\n');
        files::write_atomic_mode(path, &bytes, Mode::Private)
    }
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    if s.is_empty() || !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    s.as_bytes()
        .chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

/// The value of cookie `name` in a request's `Cookie` headers, if it occurs once
/// (a cookie sent twice, e.g. planted for a parent domain, is treated as absent).
pub fn cookie<'a>(headers: impl Iterator<Item = &'a [u8]>, name: &str) -> Option<&'a str> {
    let mut found = None;
    for header in headers {
        let Ok(header) = std::str::from_utf8(header) else {
            continue;
        };
        for pair in header.split(';') {
            let Some((n, v)) = pair.trim().split_once('=') else {
                continue;
            };
            if n == name {
                if found.is_some() {
                    return None;
                }
                found = Some(v.trim_matches('"'));
            }
        }
    }
    found
}

/// A `Set-Cookie` value: `HttpOnly`, `SameSite=Lax`, `Path=/`, `Secure` when asked.
/// `max_age` 0 deletes the cookie.
pub fn set_cookie(name: &str, value: &str, max_age: i64, secure: bool) -> String {
    format!(
        "{name}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax{}",
        if secure { "; Secure" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_session_opens_until_it_expires() {
        let secret = Secret::random();
        let s = Session::new("key_0123456789ab", 3, 1_000);
        let cookie = secret.seal(&s);
        assert!(!cookie.contains("key_"), "the id is hex-encoded: {cookie}");
        assert_eq!(secret.open(&cookie, 1_000), Some(s.clone()));
        assert_eq!(secret.open(&cookie, 1_000 + SESSION_SECS - 1), Some(s));
        assert_eq!(secret.open(&cookie, 1_000 + SESSION_SECS), None);
    }

    #[test]
    fn a_changed_cookie_or_another_secret_does_not_open() {
        let secret = Secret::random();
        let cookie = secret.seal(&Session::new("key_a", 0, 0));
        assert_eq!(Secret::random().open(&cookie, 0), None);
        // Every single-character change is refused.
        for i in 0..cookie.len() {
            let mut bytes = cookie.clone().into_bytes();
            bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
            let changed = String::from_utf8(bytes).unwrap();
            if changed != cookie {
                assert_eq!(secret.open(&changed, 0), None, "{changed}");
            }
        }
        // A longer expiry with the old MAC.
        let forged = cookie.replacen(&format!(".{}.", SESSION_SECS), ".99999999999.", 1);
        assert_ne!(forged, cookie);
        assert_eq!(secret.open(&forged, 0), None);
        for junk in ["", ".", "v1", "v2.....", "v2.zz.0.1.x.00", "a.b.c.d.e.f.g"] {
            assert_eq!(secret.open(junk, 0), None, "{junk}");
        }
    }

    #[test]
    fn csrf_tokens_bind_cookie_and_session() {
        let secret = Secret::random();
        let (a, b) = (new_nonce(), new_nonce());
        let t = secret.csrf_token(&a, None);
        assert!(secret.check_csrf(&t, &a, None));
        assert!(!secret.check_csrf(&t, &b, None));
        assert!(!secret.check_csrf(&t, &a, Some(&b)));
        let ts = secret.csrf_token(&a, Some(&b));
        assert!(secret.check_csrf(&ts, &a, Some(&b)));
        assert!(!secret.check_csrf(&ts, &a, None));
        assert!(!Secret::random().check_csrf(&t, &a, None));
        for junk in ["", "00", &t[..62], &t.to_uppercase()] {
            assert!(!secret.check_csrf(junk, &a, None), "{junk}");
        }
        // A session MAC is not a CSRF token for the same text, and the other way round.
        let s = Session::new("k", 0, 0);
        let cookie = secret.seal(&s);
        let mac = cookie.rsplit_once('.').unwrap().1;
        assert!(!secret.check_csrf(mac, &s.payload(), None));
    }

    #[test]
    fn cookies_are_found_by_exact_name_once() {
        let h = [&b"a=1; tldsnap_session=xyz; b=2"[..], b"c=3"];
        assert_eq!(cookie(h.iter().copied(), "tldsnap_session"), Some("xyz"));
        assert_eq!(cookie(h.iter().copied(), "c"), Some("3"));
        assert_eq!(cookie(h.iter().copied(), "tldsnap"), None);
        let twice = [&b"x=1"[..], b"x=2"];
        assert_eq!(cookie(twice.iter().copied(), "x"), None);
        assert_eq!(
            set_cookie("n", "v", 0, true),
            "n=v; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure"
        );
    }

    #[test]
    fn a_cookie_of_another_generation_does_not_open_as_current() {
        let secret = Secret::random();
        let s = Session::new("key_a", 0, 0);
        let cookie = secret.seal(&s);
        // A generation changed in the cookie breaks its MAC.
        let bumped = cookie.replacen(".0.", ".1.", 1);
        assert_ne!(bumped, cookie);
        assert_eq!(secret.open(&bumped, 0), None);
        let dir = std::env::temp_dir().join(format!("tldsnap-signouts-{}", new_nonce()));
        let outs = SignOuts::load_or_create(&dir).unwrap();
        assert!(outs.is_current(&secret.open(&cookie, 0).unwrap()));
        outs.end_sessions("key_a").unwrap();
        assert!(!outs.is_current(&s), "signed out");
        assert!(
            outs.is_current(&Session::new("key_a", 1, 0)),
            "a new sign-in"
        );
        assert!(outs.is_current(&Session::new("key_b", 0, 0)), "another key");
        // Kept across a restart, owner-only.
        let again = SignOuts::load_or_create(&dir).unwrap();
        assert_eq!(again.generation("key_a"), 1);
        assert!(!again.is_current(&s));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(GENERATIONS_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A damaged file is refused, not read as "no sign-outs".
        std::fs::write(dir.join(GENERATIONS_FILE), b"{\"key_a\": -1}").unwrap();
        assert!(SignOuts::load_or_create(&dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
        // In memory: in force, not kept.
        let mem = SignOuts::default();
        mem.end_sessions("key_a").unwrap();
        assert_eq!(mem.generation("key_a"), 1);
    }

    #[test]
    fn cookie_names_follow_the_scheme() {
        assert_eq!(session_cookie(true), "__Host-tldsnap_session");
        assert_eq!(csrf_cookie(true), "__Host-tldsnap_csrf");
        assert_eq!(session_cookie(false), SESSION_COOKIE);
        assert_eq!(csrf_cookie(false), CSRF_COOKIE);
    }

    #[test]
    fn secrets_come_from_private_files_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tldsnap-secret-{}", new_nonce()));
        let s1 = Secret::load_or_create(&dir).unwrap();
        let path = dir.join(SECRET_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let s2 = Secret::load_or_create(&dir).unwrap();
        assert_eq!(s1.0, s2.0, "the second start reads the same secret");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(Secret::read_file(&path).unwrap_err().contains("chmod 600"));
        assert!(Secret::from_text(b"  short  ").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
