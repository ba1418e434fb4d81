//! The embedded durable usage store: one small file under the data directory.
//!
//! Counting happens in memory, in one atomic per key ([`super::month::MonthCounter`]), so a
//! request never touches the disk. A background task writes every key's count for its
//! month to `DATA_DIR/usage.json` once a second when something changed, publishing it
//! atomically (temporary file, fsync, rename, directory fsync), and [`super::Access::shutdown`]
//! writes it one last time. So a clean shutdown loses nothing and `kill -9` loses at most
//! the counts of the last second; a half-written file is impossible.
//!
//! ```json
//! {"format": "tldsnap-usage", "version": 1,
//!  "keys": {"key_3f9a1c0d2b7e": {"month": "2026-11", "used": 42}}}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::AccessError;
use super::month::{month_label, parse_month_label};

/// Name of the usage file inside the data directory.
pub const USAGE_FILE: &str = "usage.json";
const FORMAT: &str = "tldsnap-usage";
const VERSION: u32 = 1;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    format: String,
    version: u32,
    keys: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    month: String,
    used: u64,
}

/// Usage by key id: (month number, credits used in that month).
pub type UsageMap = BTreeMap<String, (u32, u64)>;

/// Reads `DIR/usage.json`; a missing file is no usage yet.
pub fn read(dir: &Path) -> Result<UsageMap, AccessError> {
    let path = dir.join(USAGE_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(UsageMap::new()),
        Err(e) => {
            return Err(AccessError::Io {
                path,
                action: "read the usage file",
                source: e,
            });
        }
    };
    parse(&text).map_err(|message| AccessError::UsageFile { path, message })
}

fn parse(text: &str) -> Result<UsageMap, String> {
    let doc: Doc = serde_json::from_str(text).map_err(|e| {
        format!("not a tldsnap usage file ({e}); move it aside to start counting from zero")
    })?;
    if doc.format != FORMAT {
        return Err(format!("format is {:?}, expected {FORMAT:?}", doc.format));
    }
    if doc.version != VERSION {
        return Err(format!(
            "version {} is not supported (expected {VERSION})",
            doc.version
        ));
    }
    let mut out = UsageMap::new();
    for (id, e) in doc.keys {
        let month = parse_month_label(&e.month)
            .ok_or_else(|| format!("key {id:?}: month {:?} is not YYYY-MM", e.month))?;
        out.insert(id, (month, e.used));
    }
    Ok(out)
}

/// The bytes of a usage file holding `usage`.
pub fn encode(usage: &UsageMap) -> Vec<u8> {
    let mut counts: Vec<(&str, u32, u64)> = usage
        .iter()
        .map(|(id, &(month, used))| (id.as_str(), month, used))
        .collect();
    encode_counts(&mut counts)
}

/// The bytes of a usage file holding `counts` (key id, month number, credits used),
/// which it sorts by id (ids are unique). Written directly, one line a key: the
/// background task writes the file once a second, and with 10,000 keys a `BTreeMap` of
/// owned strings and serde's pretty printer cost ~100 M instructions each time.
pub fn encode_counts<K: AsRef<str>>(counts: &mut [(K, u32, u64)]) -> Vec<u8> {
    counts.sort_unstable_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
    let mut out = Vec::with_capacity(64 + counts.len() * 64);
    out.extend_from_slice(b"{\"format\": \"");
    out.extend_from_slice(FORMAT.as_bytes());
    out.extend_from_slice(b"\", \"version\": ");
    crate::json::write_int(VERSION.into(), &mut out);
    out.extend_from_slice(b", \"keys\": {");
    for (i, (id, month, used)) in counts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"\n  ");
        crate::json::write_str(id.as_ref(), &mut out);
        out.extend_from_slice(b": {\"month\": \"");
        out.extend_from_slice(month_label(*month).as_bytes());
        out.extend_from_slice(b"\", \"used\": ");
        crate::json::write_int(*used, &mut out);
        out.push(b'}');
    }
    out.extend_from_slice(b"\n}}\n");
    out
}

/// Where the usage file of a data directory lives, creating the directory if needed.
pub fn prepare(dir: &Path) -> Result<PathBuf, AccessError> {
    crate::files::create_dir(dir, crate::files::Mode::Private).map_err(|e| AccessError::Io {
        path: dir.to_path_buf(),
        action: "create the data directory",
        source: e,
    })?;
    // A crash in the middle of a write leaves its temporary file behind; the directory
    // belongs to this process, so such leftovers are removed.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if crate::files::is_leftover_of(&e.file_name().to_string_lossy(), USAGE_FILE) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(dir.join(USAGE_FILE))
}

/// Publishes `bytes` as the usage file at `path` (atomic, fsynced).
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), AccessError> {
    crate::files::write_atomic_mode(path, bytes, crate::files::Mode::Private).map_err(|e| {
        AccessError::Io {
            path: path.to_path_buf(),
            action: "write the usage file",
            source: e,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let mut m = UsageMap::new();
        m.insert("key_a".into(), (24_310, 7));
        m.insert("we\"ird".into(), (24_311, 0));
        let text = String::from_utf8(encode(&m)).unwrap();
        assert_eq!(parse(&text).unwrap(), m);
        assert_eq!(
            text,
            "{\"format\": \"tldsnap-usage\", \"version\": 1, \"keys\": {\n  \
             \"key_a\": {\"month\": \"2025-11\", \"used\": 7},\n  \
             \"we\\\"ird\": {\"month\": \"2025-12\", \"used\": 0}\n}}\n"
        );
        assert_eq!(
            parse(std::str::from_utf8(&encode(&UsageMap::new())).unwrap()).unwrap(),
            UsageMap::new()
        );
        assert!(parse("").unwrap_err().contains("move it aside"));
        assert!(
            parse(r#"{"format":"tldsnap-usage","version":9,"keys":{}}"#)
                .unwrap_err()
                .contains("version 9")
        );
        assert!(
            parse(
                r#"{"format":"tldsnap-usage","version":1,"keys":{"a":{"month":"2026-1","used":1}}}"#
            )
            .unwrap_err()
            .contains("YYYY-MM")
        );
    }
}
