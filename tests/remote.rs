//! Snapshots in object storage against a real S3-compatible server (moto, on a loopback
//! port) and the real binary: `publish` and `build --output s3://…`, `serve --snapshot
//! s3://…` with and without `--watch`, a corrupt object, and the store down at start
//! with and without a cached copy. Without `moto_server` these tests print a note and
//! pass, unless `CI` is set, where they fail (`.ci/run` installs moto).

mod metering_support;
mod remote_support;

use std::path::Path;

use metering_support::temp_dir;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use remote_support::{Moto, Serve, eventually, hash_of, snapshot, tldsnap};
use tldsnap::remote::{Pointer, PointerRead, RemoteError};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "tldsnap failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(1), "expected exit 1");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The price of com at alpha, edited: another snapshot of the fixture.
fn price(cents: &str) -> impl Fn(&str) -> String {
    let to = format!("com,alpha,{cents},");
    move |s: &str| s.replacen("com,alpha,9.99,", &to, 1)
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Publishes `snapshot` with the binary, then waits (bounded) until `serve` serves it
/// and reports itself synced.
fn publish_and_wait(serve: &Serve, env: &[(String, String)], snapshot: &Path) {
    ok(&tldsnap(env, &["publish", p(snapshot), "s3://snaps/prod/"]));
    wait_serving(serve, snapshot);
}

/// Waits (bounded) until `serve` serves `snapshot` and reports itself synced.
fn wait_serving(serve: &Serve, snapshot: &Path) {
    let hash = hash_of(snapshot);
    assert!(
        eventually(30, || serve.hash().as_deref() == Some(hash.as_str())),
        "never served {}: {}",
        snapshot.display(),
        serve.log()
    );
    assert!(eventually(30, || serve.state().as_deref() == Some("synced")));
}

#[test]
fn publish_refuses_what_is_not_a_snapshot_and_writes_the_pointer_last() {
    let Some(moto) = Moto::start("publish") else {
        return;
    };
    moto.create_bucket("snaps");
    let dir = temp_dir("remote-publish");
    let env = moto.env();
    let rt = runtime();
    let remote = moto.remote("s3://snaps/prod/");

    // Not snapshots: refused before anything is written.
    let a = snapshot(&dir.0, "a.snap", |s| s.to_owned());
    let bytes = std::fs::read(&a).expect("read");
    let garbage = dir.0.join("garbage.snap");
    std::fs::write(
        &garbage,
        b"not a snapshot at all, but long enough to have a header .....",
    )
    .expect("write");
    let truncated = dir.0.join("truncated.snap");
    std::fs::write(&truncated, &bytes[..bytes.len() - 1]).expect("write");
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 1;
    let corrupt = dir.0.join("corrupt.snap");
    std::fs::write(&corrupt, &flipped).expect("write");
    for bad in [&garbage, &truncated, &corrupt, &dir.0.join("missing.snap")] {
        let err = refused(&tldsnap(&env, &["publish", p(bad), "s3://snaps/prod/"]));
        assert!(err.starts_with("error: "), "{err}");
    }
    assert!(matches!(
        rt.block_on(remote.read_pointer(None)),
        Err(RemoteError::NoPointer(_))
    ));
    let err = refused(&tldsnap(&env, &["publish", p(&a), "s3://Bad_Bucket/"]));
    assert!(err.contains("bucket name"), "{err}");

    // build --output s3://…/NAME.snap keeps the name; publish names by content.
    let out = ok(&tldsnap(
        &env,
        &[
            "build",
            "--input",
            p(&dir.0.join("a.snap.source")),
            "--output",
            "s3://snaps/prod/a.snap",
        ],
    ));
    assert!(out.contains("published s3://snaps/prod/a.snap"), "{out}");
    let b = snapshot(&dir.0, "b.snap", price("9.98"));
    let out = ok(&tldsnap(&env, &["publish", p(&b), "s3://snaps/prod/"]));
    let key_b = format!("prod/{}.snap", hash_of(&b));
    assert!(out.contains(&format!("s3://snaps/{key_b}")), "{out}");
    let PointerRead::Current { pointer, .. } =
        rt.block_on(remote.read_pointer(None)).expect("pointer")
    else {
        panic!("no pointer");
    };
    assert_eq!(
        (pointer.key.as_str(), pointer.hash),
        (key_b.as_str(), hash_of(&b))
    );
    let raw = moto.raw("snaps");
    let object = rt
        .block_on(async {
            raw.get_opts(&ObjectPath::from(key_b.as_str()), Default::default())
                .await?
                .bytes()
                .await
        })
        .expect("the object the pointer names");
    assert_eq!(object.as_ref(), std::fs::read(&b).expect("read"));

    // Publishing the same file again is harmless; other content under a taken name is
    // refused (conditional PUT on the real server), and the pointer stays.
    let out = ok(&tldsnap(&env, &["publish", p(&b), "s3://snaps/prod/"]));
    assert!(out.contains("already there"), "{out}");
    let c = snapshot(&dir.0, "c.snap", price("9.97"));
    let err = refused(&tldsnap(
        &env,
        &["publish", p(&c), "s3://snaps/prod/a.snap"],
    ));
    assert!(err.contains("already exists with other content"), "{err}");
    let PointerRead::Current { pointer, .. } =
        rt.block_on(remote.read_pointer(None)).expect("pointer")
    else {
        panic!("no pointer");
    };
    assert_eq!(pointer.hash, hash_of(&b));

    // A reader polling while snapshots are published never finds the pointer naming an
    // object it cannot fetch whole (the order of writes itself is tested in the
    // library's unit tests with a recording store).
    let versions: Vec<_> = ["9.90", "9.91", "9.92", "9.93", "9.94"]
        .iter()
        .map(|c| snapshot(&dir.0, &format!("v{c}.snap"), price(c)))
        .collect();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let remote = moto.remote("s3://snaps/prod/");
        let raw = moto.raw("snaps");
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            let rt = runtime();
            let mut checked = std::collections::BTreeSet::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok(PointerRead::Current { pointer, .. }) =
                    rt.block_on(remote.read_pointer(None))
                else {
                    panic!("the pointer is always readable");
                };
                if checked.insert(pointer.hash.clone()) {
                    let bytes = rt
                        .block_on(async {
                            raw.get_opts(
                                &ObjectPath::from(pointer.key.as_str()),
                                Default::default(),
                            )
                            .await?
                            .bytes()
                            .await
                        })
                        .expect("the object a pointer names is there");
                    let got = tldsnap::snapshot::Snapshot::from_bytes(&bytes)
                        .expect("whole and valid")
                        .header()
                        .hash_hex();
                    assert_eq!(got, pointer.hash);
                }
            }
            checked.len()
        })
    };
    for v in &versions {
        ok(&tldsnap(&env, &["publish", p(v), "s3://snaps/prod/"]));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = reader.join().expect("the reader found no broken pointer");
    assert!(seen >= 1);
}

