//! Webhooks end to end: subscriptions over the API, signed deliveries verified by an
//! independent implementation (the `standardwebhooks` package from PyPI, run by
//! tests/webhook_receiver.py), retries, a receiver that fails and recovers, the server
//! killed with SIGKILL while deliveries are pending, 410, disabling, pausing, secret
//! rotation, and every problem.
//!
//! The Python receiver needs a virtual environment with `standardwebhooks` (pinned in
//! `tools/webhook-venv`, which `.ci/run` runs): `TARGET_DIR/standardwebhooks-venv`, or
//! the interpreter named by `TLDSNAP_WEBHOOK_PYTHON`. Without it these tests fail when
//! `CI` is set, and say loudly that they did not run otherwise.

mod http_support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_support::receiver::{PyReceiver, python};
use http_support::sse::Sse;
use http_support::{Binary, Options, Server, TempDir, publish, request};
use serde_json::{Value, json};

const HOOKS: &str = "/api/v1/client/webhooks";

/// The event ids delivered (answered 204), in the order they arrived (test messages,
/// which carry no event, left out).
fn delivered(got: &[Value]) -> Vec<u64> {
    got.iter()
        .filter(|r| r["answered"] == 204)
        .filter_map(|r| r["payload"]["id"].as_u64())
        .collect()
}

/// (id, type, TLD, registrar) of an event.
fn summary(e: &Value) -> (u64, String, String, String) {
    (
        e["id"].as_u64().unwrap(),
        e["type"].as_str().unwrap().to_owned(),
        e["data"]["tld"].as_str().unwrap().to_owned(),
        e["data"]["registrar"].as_str().unwrap_or("-").to_owned(),
    )
}

