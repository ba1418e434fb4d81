//! Snapshot files: a fixed header followed by an rkyv archive of [`SnapshotData`].
//!
//! ```text
//! offset  size  field
//!      0     8  magic  b"TLDSNAP\0"
//!      8     4  format version (u32 LE)         = FORMAT_VERSION
//!     12     4  header length (u32 LE)          = 64
//!     16     8  payload length (u64 LE)
//!     24    16  xxh3-128 of the payload (u128 LE)
//!     40     8  data timestamp, ms since epoch (i64 LE)
//!     48     8  build timestamp, ms since epoch (i64 LE), i64::MIN = not recorded
//!     56     8  reserved, zero
//!     64     …  payload: the rkyv archive, ends exactly at the end of the file
//! ```
//!
//! The header is 64 bytes so the payload keeps the 16-byte alignment of the map (a map
//! starts on a page boundary) that rkyv's archived types need.
//!
//! Opening ([`Snapshot::open`]) checks once: the header fields (constant time), then the
//! content hash of the whole payload on a second thread beside the rest (so that any
//! flipped byte, even inside a price, is caught; a wrong hash is the error told,
//! whatever the others found; a reload's stepped open, [`Opening`], hashes first), the
//! archive's structure (rkyv's bytecheck, before any other read of the archive), and the
//! invariants the query code relies on (every span inside `text` and where the builder
//! lays it out, every index in range, every group inside its array, the orders and
//! aggregates, and the pre-rendered JSON rendered again from the integers and compared,
//! so that a forged file with a recomputed hash cannot make a query answer broken or
//! contradictory JSON). After that, [`Snapshot::data`]
//! hands out the archive without checking again.

pub mod render;
pub mod schema;

use std::fmt;
use std::path::{Path, PathBuf};

use rkyv::util::AlignedVec;

pub use schema::{ArchivedSnapshotData, SnapshotData};
use schema::{ArchivedSpan, NONE};

use crate::json::Out;
use crate::price::Fx;

/// The 8 bytes every snapshot starts with.
pub const MAGIC: [u8; 8] = *b"TLDSNAP\0";
/// The format this build reads and writes. Bump on any change to the header or schema.
pub const FORMAT_VERSION: u32 = 5;
/// Length of the fixed header.
pub const HEADER_LEN: usize = 64;

/// The decoded fixed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Format version ([`FORMAT_VERSION`]).
    pub version: u32,
    /// Length of the archive after the header.
    pub payload_len: u64,
    /// xxh3-128 of the archive.
    pub content_hash: u128,
    /// Latest price date in the data, ms since the Unix epoch.
    pub data_updated_ms: i64,
    /// When the snapshot was built, if the builder was told (`--built-at`).
    pub built_at_ms: Option<i64>,
}

impl Header {
    /// The content hash as 32 lowercase hex digits.
    pub fn hash_hex(&self) -> String {
        format!("{:032x}", self.content_hash)
    }

    /// Encodes the header.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&self.version.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.payload_len.to_le_bytes());
        h[24..40].copy_from_slice(&self.content_hash.to_le_bytes());
        h[40..48].copy_from_slice(&self.data_updated_ms.to_le_bytes());
        h[48..56].copy_from_slice(&self.built_at_ms.unwrap_or(i64::MIN).to_le_bytes());
        h
    }

    /// Decodes and checks the header against the total file length. Constant time.
    pub fn parse(bytes: &[u8]) -> Result<Header, OpenError> {
        // Shorter than a header: truncated (or not a snapshot at all).
        if bytes.len() < HEADER_LEN {
            return Err(OpenError::TooShort {
                len: bytes.len() as u64,
            });
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        // Magic first: a file that is not a snapshot should say so, not "wrong version".
        if bytes[0..8] != MAGIC {
            let mut got = [0u8; 8];
            got.copy_from_slice(&bytes[0..8]);
            return Err(OpenError::Magic { got });
        }
        // Version: a newer or older layout cannot be read by this code.
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(OpenError::Version {
                expected: FORMAT_VERSION,
                got: version,
            });
        }
        // Header length is fixed for this version; anything else is corruption.
        let header_len = u32_at(12);
        if header_len as usize != HEADER_LEN {
            return Err(OpenError::Corrupt(format!(
                "header length {header_len}, expected {HEADER_LEN}"
            )));
        }
        // The payload must end exactly at the end of the file: rkyv finds its root
        // from the end, and a shorter file is a truncated copy.
        let payload_len = u64_at(16);
        let actual = (bytes.len() - HEADER_LEN) as u64;
        if payload_len != actual {
            return Err(OpenError::Length {
                expected: payload_len,
                got: actual,
            });
        }
        // Reserved bytes are zero in this version.
        if u64_at(56) != 0 {
            return Err(OpenError::Corrupt(
                "reserved header bytes are not zero".into(),
            ));
        }
        let built = u64_at(48) as i64;
        Ok(Header {
            version,
            payload_len,
            content_hash: u128::from_le_bytes(bytes[24..40].try_into().expect("16 bytes")),
            data_updated_ms: u64_at(40) as i64,
            built_at_ms: (built != i64::MIN).then_some(built),
        })
    }
}

/// Why a snapshot could not be opened. The old snapshot, if any, keeps serving.
#[derive(Debug)]
pub enum OpenError {
    /// The file could not be read or mapped.
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The path is a directory.
    IsDirectory(PathBuf),
    /// Shorter than the header.
    TooShort {
        /// Bytes present.
        len: u64,
    },
    /// Does not start with [`MAGIC`].
    Magic {
        /// The first 8 bytes.
        got: [u8; 8],
    },
    /// Written by another format version.
    Version {
        /// What this build reads.
        expected: u32,
        /// What the file says.
        got: u32,
    },
    /// The payload length in the header does not match the file (truncated or extended).
    Length {
        /// Payload length the header promises.
        expected: u64,
        /// Payload bytes present.
        got: u64,
    },
    /// The payload's hash does not match the header: some byte changed.
    Checksum {
        /// Hash in the header.
        expected: u128,
        /// Hash of the bytes present.
        got: u128,
    },
    /// The file became shorter while it was being read: something wrote it in place.
    Shrunk {
        /// The file.
        path: PathBuf,
        /// Its length when it was opened.
        expected: u64,
        /// Bytes that could be read.
        got: u64,
    },
    /// The archive or its invariants are broken (a bug in the writer, or a forged file).
    Corrupt(String),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            OpenError::IsDirectory(p) => {
                write!(f, "{}: is a directory, not a snapshot file", p.display())
            }
            OpenError::TooShort { len } => {
                write!(
                    f,
                    "not a tldsnap snapshot: {len} bytes, shorter than the {HEADER_LEN}-byte header"
                )
            }
            OpenError::Magic { got } => write!(f, "not a tldsnap snapshot: starts with {got:02x?}"),
            OpenError::Version { expected, got } => {
                write!(
                    f,
                    "snapshot format version {got}, this build reads version {expected}: rebuild it"
                )
            }
            OpenError::Length { expected, got } => {
                write!(
                    f,
                    "snapshot truncated or extended: header promises {expected} payload bytes, file has {got}"
                )
            }
            OpenError::Checksum { expected, got } => {
                write!(
                    f,
                    "snapshot corrupted: content hash {got:032x}, header says {expected:032x}"
                )
            }
            OpenError::Shrunk {
                path,
                expected,
                got,
            } => write!(
                f,
                "{}: the file became shorter while it was read ({got} of {expected} bytes): \
                 it is being written in place; publish a snapshot by renaming a complete \
                 file over the old one",
                path.display()
            ),
            OpenError::Corrupt(why) => write!(f, "snapshot corrupted: {why}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// Where a snapshot's bytes live: always memory of the process's own, never the pages of
/// the file it was read from. A file is read once into an anonymous private mapping
/// ([`Backing::Copy`]), so whatever happens to the path afterwards (written in place,
/// truncated, deleted, replaced) changes nothing the server reads: a shared map of the
/// file would show a `cp` over it byte by byte and fault (`SIGBUS`) on every page a
/// `truncate` cut off.
enum Backing {
    /// A file's bytes, copied into anonymous memory and then made read-only.
    Copy(memmap2::Mmap),
    /// The same memory while a stepped open ([`Opening`]) still fills it from the file.
    Filling(memmap2::MmapMut),
    /// Bytes handed over in memory ([`Snapshot::from_bytes`]).
    Heap(AlignedVec<16>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Copy(m) => m,
            Backing::Filling(m) => m,
            Backing::Heap(v) => v,
        }
    }

    /// Ends the filling: the copy becomes read-only.
    fn seal(&mut self, path: &Path) -> Result<(), OpenError> {
        if let Backing::Filling(_) = self {
            let Backing::Filling(m) = std::mem::replace(self, Backing::Heap(AlignedVec::new()))
            else {
                unreachable!("matched above")
            };
            *self = Backing::Copy(m.make_read_only().map_err(|source| OpenError::Io {
                path: path.to_path_buf(),
                source,
            })?);
        }
        Ok(())
    }
}

/// A snapshot file being copied into memory: the open file and its path (for errors).
struct Reading {
    file: std::fs::File,
    path: PathBuf,
}

impl Reading {
    /// Opens `path`, checks it is a file long enough to hold a header, and makes an
    /// anonymous mapping of its length holding its header (the rest is read by
    /// [`Reading::fill`]).
    ///
    /// The mapping is asked for 2 MiB pages (a hint: its failure changes nothing), so a
    /// request's lookups in a large snapshot take few TLB misses.
    fn start(path: &Path) -> Result<(Reading, memmap2::MmapMut), OpenError> {
        let io = |source| OpenError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if meta.is_dir() {
            return Err(OpenError::IsDirectory(path.to_path_buf()));
        }
        if meta.len() < HEADER_LEN as u64 {
            // Say what it really is (an anonymous map of 0 bytes fails, too).
            return Err(OpenError::TooShort { len: meta.len() });
        }
        let len = usize::try_from(meta.len()).map_err(|_| {
            io(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                "larger than this machine's address space",
            ))
        })?;
        // No MADV_HUGEPAGE: with the kernel's default `defrag=madvise`, a huge-page
        // fault may compact memory synchronously while holding the process's mmap lock,
        // and the serving threads' own allocations then wait for it: swaps every 100 ms
        // under load gave p99s of 46-217 ms in two rounds of three (3.2-4.9 ms with
        // defrag off), for a snapshot of a few MiB that small pages serve as well.
        let mut map = memmap2::MmapMut::map_anon(len).map_err(io)?;
        let reading = Reading {
            file,
            path: path.to_path_buf(),
        };
        reading.fill(&mut map, 0..HEADER_LEN)?;
        Ok((reading, map))
    }

