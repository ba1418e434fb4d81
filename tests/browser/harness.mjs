// Shared by run.mjs (the browser tests) and screenshots.mjs: the real `tldsnap serve`
// on a free loopback port, a pro key, and Debian's chromium driven by playwright-core.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.TLDSNAP_CHROMIUM || "/usr/bin/chromium";

// A page view is rate-limited per address like the public API; the tests browse from
// one address faster than a person, so the public plan's rate is raised here.
const PLANS = {
  public: {
    credits_per_month: null, rate_per_second: 1000, burst: 1000, tlds: "free",
    registrar_list_limit: 5,
  },
};

/** Fails with `message` (never skips: a missing browser is a failed run). */
export function need(ok, message) {
  if (!ok) {
    console.error(`browser tests: ${message}`);
    process.exit(1);
  }
}

/** Starts `bin serve` on 127.0.0.1:0 with a pro and a free key. */
export async function startServer(bin) {
  need(bin && existsSync(bin), `no tldsnap binary at ${bin} (give its path as the first argument)`);
  const dir = mkdtempSync(join(tmpdir(), "tldsnap-browser-"));
  const keys = join(dir, "keys.json");
  const addKey = (plan) =>
    execFileSync(bin, ["keys", "add", "--keys", keys, "--plan", plan, "--label", `browser ${plan}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  const proKey = addKey("pro");
  const freeKey = addKey("free");
  const plans = join(dir, "plans.json");
  writeFileSync(plans, JSON.stringify(PLANS));
  const child = spawn(
    bin,
    ["serve", "--addr", "127.0.0.1:0", "--keys", keys, "--plans", plans, "--data-dir", join(dir, "data")],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${log}`)), 120_000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const m = log.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`the server exited (${code}):\n${log}`)));
  });
  return {
    base,
    proKey,
    freeKey,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Debian's chromium with a fresh profile directory. */
export async function startBrowser() {
  need(existsSync(CHROMIUM), `no browser at ${CHROMIUM}: install Debian's chromium and chromium-driver (.ci/run does)`);
  const profile = mkdtempSync(join(tmpdir(), "tldsnap-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1440, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
