// The dispatcher's day (issue 31) in a real browser (the machine's Chromium, as console-browser.test.ts):
// names where they count (board rows, the order's detail), a timeline that says what happened, the times
// that matter with the service-level clocks, the candidates' ETA as a duration, and the evals of a fresh
// install; the Schedule view (dispatch.schedule_lanes, checked on its own in
// test/http/schedule-lanes.test.ts): contractor lanes with working hours, time off and held jobs, the
// queue by urgency and deadline, a chosen zone, sorting by load, and the optimiser's proposal drawn,
// discarded, drawn again and applied. The services' clock runs at 10:00 in San Francisco two days from
// now (the browser's clock is set to it too), so the day has room whatever the hour the test runs at.
// Screenshots go to test-artifacts/console/ (schedule-*.png).

import { rmSync } from "node:fs";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
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
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

// UPDATE_SCREENSHOTS=1: the screenshots the docs show go to docs/screenshots/ instead.
const { shotPath } = consoleShots(["schedule", "schedule-proposal", "schedule-board-detail"]);
const PLUMBER = "ctr_liveschedplumber";
const HVAC = "ctr_liveschedhvac";
const LA = "America/Los_Angeles";
/** 10:00 in San Francisco (18:00 UTC in winter, 11:00 in summer) two days after the wall clock's day. */
const SERVICE_NOW = (() => {
  const d = new Date();
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 2, 18);
})();
const OFFSET_MS = SERVICE_NOW - Date.now();
/** San Francisco's UTC offset that day, "-08:00" or "-07:00". */
const LA_OFFSET = (
  new Intl.DateTimeFormat("en-US", { timeZone: LA, timeZoneName: "longOffset" })
    .formatToParts(new Date(SERVICE_NOW))
    .find((p) => p.type === "timeZoneName")?.value ?? "GMT-08:00"
).replace("GMT", "");
/** The services' day in San Francisco, YYYY-MM-DD. */
const DAY = new Date(SERVICE_NOW).toLocaleDateString("en-CA", { timeZone: LA });

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
/** HVAC work that waited for a dispatcher while the technician was off the pool (the optimiser places it),
 * and electrical work nobody can take (the queue's order: the emergency first). */
let hvacQueuedId: string;
let electricalUrgentId: string;
let electricalEmergencyId: string;
const pageProblems: string[] = [];

beforeAll(async () => {
  buildDir = await buildConsole();
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir }, {}, { now: () => new Date(Date.now() + OFFSET_MS) });
  await h.services.store.contractors.insert(
    [
      // Based in Oakland: a drive across the bay to its San Francisco jobs, drawn before each.
      liveContractor({
        id: PLUMBER,
        name: "Bay Plumbing Co",
        trades: ["plumbing"],
        rating: 4.8,
        lat: 37.8,
        lon: -122.27,
      }),
      liveContractor({
        id: HVAC,
        name: "Mission Air & Heat",
        trades: ["hvac"],
        rating: 4.5,
        lat: 37.8,
        hours: "mon-sun 07:00-19:00",
        active: false,
      }),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  accountKey = await h.key("acme-properties", "live");
  dispatcherKey = await h.dispatcherKey("live");
  plumberKey = await h.contractorKey(PLUMBER, "bay-plumbing");
  doneId = await plumbingJob("Water heater relief valve dripping", [
    { status: "en_route", eta_minutes: 95 },
    { status: "on_site" },
    { status: "completed", final_cost_cents: 31_630 },
  ]);
  acceptedId = await plumbingJob("Kitchen sink backing up", []);
  const asDispatcher = { "x-api-key": dispatcherKey };
  // The plumber is off from 15:00 to 16:00 that day.
  const off = await h.post(
    "/api/dispatcher/v1/time-off",
    {
      contractor_id: PLUMBER,
      start: `${DAY}T15:00:00-08:00`,
      end: `${DAY}T16:00:00-08:00`,
      reason: "dentist",
    },
    asDispatcher,
  );
  expect(off.statusCode, off.body).toBe(200);
  hvacQueuedId = await queuedOrder("hvac", "urgent", "No heat in the lobby");
  electricalUrgentId = await queuedOrder("electrical", "urgent", "Tripped breaker, half the office dark");
  electricalEmergencyId = await queuedOrder("electrical", "emergency", "Sparking panel");
  const back = await h.post(
    "/api/dispatcher/v1/contractors/status",
    { contractor_id: HVAC, action: "activate", reason: "back from leave" },
    asDispatcher,
  );
  expect(back.statusCode, back.body).toBe(200);
  await h.services.pool.load();
  // The optimiser's threads started before the page asks for a plan: under vitest a thread compiles its
  // TypeScript through tsx, which took over a minute with a cold cache on a loaded machine (CI's clean
  // clone), and the page's "Optimise day" waited for it.
  await h.services.planner.warm();
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

/** An order of the account's that nobody can take now: it waits for a dispatcher. */
async function queuedOrder(
  trade: string,
  urgency: string,
  description: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const placed = await h.post(
    ORDER_PATH,
    {
      trade,
      urgency,
      location: { state: "CA", zip: "94107", city: "San Francisco", address: "500 3rd St" },
      description,
      ...extra,
    },
    { "x-api-key": accountKey },
  );
  expect(placed.statusCode, placed.body).toBe(200);
  expect(placed.json().status).toBe("needs_dispatcher");
  return placed.json().order_id as string;
}

async function open(viewport = { width: 1440, height: 900 }): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport });
  // The browser's clock reads the services' time (the schedule's "today" and its now line).
  await ctx.clock.setSystemTime(Date.now() + OFFSET_MS);
  const page = await ctx.newPage();
  collectPageProblems(page, pageProblems);
  return { ctx, page };
}