    /// Reads the file's bytes `range` into the same place of `map`, and hands them out.
    /// A file that ends before the range does was cut short since it was opened.
    fn fill<'m>(
        &self,
        map: &'m mut [u8],
        range: std::ops::Range<usize>,
    ) -> Result<&'m [u8], OpenError> {
        use std::os::unix::fs::FileExt;
        let mut at = range.start;
        while at < range.end {
            match self.file.read_at(&mut map[at..range.end], at as u64) {
                Ok(0) => {
                    return Err(OpenError::Shrunk {
                        path: self.path.clone(),
                        expected: map.len() as u64,
                        got: at as u64,
                    });
                }
                Ok(n) => at += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(OpenError::Io {
                        path: self.path.clone(),
                        source,
                    });
                }
            }
        }
        Ok(&map[range])
    }

    /// The whole file, copied: its bytes in read-only memory of their own.
    fn copy(path: &Path) -> Result<memmap2::Mmap, OpenError> {
        let (reading, mut map) = Reading::start(path)?;
        let len = map.len();
        reading.fill(&mut map, HEADER_LEN..len)?;
        let mut backing = Backing::Filling(map);
        backing.seal(path)?;
        match backing {
            Backing::Copy(m) => Ok(m),
            _ => unreachable!("sealed"),
        }
    }
}

/// An open, fully verified snapshot. Cheap to share behind an `Arc`; dropping the last
/// reference frees its memory.
pub struct Snapshot {
    backing: Backing,
    header: Header,
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// The content hash of a snapshot's payload (every byte after the header): XXH3-128.
///
/// twox-hash's XXH3 picks its SIMD code when it runs (AVX2 where the CPU has it, else
/// SSE2): 173 M instructions to open S instead of 193 M with the SSE2-only code that a
/// build for plain x86-64 gets from a crate that chooses at compile time (docs/PERFORMANCE.md,
/// "Open S"). The value is the standard XXH3-128, whatever code computes it.
pub fn content_hash(payload: &[u8]) -> u128 {
    twox_hash::XxHash3_128::oneshot(payload)
}

fn hash_matches(header: &Header, got: u128) -> Result<(), OpenError> {
    if got == header.content_hash {
        Ok(())
    } else {
        Err(OpenError::Checksum {
            expected: header.content_hash,
            got,
        })
    }
}

/// The header's data date is the archive's.
fn check_data_date(data: &ArchivedSnapshotData, header: &Header) -> Result<(), OpenError> {
    if data.data_updated_ms != header.data_updated_ms {
        return Err(OpenError::Corrupt(
            "the header's data date differs from the archive's".into(),
        ));
    }
    Ok(())
}

/// Bytecheck, then the invariants, of the payload behind `header`.
fn check_payload(payload: &[u8], header: &Header) -> Result<(), OpenError> {
    let data = rkyv::access::<ArchivedSnapshotData, rkyv::rancor::Error>(payload)
        .map_err(|e| OpenError::Corrupt(format!("archive check failed: {e}")))?;
    data.check_invariants().map_err(OpenError::Corrupt)?;
    check_data_date(data, header)
}

impl Snapshot {
    /// Reads `path` into memory of its own and verifies it completely (see the module
    /// docs). Nothing done to the file afterwards reaches the snapshot.
    pub fn open(path: &Path) -> Result<Snapshot, OpenError> {
        Snapshot::verify(Backing::Copy(Reading::copy(path)?))
    }

    /// Verifies a snapshot held in memory (tests, the embedded default). Copies the bytes
    /// into a 16-byte aligned buffer.
    pub fn from_bytes(bytes: &[u8]) -> Result<Snapshot, OpenError> {
        let mut v = AlignedVec::<16>::with_capacity(bytes.len());
        v.extend_from_slice(bytes);
        Snapshot::verify(Backing::Heap(v))
    }

    /// The content hash on a second thread while this one checks the archive (the two
    /// only read the bytes); a wrong hash is the error whatever the checks found.
    fn verify(backing: Backing) -> Result<Snapshot, OpenError> {
        let header = Header::parse(backing.bytes())?;
        let payload = &backing.bytes()[HEADER_LEN..];
        let (got, checked) = std::thread::scope(|s| {
            let hash = || content_hash(payload);
            match std::thread::Builder::new().spawn_scoped(s, hash) {
                Ok(h) => {
                    let checked = check_payload(payload, &header);
                    let got = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                    (got, checked)
                }
                // No thread to be had (the process is at a limit): one after the other.
                Err(_) => (hash(), check_payload(payload, &header)),
            }
        });
        hash_matches(&header, got)?;
        checked?;
        Ok(Snapshot { backing, header })
    }

    /// The archived data. No checks: they were all done when the snapshot was opened.
    pub fn data(&self) -> &ArchivedSnapshotData {
        let payload = &self.backing.bytes()[HEADER_LEN..];
        // SAFETY: `verify` (or a stepped open) ran `rkyv::access` (full bytecheck
        // validation) on exactly these bytes before this `Snapshot` was constructed, and
        // the bytes do not change for its whole life: they are memory of this process's
        // own (a heap buffer, or an anonymous private mapping filled from the file and
        // made read-only before any check: `Backing`), never handed out mutably and
        // never backed by the file, so nothing written to the file reaches them. They are
        // still a valid `ArchivedSnapshotData`.
        unsafe { rkyv::access_unchecked::<ArchivedSnapshotData>(payload) }
    }

    /// The decoded header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Size of the file (header + payload).
    pub fn len(&self) -> usize {
        self.backing.bytes().len()
    }

    /// Always false: a verified snapshot has at least a header.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// A snapshot file being verified in steps: the same checks as [`Snapshot::open`], cut
/// into pieces that each take a few tens of microseconds, so an async server can answer
/// requests between them instead of stalling behind a whole open (see
/// `store::Store::reload_async`). The content hash advances `max_bytes` at a time; then
/// one step each: bytecheck, the structure, the orders and aggregates, the registrars'
/// layout and text (these grow with the snapshot: see docs/PERFORMANCE.md, "Hot swap");
/// then the TLDs' layout and text, the largest check, [`TEXT_STEP_OFFERS`] offers at a
/// time, and last the catalogue's layout. A check that fails ends the steps;
/// [`Opening::finish`] tells it.
///
/// ```no_run
/// # fn main() -> Result<(), tldsnap::snapshot::OpenError> {
/// let mut opening = tldsnap::snapshot::Opening::start(std::path::Path::new("x.tldsnap"))?;
/// while !opening.step(256 * 1024) {
///     // let other work run here
/// }
/// let snapshot = opening.finish()?;
/// # Ok(()) }
/// ```
pub struct Opening {
    backing: Backing,
    /// The file the content hash's steps read the payload from, a step at a time.
    reading: Reading,
    header: Header,
    stage: Stage,
}

/// How far an [`Opening`] has got.
enum Stage {
    /// The content hash has read `hashed` bytes of the payload.
    Hashing {
        hasher: Box<twox_hash::XxHash3_128>,
        hashed: usize,
    },
    /// The hash, bytecheck and the first `done` of [`PIECES`] passed.
    Pieces { done: usize },
    /// Every check but the TLDs' and the catalogue's passed, and so did the layout and
    /// text of the TLDs before position `next`, whose pieces end at `pos`. The checker's
    /// caches carry over, and so do the registrars' keys and quoted names that every
    /// offer renders (copied once: made anew for each step, they were ~5% of a stepped
    /// open's instructions).
    Text {
        next: usize,
        pos: u32,
        scratch: Box<Scratch>,
        registrars: Box<Registrars>,
    },
    /// Every check passed.
    Passed,
    /// A check failed.
    Failed(OpenError),
}

/// The registrars' keys and quoted names, by position, as a stepped open's text check
/// renders them (see [`Stage::Text`]).
struct Registrars {
    keys: Vec<Box<str>>,
    names: Vec<Box<[u8]>>,
}

impl Registrars {
    fn of(data: &ArchivedSnapshotData) -> Registrars {
        let (keys, names) = data.registrar_keys_and_names();
        Registrars {
            keys: keys.into_iter().map(Box::from).collect(),
            names: names.into_iter().map(Box::from).collect(),
        }
    }
}

/// The checks after bytecheck that a stepped open runs one per step, in the order
/// `check_invariants` tells their errors; the TLDs' text comes after them.
type Piece = fn(&ArchivedSnapshotData) -> Result<(), String>;
const PIECES: [Piece; 5] = [
    ArchivedSnapshotData::check_structure,
    ArchivedSnapshotData::check_orders_and_aggregates,
    ArchivedSnapshotData::check_terms_rankings_and_rates,
    ArchivedSnapshotData::check_registrar_layout,
    ArchivedSnapshotData::check_registrar_text,
];

/// How many offers one step of an [`Opening`] checks the pre-rendered text of: ~900
/// instructions each (S, callgrind), so a step is a little shorter than hashing a
/// 256 KiB step (~170,000).
pub const TEXT_STEP_OFFERS: usize = 128;

impl fmt::Debug for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stage = match &self.stage {
            Stage::Hashing { hashed, .. } => format!("hashed {hashed} bytes"),
            Stage::Pieces { done } => format!("{done} of the checks after bytecheck passed"),
            Stage::Text { next, .. } => format!("text checked up to TLD {next}"),
            Stage::Passed => "passed".into(),
            Stage::Failed(e) => format!("failed: {e}"),
        };
        f.debug_struct("Opening")
            .field("header", &self.header)
            .field("stage", &stage)
            .finish_non_exhaustive()
    }
}

impl Opening {
    /// Opens `path` and checks its header (constant time). The payload is copied into
    /// the snapshot's own memory as the content hash's steps reach it, each step reading
    /// the bytes it hashes.
    pub fn start(path: &Path) -> Result<Opening, OpenError> {
        let (reading, map) = Reading::start(path)?;
        let backing = Backing::Filling(map);
        let header = Header::parse(backing.bytes())?;
        Ok(Opening {
            backing,
            reading,
            header,
            stage: Stage::Hashing {
                hasher: Box::new(twox_hash::XxHash3_128::new()),
                hashed: 0,
            },
        })
    }

