// Browser tests of the website (issue 12): Debian's chromium, driven by playwright-core,
// against the real `tldsnap serve` on 127.0.0.1. Usage:
//   node tests/browser/run.mjs path/to/tldsnap
// Exits non-zero on the first failed check; a missing browser is a failure, not a skip.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import assert from "node:assert/strict";
import { startBrowser, startServer } from "./harness.mjs";

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const server = await startServer(process.argv[2]);
const browser = await startBrowser();
const base = server.base;
const consoleErrors = [];
/** Pages answered 4xx on purpose (the 404 page, the refused forged form). */
const EXPECTED_ERROR_PAGES = ["/tld/cmo", "/signout"];
let passed = 0;

async function check(name, body) {
  const page = await browser.context.newPage();
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    // Chromium logs a page answered 4xx as a failed load; the 404 page and the refused
    // form are visited on purpose. Anything else counts.
    const url = m.location()?.url || "";
    const expected = EXPECTED_ERROR_PAGES.some((p) => url === `${base}${p}`);
    if (expected && m.text().startsWith("Failed to load resource: the server responded with a status of 4")) return;
    consoleErrors.push(`${name}: ${m.text()} (${url || page.url()})`);
  });
  page.on("pageerror", (e) => consoleErrors.push(`${name}: ${e.message}`));
  try {
    await body(page);
    passed += 1;
    console.log(`ok - ${name}`);
  } finally {
    await page.close();
  }
}

async function api(path, key) {
  const r = await fetch(`${base}${path}`, { headers: key ? { "X-API-Key": key } : {} });
  assert.equal(r.status, 200, `${path}: ${r.status}`);
  return r.json();
}

const dollars = (v) => {
  const cents = Math.round(v * 100);
  const whole = Math.floor(cents / 100).toLocaleString("en-US");
  return `$${whole}.${String(cents % 100).padStart(2, "0")}`;
};

/** Treads of a registrar's history: a registration price held from one change to the
 *  next; a repeat of the same price is no new step; a null price ends the line. */
function expectedSteps(changes) {
  let steps = 0;
  let last = null;
  for (const c of changes) {
    const p = c.register_price;
    if (p === null) {
      last = null;
    } else if (p !== last) {
      steps += 1;
      last = p;
    }
  }
  return steps;
}

