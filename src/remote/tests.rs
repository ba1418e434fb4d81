//! The room's own tests, on `object_store`'s in-memory store (the S3 client against a
//! real S3-compatible server is tested in `tests/remote.rs`).

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures_util::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use super::replica::{CACHE_FILE, CACHE_POINTER_FILE, Polled, Replica, Status, SyncState};
use super::*;
use crate::build::{BuildOptions, build};
use crate::store::Store;

fn fixture_bytes(edit: impl Fn(&str) -> String) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/source");
    let read = |f: &str| std::fs::read(dir.join(f)).expect("fixture");
    let prices = edit(&String::from_utf8(read("prices.csv")).expect("utf-8"));
    let source = crate::source::read_all(
        &read("registrars.csv")[..],
        prices.as_bytes(),
        Some(&read("history.csv")[..]),
        Some(&read("tlds.csv")[..]),
    )
    .expect("fixture source reads");
    build(&source, &BuildOptions::default())
        .expect("fixture builds")
        .0
}

/// The fixture, and a second version of it with one price changed.
fn two_snapshots() -> (Vec<u8>, Vec<u8>) {
    let a = fixture_bytes(|s| s.to_owned());
    // One register price a cent lower: another hash.
    let b = fixture_bytes(|s| s.replacen("com,alpha,9.99,", "com,alpha,9.98,", 1));
    assert_ne!(a, b);
    (a, b)
}

fn hash_of(bytes: &[u8]) -> String {
    Snapshot::from_bytes(bytes)
        .expect("valid")
        .header()
        .hash_hex()
}

fn location(url: &str) -> Location {
    Location::parse(url).expect("parses")
}

fn temp_dir(tag: &str) -> crate::files::TestDir {
    crate::files::TestDir::new(&format!("remote-{tag}"))
}

#[test]
fn locations_parse_and_refuse() {
    let l = location("s3://snaps/prod/eu/");
    assert_eq!(
        (l.bucket.as_str(), l.prefix.as_str(), l.name.as_deref()),
        ("snaps", "prod/eu", None)
    );
    assert_eq!(l.pointer_key(), "prod/eu/current");
    assert_eq!(l.prefix_url(), "s3://snaps/prod/eu/");
    assert_eq!(location("s3://snaps/prod/eu"), l);
    let n = location("s3://snaps/prod/2026-11-23.snap");
    assert_eq!(n.prefix, "prod");
    assert_eq!(n.name.as_deref(), Some("2026-11-23.snap"));
    assert_eq!(n.to_string(), "s3://snaps/prod/2026-11-23.snap");
    let root = location("s3://snaps");
    assert_eq!(
        (root.prefix.as_str(), root.pointer_key()),
        ("", "current".into())
    );
    assert_eq!(location("s3://snaps/x.snap").key("x.snap"), "x.snap");
    for bad in [
        "snaps/prod/",
        "http://snaps/prod/",
        "s3://",
        "s3://ab/",
        "s3://Snaps/prod/",
        "s3://-snaps/prod/",
        "s3://snaps//prod/",
        "s3://snaps/prod/../x/",
        "s3://snaps/pr od/",
        "s3://snaps/prod/current",
    ] {
        assert!(Location::parse(bad).is_err(), "{bad} parsed");
    }
    assert!(is_remote("s3://snaps/") && !is_remote("/var/lib/x.snap"));
}

