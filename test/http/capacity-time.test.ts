// Capacity as time over HTTP, on SQLite and (with TEST_DATABASE_URL) PostgreSQL: a window fills when the
// jobs booked into it and the drives between them fill the contractor's time, whatever its count allows;
// availability stops offering it; the order's own transaction, not the in-memory index, decides; and
// scheduled work without a window gets the earliest window the pool can serve.

import { afterEach, describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH } from "../helpers/harness.js";

/** Monday 2030-06-03 08:00 in San Francisco (PDT, UTC-7). */
const NOW = new Date("2030-06-03T15:00:00Z");
const AVAILABILITY = "/api/dispatch/v1/availability";
const SF = { state: "CA", zip: "94103", address: "1 Market St" };
const OAKLAND = { state: "CA", zip: "94612", address: "1 Broadway" };

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** One live CA plumber (count room for 50 jobs) with these hours. */
async function setup(hours: string | null) {
  const h = await createHarness({}, {}, { now: () => new Date(NOW) });
  open.push(h);
  const id = `ctr_t${Math.random().toString(36).slice(2, 10)}`;
  await h.services.store.contractors.insert([liveContractor({ id, hours, maxActiveJobs: 50 })], testRecord());
  await h.services.pool.load();
  return { h, id, caller: await h.key("acme", "live") };
}

/** A local (PDT) time of that day, in UTC. */
const pdt = (day: string, hour: number, minute = 0) =>
  new Date(
    `${day}T${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}:00-07:00`,
  ).toISOString();
const TUESDAY_MORNING = { start: pdt("2030-06-04", 8), end: pdt("2030-06-04", 12) };

const order = (location: object, window?: { start: string; end: string }) => ({
  trade: "plumbing",
  location,
  description: "Replace the water heater",
  urgency: "scheduled",
  ...(window ? { service_window: window } : {}),
});

async function offered(h: Harness, key: string, day = "2030-06-04") {
  const res = await h.post(
    AVAILABILITY,
    { trade: "plumbing", location: { state: "CA", zip: "94103" }, start_date: day, end_date: day },
    { "x-api-key": key },
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json().windows as Array<{ start: string; end: string; contractors_available: number }>;
}

async function blocks(h: Harness, contractorId: string) {
  const rows = await (h.services.store as KyselyStore).db
    .selectFrom("capacity_holds")
    .select(["starts_at", "ends_at"])
    .where("contractor_id", "=", contractorId)
    .orderBy("starts_at")
    .execute();
  return rows.map((r) => [r.starts_at, r.ends_at]);
}

describe("capacity as time", () => {
  it("fills a window with the jobs booked into it, though the count has room: availability stops offering it", async () => {
    const { h, id, caller } = await setup("mon-fri 08:00-12:00");
    for (const expected of [1, 1]) {
      expect((await offered(h, caller)).find((w) => w.start === TUESDAY_MORNING.start)).toMatchObject({
        contractors_available: expected,
      });
      const res = await h.post(ORDER_PATH, order(SF, TUESDAY_MORNING), { "x-api-key": caller });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status).toBe("offered");
    }
    // Two two-hour jobs at one place: 08:00-10:00 and 10:00-12:00, each held as its block.
    expect(await blocks(h, id)).toEqual([
      [pdt("2030-06-04", 8), pdt("2030-06-04", 10)],
      [pdt("2030-06-04", 10), pdt("2030-06-04", 12)],
    ]);
    expect((await offered(h, caller)).some((w) => w.start === TUESDAY_MORNING.start)).toBe(false);
    const third = await h.post(ORDER_PATH, order(SF, TUESDAY_MORNING), { "x-api-key": caller });
    expect(third.statusCode, third.body).toBe(409);
    expect(third.json()).toMatchObject({ code: "window_unavailable" });
    expect(third.json().alternatives[0]).toMatchObject({
      start: pdt("2030-06-05", 8),
      end: pdt("2030-06-05", 12),
    });
  });

  it("counts the drive from the previous job: a second job across the bay does not fit after it", async () => {
    const { h, id, caller } = await setup("mon-fri 08:00-12:00");
    const first = await h.post(ORDER_PATH, order(SF, TUESDAY_MORNING), { "x-api-key": caller });
    expect(first.statusCode, first.body).toBe(200);
    // 10:00 plus the drive to Oakland leaves less than the two hours before noon.
    const oakland = await h.post(ORDER_PATH, order(OAKLAND, TUESDAY_MORNING), { "x-api-key": caller });
    expect(oakland.statusCode, oakland.body).toBe(409);
    // In the afternoon window (its hours end at noon): nothing either; on Wednesday, the first job.
    const wednesday = { start: pdt("2030-06-05", 8), end: pdt("2030-06-05", 12) };
    const later = await h.post(ORDER_PATH, order(OAKLAND, wednesday), { "x-api-key": caller });
    expect(later.statusCode, later.body).toBe(200);
    expect((await blocks(h, id)).map(([start]) => start)).toEqual([
      pdt("2030-06-04", 8),
      pdt("2030-06-05", 8),
    ]);
  });

  it("decides in the order's transaction: a contractor the index thinks free is refused when its time is held", async () => {
    // Room for one two-hour job a morning.
    const { h, id, caller } = await setup("mon-fri 08:00-10:30");
    const first = await h.post(ORDER_PATH, order(SF, TUESDAY_MORNING), { "x-api-key": caller });
    expect(first.statusCode, first.body).toBe(200);
    // This process's index forgets the block (as if another process had booked it).
    h.services.pool.index.unhold(id, first.json().order_id);
    expect((await offered(h, caller)).some((w) => w.start === TUESDAY_MORNING.start)).toBe(true);
    const second = await h.post(ORDER_PATH, order(SF, TUESDAY_MORNING), { "x-api-key": caller });
    expect(second.statusCode, second.body).toBe(409);
    expect(second.json().code).toBe("window_unavailable");
    expect(await blocks(h, id)).toHaveLength(1);
  });

  it("gives the last slot to one of two concurrent orders; the other gets 409 with alternatives", async () => {
    const { h, id, caller } = await setup("mon-fri 08:00-10:30");
    const [a, b] = await Promise.all([
      h.post(ORDER_PATH, order(SF, TUESDAY_MORNING), { "x-api-key": caller }),
      h.post(ORDER_PATH, order(SF, TUESDAY_MORNING), { "x-api-key": caller }),
    ]);
    expect([a.statusCode, b.statusCode].sort(), `${a.body}\n${b.body}`).toEqual([200, 409]);
    const lost = a.statusCode === 409 ? a : b;
    expect(lost.json().code).toBe("window_unavailable");
    expect(lost.json().alternatives[0]).toMatchObject({ start: pdt("2030-06-05", 8) });
    expect(await blocks(h, id)).toEqual([[pdt("2030-06-04", 8), pdt("2030-06-04", 10)]]);
  });
});

