// Drives GraphiQL in Debian's Chromium, headless, the way a person would:
// open the page, replace the editor's text by typing QUERY, press the run
// button, wait until the result pane shows EXPECT, and take a screenshot.
//
// Usage: node graphiql.mjs PAGE_URL SCREENSHOT_PATH
// Env:   QUERY, EXPECT (text the result pane must show), CHROMIUM (default
//        /usr/bin/chromium), TIMEOUT_MS (default 30000).
// Prints one JSON line: {result, shown, editor, blocked, consoleErrors}; the
// exit status is 0 only when EXPECT was shown. Requests to anything but the
// loopback are blocked and listed, so the page is proven to work offline.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [pageUrl, screenshotPath] = process.argv.slice(2);
const query = process.env.QUERY;
const expected = process.env.EXPECT;
const timeout = Number(process.env.TIMEOUT_MS ?? 30000);
if (!pageUrl || !screenshotPath || !query || !expected) {
  console.error("usage: QUERY=... EXPECT=... node graphiql.mjs PAGE_URL SCREENSHOT_PATH");
  process.exit(2);
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
const profile = mkdtempSync(join(tmpdir(), "redstring-chromium-"));
const report = { blocked: [], consoleErrors: [] };
let context;
let page;
let status = 1;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-gpu",
      "--no-first-run",
      "--disable-sync",
    ],
    viewport: { width: 1400, height: 900 },
    timeout,
  });
  context.setDefaultTimeout(timeout);
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === "data:" || LOOPBACK.has(url.hostname)) return route.continue();
    report.blocked.push(route.request().url());
    return route.abort();
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (message) => {
    if (message.type() === "error") report.consoleErrors.push(message.text());
  });
  page.on("pageerror", (error) => report.consoleErrors.push(String(error)));

  await page.goto(pageUrl, { waitUntil: "load" });
  const editor = page.locator(".graphiql-query-editor .CodeMirror");
  await editor.waitFor({ state: "visible" });

  // Type the query over whatever the editor holds. insertText types the text
  // as one input event, as a paste would, so the editor adds no brackets.
  await editor.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Backspace");
  await page.keyboard.insertText(query);
  report.editor = await page.evaluate(
    () => document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.getValue(),
  );

  await page.getByRole("button", { name: /execute query/i }).click();
  const resultPane = page.locator(".graphiql-response .result-window");
  await page.waitForFunction(
    (text) => document.querySelector(".graphiql-response .result-window")?.textContent.includes(text),
    expected,
  );
  report.shown = await resultPane.innerText();
  report.result = await page.evaluate(
    () => document.querySelector(".graphiql-response .CodeMirror").CodeMirror.getValue(),
  );
  status = 0;
} catch (error) {
  report.error = String(error?.stack ?? error);
} finally {
  if (page) {
    try {
      await page.screenshot({ path: screenshotPath, fullPage: true });
      report.screenshot = screenshotPath;
    } catch (error) {
      report.screenshotError = String(error);
    }
  }
  if (context) await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(report));
process.exit(status);