#[test]
fn pointers_round_trip_and_refuse_what_they_are_not() {
    let p = Pointer {
        key: "prod/a.snap".into(),
        hash: "0123456789abcdef0123456789abcdef".into(),
        bytes: 4096,
        data_updated_ms: 1_790_000_000_000,
        published_at_ms: 1_795_262_400_123,
    };
    assert_eq!(Pointer::parse(&p.to_json()), Ok(p.clone()));
    let json = String::from_utf8(p.to_json()).expect("utf-8");
    let newer = json.replace("\"format\":1", "\"format\":1,\"extra\":true");
    assert_eq!(Pointer::parse(newer.as_bytes()), Ok(p.clone()));
    for bad in [
        json.replace("\"format\":1", "\"format\":2"),
        json.replace("0123456789abcdef0123456789abcdef", "0123"),
        json.replace(
            "0123456789abcdef0123456789abcdef",
            "0123456789ABCDEF0123456789ABCDEF",
        ),
        json.replace("prod/a.snap", ""),
        json.replace("2026-", "26-"),
        "{}".to_owned(),
        "not json".to_owned(),
    ] {
        assert!(Pointer::parse(bad.as_bytes()).is_err(), "{bad}");
    }
    assert!(Pointer::parse(&vec![b' '; MAX_POINTER_BYTES + 1]).is_err());
}

/// An object store that records every write and can fail puts to chosen keys.
#[derive(Debug)]
struct Recording {
    inner: InMemory,
    log: Mutex<Vec<String>>,
    fail_put: Mutex<Option<String>>,
}

impl Recording {
    fn new() -> Arc<Recording> {
        Arc::new(Recording {
            inner: InMemory::new(),
            log: Mutex::new(Vec::new()),
            fail_put: Mutex::new(None),
        })
    }
    fn log(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }
    fn note(&self, s: String) {
        self.log.lock().expect("log").push(s);
    }
}

impl std::fmt::Display for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recording")
    }
}