#[test]
fn a_replica_serves_from_s3_follows_the_pointer_and_refuses_a_corrupt_object() {
    let Some(moto) = Moto::start("serve") else {
        return;
    };
    moto.create_bucket("snaps");
    let dir = temp_dir("remote-serve");
    let env = moto.env();
    let a = snapshot(&dir.0, "a.snap", |s| s.to_owned());
    let b = snapshot(&dir.0, "b.snap", price("9.98"));
    ok(&tldsnap(&env, &["publish", p(&a), "s3://snaps/prod/"]));
    let data = dir.0.join("data");
    let serve = Serve::start(
        &env,
        &[
            "--snapshot",
            "s3://snaps/prod/",
            "--data-dir",
            p(&data),
            "--watch",
            "--watch-interval-ms",
            "200",
        ],
        dir.0.join("serve.log"),
    );
    wait_serving(&serve, &a);
    let ready = serve.ready().expect("ready");
    assert_eq!(ready["source"]["url"], "s3://snaps/prod/");
    assert_eq!(
        std::fs::read(data.join("snapshot.snap")).expect("cached"),
        std::fs::read(&a).expect("a")
    );
    let cheapest = "/v1/prices?tlds=com&registrars=alpha";
    let (status, body) = serve.get(cheapest).expect("answer");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("9.99"), "{body}");

    // A new publish is served within a few polls; the answer changes with it.
    publish_and_wait(&serve, &env, &b);
    let (_, body) = serve.get(cheapest).expect("answer");
    assert!(body.contains("9.98"), "{body}");
    assert_eq!(
        serve.metric(&format!(
            "tldsnap_remote_pointer_info{{hash=\"{}\"}}",
            hash_of(&b)
        )),
        Some(1.0)
    );
    assert_eq!(
        serve.metric("tldsnap_remote_state{state=\"synced\"}"),
        Some(1.0)
    );
    assert!(serve.metric("tldsnap_snapshot_age_seconds").is_some());
    let successes = serve
        .metric("tldsnap_snapshot_reloads_total{result=\"success\"}")
        .expect("reloads");

    // A pointer to an object whose bytes changed after its hash was taken: refused,
    // counted, B keeps serving and stays the cached copy.
    let rt = runtime();
    let raw = moto.raw("snaps");
    let mut corrupt = std::fs::read(&a).expect("a");
    let mid = corrupt.len() / 2;
    corrupt[mid] ^= 0x20;
    let bad = Pointer {
        key: "prod/corrupt.snap".into(),
        hash: hash_of(&a),
        bytes: corrupt.len() as u64,
        data_updated_ms: 0,
        published_at_ms: tldsnap::time::now_ms(),
    };
    rt.block_on(async {
        raw.put(
            &ObjectPath::from("prod/corrupt.snap"),
            PutPayload::from(corrupt),
        )
        .await?;
        raw.put(
            &ObjectPath::from("prod/current"),
            PutPayload::from(bad.to_json()),
        )
        .await
    })
    .expect("raw writes");
    assert!(
        eventually(30, || serve
            .metric("tldsnap_snapshot_reloads_total{result=\"failure\"}")
            .is_some_and(|n| n >= 1.0)),
        "the corrupt object was not refused: {}",
        serve.log()
    );
    assert!(eventually(30, || serve.state().as_deref() == Some("stale")));
    let ready = serve.ready().expect("still ready");
    assert_eq!(ready["snapshot"]["hash"], hash_of(&b));
    let error = ready["source"]["last_error"]
        .as_str()
        .expect("an error")
        .to_owned();
    assert!(
        error.contains("s3://snaps/prod/corrupt.snap") && error.contains("corrupted"),
        "{error}"
    );
    assert_eq!(
        serve.metric("tldsnap_snapshot_reloads_total{result=\"success\"}"),
        Some(successes)
    );
    assert_eq!(
        std::fs::read(data.join("snapshot.snap")).expect("cached"),
        std::fs::read(&b).expect("b")
    );
    let leftovers: Vec<String> = std::fs::read_dir(&data)
        .expect("data dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let (_, body) = serve.get(cheapest).expect("answer");
    assert!(body.contains("9.98"), "{body}");

    // Publishing a good snapshot again heals it.
    let c = snapshot(&dir.0, "c.snap", price("9.97"));
    publish_and_wait(&serve, &env, &c);
    serve.terminate();
}