try {
  await check("the home page search reaches the TLD page", async (page) => {
    await page.goto(`${base}/`);
    await page.getByLabel("Find a TLD").fill(".COM");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/\/tlds\?q=/);
    await page.locator("p.notice a").first().click();
    await page.waitForURL(`${base}/tld/com`);
    assert.equal((await page.locator("h1").innerText()).trim(), ".com");
    // An internationalised name, typed in Unicode.
    await page.goto(`${base}/`);
    await page.getByLabel("Find a TLD").fill("рф");
    await page.getByRole("button", { name: "Search" }).click();
    await page.locator("p.notice a").first().click();
    await page.waitForURL(`${base}/tld/xn--p1ai`);
  });

  await check("the chart draws one step line per registrar with history", async (page) => {
    const history = (await api("/api/v1/history/tld/com")).history;
    const expected = Object.fromEntries(
      Object.entries(history)
        .map(([key, h]) => [key, expectedSteps(h.changes)])
        .filter(([, n]) => n > 0),
    );
    assert.ok(Object.keys(expected).length > 1);
    for (const [width, kind] of [[1440, "wide"], [375, "narrow"]]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/tld/com`);
      const chart = page.locator(`svg.chart-${kind}`);
      await chart.scrollIntoViewIfNeeded();
      assert.ok(await chart.isVisible(), `${kind} chart visible at ${width}px`);
      const other = kind === "wide" ? "narrow" : "wide";
      assert.ok(!(await page.locator(`svg.chart-${other}`).isVisible()), `one drawing at ${width}px`);
      const lines = await chart.locator("path.series").evaluateAll((ps) =>
        ps.map((p) => [p.parentElement.getAttribute("data-key"), (p.getAttribute("d").match(/H/g) || []).length]),
      );
      assert.deepEqual(Object.fromEntries(lines), expected, `${kind}: steps per registrar`);
      const box = await chart.boundingBox();
      assert.ok(box.width > 300 && box.height > 200, `${kind}: ${JSON.stringify(box)}`);
      // Axes: dollar and date labels.
      const labels = await chart.locator("text").evaluateAll((ts) => ts.map((t) => t.textContent));
      assert.ok(labels.some((t) => t.startsWith("$")), "dollar labels");
      assert.ok(labels.some((t) => /^20\d\d/.test(t)), "date labels");
    }
    // The text alternative lists every change.
    const rows = await page.locator("details table tbody tr").count();
    const changes = Object.values(history).reduce((n, h) => n + h.changes.length, 0);
    assert.equal(rows, changes);
  });

  await check("no horizontal scrolling at 375 px", async (page) => {
    await page.setViewportSize({ width: 375, height: 812 });
    for (const path of ["/", "/tld/com", "/tld/com?sort=total_5_year&currency=KRW", "/tld/app", "/tld/museum", "/tlds", "/registrars", "/registrars/porkbun", "/registrars/namecheap?currency=ISK", "/signin", "/docs/api", "/tld/cmo"]) {
      await page.goto(`${base}${path}`);
      const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      assert.ok(scroll <= inner, `${path}: page is ${scroll}px wide in a ${inner}px window`);
    }
  });

  await check("table sorting works", async (page) => {
    await page.goto(`${base}/tld/com`);
    const renew = page.locator("#prices thead th", { hasText: "Renew" });
    const values = () =>
      page.locator("#prices tbody tr").evaluateAll((rows) =>
        rows.map((r) => Number(r.cells[3].getAttribute("data-value"))),
      );
    await renew.getByRole("button").click();
    assert.equal(await renew.getAttribute("aria-sort"), "ascending");
    const up = await values();
    assert.deepEqual(up, [...up].sort((a, b) => a - b));
    await renew.getByRole("button").click();
    assert.equal(await renew.getAttribute("aria-sort"), "descending");
    const down = await values();
    assert.deepEqual(down, [...up].sort((a, b) => b - a));
    // By name: text order.
    await page.locator("#prices thead th", { hasText: "Registrar" }).getByRole("button").click();
    const names = await page.locator("#prices tbody th").allInnerTexts();
    assert.deepEqual(names, [...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
  });

  await check("the ranking links and the currency form change the TLD page", async (page) => {
    await page.goto(`${base}/tld/net`);
    const nav = page.getByRole("navigation", { name: "Order of the registrars" });
    assert.equal(await nav.locator("[aria-current]").innerText(), "First year");
    await nav.getByRole("link", { name: "3 years" }).click();
    await page.waitForURL(`${base}/tld/net?sort=total_3_year`);
    assert.equal((await nav.locator("[aria-current]").innerText()).replace(/^\W+/, ""), "3 years");
    const ranked = await api("/api/v1/prices/cheapest?tlds=net&sort=total_3_year&include_stale=true&limit=100");
    const names = await page.locator("#prices tbody th").allInnerTexts();
    assert.deepEqual(names, ranked.results.net.cheapest_register.map((e) => e.registrar_name));
    // The currency form keeps the ranking and sets the cookie.
    await page.getByLabel("Currency").selectOption("JPY");
    await page.getByRole("button", { name: "Show prices" }).click();
    await page.waitForURL(/currency=JPY/);
    assert.ok(page.url().includes("sort=total_3_year"), page.url());
    const first = await page.locator("#prices tbody tr").first().locator("td").nth(1).innerText();
    assert.match(first, /^¥[\d,]+/, first);
    const cookies = await browser.context.cookies(base);
    const kept = cookies.find((c) => c.name === "tldsnap_currency");
    assert.ok(kept && kept.value === "JPY" && kept.sameSite === "Lax", JSON.stringify(cookies));
    // Kept: the home page is in yen too; the choice back to USD is kept the same way.
    await page.goto(`${base}/`);
    assert.ok((await page.locator("#currency-note").innerText()).includes("JPY"));
    await page.getByLabel("Currency").selectOption("USD");
    await page.getByRole("button", { name: "Show prices" }).click();
    await page.waitForURL(/currency=USD/);
    await page.goto(`${base}/`);
    assert.ok((await page.locator("#currency-note").innerText()).includes("US dollars"));
    // A promotion is marked in words, with the regular price.
    await page.goto(`${base}/tld/app`);
    assert.ok((await page.locator("#prices .promo").first().innerText()).startsWith("Promo, regular $"));
  });

  await check("signing in reveals member prices and signing out ends the session", async (page) => {
    const overview = await api("/api/v1/client/overview/tld/museum", server.proKey);
    const price = dollars(overview.cheapest_register.price);
    const table = page.locator("#prices");
    await page.goto(`${base}/tld/museum`);
    // A visitor sees no seller of a paid TLD: no table, the sellers counted.
    assert.equal(await table.count(), 0, "no table of sellers for the visitor");
    assert.ok((await page.locator("#more-registrars a.members").count()) > 0, "members placeholder");
    assert.ok(!(await page.locator("dl.facts").innerText()).includes(`${price} at`));
    await page.locator("#more-registrars a.members").first().click();
    await page.waitForURL(/\/signin\?next=/);
    await page.getByLabel("API key").fill(server.proKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${base}/tld/museum`);
    assert.ok((await page.locator("dl.facts").innerText()).includes(`${price} at`), `${price} shown`);
    assert.ok((await table.innerText()).includes(price));
    const cookies = await browser.context.cookies(base);
    const session = cookies.find((c) => c.name === "tldsnap_session");
    assert.ok(session && session.httpOnly && session.sameSite === "Lax", JSON.stringify(cookies));
    assert.ok(!session.value.includes(server.proKey));
    await page.getByRole("link", { name: "Account (pro)" }).click();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${base}/`);
    await page.goto(`${base}/tld/museum`);
    assert.equal(await table.count(), 0, "hidden again");
    assert.ok(await page.getByRole("link", { name: "Sign in", exact: true }).isVisible());
    // A copy of the session cookie kept from before the sign-out is a visitor's too,
    // and the server tells the browser to drop it.
    await browser.context.addCookies([session]);
    await page.goto(`${base}/tld/museum`);
    assert.equal(await table.count(), 0, "the replayed cookie is a visitor's: no table of sellers");
    const after = await browser.context.cookies(base);
    assert.ok(!after.some((c) => c.name === "tldsnap_session"), JSON.stringify(after));
  });

  await check("the CSRF check refuses a forged form post", async (page) => {
    // Sign in, then let a page of another origin post the sign-out form.
    await page.goto(`${base}/signin`);
    await page.getByLabel("API key").fill(server.proKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${base}/signin`);
    const forger = createServer((_, res) => {
      res.setHeader("Content-Type", "text/html; charset=utf-8");
      res.end(`<!DOCTYPE html><html lang="en"><title>forger</title><body>
        <form id="f" method="post" action="${base}/signout"><input name="csrf" value="${"0".repeat(64)}"></form>
        <script>document.getElementById("f").submit()</script></body></html>`);
    });
    await new Promise((r) => forger.listen(0, "127.0.0.1", r));
    try {
      const response = page.waitForResponse((r) => r.url() === `${base}/signout`);
      await page.goto(`http://127.0.0.1:${forger.address().port}/`);
      const r = await response;
      assert.equal(r.status(), 403);
      await page.waitForURL(`${base}/signout`);
      assert.equal((await page.locator("h1").innerText()).trim(), "Form refused");
    } finally {
      forger.close();
    }
    // A form on the site's own page with a tampered token is refused too.
    await page.goto(`${base}/signin`);
    await page.locator("input[name=csrf]").evaluate((i) => { i.value = "1".repeat(64); });
    await page.getByRole("button", { name: "Sign out" }).click();
    assert.equal((await page.locator("h1").innerText()).trim(), "Form refused");
    // Still signed in: the forged posts changed nothing.
    await page.goto(`${base}/signin`);
    assert.equal((await page.locator("h1").innerText()).trim(), "Your account");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${base}/`);
  });

  await check("axe-core finds no serious or critical violation", async (page) => {
    for (const path of ["/", "/?currency=EUR", "/tld/com", "/tld/app?sort=renew", "/tld/net?sort=total_3_year&currency=JPY", "/tld/museum", "/tlds?q=co", "/tlds?sort=cheapest&currency=GBP", "/registrars", "/registrars/porkbun", "/registrars/namecheap", "/signin", "/docs/api", "/tld/cmo"]) {
      for (const width of [1440, 375]) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${base}${path}`);
        // evaluate() is not subject to the page's Content-Security-Policy.
        await page.evaluate(AXE);
        const result = await page.evaluate(() =>
          window.axe.run(document, { resultTypes: ["violations"] }),
        );
        const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
        assert.deepEqual(
          bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`),
          [],
          `${path} at ${width}px`,
        );
      }
    }
  });

  await check("pages load without console errors", async () => {
    assert.deepEqual(consoleErrors, []);
  });
} catch (e) {
  console.error(`not ok - ${e.stack || e}`);
  process.exitCode = 1;
} finally {
  await browser.close();
  await server.stop();
}
console.log(`${passed} browser checks passed`);