describe("the earliest window of scheduled work", () => {
  it("is the earliest window a contractor can take, stated in the quote and the order", async () => {
    // Works Thursday afternoons only: the first window it can take is Thursday 12:00-16:00.
    const { h, caller } = await setup("thu 13:00-17:00");
    const expected = { start: pdt("2030-06-06", 12), end: pdt("2030-06-06", 16), source: "earliest" };
    const quote = await h.post(QUOTE_PATH, order({ state: "CA", zip: "94103" }), { "x-api-key": caller });
    expect(quote.statusCode, quote.body).toBe(200);
    expect(quote.json().arrival_window).toEqual(expected);
    const res = await h.post(ORDER_PATH, order(SF), { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: "offered", arrival_window: expected });
    // Its job then holds 13:00-15:00, and no other two hours of that Thursday are free: the next order
    // gets the next Thursday, and the one after none within the 14 days searched.
    const next = await h.post(ORDER_PATH, order(SF), { "x-api-key": caller });
    expect(next.json()).toMatchObject({
      status: "offered",
      arrival_window: { start: pdt("2030-06-13", 12), end: pdt("2030-06-13", 16) },
    });
    const third = await h.post(ORDER_PATH, order(SF), { "x-api-key": caller });
    expect(third.json()).toMatchObject({
      status: "needs_dispatcher",
      arrival_window: { start: pdt("2030-06-04", 8), source: "earliest" },
    });
  });

  it("when no contractor can take a window in 14 days, states the booking rule's and says why it waits", async () => {
    const { h, caller } = await setup("mon-fri 08:00-17:00");
    const roofing = { ...order(SF), trade: "roofing" };
    const res = await h.post(ORDER_PATH, roofing, { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      status: "needs_dispatcher",
      arrival_window: { start: pdt("2030-06-04", 8), end: pdt("2030-06-04", 12), source: "earliest" },
      status_reason: expect.stringMatching(/no contractor can take a window in the next 14 days/),
    });
  });
});
