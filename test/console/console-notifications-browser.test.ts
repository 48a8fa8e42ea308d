// The console's notifications (issue 35) in a real browser (the machine's Chromium, as
// console-browser.test.ts): the account's view lists the messages its order's changes kept for the site's
// contact (no SMTP server: kept), event, recipient, status and time, and opens one to its text and its
// attempts; a script in the site's name is drawn as text. Screenshot in test-artifacts/console/.

import { rmSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNotificationDispatcher } from "../../src/services/create-services.js";
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

const PLUMBER = "ctr_livenotifyplumber";
const { shotPath } = consoleShots([]);

let h: Harness;
let browser: Browser;
let base: string;
let buildDir: string;
let accountKey: string;
const pageProblems: string[] = [];

beforeAll(async () => {
  buildDir = await buildConsole();
  browser = await launchChromium();
  h = await createHarness({ CONSOLE_DIR: buildDir });
  await h.services.store.contractors.insert(
    [liveContractor({ id: PLUMBER, name: "Maria Lopez", trades: ["plumbing"] })],
    testRecord(),
  );
  await h.services.pool.load();
  accountKey = await h.key("acme-notify", "live");
  const plumberKey = await h.contractorKey(PLUMBER, "maria-crew");
  const site = await h.post(
    "/api/dispatch/v1/sites",
    {
      name: "Store <script>alert(1)</script>",
      address: "1 Market St",
      city: "San Francisco",
      state: "CA",
      zip: "94103",
      contact: { name: "Dana", phone: "+1 415 555 0100", email: "store42@example.com" },
    },
    { "x-api-key": accountKey },
  );
  expect(site.statusCode, site.body).toBe(200);
  const placed = await h.post(
    ORDER_PATH,
    { trade: "plumbing", description: "Leak under the sink", site_id: site.json().site_id },
    { "x-api-key": accountKey },
  );
  expect(placed.statusCode, placed.body).toBe(200);
  const orderId = placed.json().order_id as string;
  const offers = (await h.get("/api/contractor/v1/offers", { "x-api-key": plumberKey })).json()
    .offers as Array<{
    offer_id: string;
    order_id: string;
  }>;
  const offer = offers.find((o) => o.order_id === orderId);
  const accepted = await h.post(
    "/api/contractor/v1/offers/accept",
    { offer_id: offer?.offer_id },
    { "x-api-key": plumberKey },
  );
  expect(accepted.statusCode, accepted.body).toBe(200);
  await createNotificationDispatcher(h.services).tick();
  base = await listenLocally(h);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

describe("the console's notifications", () => {
  it("lists the kept messages in the account's view and opens one to its text and attempts", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    collectPageProblems(page, pageProblems);
    await signInConsole(page, base, accountKey);
    const panel = page.getByRole("region", { name: "Messages to the people at your sites" });
    const row = panel.locator("tr[data-status='kept']");
    await row.first().waitFor();
    await expect(row.first().textContent()).resolves.toContain("store42@example.com");
    await expect(row.first().textContent()).resolves.toContain("booked");
    await row.first().getByRole("button", { name: "Read" }).click();
    const message = page.getByRole("article");
    await message.waitFor();
    const text = (await message.textContent()) ?? "";
    expect(text).toContain("Store <script>alert(1)</script>");
    expect(text).toContain("Attempt 1: kept");
    await expectAccessible(page, "account notifications");
    await page.screenshot({ path: shotPath("account-notifications"), fullPage: true });
    expect(pageProblems).toEqual([]);
    await ctx.close();
  });
});
