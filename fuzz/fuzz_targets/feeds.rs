//! Every feed importer, and the ECB rate table reader: the first byte picks one (in the
//! order of `import::feeds::FEEDS`, then the rate table), the rest is the file. Any
//! bytes are read or refused, never a panic; a price read is one `parse_cents` takes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tldsnap::import::feeds::FEEDS;
use tldsnap::import::fx::Rates;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    match FEEDS.get(usize::from(pick) % (FEEDS.len() + 1)) {
        Some(feed) => {
            let _ = (feed.parse)(file);
        }
        None => {
            let _ = Rates::parse(file);
        }
    }
});
