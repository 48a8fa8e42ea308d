// The request form from the account's console (issue 35), in a real browser (the machine's Chromium, as
// console-browser.test.ts): on a site's detail (Sites) the account gets the site's request link, its QR
// code shows (the image loads under the console's CSP, with the session cookie) and downloads as SVG; a
// report sent through the public form's POST shows pending in Requests, is approved with a trade and shows
// ordered with its order's id; another is rejected with a reason; the policy is shown, and a requester
// key's attempt to change it shows the service's refusal; rotating the link makes the old address answer
// 404. Screenshots go to test-artifacts/console/ (UPDATE_SCREENSHOTS=1: the ones docs/console.md shows go
// to docs/screenshots/).

import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildConsole,
  collectPageProblems,
  consoleShots,
  expectAccessible,
  launchChromium,
  listenLocally,
  signInConsole,
} from "../helpers/browser.js";
import { createHarness, type Harness } from "../helpers/harness.js";

const { shotPath } = consoleShots(["account-request-link", "account-requests"]);
const SITE = {
  name: "Store #7 Congress",
  address: "500 Congress Ave",
  city: "Austin",
  state: "TX",
  zip: "78701",
};

let h: Harness;
let browser: Browser;
let base: string;
let admin: string;
let requester: string;
let siteId: string;
const pageProblems: string[] = [];
const contexts: BrowserContext[] = [];

const issue = async (role: "requester" | "admin") =>
  (
    await h.services.keys.issue({
      accountName: "acme-requests-console",
      mode: "test",
      actor: "operator:test",
      role,
      approvalLimitCents: null,
    })
  ).key;

beforeAll(async () => {
  const buildDir = await buildConsole();
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir });
  base = await listenLocally(h);
  admin = await issue("admin");
  requester = await issue("requester");
  const site = await h.post("/api/dispatch/v1/sites", SITE, { "x-api-key": admin });
  expect(site.statusCode, site.body).toBe(200);
  siteId = site.json().site_id as string;
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await h?.close();
});

async function signedIn(key: string): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(ctx);
  const page = await ctx.newPage();
  collectPageProblems(page, pageProblems);
  await signInConsole(page, base, key);
  return page;
}

/** What the form's page sends: a report through the public link, no key. Its reference. */
async function report(url: string, fields: { description: string; name: string; contact: string }) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...fields, urgency: "urgent" }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { reference: string }).reference;
}

/** The site's request link from its detail in Sites: its address, after the QR code has loaded. */
async function linkFromSites(page: Page): Promise<string> {
  await page.getByRole("button", { name: "Sites", exact: true }).click();
  await page.getByRole("button", { name: SITE.name }).click();
  const panel = page.getByRole("region", { name: "Request link" });
  await panel.getByRole("button", { name: "Show the request link", exact: true }).click();
  const address = panel.getByLabel("Request link address");
  await expect.poll(() => address.inputValue()).toMatch(/\/r\/[0-9A-Za-z]{22}\.[0-9A-Za-z]{22}$/);
  const qr = panel.getByRole("img", { name: `QR code of the request link of ${SITE.name}` });
  const loaded = () =>
    qr.evaluate((el) => {
      const img = el as unknown as { complete: boolean; naturalWidth: number };
      return img.complete ? img.naturalWidth : 0;
    });
  await expect.poll(loaded).toBeGreaterThan(0);
  return address.inputValue();
}

