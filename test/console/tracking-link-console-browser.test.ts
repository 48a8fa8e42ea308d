// Issue 35 from the console, in a real browser (the machine's Chromium, as console-browser.test.ts): the
// README tour's order (step 2's very request, under the sandbox key) gets its tracking link from the
// order's detail ("Share a tracking link"), "Open" opens the public page in a new tab, and the page moves
// live as the sandbox's simulated contractor works the job (its rounds driven here on the services'
// injected clock), from booked to done; revoking it from the console turns the open page to "expired or
// withdrawn" at once. Screenshots go to test-artifacts/console/ (UPDATE_SCREENSHOTS=1: the one
// docs/customer-side.md shows to docs/screenshots/).

import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_STEP_MS, SandboxPlayer } from "../../src/sim/sandbox-player.js";
import {
  buildConsole,
  collectPageProblems,
  consoleShots,
  expectAccessible,
  launchChromium,
  listenLocally,
  signInConsole,
} from "../helpers/browser.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

const { shotPath } = consoleShots(["account-tracking-link"]);
/** README.md, "A five-minute tour", step 2: the order the tour places. */
const TOUR_ORDER = {
  trade: "plumbing",
  location: { state: "CA", zip: "90012", address: "200 N Spring St" },
  urgency: "emergency",
  description: "Burst pipe under the kitchen sink, water on the floor",
};

let h: Harness;
let browser: Browser;
let base: string;
/** The services' clock runs this far ahead of the wall clock: each sandbox round moves it a step on. */
let offsetMs = 0;
const pageProblems: string[] = [];
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const buildDir = await buildConsole();
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir }, {}, { now: () => new Date(Date.now() + offsetMs) });
  base = await listenLocally(h);
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await h?.close();
});

async function orderStatus(orderId: string): Promise<string> {
  const res = await h.get(`/api/dispatch/v1/orders/${orderId}`, { "x-api-key": h.sandboxKey });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().status as string;
}

/** One round of the sandbox's simulated contractors, a step later than the last. */
async function sandboxRound(): Promise<void> {
  offsetMs += SANDBOX_STEP_MS + 1_000;
  await new SandboxPlayer(h.services).tick();
}

/** Sandbox rounds until the order reaches `status` (a bounded number of them). */
async function playUntil(orderId: string, status: string): Promise<void> {
  for (let round = 0; round < 12; round++) {
    if ((await orderStatus(orderId)) === status) return;
    await sandboxRound();
  }
  expect(await orderStatus(orderId)).toBe(status);
}

describe("an order's tracking link, from the console", () => {
  it("is shared from the tour's order, opens live, follows the job to done, and ends when revoked", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(ctx);
    const page = await ctx.newPage();
    collectPageProblems(page, pageProblems);
    await signInConsole(page, base, h.sandboxKey);

    const placed = await h.post(ORDER_PATH, TOUR_ORDER, { "x-api-key": h.sandboxKey });
    expect(placed.statusCode, placed.body).toBe(200);
    const orderId = placed.json().order_id as string;
    const row = page.locator(`li[data-order-id="${orderId}"]`);
    await row.getByRole("button", { name: "Timeline", exact: true }).click();
    const panel = row.getByRole("region", { name: "Tracking link" });
    await panel.getByRole("button", { name: "Share a tracking link", exact: true }).click();
    const address = panel.getByLabel("Tracking link address");
    await expect.poll(() => address.inputValue()).toMatch(/\/t\/[0-9A-Za-z]{22}\.[0-9A-Za-z]{22}$/);
    const url = await address.inputValue();
    expect(new URL(url).origin).toBe(base);
    expect(await panel.getByRole("link", { name: "Open", exact: true }).getAttribute("href")).toBe(url);
    expect(await panel.getAttribute("data-link-state")).toBe("active");
    await expectAccessible(page, "account view, an order's tracking link");
    await page.screenshot({ path: shotPath("account-tracking-link") });

    // "Open": the public page in a new tab, without the console's cookie mattering (it needs none).
    const [tracking] = await Promise.all([
      ctx.waitForEvent("page"),
      panel.getByRole("link", { name: "Open", exact: true }).click(),
    ]);
    collectPageProblems(tracking, pageProblems);
    await tracking.locator("#live").getByText("Live").waitFor();
    const status = () => tracking.locator("#status").textContent();

    await playUntil(orderId, "accepted");
    await expect.poll(status).toBe("A technician is booked for this job.");
    await playUntil(orderId, "en_route");
    await expect.poll(status).toBe("The technician is on the way.");
    await playUntil(orderId, "completed");
    await expect.poll(status).toBe("The work is done.");
    await expect.poll(() => tracking.locator("#steps li.done").count()).toBe(4);
    expect(await tracking.locator("main").textContent()).not.toMatch(/cents|\$|Spring St|fsd_/);

    // Revoked from the console: the open page says so at once; the console offers a new link.
    await panel.getByRole("button", { name: "Revoke…", exact: true }).click();
    await panel.getByLabel("Reason (kept in the audit log)").fill("sent to the wrong contact");
    await panel.getByRole("button", { name: "Revoke now", exact: true }).click();
    await panel.getByRole("button", { name: "Issue a new tracking link", exact: true }).waitFor();
    await expect.poll(status).toBe("This tracking link has expired or was withdrawn.");
    const reopened = await tracking.goto(url);
    expect(reopened?.status()).toBe(404);
    // The revocation is sealed with its reason, in the order's audit trail.
    const audit = await h.get(`/api/audit?order_id=${orderId}`, { "x-api-key": h.sandboxKey });
    expect(audit.body).toContain("tracking.link_revoked");
    expect(pageProblems).toEqual([]);
  });
});
