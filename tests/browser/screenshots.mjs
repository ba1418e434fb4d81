// Regenerates docs/screenshots/tld-com-{375,1440}.png and tld-app-3-year-eur-1440.png
// (a promotion, the 3-year ranking, prices in euros) from the real server:
//   node tests/browser/screenshots.mjs path/to/tldsnap docs/screenshots
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startBrowser, startServer } from "./harness.mjs";

const [bin, out = "docs/screenshots"] = process.argv.slice(2);
const server = await startServer(bin);
const browser = await startBrowser();
try {
  mkdirSync(out, { recursive: true });
  const page = await browser.context.newPage();
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: width < 800 ? 812 : 900 });
    await page.goto(`${server.base}/tld/com`);
    const file = join(out, `tld-com-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(`wrote ${file}`);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${server.base}/tld/app?sort=total_3_year&currency=EUR`);
  const file = join(out, "tld-app-3-year-eur-1440.png");
  await page.screenshot({ path: file, fullPage: true });
  console.log(`wrote ${file}`);
} finally {
  await browser.close();
  await server.stop();
}
