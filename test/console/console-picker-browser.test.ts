// The board's assign picker in a real browser (the machine's Chromium, as console-browser.test.ts): each
// candidate's shift in its own zone (on shift until when, off shift and back when, time off today) and
// whether it can be on site by the order's arrive-by, with "Only on shift"; and what the dispatcher is in
// the middle of (a contractor picked, half a reason typed, the detail scrolled) outlives the live updates
// of other orders and of the order itself. The services' clock runs at 20:00 UTC two days from now
// (15:00 or 16:00 in New York), the browser's with it, so the shifts read the same whatever the hour the
// test runs at. Screenshots go to test-artifacts/console/ (picker-*.png).

import { rmSync } from "node:fs";
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
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

// UPDATE_SCREENSHOTS=1: the screenshots the docs show go to docs/screenshots/ instead.
const { shotPath } = consoleShots(["picker-shifts", "picker-on-shift-only"]);
const NY = "America/New_York";
/** 20:00 UTC two days after the wall clock's day: mid-afternoon in New York, summer or winter. */
const SERVICE_NOW = (() => {
  const d = new Date();
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 2, 20);
})();
const OFFSET_MS = SERVICE_NOW - Date.now();
/** The weekday code (mon, tue, ...) in New York `days` after the services' day. */
const nyDay = (days: number) =>
  new Date(SERVICE_NOW + days * 86_400_000)
    .toLocaleDateString("en-US", { timeZone: NY, weekday: "short" })
    .toLowerCase();

const MIDTOWN = "ctr_livepickmidtown";
const HARLEM = "ctr_livepickharlem";
const QUEENS = "ctr_livepickqueens";

let h: Harness;
let browser: Browser;
let base: string;
let buildDir: string;
let accountKey: string;
let dispatcherKey: string;
const pageProblems: string[] = [];

/** A New York plumber (all statewide within 200 miles of their base). */
function nyPlumber(id: string, name: string, zip: string, lat: number, lon: number, hours: string | null) {
  return liveContractor({
    id,
    name,
    homeZip: zip,
    lat,
    lon,
    states: ["NY"],
    trades: ["plumbing"],
    serviceRadiusMiles: 200,
    hours,
  });
}

beforeAll(async () => {
  buildDir = await buildConsole();
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir }, {}, { now: () => new Date(Date.now() + OFFSET_MS) });
  await h.services.store.contractors.insert(
    [
      // Nearest, but it works tomorrow only: off shift now.
      nyPlumber(MIDTOWN, "Midtown Plumbing", "10001", 40.7506, -73.9972, `${nyDay(1)} 07:00-17:00`),
      // Any hours, but on time off (below).
      nyPlumber(HARLEM, "Harlem Pipe Works", "10027", 40.8116, -73.9465, null),
      // At work now, until 22:00: the one matching offers the job to.
      nyPlumber(QUEENS, "Queens Drain Co", "11101", 40.7447, -73.9485, "mon-sun 07:00-22:00"),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  accountKey = await h.key("acme-ny", "live");
  dispatcherKey = await h.dispatcherKey("live");
  // Harlem is off from an hour ago until 10:00 tomorrow, New York time.
  const off = await h.post(
    "/api/dispatcher/v1/time-off",
    {
      contractor_id: HARLEM,
      start: new Date(SERVICE_NOW - 3_600_000).toISOString(),
      end: new Date(SERVICE_NOW + 18 * 3_600_000).toISOString(),
      reason: "family matter",
    },
    { "x-api-key": dispatcherKey },
  );
  expect(off.statusCode, off.body).toBe(200);
  base = await listenLocally(h);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

async function open(viewport: {
  width: number;
  height: number;
}): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport });
  // The browser's clock reads the services' time.
  await ctx.clock.setSystemTime(Date.now() + OFFSET_MS);
  const page = await ctx.newPage();
  collectPageProblems(page, pageProblems);
  return { ctx, page };
}

