// The API reference at /docs in a real browser: the machine's Chromium (Debian's `chromium`, or
// CHROMIUM_PATH) driven by playwright-core against a fresh install listening on 127.0.0.1. Every operation
// of the registry renders, no request leaves the origin, nothing breaks the Content-Security-Policy, and
// "Try it out" with the first start's sandbox key gets a quote. Screenshots go to
// test-artifacts/api-reference/ (docs/screenshots/api-reference.png with UPDATE_SCREENSHOTS=1).

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/operations/registry.js";
import { launchChromium, listenLocally } from "../helpers/browser.js";
import { createHarness, type Harness, QUOTE_PATH } from "../helpers/harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARTIFACTS = join(ROOT, "test-artifacts", "api-reference");
const README_SHOTS = join(ROOT, "docs", "screenshots");

let h: Harness;
let browser: Browser;
let base: string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  if (process.env.UPDATE_SCREENSHOTS) mkdirSync(README_SHOTS, { recursive: true });
  browser = await launchChromium();
  h = await createHarness();
  base = await listenLocally(h);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

interface Opened {
  page: Page;
  /** Every URL the page requested. */
  requests: string[];
  /** Uncaught errors and Content-Security-Policy refusals. */
  problems: string[];
  close(): Promise<void>;
}

async function openDocs(): Promise<Opened> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const requests: string[] = [];
  const problems: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  await page.goto(`${base}/docs/`);
  return { page, requests, problems, close: () => ctx.close() };
}

const shot = (page: Page, name: string, inReadme = false) =>
  page.screenshot({
    path: join(process.env.UPDATE_SCREENSHOTS && inReadme ? README_SHOTS : ARTIFACTS, `${name}.png`),
  });

describe("the API reference at /docs in Chromium", () => {
  it("renders every operation of the registry from this origin alone, within the CSP", async () => {
    const { page, requests, problems, close } = await openDocs();
    const ids = page.locator(".opblock-summary-operation-id");
    // Webhooks render as operations too: wait for at least the registry's count, then compare names.
    // A locator, not a waitForFunction string: a string predicate is eval'ed when Playwright has to
    // poll, which this page's CSP refuses (it failed CI only on a slow run).
    await ids.nth(OPERATIONS.length - 1).waitFor({ timeout: 30_000 });
    const shown = new Set((await ids.allTextContents()).map((t) => t.trim()));
    for (const op of OPERATIONS) expect(shown, op.id).toContain(op.id);
    await expect(
      page
        .getByRole("button", { name: /Authorize/ })
        .first()
        .isVisible(),
    ).resolves.toBe(true);
    await shot(page, "api-reference", true);

    expect(requests.length).toBeGreaterThan(3);
    expect(requests.filter((url) => new URL(url).origin !== base)).toEqual([]);
    expect(requests).toContain(`${base}/openapi.json`);
    expect(problems).toEqual([]);
    await close();
  }, 60_000);

  it("tries a quote with the sandbox key pasted under Authorize, sent as x-api-key", async () => {
    expect(h.sandboxKey).toMatch(/^fsd_test_/);
    const { page, requests, problems, close } = await openDocs();
    const sent: Array<string | undefined> = [];
    page.on("request", (request) => {
      if (request.url() === `${base}${QUOTE_PATH}`) sent.push(request.headers()["x-api-key"]);
    });
    await page.locator(".opblock-summary-operation-id").first().waitFor({ timeout: 30_000 });

    await page.locator("button.authorize").first().click();
    const dialog = page.locator(".dialog-ux .modal-ux");
    await expect(dialog.textContent()).resolves.toContain("sandbox key");
    await shot(page, "api-reference-authorize");
    await dialog.locator("input").first().fill(h.sandboxKey);
    await dialog.locator("button.authorize").click();
    await dialog.locator("button.btn-done").click();

    const quote = page.locator("#operations-dispatch-dispatchQuote");
    await quote.locator(".opblock-summary").first().click();
    await quote.locator("button.execute").click();
    const status = quote.locator(".live-responses-table tr.response .response-col_status").first();
    await status.waitFor({ timeout: 30_000 });
    expect((await status.textContent())?.trim()).toBe("200");
    await quote.scrollIntoViewIfNeeded();
    await shot(page, "api-reference-try-it");

    expect(sent).toEqual([h.sandboxKey]);
    expect(requests.filter((url) => new URL(url).origin !== base)).toEqual([]);
    expect(problems).toEqual([]);
    // Nothing of the key is kept in the browser (persistAuthorization is off).
    const stored = await page.evaluate("JSON.stringify(Object.entries(localStorage))");
    expect(stored).not.toContain(h.sandboxKey);
    await close();
  }, 60_000);
});
