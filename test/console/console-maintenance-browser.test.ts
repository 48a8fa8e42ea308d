// Sites, assets and planned maintenance (issue 34) in a real browser (the machine's Chromium, as
// console-browser.test.ts): the sandbox account's Sites tab (its three Texas stores, an asset's warranty,
// its service history) and Plans tab (occurrences overdue first, each window in the site's zone, Skip with
// a required reason, the plans with their rule, the 90-day compliance); the dispatch team's board and
// Schedule mark planned orders. Time is the services' clock: the sandbox is seeded and a weekly plan's
// orders generated two weeks ago, then the clock comes back to now and the generator settles them, so the
// past visits (never done: nobody works the sandbox's orders here) are overdue. Screenshots go to
// test-artifacts/console/ (maintenance-*.png).

import { rmSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDue, settleEnded } from "../../src/operations/maintenance/generate.js";
import { seedSandboxMaintenance } from "../../src/sim/sandbox-maintenance.js";
import {
  buildConsole,
  collectPageProblems,
  consoleShots,
  expectAccessible,
  launchChromium,
  listenLocally,
  signInConsole,
} from "../helpers/browser.js";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";

// UPDATE_SCREENSHOTS=1: the screenshots the docs show go to docs/screenshots/ instead.
const { shotPath } = consoleShots(["maintenance-sites", "maintenance-plans"]);
const DAY_MS = 86_400_000;

interface Occurrence {
  plan_id: string;
  occurrence_key: string;
  status: string;
  order_id: string | null;
  window: { start: string; end: string };
}

let h: Harness;
let browser: Browser;
let base: string;
let buildDir: string;
/** How far the services' clock is from the wall clock (two weeks back while the past is made). */
let offsetMs = -14 * DAY_MS;
let dispatcherKey: string;
let weeklyPlanId: string;
let austinRtuId: string;
/** Every overdue visit of the sandbox's (the weekly plan's past ones; a quarterly one too, some weeks). */
let overdue: Occurrence[];
/** The weekly plan's overdue visits (at the Austin store, on its rooftop unit). */
let weeklyOverdue: Occurrence[];
const pageProblems: string[] = [];

const asSandbox = () => ({ "x-api-key": h.sandboxKey });

beforeAll(async () => {
  buildDir = await buildConsole();
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir }, {}, { now: () => new Date(Date.now() + offsetMs) });
  dispatcherKey = await h.dispatcherKey("test");
  // Two weeks ago: the sandbox's stores as its first start makes them, and a weekly filter check on the
  // Austin store's rooftop unit, generated for the fortnight.
  expect(await seedSandboxMaintenance(h.services)).toBe(4);
  const sites = (await h.get("/api/dispatch/v1/sites", asSandbox())).json().sites as Array<{
    site_id: string;
    name: string;
  }>;
  const austin = sites.find((s) => s.name === "Store #12 Austin");
  expect(austin).toBeTruthy();
  const detail = (await h.get(`/api/dispatch/v1/sites/${austin?.site_id}`, asSandbox())).json() as {
    assets: Array<{ asset_id: string; type: string }>;
  };
  austinRtuId = detail.assets.find((a) => a.type === "rtu")?.asset_id as string;
  const plan = await h.post(
    "/api/dispatch/v1/plans",
    {
      site_id: austin?.site_id,
      asset_id: austinRtuId,
      trade: "hvac",
      name: "Weekly coil check",
      description: "Check the rooftop unit's coils and drain pan",
      duration_minutes: 60,
      recurrence: "FREQ=WEEKLY;BYDAY=TU",
      window: { days: ["tue", "wed"], start: "08:00", end: "12:00" },
      horizon_days: 14,
    },
    asSandbox(),
  );
  expect(plan.statusCode, plan.body).toBe(200);
  weeklyPlanId = plan.json().plan_id as string;
  const made = await generateDue(h.services);
  expect(made.generated, JSON.stringify(made)).toBeGreaterThan(0);
  // Now: the visits whose window ended without their order done are overdue.
  offsetMs = 0;
  const settled = await settleEnded(h.services);
  expect(settled.overdue, JSON.stringify(settled)).toBeGreaterThan(0);
  const listed = (await h.get("/api/dispatch/v1/occurrences?limit=200", asSandbox())).json()
    .occurrences as Occurrence[];
  overdue = listed.filter((o) => o.status === "overdue");
  weeklyOverdue = overdue.filter((o) => o.plan_id === weeklyPlanId);
  expect(weeklyOverdue.length, JSON.stringify(listed)).toBeGreaterThan(0);
  base = await listenLocally(h);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

