//! The router: any path finds at most one route, and what it finds is that route.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tldsnap::app::routes as router;
use tldsnap::http::params;

fuzz_target!(|data: &[u8]| {
    let Ok(path) = std::str::from_utf8(data) else {
        return;
    };
    let Some((id, segment)) = router::find(path) else {
        return;
    };
    let route = id.route();
    match route.prefix() {
        None => assert_eq!(route.path, path),
        Some(prefix) => {
            assert!(!segment.is_empty() && !segment.contains('/'));
            assert_eq!(format!("{prefix}{segment}{}", route.suffix()), path);
            // The segment goes through the path parameter parsers.
            let _ = params::path_tld(segment);
            let _ = params::path_registrar(segment);
        }
    }
});
