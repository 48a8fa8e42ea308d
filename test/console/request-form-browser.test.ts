// The public request form (issue 35) in a real browser (the machine's Chromium, as the tracking page's
// test): opened with no key and no cookie, under its CSP with no page error and accessible, it shows the
// site's name and city; a report typed in and sent, with a photo, becomes an order under the account's
// "create" policy (the photo attached to it), and the page shows its reference. A rotated link's page says so. Stored-script checks: a site whose name
// is markup is drawn as text, and markup typed into every field is sent, kept and shown as text, never run.
// Screenshots go to test-artifacts/requests/.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectPageProblems, expectAccessible, launchChromium, listenLocally } from "../helpers/browser.js";
import { createHarness, type Harness } from "../helpers/harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARTIFACTS = join(ROOT, "test-artifacts", "requests");
const HOSTILE = `<img/src=x/onerror=window.__pwned=1><script>window.__pwned=2</script>`;
const SITE = { address: "500 Congress Ave", city: "Austin", state: "TX", zip: "78701" };

let h: Harness;
let browser: Browser;
let base: string;
let key: string;
const pageProblems: string[] = [];

async function ok(res: Promise<{ statusCode: number; body: string; json(): unknown }>) {
  const r = await res;
  expect(r.statusCode, r.body).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies.
  return r.json() as any;
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
  h = await createHarness();
  key = await h.key("acme-requests", "test");
  await ok(h.post("/api/dispatch/v1/request-policy", { mode: "create" }, { "x-api-key": key }));
  base = await listenLocally(h);
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** A new site named `name` and its request link, as the browser reaches it. */
async function siteForm(name: string): Promise<{ siteId: string; url: string }> {
  const site = await ok(h.post("/api/dispatch/v1/sites", { ...SITE, name }, { "x-api-key": key }));
  const link = await ok(
    h.post("/api/dispatch/v1/request-links", { site_id: site.site_id }, { "x-api-key": key }),
  );
  return { siteId: site.site_id, url: `${base}${new URL(link.url).pathname}` };
}

async function openPage(url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 420, height: 820 } });
  const page = await context.newPage();
  collectPageProblems(page, pageProblems);
  await page.goto(url);
  return page;
}

async function fill(page: Page, fields: { description: string; name: string; contact: string }) {
  await page.getByLabel("What is wrong?").fill(fields.description);
  await page.getByLabel(/Urgent: today/).check();
  await page.getByLabel("Your name").fill(fields.name);
  await page.getByLabel("Phone or email to reach you").fill(fields.contact);
  await page.getByRole("button", { name: "Send" }).click();
}

describe("the request form", () => {
  it("is filled in and sent with no key, and the report becomes an order", async () => {
    const { siteId, url } = await siteForm("Store #42");
    const page = await openPage(url);
    await expect.poll(() => page.locator("#site").textContent()).toBe("Store #42, Austin");
    expect((await page.context().cookies()).length).toBe(0);
    await expectAccessible(page, "request form");
    await page.screenshot({ path: join(ARTIFACTS, "request-form.png") });

    const photo = await sharp({ create: { width: 120, height: 90, channels: 3, background: "#3a7" } })
      .jpeg()
      .toBuffer();
    await page.locator("#photos").setInputFiles({ name: "sink.jpg", mimeType: "image/jpeg", buffer: photo });
    await fill(page, {
      description: "Water leaking under the sink and the toilet is clogged",
      name: "Sam",
      contact: "+1 512 555 0100",
    });
    await page.locator("#done").waitFor();
    const reference = await page.locator("#reference").textContent();
    expect(reference).toMatch(/^wrq_/);
    expect(await page.locator("#done-text").textContent()).toMatch(/work order was created/);
    await expectAccessible(page, "request form, sent");
    await page.screenshot({ path: join(ARTIFACTS, "request-form-sent.png") });

    const request = await ok(h.get(`/api/dispatch/v1/requests/${reference}`, { "x-api-key": key }));
    expect(request).toMatchObject({
      status: "ordered",
      trade: "plumbing",
      urgency: "urgent",
      site_id: siteId,
    });
    const order = await ok(h.get(`/api/dispatch/v1/orders/${request.order_id}`, { "x-api-key": key }));
    expect(order).toMatchObject({ trade: "plumbing", reference_id: reference });
    expect(await page.locator("#photo-note").textContent()).toBe("");
    const files = await ok(h.get(`/api/orders/${request.order_id}/attachments`, { "x-api-key": key }));
    expect(files.attachments.map((a: { media_type: string }) => a.media_type)).toEqual(["image/jpeg"]);

    // Rotated: the page the manager has open no longer takes reports, and says why on reload.
    await ok(h.post("/api/dispatch/v1/request-links/rotate", { site_id: siteId }, { "x-api-key": key }));
    const reopened = await page.goto(url);
    expect(reopened?.status()).toBe(404);
    expect(await page.locator("h1").textContent()).toBe("Link not available");
    expect(pageProblems).toEqual([]);
    await page.context().close();
  });

  it("draws a site name that is markup as text, and sends markup typed into every field as text", async () => {
    const { url } = await siteForm(HOSTILE);
    const page = await openPage(url);
    await expect.poll(() => page.locator("#site").textContent()).toBe(`${HOSTILE}, Austin`);
    await fill(page, { description: `${HOSTILE} sink leaking`, name: HOSTILE, contact: HOSTILE });
    await page.locator("#done").waitFor();
    expect(await page.locator("main img, main script").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    const reference = await page.locator("#reference").textContent();
    const request = await ok(h.get(`/api/dispatch/v1/requests/${reference}`, { "x-api-key": key }));
    expect(request).toMatchObject({
      description: `${HOSTILE} sink leaking`,
      name: HOSTILE,
      contact: HOSTILE,
    });
    await page.screenshot({ path: join(ARTIFACTS, "request-form-hostile.png") });
    expect(pageProblems).toEqual([]);
    await page.context().close();
  });
});
