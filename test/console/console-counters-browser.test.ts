// The console's counter-offers (issue 33) in a real browser (the machine's Chromium, as
// console-browser.test.ts): a contractor counters an offer on its 375 px phone (a window refused beside its
// field first), the card waits on the account; an approver above its limit is refused, the account's admin
// accepts, and the job shows on the phone at the agreed price; a second counter is declined with a reason
// and leaves the phone with a notice; a third, within the account's policy, becomes the job as it is sent;
// the board counts the counters pending it saw live. Screenshots go to
// test-artifacts/console/ (UPDATE_SCREENSHOTS=1: those docs/console.md shows to docs/screenshots/).

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
const README_SHOTS = join(ROOT, "docs", "screenshots");
const IN_README = new Set(["contractor-counter", "account-counter"]);
const PLUMBER = "ctr_livecounterplumber";

let h: Harness;
let browser: Browser;
let base: string;
let buildDir: string;
let adminKey: string;
let approverKey: string;
let dispatcherKey: string;
let plumberKey: string;
const pageProblems: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  buildDir = await buildConsole();
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir });
  await h.services.store.contractors.insert(
    [liveContractor({ id: PLUMBER, name: "Bay Plumbing Co", trades: ["plumbing"], rating: 4.6 })],
    testRecord(),
  );
  await h.services.pool.load();
  adminKey = await h.key("acme", "live");
  approverKey = (
    await h.services.keys.issue({
      accountName: "acme",
      mode: "live",
      actor: "operator:test",
      role: "approver",
      approvalLimitCents: 100,
    })
  ).key;
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
  base = await listenLocally(h);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

