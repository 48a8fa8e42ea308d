// The public tracking page (issue 35, step 1) in a real browser (the machine's Chromium, as
// console-browser.test.ts): opened with no key and no cookie, it follows the order live from booked to
// on the way (with its ETA) to done, under its CSP with no page error; a revocation turns it to "expired
// or withdrawn" at once. A stored-script check: a technician whose name is markup sees it drawn as text,
// never run. Screenshots go to test-artifacts/tracking/.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectPageProblems, expectAccessible, launchChromium, listenLocally } from "../helpers/browser.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARTIFACTS = join(ROOT, "test-artifacts", "tracking");
const HOSTILE = `<img/src=x/onerror=window.__pwned=1><script>window.__pwned=2</script>`;
const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
};

let h: Harness;
let browser: Browser;
let base: string;
let accountKey: string;
const plumberKeys = new Map<string, string>();
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
  const plumbers = [
    { id: "ctr_trackmaria", name: "Maria Lopez" },
    { id: "ctr_trackhostile", name: HOSTILE },
  ];
  await h.services.store.contractors.insert(
    plumbers.map((p, i) => liveContractor({ ...p, trades: ["plumbing"], rating: 4.9 - i })),
    testRecord(),
  );
  await h.services.pool.load();
  for (const p of plumbers) {
    const issued = await h.services.keys.issue({
      accountName: `crew-${p.id}`,
      mode: "live",
      actor: "operator:test",
      kind: "contractor",
      contractorId: p.id,
    });
    plumberKeys.set(p.id, issued.key);
  }
  accountKey = await h.key("acme", "live");
  base = await listenLocally(h);
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** An order accepted by `plumber` (declined by the others first offered it), and its tracking page. */
async function trackedOrder(plumber: string): Promise<{ orderId: string; url: string }> {
  const order = await ok(h.post(ORDER_PATH, JOB, { "x-api-key": accountKey }));
  for (let round = 0; round < plumberKeys.size; round++) {
    for (const [id, key] of plumberKeys) {
      const offers = await ok(h.get("/api/contractor/v1/offers", { "x-api-key": key }));
      const offer = offers.offers.find((o: { order_id: string }) => o.order_id === order.order_id);
      if (!offer) continue;
      const path = id === plumber ? "accept" : "decline";
      await ok(
        h.post(`/api/contractor/v1/offers/${path}`, { offer_id: offer.offer_id }, { "x-api-key": key }),
      );
    }
  }
  const link = await ok(
    h.post("/api/dispatch/v1/tracking-links", { order_id: order.order_id }, { "x-api-key": accountKey }),
  );
  // The link names the host the request was made to (injected: localhost); the browser reaches the server.
  return { orderId: order.order_id, url: `${base}${new URL(link.url).pathname}` };
}

const report = (plumber: string, body: Record<string, unknown>) =>
  ok(h.post("/api/contractor/v1/jobs/status", body, { "x-api-key": plumberKeys.get(plumber) ?? "" }));

async function openPage(url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 420, height: 720 } });
  const page = await context.newPage();
  collectPageProblems(page, pageProblems);
  await page.goto(url);
  return page;
}

const status = (page: Page) => page.locator("#status");
const doneSteps = (page: Page) => page.locator("#steps li.done");

describe("the tracking page", () => {
  it("follows the job live from booked to on the way to done, then ends when revoked", async () => {
    const { orderId, url } = await trackedOrder("ctr_trackmaria");
    const page = await openPage(url);
    await expect.poll(() => status(page).textContent()).toBe("A technician is booked for this job.");
    await page.locator("#live").getByText("Live").waitFor();
    expect(await page.locator("#details").textContent()).toContain("Maria (Plumbing)");
    expect(await page.locator("#details").textContent()).not.toContain("Lopez");
    await expectAccessible(page, "tracking page, booked");

    await report("ctr_trackmaria", { order_id: orderId, status: "en_route", eta_minutes: 25 });
    await expect.poll(() => status(page).textContent()).toBe("The technician is on the way.");
    await page.getByText("Expected arrival").waitFor();
    expect(await doneSteps(page).count()).toBe(2);
    await page.screenshot({ path: join(ARTIFACTS, "tracking-en-route.png") });

    await report("ctr_trackmaria", { order_id: orderId, status: "on_site" });
    await report("ctr_trackmaria", { order_id: orderId, status: "completed", final_cost_cents: 21_000 });
    await expect.poll(() => status(page).textContent()).toBe("The work is done.");
    await expect.poll(() => doneSteps(page).count()).toBe(4);
    expect(await page.locator("main").textContent()).not.toMatch(/210|555|Market/);
    await page.screenshot({ path: join(ARTIFACTS, "tracking-completed.png") });

    await ok(
      h.post("/api/dispatch/v1/tracking-links/revoke", { order_id: orderId }, { "x-api-key": accountKey }),
    );
    await expect
      .poll(() => status(page).textContent())
      .toBe("This tracking link has expired or was withdrawn.");
    const reopened = await page.goto(url);
    expect(reopened?.status()).toBe(404);
    expect(await page.locator("h1").textContent()).toBe("Link not available");
    expect(pageProblems).toEqual([]);
    await page.context().close();
  });

  it("draws a technician's name that is markup as text, and runs none of it", async () => {
    const { url } = await trackedOrder("ctr_trackhostile");
    const page = await openPage(url);
    await expect.poll(() => page.locator("#details").textContent()).toContain("<img/src=x/onerror");
    expect(await page.locator("main img, main script").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    await page.screenshot({ path: join(ARTIFACTS, "tracking-hostile-name.png") });
    expect(pageProblems).toEqual([]);
    await page.context().close();
  });
});