    /// Runs the next piece of the checks: up to `max_bytes` more of the content hash,
    /// or one of the checks after it, or the text of [`TEXT_STEP_OFFERS`] more offers.
    /// True once nothing is left to do (all passed, or one failed).
    pub fn step(&mut self, max_bytes: usize) -> bool {
        if let Stage::Hashing { hasher, hashed } = &mut self.stage {
            let len = self.backing.bytes().len() - HEADER_LEN;
            if *hashed < len {
                let end = len.min(hashed.saturating_add(max_bytes));
                let Backing::Filling(map) = &mut self.backing else {
                    unreachable!("an opening fills its copy until the hash is done")
                };
                match self
                    .reading
                    .fill(map, HEADER_LEN + *hashed..HEADER_LEN + end)
                {
                    Ok(chunk) => {
                        hasher.write(chunk);
                        *hashed = end;
                    }
                    Err(e) => self.stage = Stage::Failed(e),
                }
                return matches!(self.stage, Stage::Failed(_));
            }
            if let Err(e) = self.backing.seal(&self.reading.path) {
                self.stage = Stage::Failed(e);
                return true;
            }
        }
        let payload = &self.backing.bytes()[HEADER_LEN..];
        self.stage = match std::mem::replace(&mut self.stage, Stage::Passed) {
            Stage::Hashing { hasher, .. } => {
                let checked = hash_matches(&self.header, hasher.finish_128()).and_then(|()| {
                    rkyv::access::<ArchivedSnapshotData, rkyv::rancor::Error>(payload)
                        .map(drop)
                        .map_err(|e| OpenError::Corrupt(format!("archive check failed: {e}")))
                });
                match checked {
                    Ok(()) => Stage::Pieces { done: 0 },
                    Err(e) => Stage::Failed(e),
                }
            }
            Stage::Pieces { done } => {
                // SAFETY: the `Pieces` stage is entered only after `rkyv::access` (full
                // bytecheck validation) passed on exactly these bytes, which do not
                // change while `self.backing` lives (the argument of `Snapshot::data`).
                let data = unsafe { rkyv::access_unchecked::<ArchivedSnapshotData>(payload) };
                match PIECES[done](data) {
                    Err(e) => Stage::Failed(OpenError::Corrupt(e)),
                    Ok(()) if done + 1 < PIECES.len() => Stage::Pieces { done: done + 1 },
                    Ok(()) => Stage::Text {
                        next: 0,
                        pos: data.registrars_text_end(),
                        scratch: Box::new(Scratch::new()),
                        registrars: Box::new(Registrars::of(data)),
                    },
                }
            }
            Stage::Text {
                next,
                mut pos,
                mut scratch,
                registrars,
            } => {
                // SAFETY: as for `Pieces`, which comes before.
                let data = unsafe { rkyv::access_unchecked::<ArchivedSnapshotData>(payload) };
                let end = data.tld_chunk_end(next, TEXT_STEP_OFFERS);
                let keys: Vec<&str> = registrars.keys.iter().map(|k| &**k).collect();
                let names: Vec<&[u8]> = registrars.names.iter().map(|n| &**n).collect();
                match data.check_tld_text(next..end, &keys, &names, &mut scratch, &mut pos) {
                    Err(e) => Stage::Failed(OpenError::Corrupt(e)),
                    // Last, as `check_payload` runs them.
                    Ok(()) if end == data.tlds.len() => match data
                        .check_catalogue_layout(pos)
                        .map_err(OpenError::Corrupt)
                        .and_then(|()| check_data_date(data, &self.header))
                    {
                        Ok(()) => Stage::Passed,
                        Err(e) => Stage::Failed(e),
                    },
                    Ok(()) => Stage::Text {
                        next: end,
                        pos,
                        scratch,
                        registrars,
                    },
                }
            }
            done @ (Stage::Passed | Stage::Failed(_)) => done,
        };
        matches!(self.stage, Stage::Passed | Stage::Failed(_))
    }

    /// Runs whatever checks are left and hands out the verified snapshot. Called before
    /// any step, it is [`Snapshot::open`] (the checks on several threads); otherwise the
    /// rest runs here, in order.
    pub fn finish(mut self) -> Result<Snapshot, OpenError> {
        if let Stage::Hashing { hashed: 0, .. } = self.stage {
            let Backing::Filling(map) = &mut self.backing else {
                unreachable!("an opening fills its copy until the hash is done")
            };
            let len = map.len();
            self.reading.fill(map, HEADER_LEN..len)?;
            self.backing.seal(&self.reading.path)?;
            return Snapshot::verify(self.backing);
        }
        while !self.step(usize::MAX) {}
        match self.stage {
            Stage::Failed(e) => Err(e),
            _ => Ok(Snapshot {
                backing: self.backing,
                header: self.header,
            }),
        }
    }
}

