//! The price source reader: registrars, prices and history CSV (three parts of the input,
//! separated by NUL bytes). A source that reads must build, and the built snapshot must
//! open: the reader's checks are all the builder relies on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tldsnap::build::{BuildOptions, build};
use tldsnap::snapshot::Snapshot;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |b| *b == 0);
    let registrars = parts.next().unwrap_or_default();
    let prices = parts.next().unwrap_or_default();
    let history = parts.next();
    let Ok(source) = tldsnap::source::read(registrars, prices, history) else {
        return;
    };
    let (bytes, report) = build(&source, &BuildOptions::default()).expect("a read source builds");
    let snapshot = Snapshot::from_bytes(&bytes).expect("a built snapshot opens");
    assert_eq!(snapshot.data().tlds.len(), report.tlds);
});
