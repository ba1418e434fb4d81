//! `tldsnap refresh --every … --output s3://…` against a real S3-compatible server (moto,
//! on a loopback port) and a Porkbun stand-in, with a replica (`serve --snapshot s3://…
//! --watch`) following the pointer: each refresh publishes the prices collected, the
//! replica serves them, and the configuration's secret reaches neither the log nor the
//! bucket. Without `moto_server` this test prints a note and passes, unless `CI` is set,
//! where it fails (`.ci/run` installs moto).

mod collect_support;
mod metering_support;
mod remote_support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use collect_support::{BIN, FAST, Reply, StandIn, Tmp, config, feeds, root};
use remote_support::{Moto, Serve, eventually};

const PORKBUN: &str = "/api/json/v3/pricing/get";
const SECRET: &str = "ns-key-SECRET-77";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Porkbun with `com`'s first year at 11.07 in phase 1, 11.08 after; NameSilo (whose
/// key is the secret) answers 503.
fn stand_in(phase: Arc<AtomicUsize>) -> StandIn {
    let (a, b) = (
        collect_support::porkbun_body("11.07"),
        collect_support::porkbun_body("11.08"),
    );
    StandIn::start(move |req, _| {
        if req.method == "POST" && req.path() == PORKBUN {
            let body = if phase.load(Ordering::SeqCst) == 1 {
                a.clone()
            } else {
                b.clone()
            };
            Reply::Full(200, vec![], "application/json", body)
        } else if req.path() == "/api/getPrices" {
            Reply::Full(503, vec![], "text/plain", b"upstream maintenance".to_vec())
        } else {
            Reply::Full(404, vec![], "text/plain", b"not found".to_vec())
        }
    })
}

/// Porkbun's `com` first-year price as the replica serves it (without a key: the plans
/// file lets the public plan see every seller).
fn porkbun_com(serve: &Serve) -> Option<f64> {
    let (status, body) = serve.get("/api/v1/prices?tlds=com&registrars=porkbun")?;
    if status != 200 {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&body).ok()?;
    v["results"]["com"]["porkbun"]["register_price"].as_f64()
}

#[test]
fn refresh_every_publishes_to_object_storage_and_a_replica_follows() {
    let Some(moto) = Moto::start("refresh") else {
        return;
    };
    moto.create_bucket("snaps");
    let env = moto.env();
    let tmp = Tmp::new("refresh-remote");
    let feeds = feeds(&tmp, &["porkbun", "domainpricing"]);
    let phase = Arc::new(AtomicUsize::new(1));
    let server = stand_in(Arc::clone(&phase));
    let cfg = config(
        &tmp,
        &format!(
            "{FAST}[porkbun]\nbase_url = \"{b}\"\nmin_interval_ms = 0\n\n[namesilo]\nbase_url = \"{b}\"\napi_key = \"{SECRET}\"\nmin_interval_ms = 0\n",
            b = server.base()
        ),
    );
    let (tlds, fx) = (root("snapshots/tlds"), root("snapshots/fx"));
    let log = tmp.0.join("refresh.log");
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    let mut refresh = cmd
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args([
            "refresh",
            "--config",
            s(&cfg),
            "--feeds",
            s(&feeds),
            "--tlds",
            s(&tlds),
            "--fx",
            s(&fx),
            "--output",
            "s3://snaps/prod/",
            "--every",
            "1s",
            "--allow-private-targets",
        ])
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::from(
            std::fs::OpenOptions::new().append(true).open(&log).unwrap(),
        ))
        .spawn()
        .unwrap();
    let printed = || std::fs::read_to_string(&log).unwrap_or_default();
    let published = || printed().matches("published s3://snaps/prod/").count();
    assert!(
        eventually(120, || published() >= 1),
        "no publish: {}",
        printed()
    );

    // A replica following the pointer serves the collected price.
    let plans = tmp.0.join("plans.json");
    std::fs::write(
        &plans,
        r#"{"public": {"credits_per_month": null, "rate_per_second": null, "burst": null,
                      "tlds": "all", "registrar_list_limit": null}}"#,
    )
    .unwrap();
    let data = tmp.0.join("data");
    let serve = Serve::start(
        &env,
        &[
            "--snapshot",
            "s3://snaps/prod/",
            "--data-dir",
            s(&data),
            "--watch",
            "--watch-interval-ms",
            "200",
            "--plans",
            s(&plans),
        ],
        tmp.0.join("serve.log"),
    );
    assert!(
        eventually(60, || porkbun_com(&serve) == Some(11.07)),
        "{:?}: {}",
        serve.get("/api/v1/prices?tlds=com&registrars=porkbun"),
        serve.log()
    );

    // Porkbun moves: a later refresh publishes it and the replica follows.
    let before = published();
    phase.store(2, Ordering::SeqCst);
    assert!(
        eventually(120, || porkbun_com(&serve) == Some(11.08)),
        "{:?}: {}\n{}",
        serve.get("/api/v1/prices?tlds=com&registrars=porkbun"),
        serve.log(),
        printed()
    );
    assert!(published() > before, "{}", printed());
    // Each round reports NameSilo's failure and goes on; the secret is in no output
    // and no object.
    let out = printed();
    assert!(out.contains("namesilo: failed: HTTP 503"), "{out}");
    assert!(!out.contains(SECRET), "{out}");
    assert!(!serve.log().contains(SECRET));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let bucket = moto.raw("snaps");
    rt.block_on(async {
        use futures_util::TryStreamExt;
        use object_store::{ObjectStore, ObjectStoreExt};
        let objects: Vec<_> = bucket.list(None).try_collect().await.unwrap();
        assert!(objects.len() >= 2, "{objects:?}");
        for o in objects {
            let bytes = bucket
                .get(&o.location)
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            assert!(
                !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                "{}",
                o.location
            );
        }
    });
    refresh.kill().unwrap();
    refresh.wait().unwrap();
    serve.terminate();
}
