//! JSON string escaping, the one piece of JSON writing the project does by hand.
//!
//! Bodies are assembled from pre-rendered fragments, so the only JSON the request path
//! writes itself is punctuation, numbers ([`crate::price`]) and the few strings that come
//! from a request (echoed TLD names, unknown registrar keys). Those go through
//! [`write_str`], which escapes exactly as RFC 8259 requires.

/// Appends `s` as a quoted JSON string.
pub fn write_str(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    if !bytes.iter().any(|&b| needs_escape(b)) {
        // The common case (registrar names, plan names, TLDs): one copy.
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f | 0x7f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xf) as usize]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether `b` is written escaped: quote, backslash and the control characters.
fn needs_escape(b: u8) -> bool {
    matches!(b, b'"' | b'\\' | 0..=0x1f | 0x7f)
}

/// Writes an unsigned integer as a JSON number.
pub fn write_int(v: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Writes a JSON string, or `null` for `None`.
pub fn write_opt_str(s: Option<&str>, out: &mut Vec<u8>) {
    match s {
        Some(s) => write_str(s, out),
        None => out.extend_from_slice(b"null"),
    }
}

/// `s` as a quoted JSON string.
pub fn quoted(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_str(s, &mut out);
    String::from_utf8(out).expect("escaping keeps UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_serde_json_reads() {
        for s in [
            "plain",
            "Bravo \"Domains\" & Co",
            "back\\slash",
            "nl\nnul\0bell\u{7}del\u{7f}",
            "Délta 닷컴",
            "",
        ] {
            let q = quoted(s);
            let back: String = serde_json::from_str(&q).unwrap();
            assert_eq!(back, s);
        }
        assert_eq!(quoted("a\"b"), r#""a\"b""#);
        assert_eq!(quoted("\u{1}"), r#""\u0001""#);
    }
}
