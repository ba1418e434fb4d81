//! The query-string parser: `params::pick` over any query, then the rules of every
//! parameter. Nothing may panic; what is accepted must be what the rules promise.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tldsnap::http::params;

fuzz_target!(|data: &[u8]| {
    let Ok(query) = std::str::from_utf8(data) else {
        return;
    };
    let _ = params::percent_decode(query, true);
    let _ = params::percent_decode(query, false);
    let Ok(
        [
            tlds,
            limit,
            registrars,
            at,
            from,
            to,
            q,
            cursor,
            kind,
            sort,
            prices,
            page,
        ],
    ) = params::pick(
        Some(query),
        [
            "tlds",
            "limit",
            "registrars",
            "at",
            "from",
            "to",
            "q",
            "cursor",
            "type",
            "sort",
            "include_prices",
            "page",
        ],
    )
    else {
        return;
    };
    if let Ok(list) = params::tlds(tlds.as_deref()) {
        assert!((1..=params::MAX_LIST_VALUES).contains(&list.len()));
        for (i, name) in list.iter().enumerate() {
            // Canonical: normalising again changes nothing; no duplicates.
            assert_eq!(tldsnap::tld::normalize(name).as_deref(), Ok(&**name));
            assert!(!list[..i].contains(name));
        }
    }
    if let Ok(n) = params::limit(limit.as_deref()) {
        assert!((1..=params::MAX_LIMIT).contains(&n));
    }
    if let Ok(Some(list)) = params::registrars(registrars.as_deref()) {
        assert!((1..=params::MAX_LIST_VALUES).contains(&list.len()));
        for key in &list {
            assert!(tldsnap::source::is_registrar_key(key), "{key:?}");
        }
    }
    let _ = params::day("at", at.as_deref());
    if let Ok((Some(f), Some(t))) = params::window(from.as_deref(), to.as_deref()) {
        assert!(f <= t);
    }
    let _ = params::search(q.as_deref());
    let _ = params::cursor(cursor.as_deref());
    let _ = params::tld_type(kind.as_deref());
    let _ = params::sort(sort.as_deref());
    let _ = params::boolean("include_prices", prices.as_deref(), false);
    let _ = params::page_limit(page.as_deref());
});
