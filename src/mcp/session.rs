//! MCP sessions: the `Mcp-Session-Id` an `initialize` is answered with, and the protocol
//! revision it negotiated.
//!
//! A session carries no rights: every tool call is admitted by the key its own HTTP
//! request carries (docs/MCP.md, "Rules"), so an id that leaks lets nobody do what
//! their key could not. It is a place to remember the revision, and what a `DELETE`
//! ends. The table is bounded: a session idle for [`IDLE_MS`] is forgotten, and when
//! [`MAX_SESSIONS`] are open the one idle longest makes room for a new one.

use std::collections::HashMap;
use std::sync::Mutex;

/// Sessions kept at once: far more than the agents of one deployment, few enough that
/// the table stays a few megabytes (an id and a revision each).
pub const MAX_SESSIONS: usize = 10_000;

/// A session unused this long is forgotten (its next request is answered 404, and the
/// client starts a new one, as the transport says it should): one day.
pub const IDLE_MS: i64 = 24 * 60 * 60 * 1000;

/// One open session.
#[derive(Debug, Clone, Copy)]
struct Session {
    /// The revision `initialize` agreed on.
    version: &'static str,
    /// When a request last named it (ms since the epoch).
    used_ms: i64,
}

/// The open sessions of a server.
#[derive(Debug, Default)]
pub struct Sessions {
    open: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    /// Opens a session that speaks `version`, at `now_ms`; returns its id (32 hex
    /// digits from the operating system's random source).
    pub fn open(&self, version: &'static str, now_ms: i64) -> String {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the operating system's random source works");
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut open = self.lock();
        if open.len() >= MAX_SESSIONS {
            open.retain(|_, s| now_ms - s.used_ms < IDLE_MS);
        }
        if open.len() >= MAX_SESSIONS
            && let Some(oldest) = open
                .iter()
                .min_by_key(|(_, s)| s.used_ms)
                .map(|(id, _)| id.clone())
        {
            open.remove(&oldest);
        }
        open.insert(
            id.clone(),
            Session {
                version,
                used_ms: now_ms,
            },
        );
        id
    }

    /// The revision of the open session `id`, marked used at `now_ms`; `None` when no
    /// such session is open (never opened, ended, or forgotten).
    pub fn touch(&self, id: &str, now_ms: i64) -> Option<&'static str> {
        let mut open = self.lock();
        let session = open.get_mut(id)?;
        if now_ms - session.used_ms >= IDLE_MS {
            open.remove(id);
            return None;
        }
        session.used_ms = now_ms;
        Some(session.version)
    }

    /// Ends the session `id`; whether it was open.
    pub fn end(&self, id: &str) -> bool {
        self.lock().remove(id).is_some()
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_until_it_ends_or_idles() {
        let s = Sessions::default();
        let id = s.open("2025-11-25", 0);
        assert_eq!(id.len(), 32);
        assert_eq!(s.touch(&id, 1), Some("2025-11-25"));
        assert_eq!(s.touch("nope", 1), None);
        assert!(s.end(&id));
        assert!(!s.end(&id));
        assert_eq!(s.touch(&id, 2), None);
        let id = s.open("2025-03-26", 0);
        assert_eq!(s.touch(&id, IDLE_MS), None);
    }

    #[test]
    fn a_full_table_forgets_the_longest_idle() {
        let s = Sessions::default();
        let first = s.open("2025-11-25", 0);
        for i in 1..MAX_SESSIONS as i64 {
            s.open("2025-11-25", i);
        }
        assert_eq!(s.len(), MAX_SESSIONS);
        let new = s.open("2025-11-25", MAX_SESSIONS as i64);
        assert_eq!(s.len(), MAX_SESSIONS);
        assert!(s.touch(&first, MAX_SESSIONS as i64).is_none());
        assert!(s.touch(&new, MAX_SESSIONS as i64).is_some());
    }
}
