//! The stylesheet, the script and the icon: built into the binary, served under names
//! that carry a hash of their content (`/static/site.3f9a1c0d2b7e4a51.css`), so a
//! browser may keep them for a year (`immutable`) and a new build is fetched at once.

use std::sync::OnceLock;

use bytes::Bytes;

/// One static file.
#[derive(Debug)]
pub struct Asset {
    /// The URL path, with the content hash.
    pub path: String,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The bytes.
    pub body: Bytes,
    /// The bytes, gzip-compressed.
    pub gzip: Bytes,
    /// `ETag` (the content hash, quoted).
    pub etag: String,
}

/// Every static file.
#[derive(Debug)]
pub struct Assets {
    /// `site.css`.
    pub css: Asset,
    /// `site.js`.
    pub js: Asset,
    /// `icon.svg`.
    pub icon: Asset,
    /// A hash of all three, part of every page's `ETag` (a page names them).
    pub version: String,
}

fn asset(stem: &str, ext: &str, content_type: &'static str, body: &'static [u8]) -> Asset {
    let hash = format!("{:016x}", twox_hash::XxHash3_64::oneshot(body));
    Asset {
        path: format!("/static/{stem}.{hash}.{ext}"),
        content_type,
        body: Bytes::from_static(body),
        gzip: Bytes::from(super::cache::gzip(body)),
        etag: format!("\"{hash}\""),
    }
}

/// The static files, hashed and compressed once.
pub fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let css = asset(
            "site",
            "css",
            "text/css; charset=utf-8",
            include_bytes!("assets/site.css"),
        );
        let js = asset(
            "site",
            "js",
            "text/javascript; charset=utf-8",
            include_bytes!("assets/site.js"),
        );
        let icon = asset(
            "icon",
            "svg",
            "image/svg+xml",
            include_bytes!("assets/icon.svg"),
        );
        let version = format!(
            "{:08x}",
            twox_hash::XxHash3_64::oneshot(
                format!("{}{}{}", css.path, js.path, icon.path).as_bytes()
            ) as u32
        );
        Assets {
            css,
            js,
            icon,
            version,
        }
    })
}

/// The asset at a request path (the hash must match: an old name is a 404, so a stale
/// page cannot pin a stale file under a year-long cache header).
pub fn find(path: &str) -> Option<&'static Asset> {
    let a = assets();
    [&a.css, &a.js, &a.icon]
        .into_iter()
        .find(|x| x.path == path)
}