const shot = async (page: Page, name: string) => {
  await page.evaluate("window.scrollTo(0, 0)");
  await page.screenshot({ path: shotPath(name), fullPage: true });
};

describe("the dispatcher's board: names, times and what happened", () => {
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
      // When it was made, in the same zone (not the browser's).
      expect(await detail.locator("dt:text-is('Created') + dd").textContent()).toMatch(/P[SD]T$/);
      expect(await detail.locator('[data-sla="arrive"]').getAttribute("data-standing")).toBe("on_track");
      expect(await detail.locator('[data-sla="respond"]').getAttribute("data-standing")).toBe("met");
      // When it is booked: the plumber's block of time as the ledger holds it (the Schedule's block), in
      // the job's zone, with how soon.
      const held = (
        await h.get(`/api/dispatcher/v1/orders/${acceptedId}`, { "x-api-key": dispatcherKey })
      ).json().booked as { start: string; end: string };
      const booked = detail.locator('[data-fact="booked"]');
      await expect.poll(() => booked.getAttribute("data-start")).toBe(held.start);
      expect(await booked.getAttribute("data-end")).toBe(held.end);
      expect(await booked.textContent()).toMatch(
        /^\w{3}, \w{3} \d+, \d+:\d\d [AP]M – \d+:\d\d [AP]M P[SD]T( \((in .+|.+ ago)\))?$/,
      );
      expect(await detail.locator("dt:text-is('Booked')").count()).toBe(1);
      await shot(page, "schedule-board-detail");
      await expectAccessible(page, "board detail with times");

      // The job done: its timeline says each status from -> to, the cost in dollars, who by name.
      await page.getByRole("button", { name: "Close detail" }).click();
      await page.locator(`li[data-order-id="${doneId}"] button.row-open`).click();
      const done = page.getByRole("complementary", { name: `Order ${doneId}` });
      const timeline = done.getByRole("region", { name: "Timeline" });
      await timeline.locator(".tl-item").first().waitFor();
      const text = (await timeline.textContent()) ?? "";
      // The match says to whom the job was offered, by name, and where it ranked.
      const matched = timeline.locator('.tl-item[data-kind="order.matched"]');
      expect(await matched.locator("strong").textContent()).toBe("Offered to Bay Plumbing Co");
      expect(await matched.textContent()).toMatch(/ranked 1 of \d+/);
      expect(text).toContain("Status: Accepted → En route");
      expect(text).toContain("Status: On site → Completed");
      expect(text).toContain("final cost $316.30");
      // The ETA as a time in the job's zone, with how long it was.
      expect(text).toMatch(/ETA \d+:\d\d [AP]M P[SD]T \(in 1 h 35 min\)/);
      // Who: a role and a name. The plumber by its name (the record discloses its id to the dispatch
      // team), the account's key by the account's name.
      const actors = await timeline.locator(".tl-actor").allTextContents();
      expect(actors).toContain("Contractor Bay Plumbing Co");
      expect(actors.some((a) => /^Account acme-properties \(key key_\w+…\)$/.test(a))).toBe(true);
      expect(text).not.toContain("final cost cents");
      expect(text).not.toMatch(/key:key_|caller key/);
      // Each record's time in the job's zone, named, as the rest of the detail.
      const whens = await timeline.locator(".tl-when").allTextContents();
      expect(whens.length).toBeGreaterThan(3);
      for (const when of whens) expect(when).toMatch(/P[SD]T$/);
      // The ranked candidates' ETA reads as a duration, never "NNN min" past an hour.
      const etas = await done.locator("table.candidates tbody td:nth-child(5)").allTextContents();
      expect(etas.length).toBeGreaterThan(0);
      for (const eta of etas) expect(eta).toMatch(/^(—|\d+ min|\d+ h( \d+ min)?|\d+ d( \d+ h)?)$/);
      await timeline.scrollIntoViewIfNeeded();
      await page.screenshot({ path: shotPath("schedule-timeline") });
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

describe("the Schedule: contractor lanes over a day, the queue, the optimiser", () => {
  it("a dispatcher reads the day's lanes and queue, changes the zone and the sort, and applies the optimised day", async () => {
    const { ctx, page } = await open();
    try {
      await signInConsole(page, base, dispatcherKey);
      await page.getByRole("button", { name: "Schedule", exact: true }).click();
      await page.getByLabel("Date").fill(DAY);
      await page.getByLabel("State (two letters)").fill("CA");
      const plumberLane = page.locator(`li.lane[data-contractor-id="${PLUMBER}"]`);
      const hvacLane = page.locator(`li.lane[data-contractor-id="${HVAC}"]`);
      await hvacLane.waitFor();
      await expect.poll(() => page.locator("li.lane[data-contractor-id]").count()).toBe(2);
      const block = plumberLane.locator(`.block[data-order-id="${acceptedId}"]`);
      expect(await block.getAttribute("data-status")).toBe("accepted");
      expect(Date.parse((await block.getAttribute("data-start")) ?? "")).toBeGreaterThan(0);
      // The drive before it, from the plumber's base across the bay: a lead-in as long, for its time, as
      // the block is for the job's, ending where the block starts.
      const startMs = Date.parse((await block.getAttribute("data-start")) ?? "");
      const endMs = Date.parse((await block.getAttribute("data-end")) ?? "");
      const driveMs = startMs - Date.parse((await block.getAttribute("data-travel-start")) ?? "");
      expect(driveMs).toBeGreaterThan(15 * 60_000);
      const drive = plumberLane.locator(`.lane-travel[data-travel-order-id="${acceptedId}"]`);
      expect(await drive.getAttribute("aria-label")).toMatch(
        new RegExp(`^Drive ${Math.round(driveMs / 60_000)} min from base, from \\d{1,2}:\\d{2}`),
      );
      const [driveBox, blockBox] = [await drive.boundingBox(), await block.boundingBox()];
      expect((driveBox?.width ?? 0) / (blockBox?.width ?? 1)).toBeCloseTo(driveMs / (endMs - startMs), 2);
      expect((driveBox?.x ?? 0) + (driveBox?.width ?? 0)).toBeCloseTo(blockBox?.x ?? -1, 0);
      expect(await plumberLane.locator(".lane-off").count()).toBe(1);
      expect(await hvacLane.locator(".lane-work").count()).toBe(1);
      expect(await page.locator(".zone-note").textContent()).toContain("each contractor's own zone");
      expect(await plumberLane.locator(".lane-meta").textContent()).toMatch(/^P[SD]T · 1 job/);
      // The now line: 10:00 in San Francisco.
      expect(await plumberLane.locator(".now-line").count()).toBe(1);
      // The queue: the emergency first, then the urgent ones by deadline.
      const queued = await page
        .locator(".queue-row")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-order-id")));
      expect(queued[0]).toBe(electricalEmergencyId);
      expect(new Set(queued.slice(1))).toEqual(new Set([hvacQueuedId, electricalUrgentId]));
      await page.screenshot({ path: shotPath("schedule"), fullPage: true });
      await expectAccessible(page, "schedule");

      // Every lane in Chicago's time; then by load.
      await page.getByLabel("Time zone").selectOption("America/Chicago");
      await expect.poll(() => hvacLane.getAttribute("data-time-zone")).toBe("America/Chicago");
      expect(await page.locator(".zone-note").getAttribute("data-zone")).toBe("America/Chicago");
      await page.getByLabel("Time zone").selectOption("");
      await page.getByLabel("Sort lanes").selectOption("load");
      await expect
        .poll(() => page.locator("li.lane[data-contractor-id]").first().getAttribute("data-contractor-id"))
        .toBe(PLUMBER);

      // The optimiser: the HVAC job goes to the technician, drawn over its lane, then applied.
      await page.getByRole("button", { name: "Optimise day", exact: true }).click();
      // The proposal, or the optimiser's refusal (then the test fails on its text, not on a timeout).
      const proposed = hvacLane.locator(`[data-proposed-order-id="${hvacQueuedId}"]`);
      const refused = page.locator(".optimiser [role=alert]");
      await proposed.or(refused).first().waitFor({ timeout: 60_000 });
      expect(await refused.count(), (await refused.allTextContents()).join(" ")).toBe(0);
      const moves = page.locator(".proposal-moves li");
      expect(await moves.first().textContent()).toContain("Mission Air & Heat");
      // Each job left out says why in words: nobody here does electrical work.
      expect(
        await page.locator(`.proposal-unassigned li[data-order-id="${electricalEmergencyId}"]`).textContent(),
      ).toContain("no contractor of its trade covers its place");
      await page.screenshot({ path: shotPath("schedule-proposal"), fullPage: true });
      await expectAccessible(page, "schedule with a proposal");
      // Discard: the proposal and its blocks go, nothing changed; the queue still holds the job.
      await page.getByRole("button", { name: "Discard", exact: true }).click();
      expect(await page.locator(".proposal").count()).toBe(0);
      expect(await page.locator("[data-proposed-order-id]").count()).toBe(0);
      expect(await page.locator(`.queue-row[data-order-id="${hvacQueuedId}"]`).count()).toBe(1);
      expect(await hvacLane.locator(".block[data-order-id]").count()).toBe(0);
      // Proposed again (the same day, the same seed: the same proposal), then applied.
      await page.getByRole("button", { name: "Optimise day", exact: true }).click();
      await proposed.or(refused).first().waitFor({ timeout: 60_000 });
      expect(await refused.count(), (await refused.allTextContents()).join(" ")).toBe(0);
      await page.getByRole("button", { name: "Apply", exact: true }).click();
      await page.locator(".applied").waitFor();
      expect(await page.locator(".applied").textContent()).toContain("1 assigned");
      const placed = hvacLane.locator(`.block[data-order-id="${hvacQueuedId}"]`);
      await placed.waitFor({ timeout: 10_000 });
      expect(await placed.getAttribute("data-status")).toBe("accepted");
      // The job left the queue (the board's live orders).
      await expect.poll(() => page.locator(`.queue-row[data-order-id="${hvacQueuedId}"]`).count()).toBe(0);
      await page.screenshot({ path: shotPath("schedule-applied"), fullPage: true });
      // Live: another dispatcher cancels the job through the API; its block leaves the lane, no reload.
      const cancelled = await h.post(
        "/api/dispatcher/v1/orders/cancel",
        { order_id: hvacQueuedId, reason: "the tenant fixed it" },
        { "x-api-key": dispatcherKey },
      );
      expect(cancelled.statusCode, cancelled.body).toBe(200);
      await expect.poll(() => placed.count(), { timeout: 10_000 }).toBe(0);
      // Live: time off added for the plumber through the API shades its lane within a second, no reload
      // (the dispatch team's stream says pool.contractor_changed).
      const offLater = await h.post(
        "/api/dispatcher/v1/time-off",
        {
          contractor_id: PLUMBER,
          start: `${DAY}T18:00:00-08:00`,
          end: `${DAY}T19:00:00-08:00`,
          reason: "school run",
        },
        { "x-api-key": dispatcherKey },
      );
      expect(offLater.statusCode, offLater.body).toBe(200);
      const sent = Date.now();
      await expect.poll(() => plumberLane.locator(".lane-off").count(), { timeout: 5_000 }).toBe(2);
      expect(Date.now() - sent).toBeLessThan(1_500);
      await page.screenshot({ path: shotPath("schedule-time-off-live"), fullPage: true });
      // A block opens its order on the board.
      await block.click();
      await page.getByRole("complementary", { name: `Order ${acceptedId}` }).waitFor();
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });
});

describe("the optimiser's apply, partly refused", () => {
  it("shows the job the server refused with its reason, the rest applied", async () => {
    // Two HVAC jobs waiting for a dispatcher (the technician off the pool while they came in), of two
    // accounts; the technician back.
    const asDispatcher = { "x-api-key": dispatcherKey };
    const status = async (action: string, reason: string) => {
      const res = await h.post(
        "/api/dispatcher/v1/contractors/status",
        { contractor_id: HVAC, action, reason },
        asDispatcher,
      );
      expect(res.statusCode, res.body).toBe(200);
    };
    await status("deactivate", "van in the shop");
    const acmeJob = await queuedOrder("hvac", "urgent", "Rooftop unit rattling");
    const otherKey = await h.key("harbor-lofts", "live");
    const placed = await h.post(
      ORDER_PATH,
      {
        trade: "hvac",
        urgency: "urgent",
        location: { state: "CA", zip: "94107", city: "San Francisco", address: "600 3rd St" },
        description: "Thermostat dead in unit 4",
      },
      { "x-api-key": otherKey },
    );
    expect(placed.json().status, placed.body).toBe("needs_dispatcher");
    const otherJob = placed.json().order_id as string;
    await status("activate", "back from the shop");
    await h.services.pool.load();

    const { ctx, page } = await open();
    try {
      await signInConsole(page, base, dispatcherKey);
      await page.getByRole("button", { name: "Schedule", exact: true }).click();
      await page.getByLabel("Date").fill(DAY);
      await page.getByLabel("State (two letters)").fill("CA");
      const hvacLane = page.locator(`li.lane[data-contractor-id="${HVAC}"]`);
      await hvacLane.waitFor();
      await page.getByRole("button", { name: "Optimise day", exact: true }).click();
      const refusedPlan = page.locator(".optimiser [role=alert]");
      const proposedBoth = [acmeJob, otherJob].map((id) =>
        hvacLane.locator(`[data-proposed-order-id="${id}"]`),
      );
      await (proposedBoth[0] as Locator).or(refusedPlan).first().waitFor({ timeout: 60_000 });
      expect(await refusedPlan.count(), (await refusedPlan.allTextContents()).join(" ")).toBe(0);
      expect(await (proposedBoth[1] as Locator).count()).toBe(1);

      // Behind the page's back, the account bars the technician from its HVAC work (do-not-dispatch):
      // neither order nor contractor changed, so the proposal is not stale, but that one assignment is
      // refused.
      const [acmeOrder] = await h.services.store.orders.byIds([acmeJob]);
      const ref = h.services.refs.of(acmeOrder?.account_id as string, HVAC);
      const barred = await h.post(
        "/api/dispatch/v1/do-not-dispatch",
        { contractor_ref: ref, trades: ["hvac"], reason: "left the roof hatch open" },
        { "x-api-key": accountKey },
      );
      expect(barred.statusCode, barred.body).toBe(200);

      await page.getByRole("button", { name: "Apply", exact: true }).click();
      await page.locator(".applied").waitFor();
      const applied = page.locator(".applied");
      expect(await applied.getByRole("status").textContent()).toContain("1 assigned, 1 refused");
      // The refusal is an alert of its own (not inside the green notice), naming the contractor.
      const refusal = applied.getByRole("alert").locator(`li.refused[data-order-id="${acmeJob}"]`);
      expect(await refusal.textContent()).toMatch(
        /to Mission Air & Heat refused: contractor_excluded: .*excludes/,
      );
      expect(await applied.locator("li.refused").count()).toBe(1);
      // The other account's job is on the technician's lane; the refused one still waits in the queue.
      await hvacLane.locator(`.block[data-order-id="${otherJob}"]`).waitFor({ timeout: 10_000 });
      expect(await page.locator(`.queue-row[data-order-id="${acmeJob}"]`).count()).toBe(1);
      await shot(page, "schedule-apply-refused");
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });
});

describe("density: compact board rows, the pool as a sortable table with its total", () => {
  it("board rows are one line by default (two on request); the pool sorts by a column and says its total", async () => {
    const { ctx, page } = await open();
    try {
      await signInConsole(page, base, dispatcherKey);
      const row = page.locator(`li[data-order-id="${acceptedId}"]`);
      await row.waitFor();
      const compactHeight = (await row.boundingBox())?.height ?? 0;
      expect(compactHeight).toBeGreaterThan(0);
      expect(compactHeight).toBeLessThanOrEqual(40);
      const toggle = page.getByRole("button", { name: "Compact rows", exact: true });
      expect(await toggle.getAttribute("aria-pressed")).toBe("true");
      await page.screenshot({ path: shotPath("schedule-board-compact"), fullPage: true });
      await toggle.click();
      await expect.poll(async () => (await row.boundingBox())?.height ?? 0).toBeGreaterThan(50);
      await toggle.click();

      await page.getByRole("button", { name: "Pool", exact: true }).click();
      const table = page.locator("table.pool-table");
      await table.waitFor();
      expect(await page.locator(".pool-count").getAttribute("data-total")).toBe("2");
      expect(await page.locator(".pool-count").textContent()).toContain("Showing 2 of 2 contractors");
      const order = () =>
        page
          .locator("tbody.pool-row")
          .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-contractor-id")));
      expect(await order()).toEqual([PLUMBER, HVAC]); // by name
      const rating = page.getByRole("button", { name: "Rating", exact: true });
      await rating.click(); // highest first: the plumber (4.8) before the technician (4.5)
      expect(await page.locator('th[aria-sort="descending"]').textContent()).toContain("Rating");
      expect(await order()).toEqual([PLUMBER, HVAC]);
      await rating.click();
      expect(await order()).toEqual([HVAC, PLUMBER]);
      await page.getByRole("button", { name: "In use", exact: true }).click();
      expect(await order()).toEqual([PLUMBER, HVAC]); // the plumber holds a job, the technician none now
      await page.screenshot({ path: shotPath("schedule-pool-table"), fullPage: true });
      await expectAccessible(page, "pool table");
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });
});

describe("the Schedule's queue: each order's window from start to end", () => {
  it("a queued order with a window reads it start to end in the job's zone, with how soon", async () => {
    // Scheduled plumbing for the evening (after the plumber's time off), offered to the plumber, who declines: nobody else can take it.
    const windowed = await h.post(
      ORDER_PATH,
      {
        trade: "plumbing",
        urgency: "scheduled",
        location: { state: "CA", zip: "94107", city: "San Francisco", address: "500 3rd St" },
        description: "Replace the lobby water fountain",
        service_window: { start: `${DAY}T16:00:00${LA_OFFSET}`, end: `${DAY}T20:00:00${LA_OFFSET}` },
      },
      { "x-api-key": accountKey },
    );
    expect(windowed.statusCode, windowed.body).toBe(200);
    const orderId = windowed.json().order_id as string;
    const asPlumber = { "x-api-key": plumberKey };
    const offers = (await h.get("/api/contractor/v1/offers", asPlumber)).json().offers as Array<{
      offer_id: string;
      order_id: string;
    }>;
    const offer = offers.find((o) => o.order_id === orderId);
    const declined = await h.post(
      "/api/contractor/v1/offers/decline",
      { offer_id: offer?.offer_id, reason: "booked solid" },
      asPlumber,
    );
    expect(declined.statusCode, declined.body).toBe(200);
    const { ctx, page } = await open();
    try {
      await signInConsole(page, base, dispatcherKey);
      await page.getByRole("button", { name: "Schedule", exact: true }).click();
      await page.getByLabel("Date").fill(DAY);
      const row = page.locator(`.queue-row[data-order-id="${orderId}"]`);
      await row.waitFor();
      const window = row.locator(".queue-window");
      expect(await window.getAttribute("data-window-start")).toBe(
        new Date(`${DAY}T16:00:00${LA_OFFSET}`).toISOString(),
      );
      expect(await window.textContent()).toMatch(
        /^Window \w{3}, \w{3} \d+, 4:00 PM – 8:00 PM P[SD]T \(in \d h( \d+ min)?\)$/,
      );
      await row.screenshot({ path: shotPath("schedule-queue-window") });
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });
});
