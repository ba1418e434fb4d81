//! The website in a real browser: runs `tests/browser/run.mjs` (playwright-core driving
//! Debian's chromium, axe-core for accessibility) against this build's `tldsnap serve`
//! on 127.0.0.1.
//!
//! It needs `node`, the pinned npm packages (`npm ci --prefix tests/browser`) and
//! `/usr/bin/chromium` (or `TLDSNAP_CHROMIUM`); `.ci/run` installs all three. With `CI`
//! set, anything missing fails this test. Without `CI` (a developer machine without a
//! browser) the test says loudly what is missing and what to install, and passes.

use std::path::Path;
use std::process::Command;

#[test]
fn website_in_a_real_browser() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let chromium =
        std::env::var("TLDSNAP_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    let mut missing = Vec::new();
    if Command::new("node").arg("--version").output().is_err() {
        missing.push("node (Debian: nodejs npm)".to_owned());
    }
    if !dir.join("node_modules/playwright-core").is_dir()
        || !dir.join("node_modules/axe-core").is_dir()
    {
        missing.push("the npm packages (npm ci --prefix tests/browser)".to_owned());
    }
    if !Path::new(&chromium).exists() {
        missing.push(format!("{chromium} (Debian: chromium chromium-driver)"));
    }
    if !missing.is_empty() {
        let what = missing.join(", ");
        if std::env::var_os("CI").is_some() {
            panic!("the browser tests cannot run: missing {what}");
        }
        eprintln!(
            "\n*** BROWSER TESTS NOT RUN: missing {what}. .ci/run installs them; in CI this fails. ***\n"
        );
        return;
    }
    let status = Command::new("node")
        .arg(dir.join("run.mjs"))
        .arg(env!("CARGO_BIN_EXE_tldsnap"))
        .status()
        .expect("node runs");
    assert!(status.success(), "browser tests failed: {status}");
}