/** A routine plumbing order of the account's, offered to the plumber. */
async function offeredOrder(
  description: string,
): Promise<{ order_id: string; estimated_cost_cents: number }> {
  const placed = await h.post(
    ORDER_PATH,
    {
      trade: "plumbing",
      location: { state: "CA", zip: "94110", city: "San Francisco", address: "3000 24th St" },
      description,
    },
    { "x-api-key": adminKey },
  );
  expect(placed.statusCode, placed.body).toBe(200);
  expect(placed.json().status).toBe("offered");
  return placed.json();
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

const dollars = (cents: number) => (cents / 100).toFixed(2);
const usd = (cents: number) => (cents / 100).toLocaleString("en-US", { style: "currency", currency: "USD" });

/** A datetime-local value an hour ago (the phone's time): a window the service refuses as past. */
function anHourAgo(): string {
  const t = new Date(Date.now() - 3_600_000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())}T${p(t.getHours())}:${p(t.getMinutes())}`;
}

describe("counter-offers in the console", () => {
  it("the phone counters, the account accepts (after an approver's refusal), the job shows at the agreed price; a second counter declined; a third accepted by the policy", async () => {
    const board = await open({ width: 1280, height: 900 });
    await signIn(board.page, dispatcherKey);
    const pending = board.page.locator('[data-stat="counters-pending"] strong');
    await expect.poll(() => pending.textContent()).toBe("0");

    const first = await offeredOrder("Water heater leaking at the base");
    const price = Math.round(first.estimated_cost_cents * 1.15);
    const phone = await open({ width: 375, height: 740 });
    await signIn(phone.page, plumberKey);
    const card = phone.page.locator(`.offer[data-order-id="${first.order_id}"]`);
    await card.waitFor({ timeout: 15_000 });
    await card.getByRole("button", { name: "Counter", exact: true }).click();
    const form = card.getByRole("form", { name: "Counter-offer" });
    await form.getByLabel("Your price ($)").fill(dollars(price));
    // A window in the past: the service's 422 shows beside the window.
    await form.getByLabel("From").fill(anHourAgo());
    await form.getByLabel("To").fill(anHourAgo());
    await form.getByRole("button", { name: "Send counter", exact: true }).click();
    const windowFault = form.locator(".counter-window .field-error");
    await windowFault.waitFor();
    expect(await windowFault.textContent()).toMatch(/arrival_window/);
    await accessible(phone.page, "contractor's counter form with a refusal");
    await shot(phone.page, "contractor-counter-refused");
    await form.getByLabel("From").fill("");
    await form.getByLabel("To").fill("");
    await form.getByLabel("Note for the account (optional)").fill("Tank must come out: two people");
    await form.getByRole("button", { name: "Send counter", exact: true }).click();
    const sent = phone.page.locator(`.offer.countered[data-order-id="${first.order_id}"]`);
    await sent.getByText(`Counter sent: ${usd(price)}, waiting for the account until`).waitFor();
    await accessible(phone.page, "contractor's counter sent");
    await shot(phone.page, "contractor-counter");
    await expect.poll(() => pending.textContent()).toBe("1");
    await shot(board.page, "board-counters");

    // An approver whose limit is $1.00 is refused, saying so.
    const approver = await open({ width: 1280, height: 900 });
    await signIn(approver.page, approverKey);
    const ask = (page: Page, orderId: string) =>
      page.locator(`.account-rows [data-order-id="${orderId}"] .counter-ask`);
    await ask(approver.page, first.order_id).waitFor({ timeout: 15_000 });
    await ask(approver.page, first.order_id)
      .getByRole("button", { name: `Accept ${usd(price)}` })
      .click();
    await ask(approver.page, first.order_id).getByText("Above your approval limit of $1.00").waitFor();
    await approver.ctx.close();

    // The account's admin: the counter against the estimate, +15 %, the note; accepted.
    const desk = await open({ width: 1280, height: 900 });
    await signIn(desk.page, adminKey);
    const panel = ask(desk.page, first.order_id);
    await panel.waitFor({ timeout: 15_000 });
    expect(await panel.locator(".counter-price").textContent()).toContain(
      `${usd(price)} against the estimate of ${usd(first.estimated_cost_cents)} +15 %`,
    );
    await panel.getByText("Tank must come out: two people").waitFor();
    await accessible(desk.page, "account's counter to answer");
    await shot(desk.page, "account-counter");
    await panel.getByRole("button", { name: `Accept ${usd(price)}` }).click();
    await panel.waitFor({ state: "detached" });
    await desk.page.locator(`[data-order-id="${first.order_id}"][data-status="accepted"]`).waitFor();
    expect(await desk.page.locator(`[data-order-id="${first.order_id}"] .money`).textContent()).toBe(
      `agreed ${usd(price)}`,
    );

    // The phone, live: the job at the agreed price, and a word on what happened.
    const job = phone.page.locator(`.job[data-order-id="${first.order_id}"][data-status="accepted"]`);
    await job.getByText(`Agreed price ${usd(price)} (your counter)`).waitFor({ timeout: 15_000 });
    await phone.page.getByRole("status").filter({ hasText: "Counter accepted" }).waitFor();
    const jobs = (await h.get("/api/contractor/v1/jobs", { "x-api-key": plumberKey })).json().jobs as Array<{
      order_id: string;
      agreed_price_cents: number | null;
    }>;
    expect(jobs.find((j) => j.order_id === first.order_id)?.agreed_price_cents).toBe(price);
    await shot(phone.page, "contractor-counter-accepted");
    await expect.poll(() => pending.textContent()).toBe("0");

    // A second offer, countered and declined with a reason: it leaves the phone with a notice.
    const second = await offeredOrder("Shower valve stuck");
    const card2 = phone.page.locator(`.offer[data-order-id="${second.order_id}"]`);
    await card2.waitFor({ timeout: 15_000 });
    await card2.getByRole("button", { name: "Counter", exact: true }).click();
    const price2 = second.estimated_cost_cents + 12_345;
    await card2.getByLabel("Your price ($)").fill(dollars(price2));
    await card2.getByRole("button", { name: "Send counter", exact: true }).click();
    await card2.getByText(`Counter sent: ${usd(price2)}`).waitFor();
    await expect.poll(() => pending.textContent()).toBe("1");
    const panel2 = ask(desk.page, second.order_id);
    await panel2.waitFor({ timeout: 15_000 });
    await panel2.getByRole("button", { name: "Decline…" }).click();
    await panel2.getByLabel("Why decline (optional; the contractor reads it)").fill("Over our budget");
    await panel2.getByRole("button", { name: "Decline counter", exact: true }).click();
    await panel2.waitFor({ state: "detached" });
    await card2.waitFor({ state: "detached", timeout: 15_000 });
    await phone.page.getByRole("status").filter({ hasText: "The account declined your counter" }).waitFor();
    await shot(phone.page, "contractor-counter-declined");
    await expect.poll(() => pending.textContent()).toBe("0");
    const after = (
      await h.get(`/api/dispatch/v1/orders/${second.order_id}`, { "x-api-key": adminKey })
    ).json();
    expect(after.counter).toMatchObject({
      status: "declined",
      price_cents: price2,
      reason: "Over our budget",
    });
    await accessible(phone.page, "contractor's phone after a declined counter");

    // The account's policy accepts counters within 20 % at once: the card becomes the job as it is sent.
    const policy = await h.post(
      "/api/dispatch/v1/counter-policy",
      { auto_accept_within_pct: 20 },
      { "x-api-key": adminKey },
    );
    expect(policy.statusCode, policy.body).toBe(200);
    const third = await offeredOrder("Toilet running on");
    const card3 = phone.page.locator(`.offer[data-order-id="${third.order_id}"]`);
    await card3.waitFor({ timeout: 15_000 });
    await card3.getByRole("button", { name: "Counter", exact: true }).click();
    const price3 = third.estimated_cost_cents + 1_001;
    await card3.getByLabel("Your price ($)").fill(dollars(price3));
    await card3.getByRole("button", { name: "Send counter", exact: true }).click();
    await phone.page
      .locator(`.job[data-order-id="${third.order_id}"]`)
      .getByText(`Agreed price ${usd(price3)} (your counter)`)
      .waitFor();
    await phone.page
      .getByRole("status")
      .filter({ hasText: "accepted at once by the account's policy" })
      .waitFor();
    expect(await card3.count()).toBe(0);
    await Promise.all([phone.ctx.close(), desk.ctx.close(), board.ctx.close()]);
    expect(pageProblems).toEqual([]);
  }, 180_000);
});
