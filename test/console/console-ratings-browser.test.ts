// The console's ratings and do-not-dispatch (issue 33) in a real browser (the machine's Chromium, as
// console-browser.test.ts): the account rates a completed order and changes it, and sees a rating whose
// window has closed read-only; the contractor sees its aggregate; the account adds an order's contractor
// to its do-not-dispatch list and removes it; the dispatch team sees the entry, the board's picker marks
// the contractor excluded, and the pool shows its ratings. Screenshots go to test-artifacts/console/
// (UPDATE_SCREENSHOTS=1: those docs/console.md shows to docs/screenshots/).

import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildConsole,
  collectPageProblems,
  expectAccessible,
  launchChromium,
  listenLocally,
  signInConsole,
} from "../helpers/browser.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARTIFACTS = join(ROOT, "test-artifacts", "console");
// UPDATE_SCREENSHOTS=1: the screenshots docs/console.md shows go to docs/screenshots/ instead.
const README_SHOTS = join(ROOT, "docs", "screenshots");
const IN_README = new Set(["account-rating", "board-excluded", "contractor-ratings"]);
const PLUMBER = "ctr_liveratedplumber";
const DAY_MS = 86_400_000;

let h: Harness;
let browser: Browser;
let base: string;
let buildDir: string;
let accountKey: string;
let dispatcherKey: string;
let plumberKey: string;
/** The services' clock runs this far from the wall clock (the closed rating is given 15 days back). */
let offsetMs = 0;
/** A completed order rated through the console, then the one rated 15 days ago. */
let ratedId: string;
let closedId: string;
const pageProblems: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  buildDir = await buildConsole();
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir }, {}, { now: () => new Date(Date.now() + offsetMs) });
  await h.services.store.contractors.insert(
    [liveContractor({ id: PLUMBER, name: "Bay Plumbing Co", trades: ["plumbing"], rating: 4.6 })],
    testRecord(),
  );
  await h.services.pool.load();
  accountKey = await h.key("acme", "live");
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
  // A job done and rated 15 days ago: its rating can no longer be changed.
  offsetMs = -15 * DAY_MS;
  closedId = await completedOrder("Kitchen sink drain slow");
  const rated = await h.post(
    "/api/dispatch/v1/orders/rate",
    { order_id: closedId, quality: 3, timeliness: 2, communication: 4, value: 3, comment: "Came late." },
    { "x-api-key": accountKey },
  );
  expect(rated.statusCode, rated.body).toBe(200);
  offsetMs = 0;
  ratedId = await completedOrder("Water heater relief valve dripping");
  base = await listenLocally(h);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

