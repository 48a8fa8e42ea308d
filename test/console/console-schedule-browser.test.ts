// The dispatcher's day (issue 31) in a real browser (the machine's Chromium, as console-browser.test.ts):
// names where they count (board rows, the order's detail), a timeline that says what happened, the times
// that matter with the service-level clocks, the candidates' ETA as a duration, and the evals of a fresh
// install. Screenshots go to test-artifacts/console/ (schedule-*.png).

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAccessible, launchChromium, listenLocally, signInConsole } from "../helpers/browser.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARTIFACTS = join(ROOT, "test-artifacts", "console");
const PLUMBER = "ctr_liveschedplumber";
const HVAC = "ctr_liveschedhvac";

let h: Harness;
let browser: Browser;
let base: string;
let buildDir: string;
let accountKey: string;
let dispatcherKey: string;
let plumberKey: string;
/** A job done through the API (its timeline), and one accepted and under way (its clocks). */
let doneId: string;
let acceptedId: string;
const pageProblems: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  buildDir = mkdtempSync(join(tmpdir(), "fd-console-build-"));
  await build({
    configFile: join(ROOT, "console", "vite.config.ts"),
    logLevel: "error",
    build: { outDir: buildDir, emptyOutDir: true },
  });
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir });
  await h.services.store.contractors.insert(
    [
      liveContractor({ id: PLUMBER, name: "Bay Plumbing Co", trades: ["plumbing"], rating: 4.8 }),
      liveContractor({ id: HVAC, name: "Mission Air & Heat", trades: ["hvac"], rating: 4.5, lat: 37.8 }),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  accountKey = await h.key("acme-properties", "live");
  dispatcherKey = await h.dispatcherKey("live");
  plumberKey = (
    await h.services.keys.issue({
      accountName: "bay-plumbing",
      mode: "live",
      actor: "operator:test",
      kind: "contractor",
      contractorId: PLUMBER,
    })
  ).key;
  doneId = await plumbingJob("Water heater relief valve dripping", [
    { status: "en_route", eta_minutes: 95 },
    { status: "on_site" },
    { status: "completed", final_cost_cents: 31_630 },
  ]);
  acceptedId = await plumbingJob("Kitchen sink backing up", []);
  base = await listenLocally(h);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

/** An urgent plumbing order of the account's, accepted by the plumber, then moved through `steps`. */
async function plumbingJob(description: string, steps: Array<Record<string, unknown>>): Promise<string> {
  const asPlumber = { "x-api-key": plumberKey };
  const placed = await h.post(
    ORDER_PATH,
    {
      trade: "plumbing",
      urgency: "urgent",
      location: { state: "CA", zip: "94110", city: "San Francisco", address: "3000 24th St" },
      description,
    },
    { "x-api-key": accountKey },
  );
  expect(placed.statusCode, placed.body).toBe(200);
  const orderId = placed.json().order_id as string;
  const offers = (await h.get("/api/contractor/v1/offers", asPlumber)).json().offers as Array<{
    offer_id: string;
    order_id: string;
  }>;
  const offer = offers.find((o) => o.order_id === orderId);
  expect(offer, "the plumber is offered the job").toBeTruthy();
  const accepted = await h.post("/api/contractor/v1/offers/accept", { offer_id: offer?.offer_id }, asPlumber);
  expect(accepted.statusCode, accepted.body).toBe(200);
  for (const step of steps) {
    const res = await h.post("/api/contractor/v1/jobs/status", { order_id: orderId, ...step }, asPlumber);
    expect(res.statusCode, res.body).toBe(200);
  }
  return orderId;
}

async function open(viewport = { width: 1440, height: 900 }): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  page.on("pageerror", (e) => pageProblems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy/i.test(m.text())) pageProblems.push(m.text());
  });
  return { ctx, page };
}

const shot = async (page: Page, name: string) => {
  await page.evaluate("window.scrollTo(0, 0)");
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
};

