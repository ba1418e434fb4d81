//! Snapshot opening on arbitrary bytes: refused with an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tldsnap::snapshot::Snapshot::from_bytes(data);
});
