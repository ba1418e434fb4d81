//! Opens a snapshot file `N` times and prints each open's wall time (ms), for timing
//! and for instruction counts of one open (`valgrind --tool=callgrind`).
//!
//! `cargo run --release --example open_s -- FILE [N] [open|stepped|hash|hash-lazy|map]`:
//! `open` is `Snapshot::open`; `hash` maps the file and hashes it (the floor);
//! `hash-lazy` the same without `MAP_POPULATE` (the pages mapped as the hash reads them);
//! `map` only maps it (with `MAP_POPULATE`'s page reads: what the other modes share);
//! `stepped` runs `Opening::step(256 KiB)` to the end, as a reload does.

use std::hint::black_box;
use std::time::Instant;

use tldsnap::snapshot::{Opening, Snapshot};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = std::path::PathBuf::from(args.next().expect("FILE [N] [open|hash|map|stepped]"));
    let n: usize = args.next().map_or(1, |n| n.parse().expect("N"));
    let mode = args.next().unwrap_or_else(|| "open".into());
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        match mode.as_str() {
            "open" => drop(black_box(Snapshot::open(&path).expect("open"))),
            "stepped" => {
                let mut o = Opening::start(&path).expect("start");
                while !o.step(256 * 1024) {}
                drop(black_box(o.finish().expect("finish")));
            }
            "hash" | "map" | "hash-lazy" => {
                let file = std::fs::File::open(&path).expect("file");
                let mut options = memmap2::MmapOptions::new();
                if mode != "hash-lazy" {
                    options.populate();
                }
                // SAFETY: the file is only read here and is not written while it is
                // mapped (it is made once by `tldsnap build`, which renames into place).
                let map = unsafe { options.map(&file) }.expect("map");
                if mode != "map" {
                    black_box(tldsnap::snapshot::content_hash(&map[64..]));
                }
                drop(black_box(map));
            }
            other => panic!("unknown mode {other}"),
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "{mode} x{n}: min {:.2} ms, median {:.2} ms, max {:.2} ms",
        sorted[0],
        sorted[n / 2],
        sorted[n - 1]
    );
}
