//! `tldsnap keys add|list|revoke` as an operator uses them, through the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use tldsnap::access::clock::SystemClock;
use tldsnap::access::keys::{hash_key, to_hex};
use tldsnap::access::plans::Plans;
use tldsnap::access::{Access, AccessConfig};

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");

struct Dir(PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> Dir {
    let mut r = [0u8; 6];
    getrandom::fill(&mut r).unwrap();
    let p = std::env::temp_dir().join(format!(
        "tldsnap-keys-cli-{}-{}",
        std::process::id(),
        r.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ));
    std::fs::create_dir_all(&p).unwrap();
    Dir(p)
}

fn tldsnap(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn add_list_revoke() {
    let dir = temp_dir();
    let keys = dir.0.join("sub").join("keys.json");
    std::fs::create_dir_all(keys.parent().unwrap()).unwrap();

    // add: the key alone on stdout, once; only its hash in the file (created if missing).
    let out = tldsnap(&[
        "keys",
        "add",
        "--keys",
        s(&keys),
        "--plan",
        "pro",
        "--label",
        "Acme Corp",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let key = text(&out.stdout).trim().to_string();
    assert!(key.starts_with("tsk_") && key.len() == 52, "{key:?}");
    assert_eq!(text(&out.stdout).lines().count(), 1);
    let stored = std::fs::read_to_string(&keys).unwrap();
    assert!(!stored.contains(&key), "the raw key is never stored");
    assert!(stored.contains(&to_hex(&hash_key(key.as_bytes()))));
    // Credential files are owner-only, like ssh's and the AWS CLI's: the keys file and
    // its lock.
    for file in [keys.clone(), keys.with_extension("json.lock")] {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&file).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    }
    let out2 = tldsnap(&["keys", "add", "--keys", s(&keys), "--plan", "free"]);
    assert!(out2.status.success());
    let key2 = text(&out2.stdout).trim().to_string();
    assert_ne!(key, key2);
    let records: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&keys).unwrap()).unwrap();
    let id1 = records[0]["id"].as_str().unwrap().to_string();
    let id2 = records[1]["id"].as_str().unwrap().to_string();
    assert_eq!(records[0]["label"], "Acme Corp");
    assert_eq!(records[1]["plan"], "free");

    // Unknown plan: exit 1, file untouched; missing flag: usage error, exit 2.
    let bad = tldsnap(&["keys", "add", "--keys", s(&keys), "--plan", "gold"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).contains("unknown plan \"gold\""),
        "{}",
        text(&bad.stderr)
    );
    assert_eq!(
        tldsnap(&["keys", "add", "--keys", s(&keys)]).status.code(),
        Some(2)
    );
    assert_eq!(
        std::fs::read_to_string(&keys)
            .unwrap()
            .matches("\"id\"")
            .count(),
        2
    );

    // Some usage this month, counted by the server's own code into a data directory.
    let data = dir.0.join("data");
    let access = Access::new(AccessConfig {
        plans: Plans::default(),
        keys_path: Some(keys.clone()),
        data_dir: Some(data.clone()),
        usage_store: None,
        clock: Arc::new(SystemClock),
    })
    .await
    .unwrap();
    for _ in 0..3 {
        let mut c = access
            .admit(Some(key.as_bytes()), "192.0.2.1".parse().unwrap(), true)
            .await
            .unwrap();
        access.spend(&mut c).await.unwrap();
    }
    access.shutdown().await.unwrap();

    let list = tldsnap(&["keys", "list", "--keys", s(&keys), "--data-dir", s(&data)]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let table = text(&list.stdout);
    let row1 = table.lines().find(|l| l.contains(&id1)).expect(&table);
    let cols: Vec<&str> = row1
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cols,
        [id1.as_str(), "pro", "Acme Corp", "3", "10000"],
        "{table}"
    );
    let row2 = table.lines().find(|l| l.contains(&id2)).expect(&table);
    let cols2: Vec<&str> = row2.split_whitespace().collect();
    assert_eq!(cols2, [id2.as_str(), "free", "0", "50"], "{table}");
    assert!(!table.contains(&key), "list never shows keys");

    // revoke: gone from the file; an unknown id is exit 1.
    let out = tldsnap(&["keys", "revoke", "--keys", s(&keys), &id1]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let after = std::fs::read_to_string(&keys).unwrap();
    assert!(!after.contains(&id1) && after.contains(&id2));
    let again = tldsnap(&["keys", "revoke", "--keys", s(&keys), &id1]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains(&id1));

    // A broken keys file is reported, not overwritten.
    std::fs::write(&keys, "not json").unwrap();
    let broken = tldsnap(&["keys", "add", "--keys", s(&keys), "--plan", "pro"]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(
        text(&broken.stderr).contains("keys.json"),
        "{}",
        text(&broken.stderr)
    );
    assert_eq!(std::fs::read_to_string(&keys).unwrap(), "not json");
    let nofile = tldsnap(&["keys", "list", "--keys", s(&dir.0.join("none.json"))]);
    assert_eq!(nofile.status.code(), Some(1));
}

#[test]
fn serve_refuses_a_bad_plans_file_or_keys_file_with_the_reason() {
    let dir = temp_dir();
    let plans = dir.0.join("plans.json");
    std::fs::write(
        &plans,
        r#"{"pro": {"credits_per_month": 5, "rate_per_second": 1, "burst": 1, "tlds": "all"}}"#,
    )
    .unwrap();
    let out = tldsnap(&["serve", "--plans", s(&plans), "--addr", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("plans.json") && err.contains("registrar_list_limit"),
        "{err}"
    );

    let keys = dir.0.join("keys.json");
    std::fs::write(
        &keys,
        r#"[{"id": "a", "plan": "gold", "key_sha256": "00"}]"#,
    )
    .unwrap();
    let out = tldsnap(&["serve", "--keys", s(&keys), "--addr", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("keys.json") && err.contains("64 hex"), "{err}");

    let out = tldsnap(&[
        "keys",
        "add",
        "--keys",
        s(&keys),
        "--plan",
        "pro",
        "--plans",
        s(&plans),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("plans.json"));
}

#[test]
fn concurrent_key_adds_lose_no_key() {
    let dir = temp_dir();
    let keys = dir.0.join("keys.json");
    let running: Vec<_> = (0..16)
        .map(|i| {
            Command::new(BIN)
                .args(["keys", "add", "--plan", "pro", "--label"])
                .arg(format!("k{i}"))
                .arg("--keys")
                .arg(&keys)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in running {
        assert!(child.wait().unwrap().success());
    }
    let list: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&keys).unwrap()).unwrap();
    assert_eq!(
        list.len(),
        16,
        "a concurrent `keys add` dropped another's key"
    );
}