#[test]
fn the_store_down_at_start_with_a_cached_copy_serves_it_and_catches_up() {
    let Some(mut moto) = Moto::start("cached") else {
        return;
    };
    moto.create_bucket("snaps");
    let dir = temp_dir("remote-cached");
    let env = moto.env();
    let a = snapshot(&dir.0, "a.snap", |s| s.to_owned());
    let b = snapshot(&dir.0, "b.snap", price("9.98"));
    ok(&tldsnap(&env, &["publish", p(&a), "s3://snaps/prod/"]));
    let data = dir.0.join("data");
    let args = [
        "--snapshot",
        "s3://snaps/prod/",
        "--data-dir",
        p(&data),
        "--watch",
        "--watch-interval-ms",
        "200",
    ];
    // A first run caches A, then stops.
    let first = Serve::start(&env, &args, dir.0.join("first.log"));
    assert!(eventually(30, || first.hash().is_some()), "{}", first.log());
    first.terminate();

    // The store goes away; a new start serves the cached copy and says so.
    moto.stop();
    let serve = Serve::start(&env, &args, dir.0.join("serve.log"));
    let ready = serve.ready().expect("ready at once, from the cache");
    assert_eq!(ready["snapshot"]["hash"], hash_of(&a));
    assert_eq!(ready["source"]["state"], "cached");
    assert!(
        eventually(30, || serve
            .ready()
            .is_some_and(|r| r["source"]["last_error"].is_string())),
        "no failed poll reported: {}",
        serve.log()
    );
    assert_eq!(
        serve.metric("tldsnap_remote_state{state=\"cached\"}"),
        Some(1.0)
    );
    assert!(
        serve
            .metric("tldsnap_remote_polls_total{result=\"failure\"}")
            .is_some_and(|n| n >= 1.0)
    );
    assert_eq!(
        serve.metric("tldsnap_remote_last_success_timestamp_seconds"),
        Some(0.0)
    );
    // The publication time came along with the cached copy.
    assert!(
        serve
            .metric("tldsnap_snapshot_published_timestamp_seconds")
            .is_some()
    );
    assert!(
        serve.log().contains("serving the copy cached in"),
        "{}",
        serve.log()
    );

    // Back (empty, as moto keeps nothing), with a new publish: the replica catches up.
    moto.restart();
    moto.create_bucket("snaps");
    publish_and_wait(&serve, &moto.env(), &b);
    assert!(serve.ready().expect("ready")["source"]["last_error"].is_null());
    serve.terminate();
}