async function placeOrder(trade: string, urgency: string, description: string): Promise<string> {
  const res = await h.post(
    ORDER_PATH,
    {
      trade,
      urgency,
      location: { state: "NY", zip: "10001", city: "New York", address: "350 5th Ave", name: "Tower lobby" },
      description,
    },
    { "x-api-key": accountKey },
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json().order_id as string;
}

/** Waits for the order's row to show `status` (the DOM changing, never a fixed sleep). */
function status(page: Page, orderId: string, value: string) {
  return page.locator(`li[data-order-id="${orderId}"][data-status="${value}"]`).waitFor({ timeout: 15_000 });
}

/** The contractor declines the offer it holds of the order (a contractor key of its own). */
async function decline(contractorId: string, orderId: string) {
  const key = await h.contractorKey(contractorId, `declines-${contractorId}`);
  const offers = (await h.get("/api/contractor/v1/offers", { "x-api-key": key })).json().offers as Array<{
    offer_id: string;
    order_id: string;
  }>;
  const offer = offers.find((o) => o.order_id === orderId);
  expect(offer, JSON.stringify(offers)).toBeDefined();
  const res = await h.post(
    "/api/contractor/v1/offers/decline",
    { offer_id: offer?.offer_id, reason: "van in the shop" },
    { "x-api-key": key },
  );
  expect(res.statusCode, res.body).toBe(200);
}

/** Opens the order's detail on the board; the detail and its picker, once the candidates are listed. */
async function openDetail(page: Page, orderId: string) {
  await page.locator(`li[data-order-id="${orderId}"]`).getByRole("button").click();
  const detail = page.locator("aside.detail");
  await detail.locator(".detail-head .row-id", { hasText: orderId }).waitFor();
  const picker = detail.getByRole("list", { name: "Contractors" });
  await picker.locator(`li[data-contractor-id="${MIDTOWN}"]`).waitFor();
  return { detail, picker };
}

describe("the board's assign picker", () => {
  it("shows each candidate's shift in its zone, its time off today and whether it can be there by arrive-by", async () => {
    // Urgent work in Manhattan: matching offers it to the one at work (Queens), the nearer ones being off.
    const orderId = await placeOrder("plumbing", "urgent", "No water on the 3rd floor");
    const [placed] = await h.services.store.orders.byIds([orderId]);
    expect(placed?.status).toBe("offered");
    expect(placed?.contractor_id).toBe(QUEENS);

    const { ctx, page } = await open({ width: 1280, height: 900 });
    await signInConsole(page, base, dispatcherKey);
    await status(page, orderId, "offered");
    const { detail, picker } = await openDetail(page, orderId);
    // The service's order (nearest first) is kept: off shift is marked, not sorted away.
    expect(
      await picker.locator("li").evaluateAll((els) => els.map((e) => e.getAttribute("data-contractor-id"))),
    ).toEqual([MIDTOWN, QUEENS, HARLEM]);
    const row = (id: string) => picker.locator(`li[data-contractor-id="${id}"]`);
    expect(await row(MIDTOWN).getAttribute("data-shift")).toBe("off");
    expect(await row(MIDTOWN).locator(".pick-shift").textContent()).toMatch(
      /^Off shift · back [A-Z][a-z]{2} 7:00 AM E[SD]T$/,
    );
    expect(await row(QUEENS).getAttribute("data-shift")).toBe("on");
    expect(await row(QUEENS).locator(".pick-shift").textContent()).toMatch(
      /^On shift until 10:00 PM E[SD]T$/,
    );
    expect(await row(HARLEM).getAttribute("data-shift")).toBe("time_off");
    // Off from an hour ago (14:00 or 15:00) until 14:00 UTC tomorrow (9:00 or 10:00 in New York).
    expect(await row(HARLEM).locator(".pick-shift").textContent()).toMatch(
      /^Time off · back [A-Z][a-z]{2} (9|10):00 AM E[SD]T$/,
    );
    expect(await row(HARLEM).locator(".pick-off").textContent()).toMatch(
      /^Time off today (2|3):00 PM – [A-Z][a-z]{2} (9|10):00 AM E[SD]T$/,
    );
    // Arrive-by is 8 hours after the order: only the one at work now can be there by then.
    expect(await row(QUEENS).getAttribute("data-arrival")).toBe("fits");
    expect(await row(QUEENS).locator(".pick-arrival").textContent()).toMatch(
      /^Can be there by .* · earliest /,
    );
    for (const id of [MIDTOWN, HARLEM]) {
      expect(await row(id).getAttribute("data-arrival")).toBe("late");
      expect(await row(id).locator(".pick-arrival").textContent()).toMatch(
        /^Cannot be there by .* · earliest /,
      );
    }
    await detail.locator(".picker").screenshot({ path: shotPath("picker-shifts") });
    await expectAccessible(page, "board picker with shifts");

    // Only on shift: the off ones leave the list (and the hint says how many), then return.
    await detail.getByLabel("Only on shift").check();
    await row(MIDTOWN).waitFor({ state: "detached" });
    expect(await picker.locator("li").count()).toBe(1);
    expect(await detail.locator(".hint", { hasText: "2 off shift hidden" }).count()).toBe(1);
    await page.screenshot({ path: shotPath("picker-on-shift-only") });
    await detail.getByLabel("Only on shift").uncheck();
    await row(MIDTOWN).waitFor();
    await ctx.close();
    expect(pageProblems).toEqual([]);
  }, 90_000);

  it("keeps the pick, the half-typed reason and the detail's scroll through live updates of other orders and of the order", async () => {
    const orderId = await placeOrder("plumbing", "urgent", "Burst pipe above the lobby ceiling");
    const { ctx, page } = await open({ width: 1280, height: 640 });
    await signInConsole(page, base, dispatcherKey);
    await page.locator(".live-live").waitFor();
    await status(page, orderId, "offered");
    const { detail, picker } = await openDetail(page, orderId);
    // The dispatcher picks the nearest by hand (back first thing tomorrow) and starts on the reason.
    const midtown = picker.locator(`li[data-contractor-id="${MIDTOWN}"]`).getByRole("radio");
    await midtown.check();
    const reason = detail.getByLabel("Reason", { exact: true });
    await reason.pressSequentially("Tenant agreed to wait for Midt");
    // The detail scrolled down to its picker, as a dispatcher reading it would; where the picker and the
    // reason sit in it is what the dispatcher sees.
    const scrolled = await detail.evaluate((el) => {
      const list = el.querySelector(".picker") as typeof el;
      el.scrollTop = list.offsetTop - 60;
      return el.scrollTop;
    });
    expect(scrolled).toBeGreaterThan(0);
    const seen = () =>
      detail.evaluate((el) => {
        const top = el.getBoundingClientRect().top;
        const at = (q: string) =>
          Math.round((el.querySelector(q) as typeof el).getBoundingClientRect().top - top);
        return {
          picker: at(".picker"),
          reason: at('form[aria-label="Assign a contractor"] input:not([type])'),
        };
      });
    const before = await seen();
    // The assign form is marked: a remount would make a new element without the mark.
    await detail.locator('form[aria-label="Assign a contractor"]').evaluate((f) => {
      f.setAttribute("data-test-mark", "kept");
    });
    await page.screenshot({ path: shotPath("picker-before-updates") });

    // Other orders change: one placed (nobody does electrical here: it waits in the tray), then cancelled.
    const otherId = await placeOrder("electrical", "routine", "Flickering corridor lights");
    await status(page, otherId, "needs_dispatcher");
    const cancelled = await h.post(
      "/api/dispatcher/v1/orders/cancel",
      { order_id: otherId, reason: "duplicate of a phone call" },
      { "x-api-key": dispatcherKey },
    );
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    await status(page, otherId, "cancelled");
    // The order itself changes: Queens declines, nobody else can be there in time, it waits for a
    // dispatcher; the open detail says so, and its timeline reads the decline.
    await decline(QUEENS, orderId);
    await status(page, orderId, "needs_dispatcher");
    await detail.locator(".detail-head .pill.st-needs_dispatcher").waitFor();
    await detail.locator('.timeline li[data-kind="order.offer_declined"]').waitFor();

    expect(await detail.locator('form[data-test-mark="kept"]').count()).toBe(1);
    expect(await midtown.isChecked()).toBe(true);
    expect(await reason.inputValue()).toBe("Tenant agreed to wait for Midt");
    expect(await detail.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
    const after = await seen();
    expect(Math.abs(after.picker - before.picker), JSON.stringify({ before, after })).toBeLessThanOrEqual(1);
    expect(Math.abs(after.reason - before.reason), JSON.stringify({ before, after })).toBeLessThanOrEqual(1);
    // Typing goes on where it stopped.
    await reason.pressSequentially("own in the morning");
    expect(await reason.inputValue()).toBe("Tenant agreed to wait for Midtown in the morning");
    const assign = detail.getByRole("button", { name: "Assign", exact: true });
    expect(await assign.isEnabled()).toBe(true);
    await page.screenshot({ path: shotPath("picker-after-updates") });
    await ctx.close();
    expect(pageProblems).toEqual([]);
  }, 90_000);

  it("another order opened gets its own picker: the first order's pick and reason do not follow it", async () => {
    const first = await placeOrder("plumbing", "urgent", "Toilet overflowing in suite 12");
    const second = await placeOrder("plumbing", "urgent", "Radiator valve leaking");
    const { ctx, page } = await open({ width: 1280, height: 900 });
    await signInConsole(page, base, dispatcherKey);
    await status(page, second, "offered");
    let { detail, picker } = await openDetail(page, first);
    await picker.locator(`li[data-contractor-id="${QUEENS}"]`).getByRole("radio").check();
    await detail.getByLabel("Reason", { exact: true }).fill("Only one at work now");
    ({ detail, picker } = await openDetail(page, second));
    expect(await picker.locator("input[type=radio]:checked").count()).toBe(0);
    expect(await detail.getByLabel("Reason", { exact: true }).inputValue()).toBe("");
    expect(await detail.getByRole("button", { name: "Assign", exact: true }).isEnabled()).toBe(false);
    await ctx.close();
    expect(pageProblems).toEqual([]);
  }, 90_000);
});