/// The issue's end-to-end case. On the real data: serve the shipped snapshot,
/// subscribe by SSE and by webhook (a receiver on 127.0.0.1:0 that verifies with
/// `standardwebhooks`), swap in prices that differ in known ways, and receive exactly
/// those events on both channels, verified, in order; then the receiver fails while a
/// swap back produces more events, the server is killed with SIGKILL with those
/// deliveries pending and restarted, the receiver recovers, and in the end every event
/// was delivered at least once, every delivery verified, and each webhook-id maps to
/// one event.
#[test]
fn real_data_events_reach_sse_and_a_verified_webhook_through_failures_and_kill_9() {
    let Some(python) = python("real_data_events_reach_sse_and_a_verified_webhook") else {
        return;
    };
    let dir = TempDir::new("webhooks-real");
    let snap = dir.real_snapshot("served.snap", str::to_owned);
    let edited = dir.real_snapshot("edited.snap", http_support::real_data_edit);
    let original = dir.real_snapshot("original.snap", str::to_owned);
    let (keys, raw) = dir.keys();
    let pro = raw["pro"].clone();
    let receiver = PyReceiver::start(&python, &dir);
    // Twelve attempts over ~7.5 s: enough for the failures below not to disable it.
    let schedule = "0,100ms,200ms,300ms,400ms,500ms,1s,1s,1s,1s,1s,1s";
    let owned = http_support::watching_args(
        &dir,
        &snap,
        &keys,
        "data",
        &[
            "--allow-private-webhooks",
            "--webhook-retry-schedule",
            schedule,
        ],
    );
    let args: Vec<&str> = owned.iter().map(String::as_str).collect();
    let server = Binary::start(&args);
    let addr: SocketAddr = server.addr.parse().unwrap();

    let created = request(
        addr,
        "POST",
        HOOKS,
        Some(&pro),
        Some(&json!({"url": receiver.url(), "description": "end to end"})),
    );
    assert_eq!(created.status, 201, "{}", created.text());
    let created = created.json();
    let id = created["id"].as_str().unwrap().to_owned();
    receiver.set_secret(created["secret"].as_str().unwrap());
    let mut sse = Sse::open(addr, "", &pro, None).unwrap();

    // 1. A swap with known changes: the same seven events on both channels, in order.
    publish(&edited, &snap);
    let want: Vec<(u64, String, String, String)> = http_support::REAL_DATA_EVENTS
        .iter()
        .map(|(i, t, d, r)| (*i, t.to_string(), d.to_string(), r.to_string()))
        .collect();
    let streamed: Vec<Value> = sse.events(7).into_iter().map(|e| e.2).collect();
    assert_eq!(streamed.iter().map(summary).collect::<Vec<_>>(), want);
    let got = receiver.wait_until("the first swap's 7 deliveries", |g| delivered(g).len() >= 7);
    assert!(got.iter().all(|r| r["verified"] == true), "{got:#?}");
    let hooked: Vec<Value> = got.iter().map(|r| r["payload"].clone()).collect();
    assert_eq!(
        hooked, streamed,
        "the webhook carries the events SSE carries"
    );

    // 2. The receiver fails; a swap back makes 7 more events; SSE has them at once.
    receiver.fail(true);
    publish(&original, &snap);
    let back: Vec<Value> = sse.events(7).into_iter().map(|e| e.2).collect();
    assert_eq!(
        back.iter()
            .map(|e| e["id"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        (8..=14).collect::<Vec<_>>()
    );
    let failing = receiver.wait_until("three failed attempts at event 8", |g| {
        g.iter().filter(|r| r["answered"] == 503).count() >= 3
    });
    let refused: Vec<&Value> = failing.iter().filter(|r| r["answered"] == 503).collect();
    assert!(
        refused
            .iter()
            .all(|r| r["payload"]["id"] == 8 && r["verified"] == true),
        "retries are of the first undelivered event, each signed afresh: {refused:#?}"
    );
    // The third refusal is bookkept once the server has read it.
    let shown = wait_json(
        || request(addr, "GET", &format!("{HOOKS}/{id}"), Some(&pro), None).json(),
        |s| s["delivery"]["attempts"].as_u64() >= Some(3),
    );
    assert_eq!(shown["status"], "active");
    assert_eq!(shown["delivery"]["last_event_id"], 7);
    assert_eq!(shown["delivery"]["pending_event_id"], 8);
    assert!(
        shown["delivery"]["attempts"].as_u64().unwrap() >= 3,
        "{shown:#}"
    );
    assert_eq!(shown["recent_attempts"][0]["status"], 503);

    // 3. SIGKILL with deliveries pending; the receiver recovers; a restart delivers;
    //    SIGKILL again as soon as the first of them is delivered (the journal is in
    //    use then), and a second restart delivers the rest.
    drop(server);
    drop(sse);
    receiver.fail(false);
    let server = Binary::start(&args);
    receiver.wait_until("event 8 delivered after the restart", |g| {
        delivered(g).contains(&8)
    });
    drop(server);
    let mut server = Binary::start(&args);
    let addr: SocketAddr = server.addr.parse().unwrap();
    let got = receiver.wait_until("events 8 to 14 delivered after the restarts", |g| {
        let d = delivered(g);
        (8..=14).all(|id| d.contains(&id))
    });

    // 4. Every event at least once, every request verified, in order, one id per event.
    assert!(
        got.iter().all(|r| r["verified"] == true),
        "every request verified by standardwebhooks: {got:#?}"
    );
    let order = delivered(&got);
    assert!(
        order.windows(2).all(|w| w[0] <= w[1]),
        "deliveries in event order (a repeat after a crash at most): {order:?}"
    );
    assert!(
        order.len() <= 14 + 2,
        "at worst one delivery repeated per SIGKILL: {order:?}"
    );
    let mut ids_of_event: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut events_of_id: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in &got {
        let (wid, event) = (
            r["webhook_id"].as_str().unwrap().to_owned(),
            r["payload"]["id"].as_u64().unwrap(),
        );
        ids_of_event.entry(event).or_default().push(wid.clone());
        events_of_id.entry(wid).or_default().push(event);
    }
    assert_eq!(
        ids_of_event.keys().copied().collect::<Vec<_>>(),
        (1..=14).collect::<Vec<_>>()
    );
    for (event, ids) in &ids_of_event {
        assert!(ids.iter().all(|i| *i == ids[0]), "event {event}: {ids:?}");
    }
    for (wid, events) in &events_of_id {
        assert!(events.iter().all(|e| *e == events[0]), "{wid}: {events:?}");
    }
    let payloads: BTreeMap<u64, &Value> = got
        .iter()
        .map(|r| (r["payload"]["id"].as_u64().unwrap(), &r["payload"]))
        .collect();
    for e in streamed.iter().chain(&back) {
        assert_eq!(payloads[&e["id"].as_u64().unwrap()], e);
    }
    // The receiver records a request before the server has read its answer: the
    // subscription's bookkeeping follows that answer (CI once read 13 here, between
    // the receiver's record and the worker's).
    let shown = wait_json(
        || request(addr, "GET", &format!("{HOOKS}/{id}"), Some(&pro), None).json(),
        |s| s["delivery"]["last_event_id"] == 14,
    );
    assert_eq!(shown["delivery"]["last_event_id"], 14, "{shown:#}");
    assert_eq!(shown["delivery"]["pending_event_id"], Value::Null);
    server.signal("TERM");
    server.wait_for("stopped");
    eprintln!(
        "{} requests for 14 events ({} refused while failing)",
        got.len(),
        refused.len()
    );
}

use http_support::{FIXTURE_EVENTS, fixture_edit};

/// One request a [`Receiver`] got.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    headers: BTreeMap<String, String>,
    body: Value,
}

/// A receiver on 127.0.0.1:0 that records every request and answers each with the
/// status set by [`Receiver::answer`] (204 at first).
struct Receiver {
    addr: SocketAddr,
    status: Arc<AtomicU16>,
    got: Arc<Mutex<Vec<Got>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let status = Arc::new(AtomicU16::new(204));
        let got = Arc::new(Mutex::new(Vec::new()));
        let (status2, got2) = (Arc::clone(&status), Arc::clone(&got));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                conn.set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut reader = BufReader::new(conn);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
                let mut headers = BTreeMap::new();
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    let h = h.trim_end();
                    if h.is_empty() {
                        break;
                    }
                    let (n, v) = h.split_once(':').unwrap();
                    headers.insert(n.trim().to_ascii_lowercase(), v.trim().to_owned());
                }
                let len: usize = headers["content-length"].parse().unwrap();
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                got2.lock().unwrap().push(Got {
                    path,
                    headers,
                    body: serde_json::from_slice(&body).unwrap(),
                });
                let code = status2.load(Ordering::SeqCst);
                let _ = reader.get_mut().write_all(
                    format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                        .as_bytes(),
                );
            }
        });
        Receiver { addr, status, got }
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    fn answer(&self, status: u16) {
        self.status.store(status, Ordering::SeqCst);
    }

    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// Waits (30 s at most) until `n` requests arrived; returns them all.
    fn wait_for(&self, n: usize) -> Vec<Got> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.got();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{} of {n} requests: {got:#?}",
                got.len()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// (type, TLD, registrar) of each event received.
fn kinds(got: &[Got]) -> Vec<(String, String, String)> {
    got.iter()
        .map(|g| {
            let (_, t, tld, r) = summary(&g.body);
            (t, tld, r)
        })
        .collect()
}

fn expected(range: std::ops::Range<usize>) -> Vec<(String, String, String)> {
    FIXTURE_EVENTS[range]
        .iter()
        .map(|(t, d, r)| (t.to_string(), d.to_string(), r.to_string()))
        .collect()
}

/// A fixture server with a data directory (events and webhooks).
fn fixture_server(
    dir: &TempDir,
    plans: &'static str,
) -> (Server, PathBuf, BTreeMap<&'static str, String>) {
    let snap = dir.fixture_snapshot("served.snap");
    let (keys, raw) = dir.keys();
    let mut opts = Options::new(&snap, &keys);
    opts.plans = plans;
    opts.data_dir = Some(dir.path("data"));
    (Server::start(opts), snap, raw)
}

fn create(server: &Server, key: &str, body: Value) -> Value {
    let r = server.request("POST", HOOKS, Some(key), Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    r.json()
}

fn show(server: &Server, key: &str, id: &str) -> Value {
    let r = server.request("GET", &format!("{HOOKS}/{id}"), Some(key), None);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

/// Waits (30 s at most) until the subscription's JSON satisfies `done`.
fn wait_show(server: &Server, key: &str, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    wait_json(|| show(server, key, id), done)
}

/// Waits (30 s at most) until what `look` reads satisfies `done`: what a server
/// bookkeeps after a receiver's answer follows it a moment later.
fn wait_json(look: impl Fn() -> Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = look();
        if done(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "{v:#}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Filters, pausing, a receiver that always fails (retries, then disabled with the
/// reason; resumed by PATCH, from the first event not delivered), 410 (removed), and
/// the test message.
#[test]
fn deliveries_follow_filters_pauses_failures_and_410() {
    let dir = TempDir::new("webhooks-delivery");
    let (server, snap, raw) = fixture_server(&dir, http_support::TEST_PLANS);
    let pro = raw["pro"].as_str();
    let (all, only, failing, gone, paused) = (
        Receiver::start(),
        Receiver::start(),
        Receiver::start(),
        Receiver::start(),
        Receiver::start(),
    );
    let sub_all = create(&server, pro, json!({"url": all.url()}));
    create(
        &server,
        pro,
        json!({"url": only.url(), "tlds": [".COM", "de"], "types": ["ranking.changed"]}),
    );
    failing.answer(500);
    let sub_failing = create(&server, pro, json!({"url": failing.url()}));
    gone.answer(410);
    let sub_gone = create(&server, pro, json!({"url": gone.url()}));
    let sub_paused = create(
        &server,
        pro,
        json!({"url": paused.url(), "registrars": ["ALPHA"]}),
    );
    let paused_id = sub_paused["id"].as_str().unwrap();
    let r = server.request(
        "PATCH",
        &format!("{HOOKS}/{paused_id}"),
        pro.into(),
        Some(&json!({"status": "paused"})),
    );
    assert_eq!(r.json()["status"], "paused");

    publish(&dir.edited_snapshot("edited.snap", fixture_edit), &snap);
    server.state.store.reload().unwrap();

    // Everything, in order, one message per event; the payload is the event.
    let got = all.wait_for(5);
    assert_eq!(kinds(&got), expected(0..5));
    for (i, g) in got.iter().enumerate() {
        assert_eq!(g.path, "/hook");
        assert_eq!(g.body["id"], i as u64 + 1);
        let wid = &g.headers["webhook-id"];
        assert!(wid.starts_with(&format!("msg_{}_", i + 1)), "{wid}");
        assert!(g.headers["webhook-signature"].starts_with("v1,"));
        assert!(g.headers["webhook-timestamp"].parse::<i64>().is_ok());
        assert_eq!(g.headers["content-type"], "application/json");
    }
    let polled = server.get("/api/v1/client/events", Some(pro)).json();
    assert_eq!(
        polled["events"].as_array().unwrap(),
        &got.iter().map(|g| g.body.clone()).collect::<Vec<_>>()
    );
    // Filters: the ranking changes of com and de (a Unicode-free name, dot and case
    // dropped).
    let got = only.wait_for(2);
    assert_eq!(kinds(&got), [expected(1..2), expected(3..4)].concat());

    // A receiver that fails every attempt: three attempts at event 1, then disabled.
    let failing_id = sub_failing["id"].as_str().unwrap();
    let v = wait_show(&server, pro, failing_id, |v| v["status"] == "disabled");
    assert_eq!(failing.got().len(), 3);
    assert!(failing.got().iter().all(|g| g.body["id"] == 1));
    let tries = failing.got();
    assert!(
        tries
            .iter()
            .all(|g| g.headers["webhook-id"] == tries[0].headers["webhook-id"]),
        "every attempt at one message has its webhook-id"
    );
    let reason = v["disabled_reason"].as_str().unwrap();
    assert!(
        reason.contains("3 attempts at event 1 failed") && reason.contains("HTTP 500"),
        "{reason}"
    );
    assert_eq!(v["delivery"]["last_event_id"], 0);
    let attempts = v["recent_attempts"].as_array().unwrap();
    assert_eq!(
        attempts
            .iter()
            .map(|a| a["result"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["disabled", "retrying", "retrying"]
    );
    assert!(
        attempts
            .iter()
            .all(|a| a["status"] == 500 && a["event_id"] == 1)
    );
    // Resumed: from event 1, everything, in order.
    failing.answer(204);
    let r = server.request(
        "PATCH",
        &format!("{HOOKS}/{failing_id}"),
        Some(pro),
        Some(&json!({"status": "active"})),
    );
    assert_eq!(r.json()["disabled_reason"], Value::Null);
    let got = failing.wait_for(8);
    assert_eq!(kinds(&got[3..]), expected(0..5));

    // 410 Gone: the subscription is removed after its one attempt.
    let gone_id = sub_gone["id"].as_str().unwrap();
    gone.wait_for(1);
    let deadline = Instant::now() + Duration::from_secs(30);
    while server
        .request("GET", &format!("{HOOKS}/{gone_id}"), Some(pro), None)
        .status
        != 404
    {
        assert!(Instant::now() < deadline, "not removed after 410");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!dir.path(&format!("data/webhooks/{gone_id}.json")).exists());
    assert_eq!(gone.got().len(), 1);

    // Paused: nothing came; resumed, its filter's events (alpha), in order.
    assert!(paused.got().is_empty());
    server.request(
        "PATCH",
        &format!("{HOOKS}/{paused_id}"),
        Some(pro),
        Some(&json!({"status": "active"})),
    );
    let got = paused.wait_for(2);
    assert_eq!(kinds(&got), expected(2..4));

    // The test message: sent now, whatever the queue, not an event.
    let all_id = sub_all["id"].as_str().unwrap();
    let r = server.request("POST", &format!("{HOOKS}/{all_id}/test"), Some(pro), None);
    assert_eq!(r.status, 200, "{}", r.text());
    let attempt = &r.json()["attempt"];
    assert_eq!(
        (attempt["status"].as_u64(), attempt["result"].as_str()),
        (Some(204), Some("test"))
    );
    let got = all.wait_for(6);
    assert_eq!(got[5].body["type"], "webhook.test");
    assert_eq!(got[5].body["data"]["webhook"], all_id);
    assert_eq!(
        got[5].headers["webhook-id"],
        attempt["webhook_id"].as_str().unwrap()
    );
    let v = show(&server, pro, all_id);
    assert_eq!(v["delivery"]["delivered"], 5);
    assert_eq!(v["recent_attempts"][0]["result"], "test");
    let metrics = server.get("/metrics", None).text();
    for line in [
        "tldsnap_webhook_subscriptions{status=\"active\"} 4",
        "tldsnap_webhook_subscriptions{status=\"disabled\"} 0",
        "tldsnap_webhook_attempts_total{result=\"delivered\"} 14",
        "tldsnap_webhook_attempts_total{result=\"retrying\"} 2",
        "tldsnap_webhook_attempts_total{result=\"disabled\"} 1",
        "tldsnap_webhook_attempts_total{result=\"removed\"} 1",
        "tldsnap_webhook_attempts_total{result=\"test\"} 1",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in {metrics}");
    }
    server.stop().unwrap();
    // Nothing more arrived after the events and the test.
    assert_eq!(all.got().len(), 6);
    // A clean stop kept the journaled deliveries and their attempts in the files: a
    // restart shows the same state and sends nothing again.
    assert!(
        !dir.path(&format!("data/webhooks/{all_id}.journal"))
            .exists()
            || {
                std::fs::metadata(dir.path(&format!("data/webhooks/{all_id}.journal")))
                    .unwrap()
                    .len()
                    == 0
            }
    );
    let mut opts = Options::new(&snap, &dir.path("keys.json"));
    opts.data_dir = Some(dir.path("data"));
    let server = Server::start(opts);
    let v = show(&server, pro, all_id);
    assert_eq!(
        (
            v["delivery"]["delivered"].as_u64(),
            v["delivery"]["last_event_id"].as_u64()
        ),
        (Some(5), Some(5))
    );
    assert_eq!(v["recent_attempts"].as_array().unwrap().len(), 6);
    server.stop().unwrap();
    assert_eq!(all.got().len(), 6);
}

/// Plans for the management test: basic may have one subscription.
const ONE_HOOK_PLANS: &str = r#"{
  "unlimited": {"credits_per_month": null, "rate_per_second": null, "burst": null, "tlds": "all", "registrar_list_limit": null},
  "tiny": {"credits_per_month": 2, "rate_per_second": null, "burst": null, "tlds": "all", "registrar_list_limit": 5},
  "basic": {"credits_per_month": 1000, "rate_per_second": 5, "burst": 20, "tlds": "all", "registrar_list_limit": 5, "webhooks": 1}
}"#;

/// Create, list, show, change, delete; each key sees only its own; the plan's limit;
/// no credit spent; every problem, in the documented order.
#[test]
fn subscriptions_belong_to_their_key_and_every_problem_is_answered() {
    let dir = TempDir::new("webhooks-api");
    let (server, _, raw) = fixture_server(&dir, ONE_HOOK_PLANS);
    let (pro, basic, free) = (
        raw["pro"].as_str(),
        raw["basic"].as_str(),
        raw["free"].as_str(),
    );
    let credits = |r: &http_support::Response| r.header("x-credits-remaining").map(str::to_owned);
    let before = credits(&server.request("GET", HOOKS, Some(pro), None));
    assert!(before.is_some());

    let r = server.request(
        "POST",
        HOOKS,
        Some(pro),
        Some(&json!({"url": "http://127.0.0.1:9/a", "description": "first",
                     "tlds": ["COM", "com", "рф"], "registrars": [" Alpha "], "types": ["price.changed"]})),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(r.header("location"), Some(&*format!("{HOOKS}/{id}")));
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(created["tlds"], json!(["com", "xn--p1ai"]));
    assert_eq!(created["registrars"], json!(["alpha"]));
    assert_eq!(created["status"], "active");
    let file = std::fs::read_to_string(dir.path(&format!("data/webhooks/{id}.json"))).unwrap();
    assert!(
        file.contains(created["secret"].as_str().unwrap()),
        "the file keeps the secret"
    );

    // The list and the item never show the secret again.
    let list = server.request("GET", HOOKS, Some(pro), None);
    assert!(!list.text().contains("whsec_"));
    assert_eq!(list.json()["webhooks"][0]["id"], id.as_str());
    let item = server.request("GET", &format!("{HOOKS}/{id}"), Some(pro), None);
    assert!(!item.text().contains("whsec_"));
    assert_eq!(item.json()["recent_attempts"], json!([]));
    let head = request(
        server.addr,
        "HEAD",
        &format!("{HOOKS}/{id}"),
        Some(pro),
        None,
    );
    assert_eq!(head.status, 200);

    // PATCH: fields left out stay; [] means every.
    let r = server.request(
        "PATCH",
        &format!("{HOOKS}/{id}"),
        Some(pro),
        Some(&json!({"tlds": [], "description": "second"})),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(
        (v["tlds"].clone(), v["description"].clone()),
        (json!([]), json!("second"))
    );
    assert_eq!(v["types"], json!(["price.changed"]));

    // Another key's subscription does not exist for this one.
    let enterprise = raw["enterprise"].as_str();
    for (method, path) in [
        ("GET", format!("{HOOKS}/{id}")),
        ("DELETE", format!("{HOOKS}/{id}")),
        ("POST", format!("{HOOKS}/{id}/test")),
        ("POST", format!("{HOOKS}/{id}/rotate-secret")),
    ] {
        server
            .request(method, &path, Some(enterprise), None)
            .assert_problem(404, "unknown_webhook");
    }
    server
        .request(
            "PATCH",
            &format!("{HOOKS}/{id}"),
            Some(enterprise),
            Some(&json!({"status": "paused"})),
        )
        .assert_problem(404, "unknown_webhook");
    assert_eq!(
        server.request("GET", HOOKS, Some(enterprise), None).json()["webhooks"],
        json!([])
    );

    // Rotation: a new secret, the old one's expiry, in the file.
    let r = server.request(
        "POST",
        &format!("{HOOKS}/{id}/rotate-secret"),
        Some(pro),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let rotated = r.json();
    assert_ne!(rotated["secret"], created["secret"]);
    assert!(rotated["previous_secret_expires_at"].is_string());

    // The plan's limit: basic may have one.
    let hook = json!({"url": "http://127.0.0.1:9/b"});
    assert_eq!(
        server
            .request("POST", HOOKS, Some(basic), Some(&hook))
            .status,
        201
    );
    let doc = server
        .request("POST", HOOKS, Some(basic), Some(&hook))
        .assert_problem(403, "webhook_limit");
    assert_eq!(
        (doc["limit"].as_u64(), doc["plan"].as_str()),
        (Some(1), Some("basic"))
    );
    let doc = server
        .request("POST", HOOKS, Some(free), Some(&hook))
        .assert_problem(403, "webhooks_not_in_plan");
    // Named from the plans in force: this server's basic plan has a subscription.
    let including: Vec<&str> = doc["plans_including"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        including.contains(&"basic") && including.contains(&"pro") && !including.contains(&"free"),
        "{doc}"
    );
    assert!(doc["detail"].as_str().unwrap().contains("basic"), "{doc}");
    server
        .request("GET", HOOKS, None, None)
        .assert_problem(401, "missing_api_key");

    // Bodies.
    let raw_post = |content_type: &str, body: &str| {
        server
            .send(
                format!(
                    "POST {HOOKS} HTTP/1.1\r\nHost: t\r\nX-API-Key: {pro}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .unwrap()
    };
    raw_post("text/plain", "{}").assert_problem(415, "unsupported_media_type");
    raw_post("application/json", "{").assert_problem(400, "invalid_body");
    raw_post("application/json", "[]").assert_problem(400, "invalid_body");
    raw_post(
        "application/json",
        &format!("{{\"url\":\"{}\"}}", "a".repeat(20_000)),
    )
    .assert_problem(413, "request_too_large");
    for (body, code, mentions) in [
        (json!({}), "invalid_body", "url"),
        (
            json!({"url": "http://127.0.0.1:9/", "colour": 1}),
            "invalid_body",
            "colour",
        ),
        (json!({"url": null}), "invalid_body", "null"),
        (
            json!({"url": "http://127.0.0.1:9/", "status": "paused"}),
            "invalid_body",
            "PATCH",
        ),
        (
            json!({"url": "http://127.0.0.1:9/", "tlds": [".."]}),
            "invalid_body",
            "tlds",
        ),
        (
            json!({"url": "http://127.0.0.1:9/", "types": ["price"]}),
            "invalid_body",
            "types",
        ),
        (
            json!({"url": "http://127.0.0.1:9/", "registrars": ["a b"]}),
            "invalid_body",
            "registrars",
        ),
        (
            json!({"url": "http://127.0.0.1:9/", "description": "a\u{7}b"}),
            "invalid_body",
            "control",
        ),
        (
            json!({"url": "http://127.0.0.1:9/", "description": "x".repeat(501)}),
            "invalid_body",
            "500",
        ),
        (
            json!({"url": "ftp://127.0.0.1/"}),
            "invalid_webhook_url",
            "scheme",
        ),
        (json!({"url": "not a url"}), "invalid_webhook_url", "ASCII"),
        (
            json!({"url": " http://127.0.0.1:9/"}),
            "invalid_webhook_url",
            "ASCII",
        ),
        (
            json!({"url": "http://bücher.example/"}),
            "invalid_webhook_url",
            "ASCII",
        ),
        (
            json!({"url": "http://u:p@127.0.0.1:9/"}),
            "invalid_webhook_url",
            "user",
        ),
        (
            json!({"url": "http://127.0.0.1:9/#f"}),
            "invalid_webhook_url",
            "fragment",
        ),
        (
            json!({"url": "http://169.254.169.254/latest"}),
            "invalid_webhook_url",
            "metadata",
        ),
        (
            json!({"url": format!("http://127.0.0.1/{}", "a".repeat(2100))}),
            "invalid_webhook_url",
            "2048",
        ),
    ] {
        let doc = server
            .request("POST", HOOKS, Some(pro), Some(&body))
            .assert_problem(400, code);
        assert!(
            doc["detail"].as_str().unwrap().contains(mentions),
            "{body}: {doc:#}"
        );
    }
    let tlds: Vec<String> = (0..101).map(|i| format!("t{i}")).collect();
    let doc = server
        .request(
            "POST",
            HOOKS,
            Some(pro),
            Some(&json!({"url": "http://127.0.0.1:9/", "tlds": tlds})),
        )
        .assert_problem(400, "too_many_values");
    assert_eq!(doc["max"], 100);
    for body in [json!({}), json!({"status": "disabled"})] {
        server
            .request("PATCH", &format!("{HOOKS}/{id}"), Some(pro), Some(&body))
            .assert_problem(400, "invalid_body");
    }
    // Ids: malformed and unknown ones are both "no such subscription".
    for bad in [
        "nope",
        "wh_0123456789abcdef01234567",
        "WH_0123456789ABCDEF01234567",
    ] {
        server
            .request("GET", &format!("{HOOKS}/{bad}"), Some(pro), None)
            .assert_problem(404, "unknown_webhook");
    }
    server
        .request("PUT", &format!("{HOOKS}/{id}"), Some(pro), None)
        .assert_problem(405, "method_not_allowed");
    server
        .request("GET", &format!("{HOOKS}/{id}/test"), Some(pro), None)
        .assert_problem(405, "method_not_allowed");

    // Delete: gone from the API and the disk.
    let r = server.request("DELETE", &format!("{HOOKS}/{id}"), Some(pro), None);
    assert_eq!((r.status, r.body.len()), (204, 0));
    server
        .request("GET", &format!("{HOOKS}/{id}"), Some(pro), None)
        .assert_problem(404, "unknown_webhook");
    assert!(!dir.path(&format!("data/webhooks/{id}.json")).exists());
    // None of it cost a credit.
    assert_eq!(
        credits(&server.request("GET", HOOKS, Some(pro), None)),
        before
    );
    server.stop().unwrap();

    // Subscriptions survive a restart (they are files); without --data-dir there are none.
    let mut opts = Options::new(&dir.path("served.snap"), &dir.path("keys.json"));
    opts.plans = ONE_HOOK_PLANS;
    opts.data_dir = Some(dir.path("data"));
    let server = Server::start(opts);
    let kept = server.request("GET", HOOKS, Some(basic), None).json();
    assert_eq!(kept["webhooks"].as_array().unwrap().len(), 1);
    server.stop().unwrap();
    let snap = dir.fixture_snapshot("plain.snap");
    let (keys, raw) = dir.keys();
    let server = Server::start(Options::new(&snap, &keys));
    server
        .request("GET", HOOKS, Some(&raw["pro"]), None)
        .assert_problem(503, "events_unavailable");
}

/// Without --allow-private-webhooks: https only, and no host that is or resolves to a
/// loopback, private, link-local or metadata address.
#[test]
fn private_and_plain_http_targets_are_refused_by_default() {
    let dir = TempDir::new("webhooks-ssrf");
    let snap = dir.fixture_snapshot("served.snap");
    let (keys, raw) = dir.keys();
    let mut opts = Options::new(&snap, &keys);
    opts.data_dir = Some(dir.path("data"));
    opts.webhooks_allow_private = false;
    let server = Server::start(opts);
    let pro = raw["pro"].as_str();
    for (url, mentions) in [
        ("http://hooks.example.com/", "https"),
        ("https://127.0.0.1/", "loopback"),
        ("https://localhost:8443/", "loopback"),
        ("https://[::1]/", "loopback"),
        ("https://[::ffff:10.0.0.1]/", "private"),
        ("https://10.1.2.3/", "private"),
        ("https://192.168.0.1/", "private"),
        ("https://169.254.169.254/latest/meta-data/", "metadata"),
        ("https://[fd00:ec2::254]/", "metadata"),
        ("https://[fe80::1]/", "link-local"),
        ("https://100.64.0.1/", "carrier-grade NAT"),
        ("https://0.0.0.0/", "unspecified"),
        ("https://2130706433/", "loopback"),
        ("https://0x7f.1/", "loopback"),
    ] {
        let doc = server
            .request("POST", HOOKS, Some(pro), Some(&json!({"url": url})))
            .assert_problem(400, "invalid_webhook_url");
        assert!(
            doc["detail"].as_str().unwrap().contains(mentions),
            "{url}: {doc:#}"
        );
    }
    server.stop().unwrap();
}

/// After a rotation, deliveries carry two signatures for a day: a receiver still on
/// the old secret verifies them (with standardwebhooks), and so does one on the new.
#[test]
fn a_rotated_secret_and_the_previous_one_both_verify() {
    let Some(python) = python("a_rotated_secret_and_the_previous_one_both_verify") else {
        return;
    };
    let dir = TempDir::new("webhooks-rotate");
    let (server, snap, raw) = fixture_server(&dir, http_support::TEST_PLANS);
    let pro = raw["pro"].as_str();
    let receiver = PyReceiver::start(&python, &dir);
    let created = create(&server, pro, json!({"url": receiver.url()}));
    let id = created["id"].as_str().unwrap();
    let old = created["secret"].as_str().unwrap();
    receiver.set_secret(old);
    let r = server.request("POST", &format!("{HOOKS}/{id}/test"), Some(pro), None);
    assert_eq!(r.json()["attempt"]["status"], 204, "{}", r.text());
    let rotated = server
        .request(
            "POST",
            &format!("{HOOKS}/{id}/rotate-secret"),
            Some(pro),
            None,
        )
        .json();
    let new = rotated["secret"].as_str().unwrap();
    // Still on the old secret: the events of a swap verify.
    publish(&dir.edited_snapshot("edited.snap", fixture_edit), &snap);
    server.state.store.reload().unwrap();
    let got = receiver.wait_until("5 deliveries", |g| delivered(g).len() >= 5);
    // On the new one: a test message verifies too.
    receiver.set_secret(new);
    let r = server.request("POST", &format!("{HOOKS}/{id}/test"), Some(pro), None);
    assert_eq!(r.json()["attempt"]["status"], 204, "{}", r.text());
    let got_all = receiver.wait_until("the second test", |g| g.len() > got.len());
    assert!(
        got_all.iter().all(|r| r["verified"] == true),
        "{got_all:#?}"
    );
    assert_eq!(
        got_all[0]["signatures"], 1,
        "one secret before the rotation"
    );
    assert!(
        got_all[1..].iter().all(|r| r["signatures"] == 2),
        "{got_all:#?}"
    );
    assert_eq!(got_all[0]["payload"]["type"], "webhook.test");
    assert_eq!(delivered(&got_all[1..6]), [1, 2, 3, 4, 5]);
    // A receiver on neither secret refuses: the signatures are not a formality.
    receiver.set_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    let r = server.request("POST", &format!("{HOOKS}/{id}/test"), Some(pro), None);
    assert_eq!(r.json()["attempt"]["status"], 400);
    server.stop().unwrap();
}

/// A subscription whose API key is revoked is disabled at its next delivery, with the
/// reason; nothing is sent for a key that no longer exists.
#[test]
fn a_revoked_keys_subscription_is_disabled_not_delivered() {
    let dir = TempDir::new("webhooks-revoked");
    let (server, snap, raw) = fixture_server(&dir, http_support::TEST_PLANS);
    let receiver = Receiver::start();
    let sub = create(&server, &raw["enterprise"], json!({"url": receiver.url()}));
    let id = sub["id"].as_str().unwrap();
    let keys_path = dir.path("keys.json");
    let mut keys = tldsnap::access::keys::KeysFile::load(&keys_path, None).unwrap();
    let owner = keys
        .keys
        .iter()
        .find(|k| k.plan == "enterprise")
        .unwrap()
        .id
        .clone();
    keys.revoke(&owner).unwrap();
    keys.save(&keys_path).unwrap();
    server.state.access.reload_keys().unwrap();
    publish(&dir.edited_snapshot("edited.snap", fixture_edit), &snap);
    server.state.store.reload().unwrap();
    let hooks = server.state.webhooks.as_ref().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let shown = loop {
        let s = hooks.get(&owner, id).unwrap();
        if s.status == tldsnap::webhooks::Status::Disabled {
            break s;
        }
        assert!(Instant::now() < deadline, "{s:?}");
        std::thread::sleep(Duration::from_millis(10));
    };
    let reason = shown.disabled_reason.unwrap();
    assert!(reason.contains("no longer exists"), "{reason}");
    assert!(receiver.got().is_empty());
    server.stop().unwrap();
}

/// How fast one subscription drains a large swap: every Porkbun register price on the
/// real data up by a dollar (one `price.changed` per row, and the ranking changes),
/// delivered one at a time, in order, each on its own connection, to a local receiver.
/// A measurement (`docs/PERFORMANCE.md`), run on demand:
/// `cargo test --release --test http_webhooks -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: a swap of several hundred events"]
fn deliveries_per_second_to_one_local_receiver() {
    let dir = TempDir::new("webhooks-rate");
    let snap = dir.real_snapshot("served.snap", str::to_owned);
    let edited = dir.real_snapshot("edited.snap", |prices| {
        prices
            .lines()
            .map(|line| {
                let mut f: Vec<String> = line.split(',').map(str::to_owned).collect();
                if f.get(1).is_some_and(|r| r == "porkbun")
                    && let Ok(p) = f[2].parse::<f64>()
                {
                    f[2] = format!("{:.2}", p + 1.0);
                }
                f.join(",") + "\n"
            })
            .collect()
    });
    let (keys, raw) = dir.keys();
    let mut opts = Options::new(&snap, &keys);
    opts.data_dir = Some(dir.path("data"));
    let server = Server::start(opts);
    let receiver = Receiver::start();
    create(&server, &raw["pro"], json!({"url": receiver.url()}));
    publish(&edited, &snap);
    let started = Instant::now();
    server.state.store.reload().unwrap();
    let n = server.state.events.as_ref().unwrap().last_id() as usize;
    assert!(n > 500, "{n} events");
    let got = receiver.wait_for(n);
    let took = started.elapsed();
    assert!(
        got.windows(2)
            .all(|w| w[0].body["id"].as_u64() < w[1].body["id"].as_u64())
    );
    println!(
        "{n} events delivered in order in {:.2} s: {:.0} deliveries/s (swap and diff included)",
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );
    server.stop().unwrap();
}