#[async_trait]
impl ObjectStore for Recording {
    async fn put_opts(
        &self,
        location: &ObjectPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.note(format!("put start {location}"));
        if self.fail_put.lock().expect("fail").as_deref() == Some(location.as_ref()) {
            self.note(format!("put failed {location}"));
            return Err(object_store::Error::Generic {
                store: "Recording",
                source: "injected failure".into(),
            });
        }
        let r = self.inner.put_opts(location, payload, opts).await;
        self.note(format!("put done {location}"));
        r
    }
    async fn put_multipart_opts(
        &self,
        location: &ObjectPath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.note(format!("multipart {location}"));
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &ObjectPath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<ObjectPath>>,
    ) -> BoxStream<'static, object_store::Result<ObjectPath>> {
        self.inner.delete_stream(locations)
    }
    fn list(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.note(format!("copy {from} {to}"));
        self.inner.copy_opts(from, to, options).await
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn publish_writes_the_snapshot_whole_before_the_pointer() {
    let rt = runtime();
    let (a, _) = two_snapshots();
    let store = Recording::new();
    let remote = Remote::with_store(store.clone(), location("s3://snaps/prod/"));
    let published = rt
        .block_on(remote.publish(a.clone(), 1_000))
        .expect("published");
    let hash = hash_of(&a);
    let key = format!("prod/{hash}.snap");
    assert_eq!(
        store.log(),
        [
            format!("put start {key}"),
            format!("put done {key}"),
            "put start prod/current".to_owned(),
            "put done prod/current".to_owned(),
        ]
    );
    assert!(published.uploaded);
    assert_eq!(published.pointer.key, key);
    assert_eq!(published.pointer.hash, hash);
    assert_eq!(published.pointer.bytes, a.len() as u64);
    let read = rt.block_on(remote.read_pointer(None)).expect("pointer");
    let PointerRead::Current { pointer, etag } = read else {
        panic!("expected the pointer");
    };
    assert_eq!(pointer, published.pointer);
    // Unchanged: the conditional read costs no body.
    assert!(matches!(
        rt.block_on(remote.read_pointer(etag.as_deref())),
        Ok(PointerRead::NotModified)
    ));
    // Publishing the same content again is a no-op for the object.
    let again = rt.block_on(remote.publish(a, 2_000)).expect("republished");
    assert!(!again.uploaded);
}

#[test]
fn a_failed_upload_leaves_the_pointer_alone() {
    let rt = runtime();
    let (a, b) = two_snapshots();
    let store = Recording::new();
    let remote = Remote::with_store(store.clone(), location("s3://snaps/prod/"));
    let first = rt.block_on(remote.publish(a, 1_000)).expect("published");
    *store.fail_put.lock().expect("fail") = Some(format!("prod/{}.snap", hash_of(&b)));
    let err = rt.block_on(remote.publish(b, 2_000)).expect_err("refused");
    assert!(err.to_string().contains("injected failure"), "{err}");
    assert_eq!(
        store.log().last().map(String::as_str),
        Some(format!("put failed prod/{}.snap", hash_of(&two_snapshots().1)).as_str())
    );
    let PointerRead::Current { pointer, .. } =
        rt.block_on(remote.read_pointer(None)).expect("read")
    else {
        panic!("expected the pointer");
    };
    assert_eq!(pointer, first.pointer);
}

#[test]
fn publish_refuses_what_is_not_a_snapshot_and_names_taken_by_other_content() {
    let rt = runtime();
    let (a, b) = two_snapshots();
    let store = Recording::new();
    let remote = Remote::with_store(store.clone(), location("s3://snaps/prod/"));
    let mut corrupt = a.clone();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    for bad in [Vec::new(), b"TLDSNAP\0".to_vec(), corrupt] {
        let err = rt.block_on(remote.publish(bad, 1)).expect_err("refused");
        assert!(matches!(err, RemoteError::NotASnapshot(_)), "{err}");
    }
    assert!(store.log().is_empty(), "nothing written: {:?}", store.log());
    // A chosen name: same content again is fine, other content is refused and the
    // pointer keeps naming the first.
    let named = Remote::with_store(store.clone(), location("s3://snaps/prod/daily.snap"));
    let first = rt.block_on(named.publish(a.clone(), 1)).expect("published");
    assert_eq!(first.pointer.key, "prod/daily.snap");
    assert!(!rt.block_on(named.publish(a, 2)).expect("same").uploaded);
    let err = rt.block_on(named.publish(b, 3)).expect_err("taken");
    assert!(matches!(err, RemoteError::NameTaken(_)), "{err}");
    let PointerRead::Current { pointer, .. } = rt.block_on(named.read_pointer(None)).expect("read")
    else {
        panic!("expected the pointer");
    };
    assert_eq!(pointer.hash, first.pointer.hash);
}

#[test]
fn a_replica_follows_the_pointer_and_refuses_a_corrupt_object() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (a, b) = two_snapshots();
    let dir = temp_dir("replica");
    let objects = Arc::new(InMemory::new());
    let remote = Remote::with_store(objects.clone(), location("s3://snaps/prod/"));
    let store = Arc::new(Store::empty(None));
    let status = Arc::new(Status::new(remote.location().prefix_url()));
    let replica = Replica::new(
        remote.clone(),
        Arc::clone(&store),
        dir.0.clone(),
        Arc::clone(&status),
    );

    // Nothing published: a failed poll, not ready.
    let err = rt.block_on(replica.poll()).expect_err("no pointer");
    assert!(matches!(err, RemoteError::NoPointer(_)), "{err}");
    assert_eq!(status.view(store.is_ready()).state, SyncState::Waiting);

    // Publish, poll: swapped in and served.
    let publish_and_poll = |bytes: &[u8], at: i64| {
        rt.block_on(remote.publish(bytes.to_vec(), at))
            .expect("published");
        assert!(matches!(
            rt.block_on(replica.poll()),
            Ok(Polled::Swapped(_))
        ));
        assert_eq!(
            store.load().expect("served").snapshot.header().hash_hex(),
            hash_of(bytes)
        );
    };
    publish_and_poll(&a, 1_000);
    assert_eq!(std::fs::read(dir.0.join(CACHE_FILE)).expect("cached"), a);
    assert!(matches!(
        rt.block_on(replica.poll()),
        Ok(Polled::NotModified)
    ));
    let view = status.view(true);
    assert_eq!(view.state, SyncState::Synced);
    assert_eq!((view.polls_ok, view.polls_failed), (2, 1));
    assert_eq!(view.served_published_ms, Some(1_000));

    publish_and_poll(&b, 2_000);
    assert_eq!(store.reload_successes(), 2);

    // A pointer to an object whose bytes were flipped after the hash was taken, then
    // one to an object that is not there: refused, B keeps serving and stays cached,
    // and the temporary download is gone.
    let mut corrupt = a.clone();
    let mid = corrupt.len() / 2;
    corrupt[mid] ^= 0x40;
    rt.block_on(objects.put_opts(
        &ObjectPath::from("prod/bad.snap"),
        PutPayload::from(corrupt.clone()),
        PutOptions::default(),
    ))
    .expect("put");
    let bad = Pointer {
        key: "prod/bad.snap".into(),
        hash: hash_of(&a),
        bytes: corrupt.len() as u64,
        data_updated_ms: 0,
        published_at_ms: 3_000,
    };
    let put_pointer = |p: &Pointer| {
        rt.block_on(objects.put_opts(
            &ObjectPath::from("prod/current"),
            PutPayload::from(p.to_json()),
            PutOptions::default(),
        ))
        .expect("put pointer");
    };
    put_pointer(&bad);
    let err = rt.block_on(replica.poll()).expect_err("corrupt");
    assert!(
        err.to_string().contains("s3://snaps/prod/bad.snap"),
        "{err}"
    );
    assert!(err.to_string().contains("corrupted"), "{err}");
    assert_eq!(store.reload_failures(), 1);
    put_pointer(&Pointer {
        key: "prod/missing.snap".into(),
        ..bad.clone()
    });
    assert!(rt.block_on(replica.poll()).is_err());
    put_pointer(&Pointer {
        bytes: bad.bytes - 1,
        ..bad.clone()
    });
    assert!(rt.block_on(replica.poll()).is_err());
    assert_eq!(
        store.load().expect("served").snapshot.header().hash_hex(),
        hash_of(&b)
    );
    assert_eq!(std::fs::read(dir.0.join(CACHE_FILE)).expect("cached"), b);
    let view = status.view(true);
    assert_eq!(view.state, SyncState::Stale);
    assert!(view.last_error.is_some());
    let names: Vec<String> = std::fs::read_dir(&dir.0)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    // The cached copy, with the pointer it came from, is what a restart serves.
    let cached = Replica::open_cache(&dir.0)
        .expect("verifies")
        .expect("there");
    assert_eq!(cached.snapshot.header().hash_hex(), hash_of(&b));
    assert_eq!(cached.pointer.map(|p| p.published_at_ms), Some(2_000));
    std::fs::write(dir.0.join(CACHE_POINTER_FILE), b"{}").expect("write");
    let cached = Replica::open_cache(&dir.0)
        .expect("verifies")
        .expect("there");
    assert!(cached.pointer.is_none());
}