#[test]
fn the_store_down_at_start_without_a_cache_is_not_ready_until_it_is_back() {
    let Some(mut moto) = Moto::start("waiting") else {
        return;
    };
    moto.stop();
    let dir = temp_dir("remote-waiting");
    let env = moto.env();
    let data = dir.0.join("data");
    // Without --watch: it retries until a snapshot serves, then stops polling.
    let serve = Serve::start(
        &env,
        &[
            "--snapshot",
            "s3://snaps/prod/",
            "--data-dir",
            p(&data),
            "--watch-interval-ms",
            "200",
        ],
        dir.0.join("serve.log"),
    );
    assert!(
        eventually(30, || serve
            .metric("tldsnap_remote_polls_total{result=\"failure\"}")
            .is_some_and(|n| n >= 2.0)),
        "no retries: {}",
        serve.log()
    );
    let (status, body) = serve.get("/readyz").expect("answer");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("not_ready"), "{body}");
    assert_eq!(
        serve.metric("tldsnap_remote_state{state=\"waiting\"}"),
        Some(1.0)
    );
    assert_eq!(serve.metric("tldsnap_snapshot_loaded"), Some(0.0));
    let (status, _) = serve
        .get("/api/v1/prices/cheapest?tlds=com")
        .expect("answer");
    assert_eq!(status, 503);

    moto.restart();
    moto.create_bucket("snaps");
    let a = snapshot(&dir.0, "a.snap", |s| s.to_owned());
    publish_and_wait(&serve, &moto.env(), &a);
    // Without --watch, the poller has stopped: no poll in three intervals, and a new
    // publish is only taken on SIGHUP.
    let polls = serve.metric("tldsnap_remote_polls_total{result=\"success\"}");
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(
        serve.metric("tldsnap_remote_polls_total{result=\"success\"}"),
        polls
    );
    let b = snapshot(&dir.0, "b.snap", price("9.98"));
    ok(&tldsnap(
        &moto.env(),
        &["publish", p(&b), "s3://snaps/prod/"],
    ));
    assert_eq!(serve.hash(), Some(hash_of(&a)));
    serve.signal("HUP");
    wait_serving(&serve, &b);
    serve.terminate();
}