/// FNV-1a 64 over the canonical name: the hash of the TLD table. Stable across builds
/// and platforms, which the file format needs; short names make its weakness on long
/// inputs irrelevant, and linear probing keeps the worst case bounded by the table size.
pub fn name_hash(name: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The check of pre-rendered text at open: the crate's writers write a fragment into a
/// buffer (an [`Out`]), and the whole fragment is then compared with the bytes in the
/// file, in one comparison ([`same!`]). The buffer and the caches of rendered prices,
/// dates and quoted keys are reused from one fragment to the next.
///
/// A fragment of at most [`WINDOW`] bytes (all of them in a snapshot the builder made,
/// but for very long names) is rendered into a fixed window ([`Short`]): every write
/// lands at the rendered length modulo [`WINDOW`], in an array [`SLACK`] bytes longer,
/// so no write needs a bounds check and short pieces are copied in whole words (a
/// price, a date or a quoted key as its fixed-size array, the length then advanced by
/// what it holds). A rendering of at most [`WINDOW`] bytes never wraps, so it is exact;
/// a longer one is longer than the fragment, so differs whatever the window holds. A
/// longer fragment is rendered into a buffer grown to its length ([`Render`]), every
/// write checked.
struct Scratch {
    window: Box<[u8; WINDOW + SLACK]>,
    /// Where a long fragment is rendered: never shorter than it plus [`SLACK`].
    buf: Vec<u8>,
    caches: Caches,
}

/// What [`Scratch`] remembers from one fragment to the next.
struct Caches {
    /// Days rendered recently, `YYYY-MM-DD` (a direct-mapped cache by the day number):
    /// the prices of a snapshot carry few distinct days.
    days: [(i64, [u8; 10]); 64],
    /// Strings quoted recently, by address and length (direct-mapped), and their JSON
    /// when it is at most [`QUOTED_MAX`] bytes: the registrar keys, which each offer
    /// renders twice. Only the snapshot's own text is quoted through a checker (or, in a
    /// stepped open, the registrars' keys copied once for the whole text check, which
    /// live as long as its checker: [`Stage::Text`]), and none of it moves while it is
    /// checked, so an address and length stand for the same bytes.
    quoted: Box<[Quoted; QUOTED_SLOTS]>,
    /// Prices rendered recently (direct-mapped by the cents): (cents, length, bytes).
    /// Offers share few distinct prices.
    cents: Box<[(u64, u8, [u8; 24]); CENTS_SLOTS]>,
    /// A string's JSON on its way into `quoted` (kept for its allocation).
    escaped: Vec<u8>,
}

/// An entry of [`Caches::quoted`]: the string's address and length, and its JSON
/// (`json[..n]`).
#[derive(Clone, Copy)]
struct Quoted {
    at: usize,
    len: usize,
    n: u8,
    json: [u8; QUOTED_MAX],
}

/// The longest fragment rendered into [`Scratch`]'s fixed window (a power of two).
const WINDOW: usize = 512;
/// The longest JSON string [`Caches::quoted`] keeps (keys and short names).
const QUOTED_MAX: usize = 32;
/// Entries of [`Caches::quoted`] (a power of two).
const QUOTED_SLOTS: usize = 1024;
/// Entries of [`Caches::cents`].
const CENTS_SLOTS: usize = 4096;
/// Room after the window (and after a long fragment's length): the longest piece
/// copied whole ([`QUOTED_MAX`]) at least.
const SLACK: usize = 64;

/// Whether `$render`, written with `$out` an [`Out`], writes exactly `$piece`, through
/// the checker `$scratch` (see [`Scratch`]). The rendering is written out twice, for
/// the fixed window and for a long fragment's buffer.
macro_rules! same {
    ($scratch:expr, $piece:expr, |$out:ident| $render:expr) => {{
        let piece: &[u8] = $piece;
        let scratch: &mut Scratch = $scratch;
        if piece.len() <= WINDOW {
            scratch.same_short(piece, |$out: &mut Short<'_>| $render)
        } else {
            scratch.same_long(piece, |$out: &mut Render<'_>| $render)
        }
    }};
}

impl Scratch {
    fn new() -> Scratch {
        let never = i64::MIN;
        let mut empty = Quoted {
            at: 0,
            len: 0,
            n: 2,
            json: [0; QUOTED_MAX],
        };
        empty.json[..2].copy_from_slice(b"\"\"");
        Scratch {
            window: Box::new([0; WINDOW + SLACK]),
            buf: Vec::new(),
            caches: Caches {
                days: [(never, crate::json::date_array(never)); 64],
                quoted: Box::new([empty; QUOTED_SLOTS]),
                cents: Box::new([render_cents(0); CENTS_SLOTS]),
                escaped: Vec::new(),
            },
        }
    }

    /// [`same!`] for a piece of at most [`WINDOW`] bytes.
    #[inline(always)]
    fn same_short(&mut self, piece: &[u8], render: impl FnOnce(&mut Short<'_>)) -> bool {
        let mut out = Short {
            to: &mut self.window,
            len: 0,
            caches: &mut self.caches,
        };
        render(&mut out);
        // At most WINDOW bytes rendered: none wrapped.
        out.len == piece.len() && out.to[..piece.len()] == *piece
    }

    /// [`same!`] for a longer piece.
    #[cold]
    #[inline(never)]
    fn same_long(&mut self, piece: &[u8], render: impl FnOnce(&mut Render<'_>)) -> bool {
        if self.buf.len() < piece.len() + SLACK {
            self.buf.resize(piece.len() + SLACK, 0);
        }
        let mut out = Render {
            to: &mut self.buf,
            len: 0,
            caches: &mut self.caches,
        };
        render(&mut out);
        // A rendering that overflowed is longer than the buffer, so than the piece.
        out.to.get(..out.len) == Some(piece)
    }
}

impl Caches {
    /// `cents` as [`crate::json::cents_bytes`] writes it: `bytes[..n]` of `(bytes, n)`.
    #[inline(always)]
    fn cents(&mut self, cents: u64) -> (&[u8; 24], usize) {
        let slot = &mut self.cents[(cents % CENTS_SLOTS as u64) as usize];
        if slot.0 != cents {
            *slot = render_cents(cents);
        }
        (&slot.2, slot.1 as usize)
    }

    /// `s` quoted: `Ok((json, n))`, its JSON `json[..n]` from the cache, or `Err(json)`
    /// when it was not there (and is kept now if it fits).
    #[inline(always)]
    fn quoted(&mut self, s: &str) -> Result<(&[u8; QUOTED_MAX], usize), &[u8]> {
        let at = s.as_ptr() as usize;
        let slot = ((at as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as usize % QUOTED_SLOTS;
        let q = &self.quoted[slot];
        if (q.at, q.len) == (at, s.len()) {
            Ok((&self.quoted[slot].json, q.n as usize))
        } else {
            Err(quote_slow(self, s, slot))
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` of `ms`, the day's date from the cache.
    #[inline(always)]
    fn iso_millis(&mut self, ms: i64) -> [u8; 24] {
        let (day, of_day) = crate::json::split_day(ms);
        let slot = &mut self.days[(day as u64 % 64) as usize];
        if slot.0 != day {
            *slot = (day, crate::json::date_array(day));
        }
        crate::json::iso_millis_of_day(slot.1, of_day)
    }
}

/// A cache entry of the price `cents`, rendered by the one writer.
#[inline(never)]
fn render_cents(cents: u64) -> (u64, u8, [u8; 24]) {
    let (buf, at) = crate::json::cents_bytes(cents);
    let mut bytes = [0u8; 24];
    bytes[..24 - at].copy_from_slice(&buf[at..]);
    (cents, (24 - at) as u8, bytes)
}

/// `s` quoted by [`crate::json::escape_str`], kept in `caches.quoted[slot]` when it
/// fits (a miss of the cache, or JSON too long to keep).
#[cold]
#[inline(never)]
fn quote_slow<'c>(caches: &'c mut Caches, s: &str, slot: usize) -> &'c [u8] {
    let escaped = &mut caches.escaped;
    escaped.clear();
    crate::json::escape_str(s, escaped);
    if escaped.len() <= QUOTED_MAX {
        let q = &mut caches.quoted[slot];
        (q.at, q.len, q.n) = (s.as_ptr() as usize, s.len(), escaped.len() as u8);
        q.json[..escaped.len()].copy_from_slice(escaped);
    }
    escaped
}

/// `0`..`99` as digits, two bytes each (the ranks of the cheapest entries).
static SMALL: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut v = 0;
    while v < 100 {
        t[v] = if v < 10 {
            [b'0' + v as u8, 0]
        } else {
            [b'0' + (v / 10) as u8, b'0' + (v % 10) as u8]
        };
        v += 1;
    }
    t
};

/// A fragment of at most [`WINDOW`] bytes being rendered into [`Scratch`]'s window (a
/// local value, so that the compiler keeps its length in a register).
struct Short<'s> {
    to: &'s mut [u8; WINDOW + SLACK],
    /// Bytes rendered so far (also past [`WINDOW`]: the writes then wrap).
    len: usize,
    caches: &'s mut Caches,
}

impl Short<'_> {
    /// Appends `bytes[..n]` by copying all of `bytes` (a fixed-size copy); the bytes
    /// after `n` are overwritten by what comes next, or ignored.
    #[inline(always)]
    fn put_first<const N: usize>(&mut self, bytes: &[u8; N], n: usize) {
        const { assert!(N <= SLACK) };
        let at = self.len % WINDOW;
        self.to[at..at + N].copy_from_slice(bytes);
        self.len += n.min(N);
    }
}

impl Out for Short<'_> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        let at = self.len % WINDOW;
        if bytes.len() <= SLACK {
            self.to[at..at + bytes.len()].copy_from_slice(bytes);
        } else if let Some(to) = self.to.get_mut(at..at + bytes.len()) {
            to.copy_from_slice(bytes);
        }
        // (Else past the end of the window: longer than the piece, whatever is written.)
        self.len += bytes.len();
    }

    #[inline(always)]
    fn put_byte(&mut self, b: u8) {
        self.to[self.len % WINDOW] = b;
        self.len += 1;
    }

    #[inline(always)]
    fn put_str(&mut self, s: &str) {
        match self.caches.quoted(s) {
            Ok((json, n)) => {
                let json = *json;
                self.put_first(&json, n);
            }
            Err(json) => {
                let at = self.len % WINDOW;
                if let Some(to) = self.to.get_mut(at..at + json.len()) {
                    to.copy_from_slice(json);
                }
                self.len += json.len();
            }
        }
    }

    #[inline(always)]
    fn put_uint(&mut self, v: u64) {
        match SMALL.get(v as usize) {
            Some(digits) => self.put_first(digits, 1 + usize::from(v >= 10)),
            None => self.put(itoa::Buffer::new().format(v).as_bytes()),
        }
    }

    #[inline(always)]
    fn put_cents(&mut self, cents: u64) {
        let (bytes, n) = self.caches.cents(cents);
        let bytes = *bytes;
        self.put_first(&bytes, n);
    }

    #[inline(always)]
    fn put_iso_millis(&mut self, ms: i64) {
        let bytes = self.caches.iso_millis(ms);
        self.put_first(&bytes, bytes.len());
    }
}

/// A fragment longer than [`WINDOW`] being rendered into [`Scratch`]'s growing buffer.
struct Render<'s> {
    to: &'s mut [u8],
    /// Bytes rendered so far; more than `to.len()` once the rendering overflowed.
    len: usize,
    caches: &'s mut Caches,
}

impl Out for Render<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let at = self.len;
        match self.to.get_mut(at..at + bytes.len()) {
            Some(to) => {
                to.copy_from_slice(bytes);
                self.len = at + bytes.len();
            }
            // Past the end of the buffer: longer than the piece.
            None => self.len = self.to.len() + 1,
        }
    }

    fn put_str(&mut self, s: &str) {
        match self.caches.quoted(s) {
            Ok((json, n)) => {
                let json = *json;
                self.put(&json[..n]);
            }
            Err(json) => {
                let json = json.to_vec();
                self.put(&json);
            }
        }
    }

    fn put_cents(&mut self, cents: u64) {
        let (bytes, n) = self.caches.cents(cents);
        let bytes = *bytes;
        self.put(&bytes[..n]);
    }

    fn put_iso_millis(&mut self, ms: i64) {
        let bytes = self.caches.iso_millis(ms);
        self.put(&bytes);
    }
}

/// How many offers make one chunk of the pre-rendered text check at open (see
/// `check_text_content`): about a millisecond's work, so that threads finish close
/// together, and few enough chunks that taking one costs nothing.
const TEXT_CHUNK_OFFERS: usize = 2048;

/// The layout checks' step: span `s` starts at `pos` and does not end before it;
/// `pos` moves to its end.
#[inline(always)]
fn next_span(pos: &mut u32, s: &ArchivedSpan, what: (&str, usize)) -> Result<(), String> {
    let (start, end) = (s.start.to_native(), s.end.to_native());
    if start != *pos || end < start {
        return Err(layout_error(what, "span not where the builder puts it"));
    }
    *pos = end;
    Ok(())
}

/// `(a, b, c)` as one integer whose order is the triples' lexicographic order.
#[inline(always)]
fn packed(a: u64, b: u32, c: u32) -> u128 {
    (u128::from(a) << 64) | (u128::from(b) << 32) | u128::from(c)
}

/// A layout check's message, out of the checks' loops.
#[cold]
#[inline(never)]
fn layout_error(what: (&str, usize), why: &str) -> String {
    format!("{} {}: {why}", what.0, what.1)
}

impl ArchivedSnapshotData {
    /// Bytes of a span. Spans were checked against `text` when the snapshot was opened.
    #[inline]
    pub fn span(&self, s: &ArchivedSpan) -> &[u8] {
        &self.text[s.start.to_native() as usize..s.end.to_native() as usize]
    }

    /// What the list of offer `o` says beside its prices.
    #[inline]
    pub fn terms(&self, o: &schema::ArchivedOffer) -> schema::OfferTerms<'_> {
        o.terms(&self.text)
    }

    /// A span that holds a name (UTF-8 checked at open).
    #[inline]
    pub fn span_str(&self, s: &ArchivedSpan) -> &str {
        std::str::from_utf8(self.span(s)).unwrap_or("")
    }

    /// `text[start..end]`.
    #[inline]
    pub fn text_range(&self, start: u32, end: u32) -> &[u8] {
        &self.text[start as usize..end as usize]
    }

    /// Position of a TLD by canonical name: one hash, a short probe.
    #[inline]
    pub fn tld_index(&self, name: &str) -> Option<usize> {
        let table = &self.tld_table;
        let mask = table.len().checked_sub(1)?;
        let mut slot = name_hash(name.as_bytes()) as usize & mask;
        for _ in 0..table.len() {
            let v = table[slot].to_native();
            if v == 0 {
                return None;
            }
            let i = (v - 1) as usize;
            if self.span(&self.tlds[i].name) == name.as_bytes() {
                return Some(i);
            }
            slot = (slot + 1) & mask;
        }
        None
    }

    /// The TLD by canonical name.
    #[inline]
    pub fn tld(&self, name: &str) -> Option<&schema::ArchivedTld> {
        self.tld_index(name).map(|i| &self.tlds[i])
    }

    /// The catalogue entry of a canonical name (binary search: the catalogue is in
    /// name order).
    pub fn catalogue_entry(&self, name: &str) -> Option<&schema::ArchivedCatalogueEntry> {
        self.catalogue
            .binary_search_by(|e| self.span(&e.name).cmp(name.as_bytes()))
            .ok()
            .map(|i| &self.catalogue[i])
    }

    /// Whether the snapshot knows the TLD (sold or renewal-only).
    pub fn has_tld(&self, name: &str) -> bool {
        self.tld_index(name).is_some()
    }

    /// Position of a registrar by key (binary search over the sorted keys).
    #[inline]
    pub fn registrar_index(&self, key: &str) -> Option<usize> {
        self.registrars
            .binary_search_by(|r| self.span(&r.key).cmp(key.as_bytes()))
            .ok()
    }

    /// Number of TLDs.
    pub fn tld_count(&self) -> usize {
        self.tlds.len()
    }

    /// Number of TLDs on sale: with at least one seller (a registration price). The
    /// others have renewal-only offers.
    pub fn sold_tld_count(&self) -> usize {
        self.tlds
            .iter()
            .filter(|t| t.sellers.to_native() > 0)
            .count()
    }

    /// Number of registrars.
    pub fn registrar_count(&self) -> usize {
        self.registrars.len()
    }

    /// Number of (TLD, registrar) rows.
    pub fn offer_count(&self) -> usize {
        self.offers.len()
    }

    /// The offer of `registrar` for `tld`, if it has one (binary search in the group).
    #[inline]
    pub fn offer_of(
        &self,
        tld: &schema::ArchivedTld,
        registrar: usize,
    ) -> Option<&schema::ArchivedOffer> {
        let first = tld.first_offer.to_native() as usize;
        let group = &self.by_registrar[first..first + tld.rows.to_native() as usize];
        group
            .binary_search_by(|e| e.registrar.to_native().cmp(&(registrar as u32)))
            .ok()
            .map(|i| &self.offers[group[i].offer.to_native() as usize])
    }

    /// Versions and price lists: each registrar's runs are in place and in order.
    ///
    /// `placed` is each offer's TLD position and registrar, in offer order (the groups
    /// were checked in place, so it holds every offer): a list's entries are looked up
    /// there (8 bytes an offer, 1 MB for S, which stays in cache) rather than in the
    /// offers themselves, where each was a cache miss at a place spread over the file
    /// (S, on a 2 GHz Xeon: 0.43-0.47 ms against 1.7-1.9; docs/PERFORMANCE.md, session
    /// 25). The lists' TLD name order is checked as the order of those positions: the
    /// same order, because the TLDs are in strictly increasing name order, which
    /// [`Self::check_orders_and_aggregates`] checks (open fails unless every check
    /// passes). A binary search and a name comparison per listed offer, at random places
    /// in the file, took ~10 ms of that snapshot's open.
    fn check_registrar_lists(&self, placed: &[(u32, u32)]) -> Result<(), String> {
        let (mut next_version, mut next_listed) = (0usize, 0usize);
        for (i, r) in self.registrars.iter().enumerate() {
            let err = |what: &str| Err(format!("registrar {i}: {what}"));
            let (fv, nv) = (
                r.first_version.to_native() as usize,
                r.versions.to_native() as usize,
            );
            if fv != next_version || fv + nv > self.versions.len() {
                return err("versions out of place");
            }
            next_version = fv + nv;
            if self.versions[fv..fv + nv]
                .windows(2)
                .any(|w| w[0].date >= w[1].date)
            {
                return err("versions not in date order");
            }
            let fl = r.first_listed.to_native() as usize;
            let nl = (r.sells.to_native() + r.renewal_only.to_native()) as usize;
            if fl != next_listed || fl + nl > self.registrar_offers.len() {
                return err("price list out of place");
            }
            next_listed = fl + nl;
            let mut previous: Option<u32> = None;
            for o in self.registrar_offers[fl..fl + nl].iter() {
                let tld = match placed.get(o.to_native() as usize) {
                    Some(&(tld, registrar)) if registrar as usize == i => tld,
                    _ => return err("price list holds another registrar's offer"),
                };
                if previous.is_some_and(|p| p >= tld) {
                    return err("price list not in TLD name order");
                }
                previous = Some(tld);
            }
        }
        if next_version != self.versions.len() || next_listed != self.registrar_offers.len() {
            return Err("versions or price lists not covered by the registrars".into());
        }
        Ok(())
    }

    /// The catalogue: names strictly sorted, every priced TLD once, sort orders are
    /// permutations.
    fn check_catalogue(&self, str_ok: &dyn Fn(&ArchivedSpan) -> bool) -> Result<(), String> {
        let n = self.catalogue.len();
        let mut priced = 0usize;
        for (i, e) in self.catalogue.iter().enumerate() {
            let err = |what: &str| Err(format!("catalogue entry {i}: {what}"));
            if ![&e.name, &e.unicode, &e.kind, &e.manager]
                .iter()
                .all(|s| str_ok(s))
            {
                return err("span outside the text");
            }
            if i > 0 && self.span(&self.catalogue[i - 1].name) >= self.span(&e.name) {
                return err("names not strictly sorted");
            }
            let t = e.tld.to_native();
            if t != NONE {
                if t as usize >= self.tlds.len()
                    || self.span(&self.tlds[t as usize].name) != self.span(&e.name)
                {
                    return err("points to another TLD");
                }
                priced += 1;
            }
        }
        if priced != self.tlds.len() {
            return Err("the catalogue does not hold every TLD".into());
        }
        for (what, order) in [
            ("cheapest", &self.catalogue_by_cheapest),
            ("registrars", &self.catalogue_by_registrars),
        ] {
            let mut seen = vec![false; n];
            if order.len() != n
                || !order.iter().all(|p| {
                    let p = p.to_native() as usize;
                    p < n && !std::mem::replace(&mut seen[p], true)
                })
            {
                return Err(format!("catalogue order by {what} is not a permutation"));
            }
        }
        Ok(())
    }

    /// The TLD position of an offer (binary search over the TLD groups).
    pub fn offer_tld(&self, offer: usize) -> usize {
        self.tlds
            .partition_point(|t| t.first_offer.to_native() as usize <= offer)
            .saturating_sub(1)
    }

    /// An offer's prices as quoted in another currency: the currency, the amounts and
    /// the day of the rate; `None` for a price quoted in USD.
    pub fn original_prices(
        &self,
        o: &schema::ArchivedOffer,
    ) -> Option<(&str, (u32, u32, u32), i64)> {
        self.original(o)
    }

    fn original(&self, o: &schema::ArchivedOffer) -> Option<(&str, (u32, u32, u32), i64)> {
        if o.original_currency.start == o.original_currency.end {
            return None;
        }
        let currency = self.span_str(&o.original_currency);
        (!currency.is_empty()).then(|| {
            (
                currency,
                (
                    o.original_register.to_native(),
                    o.original_renew.to_native(),
                    o.original_transfer.to_native(),
                ),
                i64::from(o.rate_date.to_native()),
            )
        })
    }

    /// Checks everything the query code indexes without checking: run once at open.
    fn check_invariants(&self) -> Result<(), String> {
        self.check_structure()?;
        self.check_text_content(|| {
            self.check_orders_and_aggregates()?;
            self.check_terms_rankings_and_rates()
        })
    }

    /// The offers' terms (a regular price above the promotion it stands beside, a fee
    /// stated where it is said to be included, multi-year totals in range), each other
    /// ranking a permutation of its TLD's sellers in the order of its key, and the rate
    /// table (codes of three capitals, strictly sorted, USD and EUR among them, rates
    /// above zero, one day). Runs after [`Self::check_orders_and_aggregates`].
    fn check_terms_rankings_and_rates(&self) -> Result<(), String> {
        use schema::Ranking;
        let n_off = self.offers.len();
        if !self
            .register_years
            .len()
            .is_multiple_of(crate::source::MAX_YEARS - 1)
        {
            return Err("multi-year totals not in groups of nine".into());
        }
        for (i, o) in self.offers.iter().enumerate() {
            let (register, regular) = (o.register.to_native(), o.regular_register.to_native());
            if regular != NONE && (register == NONE || regular <= register) {
                return Err(format!(
                    "offer {i}: a regular price not above its promotion"
                ));
            }
            if o.icann_fee_included && o.icann_fee.to_native() == NONE {
                return Err(format!(
                    "offer {i}: an included ICANN fee that is not stated"
                ));
            }
            if o.promotion != (register != NONE && (o.promotion || regular != NONE)) {
                return Err(format!(
                    "offer {i}: a promotion without a first-year price, or a regular price without a promotion"
                ));
            }
            let (coupon, code) = (o.coupon_register.to_native(), self.span_str(&o.coupon_code));
            if (coupon == NONE) != code.is_empty()
                || coupon != NONE
                    && (register == NONE
                        || coupon >= register
                        || !crate::source::Coupon::valid_code(code))
            {
                return Err(format!(
                    "offer {i}: a coupon without its code, or not below the first-year price"
                ));
            }
            let member = [o.member_register, o.member_renew, o.member_transfer];
            let prices = [o.register, o.renew, o.transfer];
            if member
                .iter()
                .zip(&prices)
                .any(|(m, p)| m.to_native() != NONE && p.to_native() == NONE)
            {
                return Err(format!("offer {i}: a member price where there is no price"));
            }
            let years = o.years.to_native();
            if years != NONE
                && (!(years as usize).is_multiple_of(crate::source::MAX_YEARS - 1)
                    || years as usize >= self.register_years.len())
            {
                return Err(format!("offer {i}: multi-year totals out of range"));
            }
        }
        for (slot, ranking) in Ranking::ALL[1..].iter().enumerate() {
            let order = &self.rankings[slot];
            if order.len() != n_off {
                return Err(format!(
                    "the {} ranking is not one slot per offer",
                    ranking.name()
                ));
            }
            let mut seen = vec![false; n_off];
            for (i, t) in self.tlds.iter().enumerate() {
                let first = t.first_offer.to_native() as usize;
                let (sellers, rows) = (t.sellers.to_native() as usize, t.rows.to_native() as usize);
                let mut previous: Option<(u64, u32, u32)> = None;
                for (k, p) in order[first..first + rows].iter().enumerate() {
                    let p = p.to_native() as usize;
                    let inside = if k < sellers {
                        (first..first + sellers).contains(&p)
                    } else {
                        p == first + k
                    };
                    if !inside || std::mem::replace(&mut seen[p], true) {
                        return Err(format!(
                            "TLD {i}: the {} ranking is not a permutation of its sellers",
                            ranking.name()
                        ));
                    }
                    if k >= sellers {
                        continue;
                    }
                    let o = &self.offers[p];
                    let (register, renew) = (o.register.to_native(), o.renew.to_native());
                    let key = (
                        ranking.key(register, renew),
                        register,
                        o.registrar.to_native(),
                    );
                    if previous.is_some_and(|prev| prev >= key) {
                        return Err(format!(
                            "TLD {i}: sellers not in the order of the {} ranking",
                            ranking.name()
                        ));
                    }
                    previous = Some(key);
                }
            }
        }
        let mut day = None;
        for (i, r) in self.rates.iter().enumerate() {
            let code = self.span(&r.code);
            if code.len() != 3 || !code.iter().all(u8::is_ascii_uppercase) {
                return Err(format!("exchange rate {i}: not a currency code"));
            }
            if i > 0 && self.span(&self.rates[i - 1].code) >= code {
                return Err(format!("exchange rate {i}: codes not strictly sorted"));
            }
            let m = r.mantissa.to_native();
            if m == 0 || m > 1 << 40 || r.scale.to_native() > 9 || r.minor_unit.to_native() > 2 {
                return Err(format!("exchange rate {i}: not a rate"));
            }
            if *day.get_or_insert(r.date.to_native()) != r.date.to_native() {
                return Err(format!("exchange rate {i}: a rate of another day"));
            }
        }
        if !self.rates.is_empty() {
            for needed in [b"EUR", b"USD"] {
                if !self.rates.iter().any(|r| self.span(&r.code) == needed) {
                    return Err("the exchange rates lack USD or EUR".into());
                }
            }
        }
        Ok(())
    }

    /// Every span inside the text, every index in range, every group inside its array,
    /// the history's order, the registrar lists, the catalogue and the TLD table.
    fn check_structure(&self) -> Result<(), String> {
        let text_len = self.text.len();
        let span_ok = |s: &ArchivedSpan| {
            let (a, b) = (s.start.to_native() as usize, s.end.to_native() as usize);
            a <= b && b <= text_len
        };
        let str_ok = |s: &ArchivedSpan| span_ok(s) && std::str::from_utf8(self.span(s)).is_ok();
        let (n_reg, n_tld, n_off) = (self.registrars.len(), self.tlds.len(), self.offers.len());
        for (i, r) in self.registrars.iter().enumerate() {
            let spans = [&r.name_json, &r.listing_head, &r.listing_path];
            if !(str_ok(&r.key)
                && str_ok(&r.name)
                && str_ok(&r.homepage)
                && spans.iter().all(|s| span_ok(s)))
            {
                return Err(format!("registrar {i}: span outside the text"));
            }
            if i > 0 && self.span(&self.registrars[i - 1].key) >= self.span(&r.key) {
                return Err(format!("registrar {i}: keys not strictly sorted"));
            }
        }
        if self.by_registrar.len() != n_off {
            return Err("registrar index length differs from offer count".into());
        }
        let mut next_offer = 0usize;
        let mut next_change = 0usize;
        // Each offer's TLD position and registrar, for the registrars' price lists.
        let mut placed: Vec<(u32, u32)> = Vec::with_capacity(n_off);
        for (i, t) in self.tlds.iter().enumerate() {
            let err = |what: &str| Err(format!("TLD {i}: {what}"));
            if !(str_ok(&t.name)
                && span_ok(&t.key_json)
                && span_ok(&t.client_tail)
                && span_ok(&t.public_tail))
            {
                return err("span outside the text");
            }
            let (first, sellers, rows) = (
                t.first_offer.to_native() as usize,
                t.sellers.to_native() as usize,
                t.rows.to_native() as usize,
            );
            if first != next_offer || sellers > rows || first + rows > n_off {
                return err("offer group out of place");
            }
            next_offer = first + rows;
            let (fc, nc) = (
                t.first_change.to_native() as usize,
                t.changes.to_native() as usize,
            );
            if fc != next_change || fc + nc > self.history.len() {
                return err("history group out of place");
            }
            next_change = fc + nc;
            for o in [
                t.lowest_renew_offer.to_native(),
                t.lowest_5y_offer.to_native(),
            ] {
                if o != NONE && !(first..first + sellers).contains(&(o as usize)) {
                    return err("aggregate points outside its sellers");
                }
            }
            for starts in [t.client_start, t.records_start] {
                if starts.to_native() as usize > text_len {
                    return err("fragment start outside the text");
                }
            }
            let mut client = t.client_start.to_native();
            let mut record = t.records_start.to_native();
            for (k, o) in self.offers[first..first + rows].iter().enumerate() {
                if o.registrar.to_native() as usize >= n_reg
                    || !span_ok(&o.record)
                    || !span_ok(&o.original_currency)
                    || !span_ok(&o.coupon_code)
                    || o.record.start < record
                {
                    return err("offer registrar or record out of range");
                }
                placed.push((i as u32, o.registrar.to_native()));
                record = o.record.end.to_native();
                if k < sellers {
                    let end = o.client_end.to_native();
                    if end < client || end as usize > text_len {
                        return err("cheapest fragments out of order");
                    }
                    client = end;
                    if !span_ok(&o.listing_prices) {
                        return err("listing span outside the text");
                    }
                }
                let e = &self.by_registrar[first + k];
                let b = e.offer.to_native() as usize;
                if !(first..first + rows).contains(&b) || self.offers[b].registrar != e.registrar {
                    return err("registrar index points outside its group");
                }
            }
        }
        if next_offer != n_off || next_change != self.history.len() {
            return Err("offers or history not covered by the TLD groups".into());
        }
        if self
            .history
            .iter()
            .any(|c| c.registrar.to_native() as usize >= n_reg)
        {
            return Err("history refers to an unknown registrar".into());
        }
        for t in self.tlds.iter() {
            let fc = t.first_change.to_native() as usize;
            let group = &self.history[fc..fc + t.changes.to_native() as usize];
            if group
                .windows(2)
                .any(|w| (w[0].registrar, w[0].date) >= (w[1].registrar, w[1].date))
            {
                return Err("a TLD's history is not ordered by (registrar, date)".into());
            }
        }
        self.check_registrar_lists(&placed)?;
        self.check_catalogue(&str_ok)?;
        let table = &self.tld_table;
        if !table.len().is_power_of_two() || !table.iter().any(|v| *v == 0) {
            return Err("TLD table size is not a power of two or has no empty slot".into());
        }
        if table.iter().any(|v| v.to_native() as usize > n_tld) {
            return Err("TLD table points outside the TLD list".into());
        }
        if table.iter().filter(|v| **v != 0).count() != n_tld {
            return Err("TLD table does not hold every TLD once".into());
        }
        Ok(())
    }

    /// The pre-rendered JSON against what the builder renders from the integers and
    /// names beside it, with the builder's own writers ([`render`]): each
    /// registrar's quoted name and listing pieces, each TLD's quoted name, client
    /// entries, tails, price records and listing prices. Every byte a query copies into
    /// an answer without writing it itself is one of these, so a snapshot whose text
    /// was edited (and its content hash recomputed) is refused here instead of being
    /// served as broken or contradictory JSON. The bare strings beside them (names,
    /// homepages, the catalogue's words) are only ever written through
    /// [`crate::json::write_str`], which escapes them. The text's layout
    /// ([`Self::check_registrar_layout`]) is checked here too, each piece before its
    /// bytes: the registrars', then each TLD's beside its text, then the catalogue's.
    ///
    /// The TLDs are checked in chunks of about [`TEXT_CHUNK_OFFERS`] offers, taken in
    /// turn by this thread and by up to three others (the check is two thirds of an
    /// open's work: ~900 instructions per offer); this thread first runs `beside`,
    /// the other checks, whose error comes first. Of the chunks' errors, the first
    /// chunk's is told, so the message does not depend on the threads' timing. Each
    /// chunk lays its TLDs out from where its first TLD's name starts; once all passed,
    /// each chunk must start where the one before it ended.
    fn check_text_content(
        &self,
        beside: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        if let Err(e) = self
            .check_registrar_layout()
            .and_then(|()| self.check_registrar_text())
        {
            return beside().and(Err(e));
        }
        let (keys, names) = self.registrar_keys_and_names();
        let mut chunks: Vec<std::ops::Range<usize>> = Vec::new();
        let mut from = 0;
        while from < self.tlds.len() {
            let to = self.tld_chunk_end(from, TEXT_CHUNK_OFFERS);
            chunks.push(from..to);
            from = to;
        }
        // Where each chunk's pieces start: its first TLD's name.
        let start = |c: usize| self.tlds[chunks[c].start].name.start.to_native();
        let next = std::sync::atomic::AtomicUsize::new(0);
        // Takes chunks until none is left: each chunk's end or first error. Chunks are
        // taken in increasing order, so after its first error a thread skips the rest:
        // the chunks before the error's decide what is told.
        let work = || -> Vec<(usize, Result<u32, String>)> {
            let mut scratch = Scratch::new();
            let (mut done, mut failed) = (Vec::new(), false);
            loop {
                let c = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(range) = chunks.get(c) else {
                    return done;
                };
                if failed {
                    continue;
                }
                let mut pos = start(c);
                let checked =
                    self.check_tld_text(range.clone(), &keys, &names, &mut scratch, &mut pos);
                failed = checked.is_err();
                done.push((c, checked.map(|()| pos)));
            }
        };
        let helpers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4)
            .min(chunks.len())
            .saturating_sub(1);
        let (other, mut done) = std::thread::scope(|s| {
            let spawned: Vec<_> = (0..helpers)
                .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
                .collect();
            let other = beside();
            let mut done = work();
            for h in spawned {
                done.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            (other, done)
        });
        other?;
        // In chunk order, as one thread would have met them: where the chunk starts,
        // then its own checks. A skipped chunk comes after a failed one.
        done.sort_unstable_by_key(|(c, _)| *c);
        let mut pos = self.registrars_text_end();
        for (c, end) in done {
            if start(c) != pos {
                let i = chunks[c].start;
                return Err(layout_error(
                    ("TLD", i),
                    "span not where the builder puts it",
                ));
            }
            pos = end?;
        }
        self.check_catalogue_layout(pos)
    }

    /// The end of the chunk of TLDs that starts at position `from`: the TLDs up to and
    /// including the one at which the chunk holds `offers` offers, or the last.
    fn tld_chunk_end(&self, from: usize, offers: usize) -> usize {
        let mut held = 0;
        for (i, t) in self.tlds.iter().enumerate().skip(from) {
            held += t.rows.to_native() as usize;
            if held >= offers {
                return i + 1;
            }
        }
        self.tlds.len()
    }

    /// Each registrar's key and quoted name, by position, for the check of the offers'
    /// text, which all render them.
    #[allow(clippy::type_complexity)]
    fn registrar_keys_and_names(&self) -> (Vec<&str>, Vec<&[u8]>) {
        self.registrars
            .iter()
            .map(|r| (self.span_str(&r.key), self.span(&r.name_json)))
            .unzip()
    }

    /// Each registrar's quoted name and listing pieces.
    fn check_registrar_text(&self) -> Result<(), String> {
        let mut scratch = Scratch::new();
        for (i, r) in self.registrars.iter().enumerate() {
            let (key, name) = (self.span_str(&r.key), self.span_str(&r.name));
            let name_json = self.span(&r.name_json);
            if !same!(&mut scratch, name_json, |o| crate::json::write_str(name, o))
                || !same!(&mut scratch, self.span(&r.listing_head), |o| {
                    render::listing_head(name_json, key, o)
                })
                || !same!(&mut scratch, self.span(&r.listing_path), |o| {
                    render::listing_path(key, o)
                })
            {
                return Err(format!(
                    "registrar {i}: its JSON text is not what its name and key render to"
                ));
            }
        }
        Ok(())
    }

    /// The layout ([`Self::check_tld_layout`], from `pos` on) and the pre-rendered text
    /// of the TLDs at positions `tlds`, one TLD after the other.
    fn check_tld_text<'a>(
        &'a self,
        tlds: std::ops::Range<usize>,
        keys: &[&'a str],
        names: &[&'a [u8]],
        scratch: &mut Scratch,
        pos: &mut u32,
    ) -> Result<(), String> {
        for i in tlds {
            self.check_tld_layout(i, pos)?;
            let t = &self.tlds[i];
            let err = |what: &str| {
                Err(format!(
                    "TLD {i}: {what} in the text is not what the prices render to"
                ))
            };
            if !same!(scratch, self.span(&t.key_json), |o| {
                crate::json::write_str(self.span_str(&t.name), o)
            }) {
                return err("the quoted name");
            }
            let first = t.first_offer.to_native() as usize;
            let (sellers, rows) = (t.sellers.to_native() as usize, t.rows.to_native() as usize);
            let group = &self.offers[first..first + rows];
            let mut start = t.client_start.to_native();
            for (k, o) in group[..sellers].iter().enumerate() {
                let end = o.client_end.to_native();
                let r = o.registrar.to_native() as usize;
                if !same!(scratch, self.text_range(start, end), |out| {
                    if k > 0 {
                        out.put_byte(b',');
                    }
                    render::client_entry(
                        k + 1,
                        names[r],
                        keys[r],
                        (o.register.to_native(), o.renew.to_native()),
                        self.terms(o),
                        o.updated_ms.to_native(),
                        false,
                        Fx::USD,
                        out,
                    )
                }) {
                    return err("a cheapest entry");
                }
                start = end;
            }
            let averages = (
                t.avg_register.to_native(),
                t.avg_renew.to_native(),
                t.avg_transfer.to_native(),
            );
            if !same!(scratch, self.span(&t.client_tail), |o| {
                render::client_tail(sellers, o)
            }) || !same!(scratch, self.span(&t.public_tail), |o| {
                render::public_tail(sellers, averages, Fx::USD, o)
            }) {
                return err("the end of its cheapest entries");
            }
            for (k, o) in group.iter().enumerate() {
                let key = keys[o.registrar.to_native() as usize];
                let (register, renew, transfer) = (
                    o.register.to_native(),
                    o.renew.to_native(),
                    o.transfer.to_native(),
                );
                if !same!(scratch, self.span(&o.record), |out| {
                    render::record(
                        key,
                        (register, renew, transfer),
                        self.terms(o),
                        o.updated_ms.to_native(),
                        Fx::USD,
                        out,
                    )
                }) {
                    return err("a price record");
                }
                let currency = self.span(&o.original_currency);
                if !(currency.is_empty()
                    || currency.len() == 3 && currency.iter().all(u8::is_ascii_uppercase))
                {
                    return err("a quoted currency");
                }
                if k < sellers
                    && !same!(scratch, self.span(&o.listing_prices), |out| {
                        render::listing_prices(
                            (register, renew, transfer),
                            self.original(o),
                            self.terms(o),
                            Fx::USD,
                            out,
                        )
                    })
                {
                    return err("a registrar listing's prices");
                }
            }
        }
        Ok(())
    }

    /// Every span against the builder's layout of `text`: the registrars' pieces, then
    /// per TLD its name, key, quoted currencies, client entries, tails, records (comma
    /// separated) and listing prices, then the catalogue's names, types and managers,
    /// each starting where the one before ended, and nothing after the last. Range checks
    /// only say a span lies inside the text; this says the pieces tile it in the
    /// builder's order, and [`Self::check_text_content`] that each rendered piece holds
    /// exactly what the builder renders (the names are canonical, the currencies three
    /// capitals): together, a forged span cannot cut a fragment or splice two. Runs
    /// after the range checks, in three parts: this one (the registrars, whose pieces
    /// end at [`Self::registrars_text_end`]), [`Self::check_tld_layout`] for each TLD
    /// just before its text, and [`Self::check_catalogue_layout`] from where the last
    /// TLD ended.
    fn check_registrar_layout(&self) -> Result<(), String> {
        let mut pos = 0u32;
        for (i, r) in self.registrars.iter().enumerate() {
            let what = ("registrar", i);
            for s in [
                &r.name_json,
                &r.key,
                &r.name,
                &r.homepage,
                &r.listing_head,
                &r.listing_path,
            ] {
                next_span(&mut pos, s, what)?;
            }
            if !crate::source::is_registrar_key(self.span_str(&r.key)) {
                return Err(format!("registrar {i}: the key is not a registrar key"));
            }
        }
        Ok(())
    }

    /// Where the registrars' pieces end and the first TLD's begin, once
    /// [`Self::check_registrar_layout`] passed.
    fn registrars_text_end(&self) -> u32 {
        self.registrars
            .last()
            .map_or(0, |r| r.listing_path.end.to_native())
    }

    /// The pieces of the TLD at position `i`, laid out from `pos` on (see
    /// [`Self::check_registrar_layout`]); `pos` ends where its last piece ends.
    fn check_tld_layout(&self, i: usize, pos: &mut u32) -> Result<(), String> {
        let text = &self.text;
        let t = &self.tlds[i];
        let what = ("TLD", i);
        next_span(pos, &t.name, what)?;
        next_span(pos, &t.key_json, what)?;
        let name = self.span_str(&t.name);
        if crate::tld::normalize(name).ok().as_deref() != Some(name) {
            return Err(format!("TLD {i}: the name is not a canonical TLD name"));
        }
        let first = t.first_offer.to_native() as usize;
        let (sellers, rows) = (t.sellers.to_native() as usize, t.rows.to_native() as usize);
        let group = &self.offers[first..first + rows];
        for o in group {
            if o.original_currency.start != o.original_currency.end {
                next_span(pos, &o.original_currency, what)?;
            }
        }
        for o in group {
            if o.coupon_code.start != o.coupon_code.end {
                next_span(pos, &o.coupon_code, what)?;
            }
        }
        // Client entries: `{...}`, then `,{...}` each, one after the other and none
        // empty (their bytes are the text check's).
        if t.client_start != *pos {
            return Err(format!(
                "TLD {i}: client entries not where the builder puts them"
            ));
        }
        for o in &group[..sellers] {
            let end = o.client_end.to_native();
            if end <= *pos {
                return Err(format!("TLD {i}: a client entry is not one entry"));
            }
            *pos = end;
        }
        next_span(pos, &t.client_tail, what)?;
        next_span(pos, &t.public_tail, what)?;
        if t.records_start != *pos {
            return Err(format!("TLD {i}: records not where the builder puts them"));
        }
        for (k, o) in group.iter().enumerate() {
            if k > 0 {
                if text.get(*pos as usize).copied() != Some(b',') {
                    return Err(format!("TLD {i}: records not comma separated"));
                }
                *pos += 1;
            }
            next_span(pos, &o.record, what)?;
        }
        for (k, o) in group.iter().enumerate() {
            if k < sellers {
                next_span(pos, &o.listing_prices, what)?;
            } else if o.listing_prices.start != o.listing_prices.end {
                return Err(format!("TLD {i}: a renewal-only offer has listing prices"));
            }
        }
        Ok(())
    }

    /// The catalogue's pieces from `pos`, where the last TLD's ended (see
    /// [`Self::check_registrar_layout`]), and nothing after them.
    fn check_catalogue_layout(&self, mut pos: u32) -> Result<(), String> {
        let same = |a: &ArchivedSpan, b: &ArchivedSpan| a.start == b.start && a.end == b.end;
        for (i, e) in self.catalogue.iter().enumerate() {
            let what = ("catalogue entry", i);
            match e.tld.to_native() {
                NONE => next_span(&mut pos, &e.name, what)?,
                t if same(&e.name, &self.tlds[t as usize].name) => {}
                _ => return Err(format!("{} {}: name is not its TLD's", what.0, what.1)),
            }
            if !same(&e.unicode, &e.name) {
                next_span(&mut pos, &e.unicode, what)?;
            }
            next_span(&mut pos, &e.kind, what)?;
            next_span(&mut pos, &e.manager, what)?;
        }
        for (i, r) in self.rates.iter().enumerate() {
            next_span(&mut pos, &r.code, ("exchange rate", i))?;
        }
        if pos as usize != self.text.len() {
            return Err("text holds bytes after the last piece".into());
        }
        Ok(())
    }

    /// What the queries take on trust beyond indexes being in range: the orders they
    /// binary-search or cut (names, sellers before renewal-only rows, sellers by price,
    /// the by-registrar index, the catalogue orders), and the aggregates the builder
    /// computed from the offers (averages, lowest renewal and 5-year cost, the per-registrar
    /// counts and dates), recomputed here with the builder's own functions. Run after
    /// [`Self::check_invariants`]'s range checks, so it indexes freely. Integer work only,
    /// one pass over the offers (the pre-rendered JSON is [`Self::check_text_content`]'s).
    fn check_orders_and_aggregates(&self) -> Result<(), String> {
        use render::Mean;
        use schema::five_year_order;
        let n_reg = self.registrars.len();
        // Per registrar: offers sold, renewal-only, first places, latest price.
        let mut sells = vec![0u32; n_reg];
        let mut renewal_only = vec![0u32; n_reg];
        let mut cheapest_in = vec![0u32; n_reg];
        let mut updated = vec![0i64; n_reg];
        let mut data_updated = 0i64;
        for (i, t) in self.tlds.iter().enumerate() {
            let err = |what: &str| Err(format!("TLD {i}: {what}"));
            let name = self.span(&t.name);
            if i > 0 && self.span(&self.tlds[i - 1].name) >= name {
                return err("names not strictly sorted");
            }
            if std::str::from_utf8(name)
                .ok()
                .and_then(|n| self.tld_index(n))
                != Some(i)
            {
                return err("the TLD table does not find it");
            }
            let first = t.first_offer.to_native() as usize;
            let (sellers, rows) = (t.sellers.to_native() as usize, t.rows.to_native() as usize);
            let index = &self.by_registrar[first..first + rows];
            if index.windows(2).any(|w| w[0].registrar >= w[1].registrar) {
                return err("registrar index not ordered by registrar");
            }
            // One pass over the group: orders, sums and minima together. The orders and
            // minima are of (u64, u32, u32) triples, compared as one integer each.
            let mut means = [Mean::default(); 3];
            let none = packed(u64::MAX, 0, NONE);
            let (mut renew_min, mut five_min) = (none, none);
            let mut previous = 0u128;
            let mut oldest = i64::MAX;
            for (k, o) in self.offers[first..first + rows].iter().enumerate() {
                let (register, renew, r) = (
                    o.register.to_native(),
                    o.renew.to_native(),
                    o.registrar.to_native(),
                );
                let seller = k < sellers;
                if seller == (register == NONE) {
                    return err("sellers are not exactly the offers with a register price, first");
                }
                // Sellers by (register, renew, key); renewal-only rows (register NONE) by
                // (renew, key): one lexicographic order over the whole group.
                let key = packed(u64::from(register), renew, r);
                if k > 0 && previous >= key {
                    return err(if seller {
                        "sellers not ordered by (register, renew, registrar key)"
                    } else {
                        "renewal-only offers not ordered by (renew, registrar key)"
                    });
                }
                previous = key;
                let ms = o.updated_ms.to_native();
                updated[r as usize] = updated[r as usize].max(ms);
                data_updated = data_updated.max(ms);
                if !seller {
                    renewal_only[r as usize] += 1;
                    continue;
                }
                sells[r as usize] += 1;
                oldest = oldest.min(ms);
                means[0].add(register);
                means[1].add(renew);
                means[2].add(o.transfer.to_native());
                let at = (first + k) as u32;
                renew_min = renew_min.min(packed(u64::from(renew), r, at));
                five_min = five_min.min(packed(five_year_order(register, renew), r, at));
            }
            if [t.avg_register, t.avg_renew, t.avg_transfer]
                .iter()
                .zip(&means)
                .any(|(a, m)| a.to_native() != m.cents())
            {
                return err("average prices do not match the sellers");
            }
            // The offers' positions, the low 32 bits.
            if t.lowest_renew_offer != renew_min as u32 || t.lowest_5y_offer != five_min as u32 {
                return err("lowest renewal or 5-year cost does not match the sellers");
            }
            if t.oldest_ms != oldest {
                return err("oldest seller date does not match the sellers");
            }
            if sellers > 0 {
                cheapest_in[self.offers[first].registrar.to_native() as usize] += 1;
            }
        }
        for (i, r) in self.registrars.iter().enumerate() {
            if r.sells != sells[i] || r.renewal_only != renewal_only[i] {
                return Err(format!("registrar {i}: TLD counts do not match its offers"));
            }
            if r.cheapest_in != cheapest_in[i] {
                return Err(format!(
                    "registrar {i}: cheapest_in does not match the TLDs"
                ));
            }
            if r.updated_ms != updated[i] {
                return Err(format!(
                    "registrar {i}: latest price date does not match its offers"
                ));
            }
        }
        if self.registrar_offers.len() != self.offers.len() {
            return Err("the registrars' price lists do not hold every offer once".into());
        }
        if self.data_updated_ms != data_updated {
            return Err("data date does not match the newest price".into());
        }
        // The catalogue orders: by cheapest registration (unsold last), by sellers (most
        // first), ties by name (= position).
        let catalogue_key = |p: u32| {
            let e = &self.catalogue[p as usize];
            match e.tld.to_native() {
                NONE => (NONE, 0),
                t => {
                    let t = &self.tlds[t as usize];
                    let sellers = t.sellers.to_native();
                    let cheapest = if sellers == 0 {
                        NONE
                    } else {
                        self.offers[t.first_offer.to_native() as usize]
                            .register
                            .to_native()
                    };
                    (cheapest, sellers)
                }
            }
        };
        let by_cheapest = |p: u32| (catalogue_key(p).0, p);
        if self
            .catalogue_by_cheapest
            .windows(2)
            .any(|w| by_cheapest(w[0].to_native()) >= by_cheapest(w[1].to_native()))
        {
            return Err("catalogue order by cheapest is not by price, then name".into());
        }
        let by_sellers = |p: u32| (std::cmp::Reverse(catalogue_key(p).1), p);
        if self
            .catalogue_by_registrars
            .windows(2)
            .any(|w| by_sellers(w[0].to_native()) >= by_sellers(w[1].to_native()))
        {
            return Err("catalogue order by registrars is not by sellers, then name".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::schema::{CatalogueEntry, Change, Registrar, Span, Tld, Version};
    use super::*;

    /// Bytes `(i * 7 + 1) as u8` for `i` in `0..len`: the inputs of the hash vectors.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + 1) as u8).collect()
    }

    /// The content hash is the standard XXH3-128 (the empty input's is the reference
    /// implementation's), so every snapshot written before the hash crate changed
    /// (xxhash-rust before twox-hash) still opens; the values were computed by
    /// that crate. A reload hashes in steps: the same value.
    #[test]
    fn the_content_hash_is_xxh3_128_at_once_and_in_steps() {
        for (len, want) in [
            (0, 0x99aa06d3014798d86001c324468d497f_u128),
            (3, 0xf727126d6288a4bd5c83885a0fb5d516),
            (100, 0x87cf077b8f4f1a53c214fd5917fc72fd),
            (300, 0xf3923d2b852d817a935960848d04785c),
            (5000, 0x41e4bc877e39437f882162ebfafc2c3f),
        ] {
            let bytes = pattern(len);
            assert_eq!(content_hash(&bytes), want, "{len} bytes");
            let mut stepped = twox_hash::XxHash3_128::new();
            for piece in bytes.chunks(97) {
                stepped.write(piece);
            }
            assert_eq!(stepped.finish_128(), want, "{len} bytes in steps");
        }
    }

    /// The file of `data`: its archive behind a valid header, so only the invariants
    /// can refuse it.
    fn file_bytes(data: &SnapshotData) -> Vec<u8> {
        let payload = rkyv::to_bytes::<rkyv::rancor::Error>(data).unwrap();
        let header = Header {
            version: FORMAT_VERSION,
            payload_len: payload.len() as u64,
            content_hash: content_hash(&payload),
            data_updated_ms: 0,
            built_at_ms: None,
        };
        let mut bytes = header.to_bytes().to_vec();
        bytes.extend_from_slice(&payload);
        bytes
    }

    /// Opens [`file_bytes`] of `data`.
    fn open(data: &SnapshotData) -> Result<Snapshot, OpenError> {
        Snapshot::from_bytes(&file_bytes(data))
    }

    fn span(text: &mut Vec<u8>, s: &str) -> Span {
        let start = text.len() as u32;
        text.extend_from_slice(s.as_bytes());
        Span {
            start,
            end: text.len() as u32,
        }
    }

    /// One registrar, one TLD (`com`, no offers, two changes) and two catalogue entries
    /// (`com`, `net`): a small snapshot that passes every check.
    fn valid() -> SnapshotData {
        // Laid out in `text` as the builder does (see `check_registrar_layout`).
        let mut text = Vec::new();
        let registrar = Registrar {
            name_json: span(&mut text, "\"Alpha\""),
            key: span(&mut text, "alpha"),
            name: span(&mut text, "Alpha"),
            homepage: span(&mut text, ""),
            listing_head: span(
                &mut text,
                "{\"name\":\"Alpha\",\"key\":\"alpha\",\"website_url\":\"",
            ),
            listing_path: span(&mut text, "/registrars/alpha\""),
            versions: 2,
            ..Registrar::default()
        };
        let com = span(&mut text, "com");
        let key_json = span(&mut text, "\"com\"");
        let client_start = text.len() as u32;
        let client_tail = span(&mut text, "],\"registrar_count\":0}");
        let public_tail = span(
            &mut text,
            "],\"registrar_count\":0,\"avg_prices\":{\"register\":null,\"renew\":null,\"transfer\":null}}",
        );
        let records_start = text.len() as u32;
        let empty = |text: &mut Vec<u8>| span(text, "");
        let (com_kind, com_manager) = (empty(&mut text), empty(&mut text));
        let net = span(&mut text, "net");
        let (net_kind, net_manager) = (empty(&mut text), empty(&mut text));
        let mut table = vec![0u32; 8];
        table[name_hash(b"com") as usize & 7] = 1;
        SnapshotData {
            registrars: vec![registrar],
            tlds: vec![Tld {
                name: com,
                key_json,
                changes: 2,
                avg_register: NONE,
                avg_renew: NONE,
                avg_transfer: NONE,
                lowest_renew_offer: NONE,
                lowest_5y_offer: NONE,
                oldest_ms: i64::MAX,
                client_start,
                client_tail,
                public_tail,
                records_start,
                ..Tld::default()
            }],
            tld_table: table,
            history: vec![
                Change {
                    date: 1,
                    ..Change::default()
                },
                Change {
                    date: 2,
                    ..Change::default()
                },
            ],
            catalogue: vec![
                CatalogueEntry {
                    name: com,
                    unicode: com,
                    kind: com_kind,
                    manager: com_manager,
                    tld: 0,
                },
                CatalogueEntry {
                    name: net,
                    unicode: net,
                    kind: net_kind,
                    manager: net_manager,
                    tld: NONE,
                },
            ],
            catalogue_by_cheapest: vec![0, 1],
            catalogue_by_registrars: vec![0, 1],
            versions: vec![
                Version {
                    date: 1,
                    ms: 0,
                    live: 1,
                },
                Version {
                    date: 2,
                    ms: 0,
                    live: 1,
                },
            ],
            text,
            ..SnapshotData::default()
        }
    }

    #[test]
    fn the_new_arrays_are_checked_at_open() {
        open(&valid()).expect("the valid snapshot opens");
        type Breakage = (&'static str, fn(&mut SnapshotData));
        let cases: [Breakage; 8] = [
            ("names not strictly sorted", |d| d.catalogue.swap(0, 1)),
            ("points to another TLD", |d| d.catalogue[1].tld = 0),
            ("does not hold every TLD", |d| d.catalogue[0].tld = NONE),
            ("not a permutation", |d| {
                d.catalogue_by_cheapest = vec![0, 0]
            }),
            ("not a permutation", |d| d.catalogue_by_registrars = vec![1]),
            ("versions not in date order", |d| d.versions[1].date = 1),
            ("versions out of place", |d| d.registrars[0].versions = 3),
            ("not ordered by (registrar, date)", |d| {
                d.history[1].date = 0
            }),
        ];
        for (expected, break_it) in cases {
            let mut d = valid();
            break_it(&mut d);
            match open(&d) {
                Err(OpenError::Corrupt(why)) => assert!(why.contains(expected), "{why}"),
                other => panic!("{expected}: {other:?}"),
            }
        }
    }

    /// The layout is checked in the text check's chunks, each from where its first TLD's
    /// name starts, and chained across them once all passed: a byte between the
    /// registrars' pieces and the first TLD's (every later span moved past it, so that
    /// each piece is still its bytes) is refused by that chain alone, and a stepped open
    /// says the same.
    #[test]
    fn a_gap_before_a_chunk_is_refused() {
        let mut d = valid();
        let at = d.registrars[0].listing_path.end;
        d.text.insert(at as usize, b' ');
        let moved = |s: &mut Span| {
            s.start += 1;
            s.end += 1;
        };
        for t in &mut d.tlds {
            for s in [
                &mut t.name,
                &mut t.key_json,
                &mut t.client_tail,
                &mut t.public_tail,
            ] {
                moved(s);
            }
            t.client_start += 1;
            t.records_start += 1;
        }
        for e in &mut d.catalogue {
            for s in [&mut e.name, &mut e.unicode, &mut e.kind, &mut e.manager] {
                moved(s);
            }
        }
        let bytes = file_bytes(&d);
        let path = std::env::temp_dir().join(format!("tldsnap-gap-{}.snap", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let stepped = Opening::start(&path).and_then(|mut o| {
            while !o.step(4096) {}
            o.finish()
        });
        std::fs::remove_file(&path).unwrap();
        for opened in [Snapshot::from_bytes(&bytes), stepped] {
            match opened {
                Err(OpenError::Corrupt(why)) => {
                    assert_eq!(why, "TLD 0: span not where the builder puts it")
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// The text checker's buffer and caches: a rendering is the same as a piece exactly
    /// when a `Vec<u8>` gets the same bytes, whatever the lengths (longer or shorter
    /// than the piece, than the buffer, than what the caches keep) and whether the
    /// caches hit or miss.
    #[test]
    fn the_text_checker_agrees_with_a_buffer() {
        use crate::json::{write_int, write_str};
        use crate::price::write_cents;
        use crate::time::write_iso_millis;
        fn write(s: &str, v: u64, out: &mut impl Out) {
            write_str(s, out);
            out.put_byte(b',');
            write_int(v, out);
            out.put(b",");
            write_cents(v, out);
            out.put_byte(b',');
            write_iso_millis(v as i64 * 7_919, out);
            write_str(s, out);
        }
        let text = format!("com\"quote\"{}k{}", "n".repeat(700), "\u{e9}".repeat(20));
        let strs = [&text[0..3], &text[3..10], &text[10..710], &text[710..]];
        let values = [
            0,
            9,
            10,
            99,
            100,
            12_345,
            1_000_000_007,
            u64::from(u32::MAX),
        ];
        let mut scratch = Scratch::new();
        // Twice: the second round hits the caches the first filled.
        for _ in 0..2 {
            for s in strs {
                for v in values {
                    let mut expected = Vec::new();
                    write(s, v, &mut expected);
                    assert!(
                        same!(&mut scratch, &expected, |o| write(s, v, o)),
                        "{s:?} {v}"
                    );
                    let mut shorter = expected.clone();
                    shorter.pop();
                    assert!(
                        !same!(&mut scratch, &shorter, |o| write(s, v, o)),
                        "{s:?} {v}"
                    );
                    assert!(!same!(&mut scratch, &[], |o| write(s, v, o)), "{s:?} {v}");
                    let mut longer = expected.clone();
                    longer.push(b'}');
                    assert!(
                        !same!(&mut scratch, &longer, |o| write(s, v, o)),
                        "{s:?} {v}"
                    );
                    let mut other = expected.clone();
                    let at = other.len() / 2;
                    other[at] ^= 1;
                    assert!(
                        !same!(&mut scratch, &other, |o| write(s, v, o)),
                        "{s:?} {v}"
                    );
                }
            }
        }
        // A rendering far longer than the piece and than the buffer.
        assert!(!same!(&mut scratch, b"\"\"", |o| {
            for _ in 0..100 {
                write_str(strs[2], o)
            }
        }));
    }
}