#[test]
fn a_download_is_written_in_whole_blocks_at_block_offsets() {
    /// Records the length of every write.
    #[derive(Default)]
    struct Writes {
        bytes: Vec<u8>,
        lens: Vec<usize>,
    }
    impl std::io::Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes.extend_from_slice(buf);
            self.lens.push(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Chunks of uneven sizes (1 byte to ~100 KiB, one larger than a block), 5 blocks
    // and a bit in all.
    let total = 5 * WRITE_BLOCK + 12_345;
    let input: Vec<u8> = (0..total).map(|i| (i * 31 % 251) as u8).collect();
    let mut sizes = [1usize, 99_991, 4_096, 65_536, 3 * WRITE_BLOCK / 2, 17]
        .into_iter()
        .cycle();
    let (mut out, mut block, mut at) = (Writes::default(), Vec::new(), 0);
    while at < total {
        let end = (at + sizes.next().unwrap()).min(total);
        gather(&mut block, &input[at..end], &mut out).unwrap();
        at = end;
    }
    std::io::Write::write_all(&mut out, &block).unwrap();
    assert!(
        out.bytes == input,
        "the bytes written are the bytes received"
    );
    assert_eq!(
        out.lens,
        [WRITE_BLOCK; 5]
            .into_iter()
            .chain([12_345])
            .collect::<Vec<_>>()
    );
}
