//! A webhook receiver that verifies every delivery with an independent implementation
//! of Standard Webhooks (the `standardwebhooks` package from PyPI, run by
//! tests/webhook_receiver.py), for the suites that check deliveries end to end.
//!
//! The receiver needs a virtual environment with `standardwebhooks` (pinned in
//! `tools/webhook-venv`, which `.ci/run` runs): `TARGET_DIR/standardwebhooks-venv`, or
//! the interpreter named by `TLDSNAP_WEBHOOK_PYTHON`. Without it the tests fail when
//! `CI` is set, and say loudly that they did not run otherwise.

use std::io::BufRead;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::TempDir;

/// The Python interpreter of a virtual environment with `standardwebhooks`, or `None`
/// (with a loud note) when there is none and `CI` is not set.
pub fn python(test: &str) -> Option<PathBuf> {
    let candidate = std::env::var_os("TLDSNAP_WEBHOOK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .expect("the target directory")
                .join("standardwebhooks-venv/bin/python")
        });
    let works = Command::new(&candidate)
        .args(["-c", "import standardwebhooks.webhooks"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if works {
        return Some(candidate);
    }
    let what = format!(
        "{} cannot import standardwebhooks: run tools/webhook-venv (it installs the pinned \
         standardwebhooks from PyPI into the target directory), or set TLDSNAP_WEBHOOK_PYTHON",
        candidate.display()
    );
    if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") {
        panic!("CI is set and the webhook signature test {test} cannot run: {what}");
    }
    eprintln!("\n*** WEBHOOK TEST {test} NOT RUN: {what}. In CI this fails. ***\n");
    None
}

/// tests/webhook_receiver.py, running: verifies every delivery with `standardwebhooks`.
pub struct PyReceiver {
    child: Child,
    port: u16,
    log: PathBuf,
    secret: PathBuf,
    fail: PathBuf,
}

impl PyReceiver {
    pub fn start(python: &Path, dir: &TempDir) -> PyReceiver {
        let (log, secret, fail) = (
            dir.path("received.jsonl"),
            dir.path("secret.txt"),
            dir.path("receiver-fails"),
        );
        std::fs::write(&secret, "").unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/webhook_receiver.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg("--secret-file")
            .arg(&secret)
            .arg("--log")
            .arg(&log)
            .arg("--fail-while")
            .arg(&fail)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the receiver said {line:?}"))
            .parse()
            .unwrap();
        PyReceiver {
            child,
            port,
            log,
            secret,
            fail,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    pub fn set_secret(&self, secret: &str) {
        std::fs::write(&self.secret, secret).unwrap();
    }

    /// Makes the receiver answer 503 to everything (true) or work again (false).
    pub fn fail(&self, failing: bool) {
        if failing {
            std::fs::write(&self.fail, "").unwrap();
        } else {
            std::fs::remove_file(&self.fail).unwrap();
        }
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Waits (30 s at most) until `done` holds for the requests received.
    pub fn wait_until(&self, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.received();
            if done(&got) {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "waiting for {what}; received {got:#?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for PyReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