/** A plumbing order of the account's, offered to the plumber, accepted and completed through the API. */
async function completedOrder(description: string): Promise<string> {
  const asPlumber = { "x-api-key": plumberKey };
  const placed = await h.post(
    ORDER_PATH,
    {
      trade: "plumbing",
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
  for (const step of [
    { status: "en_route", eta_minutes: 10 },
    { status: "on_site" },
    { status: "completed", final_cost_cents: 18_000 },
  ]) {
    const res = await h.post("/api/contractor/v1/jobs/status", { order_id: orderId, ...step }, asPlumber);
    expect(res.statusCode, res.body).toBe(200);
  }
  return orderId;
}

async function open(viewport: {
  width: number;
  height: number;
}): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  collectPageProblems(page, pageProblems);
  return { ctx, page };
}

const signIn = (page: Page, key: string) => signInConsole(page, base, key);

const accessible = expectAccessible;

const shot = async (page: Page, name: string) => {
  await page.evaluate("window.scrollTo(0, 0)");
  const dir = process.env.UPDATE_SCREENSHOTS && IN_README.has(name) ? README_SHOTS : ARTIFACTS;
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
};

/** The account's row of an order, its timeline (and what the console shows with it) opened. */
async function openRow(page: Page, orderId: string) {
  const row = page.locator(`.account-rows [data-order-id="${orderId}"]`);
  await row.waitFor({ timeout: 15_000 });
  await row.getByRole("button", { name: "Timeline", exact: true }).click();
  return row;
}

describe("ratings and do-not-dispatch in the console", () => {
  it("the account rates a completed order with the keyboard and the mouse, changes it, and reads a closed one", async () => {
    const desk = await open({ width: 1280, height: 900 });
    await signIn(desk.page, accountKey);
    const row = await openRow(desk.page, ratedId);
    const form = row.getByRole("form", { name: `Rate order ${ratedId}` });
    await form.waitFor();
    const group = (name: string) => form.getByRole("group", { name, exact: true });
    // The keyboard: a score's radios are one group, the arrow keys move the choice.
    await group("Quality").getByRole("radio", { name: "1 star", exact: true }).focus();
    await desk.page.keyboard.press("Space");
    for (let i = 0; i < 3; i++) await desk.page.keyboard.press("ArrowRight");
    expect(await group("Quality").getByRole("radio", { name: "4 stars" }).isChecked()).toBe(true);
    // The mouse: a star clicked.
    for (const [name, n] of [
      ["Timeliness", 5],
      ["Communication", 5],
      ["Value", 3],
    ] as const) {
      await group(name)
        .locator("label")
        .nth(n - 1)
        .click();
    }
    await form.getByLabel("Comment (optional)").fill("Fixed the valve first time.");
    await accessible(desk.page, "account rating an order");
    await shot(desk.page, "account-rating");
    await form.getByRole("button", { name: "Send rating", exact: true }).click();
    await form.getByRole("status").filter({ hasText: "overall 4.25" }).waitFor();
    const asAccount = { "x-api-key": accountKey };
    let stored = (await h.get(`/api/orders/${ratedId}/rating`, asAccount)).json();
    expect(stored).toMatchObject({ quality: 4, timeliness: 5, communication: 5, value: 3, edits: 0 });
    expect(stored.comment).toBe("Fixed the valve first time.");

    // Changed: value 3 -> 4 with the keyboard, the button now says so.
    await group("Value").getByRole("radio", { name: "3 stars" }).focus();
    await desk.page.keyboard.press("ArrowRight");
    await form.getByRole("button", { name: "Save changes", exact: true }).click();
    await form.getByRole("status").filter({ hasText: "overall 4.50" }).waitFor();
    stored = (await h.get(`/api/orders/${ratedId}/rating`, asAccount)).json();
    expect(stored).toMatchObject({ value: 4, edits: 1, overall: 4.5 });
    await form.getByText("changed 1 time so far").waitFor();

    // The one rated 15 days ago: read-only, saying until when it could be changed.
    const old = await openRow(desk.page, closedId);
    const closed = old.getByRole("region", { name: "Rating" });
    await closed.getByText("It could be changed until").waitFor();
    expect(await old.getByRole("form", { name: `Rate order ${closedId}` }).count()).toBe(0);
    expect(await closed.locator('[data-score="overall"]').textContent()).toBe("3.00");
    await closed.screenshot({ path: join(ARTIFACTS, "account-rating-closed.png") });
    await accessible(desk.page, "account reading a closed rating");
    await desk.ctx.close();
    expect(pageProblems).toEqual([]);
  }, 90_000);

  it("the contractor sees its own aggregate on its phone", async () => {
    const phone = await open({ width: 375, height: 740 });
    await signIn(phone.page, plumberKey);
    const card = phone.page.getByRole("region", { name: "My ratings" });
    await card.locator('[data-count="2"]').waitFor();
    // (4+5+5+4)/4 = 4.5 and (3+2+4+3)/4 = 3 -> 3.75 overall; quality (4+3)/2.
    expect(await card.locator("[data-count]").textContent()).toContain("3.75");
    expect(await card.locator('[data-score="quality"]').textContent()).toBe("3.50");
    const agg = (await h.get("/api/contractor/v1/ratings", { "x-api-key": plumberKey })).json();
    expect(await card.locator('[data-score="matching"]').textContent()).toBe(agg.matching_rating.toFixed(2));
    await shot(phone.page, "contractor-ratings");
    await accessible(phone.page, "contractor's ratings");
    await phone.ctx.close();
    expect(pageProblems).toEqual([]);
  }, 60_000);

  it("the account excludes an order's contractor; the dispatch team sees it and the picker marks it; the account removes it", async () => {
    const desk = await open({ width: 1280, height: 900 });
    await signIn(desk.page, accountKey);
    const row = await openRow(desk.page, ratedId);
    await row.getByRole("button", { name: "Do not dispatch this contractor…" }).click();
    const add = row.getByRole("form", { name: "Do not dispatch this contractor" });
    await add.getByLabel("Every trade").check();
    await add.getByLabel("Reason", { exact: true }).fill("Left the site unsafe");
    await accessible(desk.page, "account excluding a contractor");
    await add.getByRole("button", { name: "Add to my list", exact: true }).click();
    await row.getByRole("status").filter({ hasText: "is on your do-not-dispatch list" }).waitFor();
    const asAccount = { "x-api-key": accountKey };
    const listed = (await h.get("/api/dispatch/v1/do-not-dispatch", asAccount)).json().entries as Array<{
      entry_id: string;
      trades: string[] | null;
      reason: string;
    }>;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ trades: null, reason: "Left the site unsafe" });

    // A job nobody in the pool may take (a locksmith's): the dispatch team's picker shows every active
    // contractor there, the plumber marked excluded and not to be picked.
    const placed = await h.post(
      ORDER_PATH,
      {
        trade: "locksmith",
        location: { state: "CA", zip: "94110", city: "San Francisco", address: "3000 24th St" },
        description: "Back door lock jammed",
      },
      asAccount,
    );
    expect(placed.statusCode, placed.body).toBe(200);
    const lockId = placed.json().order_id as string;
    const board = await open({ width: 1280, height: 900 });
    await signIn(board.page, dispatcherKey);
    const lockRow = board.page.locator(`.group-tray [data-order-id="${lockId}"]`);
    await lockRow.waitFor({ timeout: 15_000 });
    await lockRow.getByRole("button").click();
    const pick = board.page.locator(`.picker [data-contractor-id="${PLUMBER}"]`);
    await board.page.locator(`.picker [data-contractor-id="${PLUMBER}"][data-excluded="true"]`).waitFor();
    expect(await pick.getByRole("radio").isDisabled()).toBe(true);
    expect(await pick.textContent()).toContain("Excluded by the account (every trade): Left the site unsafe");
    await shot(board.page, "board-excluded");
    await accessible(board.page, "board with an excluded contractor");
    // The service refuses the assignment all the same (the picker only says so first).
    const refused = await h.post(
      "/api/dispatcher/v1/orders/assign",
      { order_id: lockId, contractor_id: PLUMBER, reason: "try" },
      { "x-api-key": dispatcherKey },
    );
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe("contractor_excluded");
    // The dispatch team's list of every account's entries.
    await board.page.getByRole("button", { name: "Do not dispatch", exact: true }).click();
    const entryRow = board.page.locator(`.dnd-table tr[data-contractor-id="${PLUMBER}"]`);
    await entryRow.waitFor();
    expect(await entryRow.textContent()).toContain("Left the site unsafe");
    await shot(board.page, "dispatcher-dnd");
    await accessible(board.page, "dispatch team's do-not-dispatch entries");

    // The account's list: removed, with a reason.
    await desk.page.getByRole("button", { name: "Do not dispatch", exact: true }).click();
    const entry = desk.page.locator(`.dnd-rows [data-entry-id="${listed[0]?.entry_id}"]`);
    await entry.getByRole("button", { name: "Remove", exact: true }).click();
    await entry.getByLabel("Why remove it").fill("New crew lead, trying them again");
    await shot(desk.page, "account-dnd");
    await accessible(desk.page, "account's do-not-dispatch list");
    await entry.getByRole("button", { name: "Remove from the list", exact: true }).click();
    await entry.waitFor({ state: "detached" });
    await desk.page.getByText("Nobody is on your list.").waitFor();
    expect((await h.get("/api/dispatch/v1/do-not-dispatch", asAccount)).json().entries).toEqual([]);

    // The board's picker, opened again, offers the plumber.
    await board.page.getByRole("button", { name: "Board", exact: true }).click();
    await board.page.getByRole("button", { name: "Close detail" }).click();
    await lockRow.getByRole("button").click();
    await pick.waitFor();
    await expect.poll(() => pick.getAttribute("data-excluded")).toBeNull();
    expect(await pick.getByRole("radio").isDisabled()).toBe(false);
    await Promise.all([desk.ctx.close(), board.ctx.close()]);
    expect(pageProblems).toEqual([]);
  }, 120_000);

  it("the dispatch team's pool shows each contractor's ratings", async () => {
    const board = await open({ width: 1280, height: 900 });
    await signIn(board.page, dispatcherKey);
    await board.page.getByRole("button", { name: "Pool", exact: true }).click();
    const row = board.page.locator(`.pool-row[data-contractor-id="${PLUMBER}"]`);
    await row.waitFor();
    expect(await row.locator(".pool-ratings").textContent()).toMatch(
      /2 ratings · overall 3\.75 · matching \d\.\d\d/,
    );
    await shot(board.page, "pool-ratings");
    await accessible(board.page, "pool with ratings");
    await board.ctx.close();
    expect(pageProblems).toEqual([]);
  }, 60_000);
});