describe("the request form, from the account's console", () => {
  it("shows a site's link and QR code, approves and rejects reports, and rotates the link", async () => {
    const page = await signedIn(admin);
    const url = await linkFromSites(page);
    expect(new URL(url).origin).toBe(base);
    const panel = page.getByRole("region", { name: "Request link" });
    expect(await panel.getByRole("link", { name: "Open", exact: true }).getAttribute("href")).toBe(url);
    const download = panel.getByRole("link", { name: "Download QR (SVG)" });
    const href = (await download.getAttribute("href")) as string;
    expect(href).toContain(`/api/dispatch/v1/sites/${siteId}/request-link/qr`);
    const svg = await page.request.get(new URL(href, base).href);
    expect(svg.status()).toBe(200);
    expect(svg.headers()["content-type"]).toContain("image/svg+xml");
    await expectAccessible(page, "account view, a site's request link");
    await page
      .getByRole("region", { name: SITE.name })
      .screenshot({ path: shotPath("account-request-link") });

    const freezer = await report(url, {
      description: "The walk-in freezer is warm and the ice machine stopped",
      name: "Dana",
      contact: "+1 512 555 0142",
    });
    const prank = await report(url, {
      description: "Testing the form <b>hello</b>",
      name: "Sam",
      contact: "sam@example.com",
    });

    await page.getByRole("button", { name: "Requests", exact: true }).click();
    const row = (id: string) => page.locator(`li[data-request-id="${id}"]`);
    await row(freezer).waitFor();
    await expect.poll(() => row(freezer).getAttribute("data-status")).toBe("pending");
    expect(await row(freezer).textContent()).toContain(SITE.name);
    expect(await row(freezer).textContent()).toContain("Dana · +1 512 555 0142");
    expect(await row(freezer).locator(".request-guess").textContent()).toMatch(/^Appliance repair \d+%$/);
    // Markup typed into the form is shown as typed.
    expect(await row(prank).locator(".request-text").textContent()).toBe("Testing the form <b>hello</b>");
    // No guess: the trade must be chosen before approving.
    expect(await row(prank).getByLabel("Trade").inputValue()).toBe("");
    await expectAccessible(page, "account view, Requests");
    await page.screenshot({ path: shotPath("account-requests") });

    const trade = row(freezer).getByLabel("Trade");
    expect(await trade.inputValue()).toBe("appliance_repair");
    await row(freezer).getByRole("button", { name: "Approve", exact: true }).click();
    await expect.poll(() => row(freezer).getAttribute("data-status")).toBe("ordered");
    const orderId = (await row(freezer).locator(".request-order").textContent()) as string;
    expect(orderId).toMatch(/^ord_/);
    const read = await h.get(`/api/dispatch/v1/requests/${freezer}`, { "x-api-key": admin });
    expect(read.json()).toMatchObject({ status: "ordered", order_id: orderId, trade: "appliance_repair" });

    await row(prank).getByRole("button", { name: "Reject…" }).click();
    const reject = row(prank).getByRole("form", { name: "Reject the request" });
    expect(await reject.getByRole("button", { name: "Reject now" }).isDisabled()).toBe(true);
    await reject.getByLabel(/^Reason/).fill("a test of the form");
    await reject.getByRole("button", { name: "Reject now" }).click();
    await expect.poll(() => row(prank).getAttribute("data-status")).toBe("rejected");
    expect(await row(prank).textContent()).toContain("Rejected: a test of the form");
    await page.screenshot({ path: shotPath("account-requests-decided") });

    // The filter: rejected ones only.
    await page.getByLabel("Status").selectOption("rejected");
    await expect.poll(() => page.locator("li[data-request-id]").count()).toBe(1);
    await row(prank).waitFor();

    // Rotated from the site's detail: the old address answers 404 at once; a new one works.
    await page.getByRole("button", { name: "Sites", exact: true }).click();
    const fresh = await linkFromSites(page);
    expect(fresh).toBe(url);
    await panel.getByRole("button", { name: "Rotate…" }).click();
    const rotate = panel.getByRole("form", { name: "Rotate the request link" });
    expect(await rotate.textContent()).toContain("stop working at once");
    await rotate.getByRole("button", { name: "Rotate now" }).click();
    const address = panel.getByLabel("Request link address");
    await expect.poll(() => address.inputValue()).not.toBe(url);
    await panel.getByRole("status").waitFor();
    expect((await page.request.get(url)).status()).toBe(404);
    expect((await page.request.get(await address.inputValue())).status()).toBe(200);

    // On a phone's width (390 px): the requests and their actions fit, nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("button", { name: "Requests", exact: true }).click();
    await page.getByLabel("Status").selectOption("all");
    await expect.poll(() => page.locator("li[data-request-id]").count()).toBe(2);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.screenshot({ path: shotPath("account-requests-narrow"), fullPage: true });
    expect(pageProblems).toEqual([]);
  });

  it("shows the policy, and the service's refusal when a requester key tries to change it", async () => {
    const page = await signedIn(requester);
    await page.getByRole("button", { name: "Requests", exact: true }).click();
    const policy = page.getByRole("form", { name: "Request policy" });
    await expect.poll(() => policy.getAttribute("data-mode")).toBe("hold");
    await policy.getByLabel("Policy").selectOption("create");
    await policy.getByRole("button", { name: "Save" }).click();
    const refusal = policy.getByRole("alert");
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/admin/i);
    expect(await policy.getAttribute("data-mode")).toBe("hold");

    // An admin key sets it: the console shows it in force.
    const adminPage = await signedIn(admin);
    await adminPage.getByRole("button", { name: "Requests", exact: true }).click();
    const adminPolicy = adminPage.getByRole("form", { name: "Request policy" });
    await expect.poll(() => adminPolicy.getAttribute("data-mode")).toBe("hold");
    await adminPolicy.getByLabel("Policy").selectOption("create");
    await adminPolicy.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => adminPolicy.getAttribute("data-mode")).toBe("create");
    const read = await h.get("/api/dispatch/v1/request-policy", { "x-api-key": admin });
    expect(read.json().mode).toBe("create");
    expect(pageProblems).toEqual([]);
  });
});