describe("the dispatcher's board: names, times and what happened", () => {
  it("the dispatcher order list carries the names and the service-level clocks", async () => {
    const res = await h.get(`/api/dispatcher/v1/orders?status=accepted`, { "x-api-key": dispatcherKey });
    expect(res.statusCode, res.body).toBe(200);
    const order = (res.json().orders as Array<Record<string, unknown>>).find(
      (o) => o.order_id === acceptedId,
    );
    expect(order).toMatchObject({
      account_name: "acme-properties",
      contractor_id: PLUMBER,
      contractor_name: "Bay Plumbing Co",
    });
    const clocks = order?.service_levels as Array<{ clock: string; standing: string; deadline: string }>;
    // Urgent work: the respond clock was met by the acceptance, the arrive clock runs to arrive_by.
    expect(clocks.map((c) => [c.clock, c.standing])).toEqual([
      ["respond", "met"],
      ["arrive", "on_track"],
    ]);
    expect(clocks[1]?.deadline).toBe(order?.arrive_by);
  });

  it("rows and the detail show names; the detail the times in the job's zone; the timeline what happened", async () => {
    const { ctx, page } = await open();
    try {
      await signInConsole(page, base, dispatcherKey);
      const row = page.locator(`li[data-order-id="${acceptedId}"]`);
      await expect
        .poll(() => row.locator(".row-who").textContent())
        .toBe("acme-properties · Bay Plumbing Co");
      await row.getByRole("button").first().click();
      const detail = page.getByRole("complementary", { name: `Order ${acceptedId}` });
      await expect.poll(() => detail.locator("dd").filter({ hasText: "Bay Plumbing Co" }).count()).toBe(1);
      await expect.poll(() => detail.locator("dd").filter({ hasText: "acme-properties" }).count()).toBe(1);
      expect(await detail.textContent()).not.toContain(PLUMBER);
      // Arrive by, in the job's zone (San Francisco: Pacific time, named), and its clock on track.
      const arriveBy = await detail.locator('[data-fact="arrive-by"]').textContent();
      expect(arriveBy).toMatch(/P[SD]T/);
      expect(await detail.locator('[data-sla="arrive"]').getAttribute("data-standing")).toBe("on_track");
      expect(await detail.locator('[data-sla="respond"]').getAttribute("data-standing")).toBe("met");
      await shot(page, "schedule-board-detail");
      await expectAccessible(page, "board detail with times");

      // The job done: its timeline says each status from -> to, the cost in dollars, who by name.
      await page.getByRole("button", { name: "Close detail" }).click();
      await page.locator(`li[data-order-id="${doneId}"] button.row-open`).click();
      const done = page.getByRole("complementary", { name: `Order ${doneId}` });
      const timeline = done.getByRole("region", { name: "Timeline" });
      await timeline.locator(".tl-item").first().waitFor();
      const text = (await timeline.textContent()) ?? "";
      expect(text).toContain("Status: Accepted → En route");
      expect(text).toContain("Status: On site → Completed");
      expect(text).toContain("final cost $316.30");
      expect(text).toContain("ETA in 1 h 35 min");
      expect(text).toContain("contractor Bay Plumbing Co");
      expect(text).not.toContain("final cost cents");
      expect(text).not.toMatch(/key:key_/);
      // The ranked candidates' ETA reads as a duration, never "NNN min" past an hour.
      const etas = await done.locator("table.candidates tbody td:nth-child(5)").allTextContents();
      expect(etas.length).toBeGreaterThan(0);
      for (const eta of etas) expect(eta).toMatch(/^(—|\d+ min|\d+ h( \d+ min)?|\d+ d( \d+ h)?)$/);
      await timeline.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, "schedule-timeline.png") });
      await expectAccessible(page, "board timeline");
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });

  it("the evals of a fresh install fall back to the sandbox's orders, and empty charts say so", async () => {
    // A fresh install: no live order anywhere.
    const fresh = await createHarness({ CONSOLE_DIR: buildDir });
    const { ctx, page } = await open();
    try {
      const freshBase = await listenLocally(fresh);
      await page.goto(`${freshBase}/console/#evals`);
      await page.locator('.series[data-mode="sandbox"]').waitFor();
      await page.locator('[data-fallback="sandbox"]').waitFor();
      // Nothing in the sandbox either: each chart says it has no data instead of "1 ms, 1 ms, 0 ms".
      await page.locator('[data-empty-series="true"]').waitFor();
      const latency = page.locator('[data-chart="dispatch-latency"]');
      expect(await latency.locator(".chart-empty").textContent()).toBe("No data in this period.");
      expect(await latency.locator("svg").count()).toBe(0);
      await shot(page, "schedule-evals-empty");
      await expectAccessible(page, "evals without data");
      // The dispatcher's own choice stands: live, empty, says so.
      await page.getByRole("button", { name: "Live orders", exact: true }).click();
      await page.locator('.series[data-mode="live"]').waitFor();
      expect(await page.locator('[data-fallback="sandbox"]').count()).toBe(0);
    } finally {
      await ctx.close();
      await fresh.close();
    }
  });
});