async function open(viewport = { width: 1440, height: 900 }): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  collectPageProblems(page, pageProblems);
  return { ctx, page };
}

const shot = async (page: Page, name: string) => {
  await page.evaluate("window.scrollTo(0, 0)");
  await page.screenshot({ path: shotPath(name), fullPage: true });
};

describe("the account's sites and assets", () => {
  it("the sandbox sees its three stores, their assets' warranty and an asset's service history", async () => {
    const { ctx, page } = await open();
    try {
      await signInConsole(page, base, h.sandboxKey);
      await page.getByRole("button", { name: "Sites", exact: true }).click();
      const rows = page.locator("table.sites-table tbody tr");
      await expect.poll(() => rows.count()).toBe(3);
      expect(await rows.locator("th").allTextContents()).toEqual([
        "Store #12 Austin",
        "Store #31 Dallas",
        "Store #47 Houston",
      ]);
      const austin = rows.filter({ hasText: "Store #12 Austin" });
      expect(await austin.locator("td").allTextContents()).toEqual([
        "Austin, TX",
        "America/Chicago",
        "mon-sat 07:00-21:00; sun 09:00-18:00",
        "2",
        "3",
      ]);
      await expect
        .poll(() => rows.filter({ hasText: "Dallas" }).locator("td").nth(3).textContent())
        .toBe("1");
      // The filter narrows the table.
      await page.getByLabel("Filter sites by name, address or city").fill("dallas");
      await expect.poll(() => rows.count()).toBe(1);
      await page.getByLabel("Filter sites by name, address or city").fill("");
      await expect.poll(() => rows.count()).toBe(3);

      // Austin's rooftop unit is in warranty (to 2031); Dallas's expired in March 2026.
      await austin.getByRole("button", { name: "Store #12 Austin" }).click();
      const detail = page.getByRole("region", { name: "Store #12 Austin" });
      await detail.locator(".asset").first().waitFor();
      expect(await detail.locator(".site-facts").textContent()).toContain("Roof access by the ladder");
      expect(await detail.locator(".site-facts").textContent()).toContain("store1@sandbox.example");
      const rtu = detail.locator(`li.asset[data-asset-id="${austinRtuId}"]`);
      expect(await rtu.locator("[data-warranty]").getAttribute("data-warranty")).toBe("in");
      expect(await rtu.locator("[data-warranty]").textContent()).toBe("In warranty");
      // Its service history: the weekly plan's orders, each with its status and a way to the order.
      await rtu.getByRole("button", { name: "Service history" }).click();
      const history = rtu.locator("table.asset-history tbody tr");
      await expect.poll(() => history.count()).toBeGreaterThan(0);
      const historyIds = await history.evaluateAll((trs) =>
        trs.map((tr) => tr.getAttribute("data-order-id")),
      );
      for (const o of weeklyOverdue) expect(historyIds).toContain(o.order_id);
      await shot(page, "maintenance-sites");
      await expectAccessible(page, "sites with an asset's history");

      await rows.filter({ hasText: "Dallas" }).getByRole("button").click();
      const dallas = page.getByRole("region", { name: "Store #31 Dallas" });
      await dallas.locator("[data-warranty]").waitFor();
      expect(await dallas.locator("[data-warranty]").getAttribute("data-warranty")).toBe("expired");
      expect(await dallas.locator("[data-warranty]").textContent()).toBe("Expired");

      // A new site: a ZIP of another state is refused under the ZIP field; with its own, the site is added,
      // its time zone derived by the service.
      await page.getByRole("button", { name: "Add site", exact: true }).click();
      const form = page.getByRole("form", { name: "Add a site" });
      await form.getByLabel("Name").fill("Store #58 San Antonio");
      await form.getByLabel("Address").fill("300 Alamo Plaza");
      await form.getByLabel("City").fill("San Antonio");
      await form.getByLabel("State").fill("TX");
      await form.getByLabel("ZIP").fill("94103");
      await form.getByRole("button", { name: "Add site" }).click();
      const zipFault = form.locator("#site-zip-fault");
      await zipFault.waitFor();
      expect(await zipFault.textContent()).toMatch(/zip/i);
      expect(await form.getByLabel("ZIP").getAttribute("aria-invalid")).toBe("true");
      await page.screenshot({ path: shotPath("maintenance-add-site-refused") });
      await expectAccessible(page, "add site refused");
      await form.getByLabel("ZIP").fill("78205");
      await form.getByRole("button", { name: "Add site" }).click();
      await expect.poll(() => rows.count()).toBe(4);
      const added = rows.filter({ hasText: "Store #58 San Antonio" });
      expect(await added.locator("td").nth(1).textContent()).toBe("America/Chicago");
      await page.getByRole("region", { name: "Store #58 San Antonio" }).locator(".empty").waitFor();
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });
});

describe("the account's planned maintenance", () => {
  it("lists occurrences overdue first with their windows in the site's zone; Skip and Move need a reason", async () => {
    const { ctx, page } = await open();
    try {
      await signInConsole(page, base, h.sandboxKey);
      await page.getByRole("button", { name: "Plans", exact: true }).click();
      const items = page.locator("li.occurrence");
      await expect.poll(() => items.count()).toBeGreaterThan(overdue.length);
      // Overdue first: the first group is "Overdue", with every overdue visit, each with its order.
      const statuses = await items.evaluateAll((lis) => lis.map((li) => li.getAttribute("data-status")));
      expect(statuses.slice(0, overdue.length)).toEqual(overdue.map(() => "overdue"));
      expect(statuses.slice(overdue.length)).not.toContain("overdue");
      expect(await page.locator(".week h3").first().textContent()).toBe("Overdue");
      const firstOverdue = weeklyOverdue[0] as Occurrence;
      const late = page.locator(
        `li.occurrence[data-plan-id="${weeklyPlanId}"][data-occurrence-key="${firstOverdue.occurrence_key}"]`,
      );
      expect(await late.locator(".occ-badge").textContent()).toBe("Overdue");
      expect(await late.locator(".occ-where").textContent()).toMatch(
        /^Store #12 Austin · \w{3}, \w{3} \d{1,2}, 8:00 AM – 12:00 PM C[SD]T \(America\/Chicago\)$/,
      );
      expect(await late.getByRole("button", { name: `Open order ${firstOverdue.order_id}` }).count()).toBe(1);
      // The plans: the rule in words beside its RRULE, the window in the site's zone, the next visit.
      const weekly = page.locator(`tr[data-plan-id="${weeklyPlanId}"]`);
      expect(await weekly.locator(".rule-words").textContent()).toBe("Every week, on Tuesday");
      expect(await weekly.locator("code.rrule").textContent()).toBe("FREQ=WEEKLY;BYDAY=TU");
      expect(await weekly.locator("td").nth(2).textContent()).toBe("Tue, Wed 08:00–12:00 (America/Chicago)");
      const quarterly = page.locator("tr[data-plan-id]").filter({ hasText: "Quarterly HVAC filter change" });
      expect(await quarterly.first().locator(".rule-words").textContent()).toBe(
        "Every 3 months, on the 2nd Tuesday",
      );
      // The compliance over 90 days: the overdue visits were due and not done.
      const rate = page.locator("[data-compliance-rate]");
      expect(await rate.textContent()).toBe("0 %");
      expect(await page.locator(".compliance-sites li").count()).toBe(3);
      await page.evaluate("window.scrollTo(0, 0)");
      await page.screenshot({ path: shotPath("maintenance-plans") });
      await shot(page, "maintenance-plans-full");
      await expectAccessible(page, "plans");

      // Skip an upcoming visit: an empty reason is refused, visibly; with one, the visit is skipped.
      const target = page
        .locator(`li.occurrence[data-plan-id="${weeklyPlanId}"][data-status="upcoming"]`)
        .first();
      const key = (await target.getAttribute("data-occurrence-key")) as string;
      const row = page.locator(`li.occurrence[data-plan-id="${weeklyPlanId}"][data-occurrence-key="${key}"]`);
      await row.getByRole("button", { name: "Skip", exact: true }).click();
      const form = row.getByRole("form", { name: "Skip occurrence" });
      await form.getByRole("button", { name: "Skip occurrence" }).click();
      const error = form.getByRole("alert");
      await error.waitFor();
      expect(await error.textContent()).toContain("A reason is required");
      expect(await form.getByLabel(/^Reason/).getAttribute("aria-invalid")).toBe("true");
      await page.screenshot({ path: shotPath("maintenance-skip-refused") });
      await expectAccessible(page, "skip refused");
      expect(await row.getAttribute("data-status")).toBe("upcoming");
      await form.getByLabel(/^Reason/).fill("Store closed for inventory");
      await form.getByRole("button", { name: "Skip occurrence" }).click();
      await expect.poll(() => row.getAttribute("data-status")).toBe("skipped");
      expect(await row.locator(".occ-badge").textContent()).toBe("Skipped");
      expect(await row.locator(".occ-note").textContent()).toContain("Store closed for inventory");
      // The service has it skipped too.
      const after = (
        await h.get(`/api/dispatch/v1/occurrences?plan_id=${weeklyPlanId}&status=skipped`, asSandbox())
      ).json().occurrences as Occurrence[];
      expect(after.map((o) => o.occurrence_key)).toEqual([key]);

      // Move: the form starts at the visit's window in the site's local time (Chicago, 08:00); a window that
      // ends when it starts is refused by the service, shown under the form; a good one moves the visit.
      const nextKey = (await page
        .locator(`li.occurrence[data-plan-id="${weeklyPlanId}"][data-status="upcoming"]`)
        .first()
        .getAttribute("data-occurrence-key")) as string;
      const next = page.locator(
        `li.occurrence[data-plan-id="${weeklyPlanId}"][data-occurrence-key="${nextKey}"]`,
      );
      await next.getByRole("button", { name: "Move", exact: true }).click();
      const move = next.getByRole("form", { name: "Move occurrence" });
      const from = await move.getByLabel("From").inputValue();
      expect(from).toBe(`${nextKey}T08:00`);
      await move.getByLabel("To").fill(from);
      await move.getByLabel(/^Reason/).fill("Roofers on site that day");
      await move.getByRole("button", { name: "Move occurrence" }).click();
      await move.getByRole("alert").waitFor();
      expect(await move.getByRole("alert").textContent()).toContain("must be after");
      await page.screenshot({ path: shotPath("maintenance-move-refused") });
      await expectAccessible(page, "move refused");
      // The Wednesday after, 09:00 to 12:00 in Chicago (an HVAC visit needs 2.5 hours at least).
      const wednesday = new Date(Date.parse(`${nextKey}T12:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
      await move.getByLabel("From").fill(`${wednesday}T09:00`);
      await move.getByLabel("To").fill(`${wednesday}T12:00`);
      await move.getByRole("button", { name: "Move occurrence" }).click();
      await expect.poll(() => next.getAttribute("data-status")).toBe("generated");
      expect(await next.locator(".occ-where").textContent()).toMatch(
        /^Store #12 Austin · Wed, .* 9:00 AM – 12:00 PM C[SD]T/,
      );
      expect(await next.locator(".occ-note").first().textContent()).toMatch(
        /^Moved from Tue, .* 8:00 AM – 12:00 PM/,
      );
      const moved = (
        (
          await h.get(`/api/dispatch/v1/occurrences?plan_id=${weeklyPlanId}&status=generated`, asSandbox())
        ).json().occurrences as Occurrence[]
      ).find((o) => o.occurrence_key === nextKey);
      const chicago = (iso: string) =>
        new Date(iso).toLocaleString("sv-SE", { timeZone: "America/Chicago" }).slice(0, 16);
      expect(chicago(moved?.window.start as string)).toBe(`${wednesday} 09:00`);
      expect(chicago(moved?.window.end as string)).toBe(`${wednesday} 12:00`);

      // Kept live: a visit moved elsewhere (here through the API) has its order made; the order's event
      // reaches the console, which reads the occurrences again.
      const upcoming = (
        (
          await h.get(`/api/dispatch/v1/occurrences?plan_id=${weeklyPlanId}&status=upcoming`, asSandbox())
        ).json().occurrences as Occurrence[]
      ).at(-1) as Occurrence;
      const far = page.locator(
        `li.occurrence[data-plan-id="${weeklyPlanId}"][data-occurrence-key="${upcoming.occurrence_key}"]`,
      );
      expect(await far.getAttribute("data-status")).toBe("upcoming");
      const later = (iso: string) => new Date(Date.parse(iso) + DAY_MS).toISOString();
      const elsewhere = await h.post(
        "/api/dispatch/v1/occurrences/move",
        {
          plan_id: weeklyPlanId,
          occurrence_key: upcoming.occurrence_key,
          reason: "Manager away on Tuesday",
          service_window: { start: later(upcoming.window.start), end: later(upcoming.window.end) },
        },
        asSandbox(),
      );
      expect(elsewhere.statusCode, elsewhere.body).toBe(200);
      await expect.poll(() => far.getAttribute("data-status"), { timeout: 10_000 }).toBe("generated");
      expect(await far.getByRole("button", { name: `Open order ${elsewhere.json().order_id}` }).count()).toBe(
        1,
      );
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });
});

describe("the account's maintenance on a phone", () => {
  it("the Plans and Sites tabs fit a 390 px screen", async () => {
    const { ctx, page } = await open({ width: 390, height: 844 });
    try {
      await signInConsole(page, base, h.sandboxKey);
      await page.getByRole("button", { name: "Plans", exact: true }).click();
      await page.locator("li.occurrence").first().waitFor();
      await page.screenshot({ path: shotPath("maintenance-plans-phone") });
      await expectAccessible(page, "plans on a phone");
      // Nothing wider than the screen but the tables, which scroll in their own box.
      const wide = await page.evaluate("document.documentElement.scrollWidth");
      expect(wide).toBeLessThanOrEqual(390);
      await page.getByRole("button", { name: "Sites", exact: true }).click();
      await page.locator("table.sites-table tbody tr").first().waitFor();
      await page.screenshot({ path: shotPath("maintenance-sites-phone") });
      await expectAccessible(page, "sites on a phone");
      expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });
});

describe("the dispatch team sees planned work beside reactive work", () => {
  it("board rows and schedule blocks of a plan's orders say planned; a caller's order does not", async () => {
    // Reactive work at the same store: an urgent call of the sandbox's own.
    const reactive = await h.post(
      ORDER_PATH,
      validOrder({
        urgency: "urgent",
        location: { state: "TX", zip: "78701", city: "Austin", address: "500 Congress Ave" },
        description: "Rooftop unit tripping its breaker",
      }),
      asSandbox(),
    );
    expect(reactive.statusCode, reactive.body).toBe(200);
    const reactiveId = reactive.json().order_id as string;
    const planned = weeklyOverdue[0] as Occurrence;
    const { ctx, page } = await open();
    try {
      await signInConsole(page, base, dispatcherKey);
      const row = page.locator(`li[data-order-id="${planned.order_id}"]`);
      await row.waitFor();
      expect(await row.locator(".planned-badge").textContent()).toBe("Planned");
      const other = page.locator(`li[data-order-id="${reactiveId}"]`);
      await other.waitFor();
      expect(await other.locator(".planned-badge").count()).toBe(0);
      await shot(page, "maintenance-board");
      await expectAccessible(page, "board with planned orders");

      // The Schedule: the planned visit's block on its day, marked planned (dispatch.schedule_lanes).
      await page.getByRole("button", { name: "Schedule", exact: true }).click();
      const day = new Date(planned.window.start).toLocaleDateString("en-CA", { timeZone: "America/Chicago" });
      const schedule = page.getByRole("region", { name: "Schedule" });
      await schedule.getByLabel("Date").fill(day);
      await schedule.getByLabel("State (two letters)").fill("TX");
      await schedule.getByLabel("Trade").selectOption("hvac");
      await schedule.getByLabel("Sort lanes").selectOption("load");
      const block = page.locator(`.block[data-order-id="${planned.order_id}"]`);
      await block.waitFor();
      expect(await block.getAttribute("data-planned")).toBe("true");
      expect(await block.getAttribute("aria-label")).toMatch(/^Planned HVAC, Austin:/);
      expect(await block.locator(".block-planned-mark").count()).toBe(1);
      await block.scrollIntoViewIfNeeded();
      await page.screenshot({ path: shotPath("maintenance-schedule") });
      await expectAccessible(page, "schedule with a planned block");
    } finally {
      await ctx.close();
    }
    expect(pageProblems).toEqual([]);
  });
});
