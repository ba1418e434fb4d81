//! The plans and keys file readers: any text is read or refused, never a panic, and a
//! plans file that is read keeps the rules it was checked against.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tldsnap::access::keys::KeysFile;
use tldsnap::access::plans::Plans;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(plans) = Plans::from_json(text) {
        for name in plans.names() {
            let plan = plans.get(name).expect("a listed plan");
            match (plan.rate_per_second, plan.burst) {
                (Some(r), Some(b)) => assert!(r >= 1 && b >= r),
                (None, None) => {}
                other => panic!("{name}: rate and burst {other:?}"),
            }
            assert!(plan.audit_limit >= 1);
        }
        assert!(plans.get("public").is_some() || plans.public().name == "public");
        let _ = KeysFile::parse(text, Some(&plans));
    }
    let _ = KeysFile::parse(text, None);
    let _ = KeysFile::parse(text, Some(&Plans::default()));
});
