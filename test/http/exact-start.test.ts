// The schedule board's drop (issue 31): dispatcher.assign and dispatcher.reschedule with `start` place the
// contractor's job exactly there, strictly, on SQLite and (with TEST_DATABASE_URL) PostgreSQL: the block
// the capacity ledger holds (and dispatch.schedule_lanes shows) starts at `start`; a start the contractor
// has no room at is refused with 409 window_unavailable naming the conflict (outside_hours, time_off,
// overlap with the order it overlaps, the drive between the jobs counted), and a start the order's time
// does not allow with 422 on `start`. Nothing changes on a refusal.

import { afterEach, describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

/** Monday 2030-06-03 08:00 in San Francisco (PDT, UTC-7). */
const NOW = new Date("2030-06-03T15:00:00Z");
const ASSIGN = "/api/dispatcher/v1/orders/assign";
const RESCHEDULE = "/api/dispatcher/v1/orders/reschedule";
const LANES = "/api/dispatcher/v1/schedule/lanes";
const SF = { state: "CA", zip: "94103", address: "1 Market St" };
/** Oakland: about 20 minutes' drive from SF's 94103 as the service estimates it. */
const OAKLAND = { state: "CA", zip: "94607", address: "1 Broadway" };

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** A local (PDT) time, in UTC. */
const pdt = (day: string, hour: number, minute = 0) =>
  new Date(
    `${day}T${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}:00-07:00`,
  ).toISOString();
const TUE = "2030-06-04";
const WED = "2030-06-05";
const THU = "2030-06-06";
const day = (d: string) => ({ start: pdt(d, 8), end: pdt(d, 17) });

/** A live CA plumber working weekday mornings (the one the bookings are offered to), a caller and a
 * dispatcher; `second` adds, after the bookings, a plumber working weekdays 08:00-17:00. */
async function setup() {
  const h = await createHarness({}, {}, { now: () => new Date(NOW) });
  open.push(h);
  const morning = `ctr_m${Math.random().toString(36).slice(2, 10)}`;
  await h.services.store.contractors.insert(
    [liveContractor({ id: morning, hours: "mon-fri 08:00-12:00", maxActiveJobs: 50 })],
    testRecord(),
  );
  await h.services.pool.load();
  const caller = await h.key("acme", "live");
  const dispatcher = await h.dispatcherKey("live");
  const second = async () => {
    const id = `ctr_d${Math.random().toString(36).slice(2, 10)}`;
    await h.services.store.contractors.insert(
      [liveContractor({ id, name: "Day Plumbing", hours: "mon-fri 08:00-17:00", maxActiveJobs: 50 })],
      testRecord(),
    );
    await h.services.pool.load();
    return id;
  };
  return { h, morning, caller, dispatcher, second };
}

async function book(
  h: Harness,
  caller: string,
  window: { start: string; end: string },
  location: object = SF,
): Promise<string> {
  const res = await h.post(
    ORDER_PATH,
    {
      trade: "plumbing",
      location,
      description: "Replace the water heater",
      urgency: "scheduled",
      service_window: window,
    },
    { "x-api-key": caller },
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json().order_id as string;
}

/** The capacity ledger's blocks of a contractor: [order, start, end]. */
async function blocks(h: Harness, contractorId: string) {
  const rows = await (h.services.store as KyselyStore).db
    .selectFrom("capacity_holds")
    .select(["order_id", "starts_at", "ends_at"])
    .where("contractor_id", "=", contractorId)
    .orderBy("starts_at")
    .execute();
  return rows.map((r) => [r.order_id, r.starts_at, r.ends_at]);
}

/** The jobs of a contractor's lane on `date`, as the board reads them: [order, start, end]. */
async function lane(h: Harness, key: string, contractorId: string, date: string) {
  const res = await h.get(`${LANES}?date=${date}&state=CA&limit=50`, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  const lanes = res.json().lanes as Array<{
    contractor_id: string;
    jobs: Array<{ order_id: string; start: string; end: string }>;
  }>;
  return (lanes.find((l) => l.contractor_id === contractorId)?.jobs ?? []).map((j) => [
    j.order_id,
    j.start,
    j.end,
  ]);
}

const assign = (h: Harness, key: string, orderId: string, contractorId: string, start?: string) =>
  h.post(
    ASSIGN,
    { order_id: orderId, contractor_id: contractorId, reason: "dropped on the board", start },
    { "x-api-key": key },
  );

const reschedule = (h: Harness, key: string, orderId: string, window: object, start?: string) =>
  h.post(
    RESCHEDULE,
    { order_id: orderId, service_window: window, reason: "moved on the board", start },
    { "x-api-key": key },
  );

async function auditData(h: Harness, key: string, orderId: string, kind: string) {
  const res = await h.get(`/api/dispatcher/v1/audit?order_id=${orderId}`, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  const records = res.json().records as Array<{ kind: string; disclosed: Record<string, unknown> }>;
  return records.filter((r) => r.kind === kind).map((r) => r.disclosed);
}

describe("dispatcher.assign with a start", () => {
  it("places the job exactly at the start: the ledger and the board's lane show it there; audited", async () => {
    const { h, morning, caller, dispatcher, second } = await setup();
    const orderId = await book(h, caller, day(TUE));
    expect(await blocks(h, morning)).toEqual([[orderId, pdt(TUE, 8), pdt(TUE, 10)]]);
    const day2 = await second();

    const res = await assign(h, dispatcher, orderId, day2, pdt(TUE, 13, 30));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ order_id: orderId, status: "accepted", contractor_id: day2 });
    // Plumbing's typical job is 2 hours; the morning plumber's block is given back.
    expect(await blocks(h, day2)).toEqual([[orderId, pdt(TUE, 13, 30), pdt(TUE, 15, 30)]]);
    expect(await blocks(h, morning)).toEqual([]);
    expect(await lane(h, dispatcher, day2, TUE)).toEqual([[orderId, pdt(TUE, 13, 30), pdt(TUE, 15, 30)]]);
    expect(await auditData(h, dispatcher, orderId, "order.assigned")).toEqual([
      expect.objectContaining({ to_contractor: day2, start: pdt(TUE, 13, 30) }),
    ]);
  });

  it("moves the offered contractor's own block when it is assigned the job at a start", async () => {
    const { h, morning, caller, dispatcher } = await setup();
    const orderId = await book(h, caller, day(TUE));
    const res = await assign(h, dispatcher, orderId, morning, pdt(TUE, 9, 15));
    expect(res.statusCode, res.body).toBe(200);
    expect(await blocks(h, morning)).toEqual([[orderId, pdt(TUE, 9, 15), pdt(TUE, 11, 15)]]);
    expect(await lane(h, dispatcher, morning, TUE)).toEqual([[orderId, pdt(TUE, 9, 15), pdt(TUE, 11, 15)]]);
  });

  it("refuses a start outside the contractor's hours, on its time off, or over its other job, naming why", async () => {
    const { h, morning, caller, dispatcher, second } = await setup();
    const first = await book(h, caller, day(TUE));
    // Offered to the morning plumber for Wednesday (Tuesday's morning has no room for the drive).
    const other = await book(h, caller, { start: pdt(TUE, 8), end: pdt(WED, 17) }, OAKLAND);
    const day2 = await second();
    const held = await assign(h, dispatcher, first, day2, pdt(TUE, 9, 30));
    expect(held.statusCode, held.body).toBe(200);
    const off = await h.post(
      "/api/dispatcher/v1/time-off",
      { contractor_id: day2, start: pdt(TUE, 15), end: pdt(TUE, 16), reason: "dentist" },
      { "x-api-key": dispatcher },
    );
    expect(off.statusCode, off.body).toBe(200);
    await h.services.pool.load();
    const before = [await blocks(h, morning), await blocks(h, day2)];

    // The morning plumber stops at noon.
    const late = await assign(h, dispatcher, other, morning, pdt(TUE, 13));
    expect(late.statusCode, late.body).toBe(409);
    expect(late.json()).toMatchObject({
      code: "window_unavailable",
      contractor_id: morning,
      conflict: "outside_hours",
    });
    expect(late.json().detail).toContain("is not working at Tue 2030-06-04 13:00-15:00");
    expect(late.json().detail).toContain("mon-fri 08:00-12:00, America/Los_Angeles");
    // A job that would run past noon is outside its hours too.
    const across = await assign(h, dispatcher, other, morning, pdt(TUE, 11));
    expect(across.json()).toMatchObject({ code: "window_unavailable", conflict: "outside_hours" });

    const dentist = await assign(h, dispatcher, other, day2, pdt(TUE, 14, 30));
    expect(dentist.statusCode, dentist.body).toBe(409);
    expect(dentist.json()).toMatchObject({
      code: "window_unavailable",
      contractor_id: day2,
      conflict: "time_off",
    });

    const over = await assign(h, dispatcher, other, day2, pdt(TUE, 10));
    expect(over.statusCode, over.body).toBe(409);
    expect(over.json()).toMatchObject({
      code: "window_unavailable",
      contractor_id: day2,
      conflict: "overlap",
      order_id: first,
    });
    // Five minutes after the SF job ends is too soon to be in Oakland.
    const tooSoon = await assign(h, dispatcher, other, day2, pdt(TUE, 11, 35));
    expect(tooSoon.json()).toMatchObject({ conflict: "overlap", order_id: first });
    expect(tooSoon.json().detail).toMatch(/counting \d+ minutes' drive/);
    expect([await blocks(h, morning), await blocks(h, day2)]).toEqual(before);
    const [row] = await h.services.store.orders.byIds([other]);
    expect([row?.status, row?.contractor_id]).toEqual(["offered", morning]);

    // An hour after it ends leaves the drive.
    const later = await assign(h, dispatcher, other, day2, pdt(TUE, 12, 30));
    expect(later.statusCode, later.body).toBe(200);
    expect(await blocks(h, day2)).toEqual([
      [first, pdt(TUE, 9, 30), pdt(TUE, 11, 30)],
      [other, pdt(TUE, 12, 30), pdt(TUE, 14, 30)],
    ]);
  });

  it("refuses a start in the past, outside the order's window or after arrive_by with 422 on start", async () => {
    const { h, morning, caller, dispatcher } = await setup();
    const orderId = await book(h, caller, { start: pdt(TUE, 8), end: pdt(TUE, 12) });
    const outside = await assign(h, dispatcher, orderId, morning, pdt(TUE, 12));
    expect(outside.statusCode, outside.body).toBe(422);
    expect(outside.json()).toMatchObject({
      code: "validation_failed",
      errors: [{ field: "start", code: "start_outside_window" }],
    });
    const past = await assign(h, dispatcher, orderId, morning, pdt("2030-06-03", 7));
    expect(past.statusCode, past.body).toBe(422);
    expect(past.json().errors).toContainEqual(
      expect.objectContaining({ field: "start", code: "start_in_past" }),
    );
    const malformed = await assign(h, dispatcher, orderId, morning, "tomorrow at nine");
    expect(malformed.statusCode, malformed.body).toBe(422);
    expect(malformed.json().errors).toContainEqual(expect.objectContaining({ field: "start" }));

    const urgent = await h.post(
      ORDER_PATH,
      { trade: "plumbing", location: SF, description: "Burst pipe", urgency: "urgent" },
      { "x-api-key": caller },
    );
    expect(urgent.statusCode, urgent.body).toBe(200);
    const [row] = await h.services.store.orders.byIds([urgent.json().order_id]);
    const arriveBy = Date.parse(row?.arrive_by ?? "");
    const tooLate = await assign(
      h,
      dispatcher,
      urgent.json().order_id,
      morning,
      new Date(arriveBy + 60_000).toISOString(),
    );
    expect(tooLate.statusCode, tooLate.body).toBe(422);
    expect(tooLate.json().errors).toEqual([
      expect.objectContaining({ field: "start", code: "start_after_arrive_by" }),
    ]);
    expect(await blocks(h, morning)).toHaveLength(2);
  });
});

describe("dispatcher.reschedule with a start", () => {
  it("moves the holder's block to the start in the new window, or within the same window", async () => {
    const { h, morning, caller, dispatcher } = await setup();
    const orderId = await book(h, caller, { start: pdt(WED, 8), end: pdt(WED, 12) });
    expect(await blocks(h, morning)).toEqual([[orderId, pdt(WED, 8), pdt(WED, 10)]]);
    const thursday = { start: pdt(THU, 8), end: pdt(THU, 12) };

    const moved = await reschedule(h, dispatcher, orderId, thursday, pdt(THU, 10));
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().arrival_window).toEqual({ ...thursday, source: "rescheduled" });
    expect(await blocks(h, morning)).toEqual([[orderId, pdt(THU, 10), pdt(THU, 12)]]);
    expect(await lane(h, dispatcher, morning, THU)).toEqual([[orderId, pdt(THU, 10), pdt(THU, 12)]]);
    expect(await lane(h, dispatcher, morning, WED)).toEqual([]);

    // The same window, another start: the block moves within it.
    const within = await reschedule(h, dispatcher, orderId, thursday, pdt(THU, 9));
    expect(within.statusCode, within.body).toBe(200);
    expect(await blocks(h, morning)).toEqual([[orderId, pdt(THU, 9), pdt(THU, 11)]]);
    expect((await auditData(h, dispatcher, orderId, "order.rescheduled")).map((d) => d.start)).toEqual([
      pdt(THU, 10),
      pdt(THU, 9),
    ]);
    // Where it starts already, or without a start: nothing to move.
    const same = await reschedule(h, dispatcher, orderId, thursday, pdt(THU, 9));
    expect(same.statusCode, same.body).toBe(409);
    expect(same.json().code).toBe("invalid_transition");
    expect((await reschedule(h, dispatcher, orderId, thursday)).json().code).toBe("invalid_transition");

    // Its hours end at noon; a start outside the new window is the field's fault.
    const late = await reschedule(h, dispatcher, orderId, thursday, pdt(THU, 11));
    expect(late.json()).toMatchObject({ code: "window_unavailable", conflict: "outside_hours" });
    const outside = await reschedule(h, dispatcher, orderId, thursday, pdt(THU, 12));
    expect(outside.statusCode, outside.body).toBe(422);
    expect(outside.json().errors).toEqual([
      expect.objectContaining({ field: "start", code: "start_outside_window" }),
    ]);
    expect(await blocks(h, morning)).toEqual([[orderId, pdt(THU, 9), pdt(THU, 11)]]);
  });

  it("refuses a start when no contractor holds or is offered the job (422 on start)", async () => {
    const { h, caller, dispatcher } = await setup();
    // Nobody in the pool roofs: the order waits for a dispatcher.
    const roofing = await h.post(
      ORDER_PATH,
      { trade: "roofing", location: SF, description: "Leaking roof", urgency: "scheduled" },
      { "x-api-key": caller },
    );
    expect(roofing.statusCode, roofing.body).toBe(200);
    expect(roofing.json().status).toBe("needs_dispatcher");
    const orderId = roofing.json().order_id as string;
    const res = await reschedule(h, dispatcher, orderId, day(TUE), pdt(TUE, 9));
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().errors).toEqual([
      expect.objectContaining({ field: "start", code: "start_without_contractor" }),
    ]);
    // Without a start the window moves as before.
    expect((await reschedule(h, dispatcher, orderId, day(TUE))).statusCode).toBe(200);
  });
});
