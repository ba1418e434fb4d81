//! JSON string escaping, the one piece of JSON writing the project does by hand.
//!
//! Bodies are assembled from pre-rendered fragments, so the only JSON the request path
//! writes itself is punctuation, numbers ([`crate::price`]) and the few strings that come
//! from a request (echoed TLD names, unknown registrar keys). Those go through
//! [`write_str`], which escapes exactly as RFC 8259 requires.

/// Where JSON is written: a buffer (`Vec<u8>`: the builder, every request), or at a
/// snapshot's open the checker's reused buffer, whose fragment is then compared with the
/// bytes already written. The writers of this crate ([`write_str`], [`crate::price::write_cents`],
/// [`crate::time::write_iso_millis`], the fragments of [`crate::query::render`], ...)
/// write through it, so each shape is described once and can be both written and
/// checked.
pub trait Out {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Appends one byte.
    #[inline]
    fn put_byte(&mut self, b: u8) {
        self.put(&[b]);
    }

    /// Makes room for `n` more bytes (a buffer reserves; a checker has nothing to do).
    #[inline]
    fn reserve_for(&mut self, n: usize) {
        let _ = n;
    }

    /// Appends `s` as a quoted JSON string (see [`write_str`]); a checker may remember
    /// the strings it has seen.
    #[inline]
    fn put_str(&mut self, s: &str) {
        escape_str(s, self);
    }

    /// Appends an unsigned integer as a JSON number (see [`write_int`]); a checker may
    /// write small ones from a table.
    #[inline]
    fn put_uint(&mut self, v: u64) {
        self.put(itoa::Buffer::new().format(v).as_bytes());
    }

    /// Appends a price in cents as a JSON number (see [`crate::price::write_cents`]);
    /// a checker may remember the numbers it has rendered.
    #[inline]
    fn put_cents(&mut self, cents: u64) {
        let (buf, at) = crate::price::cents_bytes(cents);
        self.put(&buf[at..]);
    }

    /// Appends `YYYY-MM-DDTHH:MM:SS.mmmZ` (see [`crate::time::write_iso_millis`]); a
    /// checker may remember the dates it has rendered.
    #[inline]
    fn put_iso_millis(&mut self, ms: i64) {
        self.put(&crate::time::iso_millis_bytes(ms));
    }
}

impl Out for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline]
    fn put_byte(&mut self, b: u8) {
        self.push(b);
    }

    #[inline]
    fn reserve_for(&mut self, n: usize) {
        self.reserve(n);
    }
}

/// Appends `s` as a quoted JSON string.
#[inline]
pub fn write_str(s: &str, out: &mut impl Out) {
    out.put_str(s);
}

/// [`write_str`]'s escaping: the default of [`Out::put_str`].
pub fn escape_str<O: Out + ?Sized>(s: &str, out: &mut O) {
    let bytes = s.as_bytes();
    if !bytes.iter().any(|&b| needs_escape(b)) {
        // The common case (registrar names, plan names, TLDs): one copy.
        out.reserve_for(bytes.len() + 2);
        out.put_byte(b'"');
        out.put(bytes);
        out.put_byte(b'"');
        return;
    }
    out.put_byte(b'"');
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
        out.put(&bytes[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.put(b"\\u00");
            out.put_byte(HEX[(b >> 4) as usize]);
            out.put_byte(HEX[(b & 0xf) as usize]);
        } else {
            out.put(esc);
        }
        start = i + 1;
    }
    out.put(&bytes[start..]);
    out.put_byte(b'"');
}

/// Whether `b` is written escaped: quote, backslash and the control characters.
fn needs_escape(b: u8) -> bool {
    ESCAPED[b as usize]
}

/// [`needs_escape`] as a table: one load per byte instead of three comparisons.
static ESCAPED: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(b as u8, b'"' | b'\\' | 0..=0x1f | 0x7f);
        b += 1;
    }
    t
};

/// Writes an unsigned integer as a JSON number.
pub fn write_int(v: u64, out: &mut impl Out) {
    out.put_uint(v);
}

/// Writes a JSON string, or `null` for `None`.
pub fn write_opt_str(s: Option<&str>, out: &mut impl Out) {
    match s {
        Some(s) => write_str(s, out),
        None => out.put(b"null"),
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
