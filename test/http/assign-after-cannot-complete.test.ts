// A job the contractor could not complete goes out again by a dispatcher's hand (dispatcher.assign), on
// SQLite and (with TEST_DATABASE_URL) PostgreSQL: back to the contractor the order still names (it keeps
// contractor_id but holds none of its capacity), with the schedule board's start or without, or to
// another contractor. Each time the order is accepted, the contractor takes one unit of its capacity with
// one row of the ledger, and the store's invariants hold (test/helpers/order-invariants.ts).

import { afterEach, describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { orderAnomalies } from "../helpers/order-invariants.js";

/** Monday 2030-06-03 08:00 in San Francisco (PDT, UTC-7). */
const NOW = new Date("2030-06-03T15:00:00Z");
const ASSIGN = "/api/dispatcher/v1/orders/assign";
const RESCHEDULE = "/api/dispatcher/v1/orders/reschedule";
const SF = { state: "CA", zip: "94103", address: "1 Market St" };
const TUE = "2030-06-04";
const WED = "2030-06-05";

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** A local (PDT) time, in UTC. */
const pdt = (day: string, hour: number, minute = 0) =>
  new Date(
    `${day}T${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}:00-07:00`,
  ).toISOString();
const day = (d: string) => ({ start: pdt(d, 8), end: pdt(d, 17) });

/** A live CA plumber working weekdays (the one the booking is offered to), a second one, a caller, a
 * dispatcher and the first plumber's phone. */
async function setup() {
  const h = await createHarness({}, {}, { now: () => new Date(NOW) });
  open.push(h);
  const suffix = Math.random().toString(36).slice(2, 10);
  const x = `ctr_a${suffix}`;
  const y = `ctr_z${suffix}`;
  await h.services.store.contractors.insert(
    [
      liveContractor({ id: x, hours: "mon-fri 08:00-17:00", maxActiveJobs: 50 }),
      // Rated below x, so the booking is offered to x.
      liveContractor({
        id: y,
        name: "Second Plumbing",
        hours: "mon-fri 08:00-17:00",
        maxActiveJobs: 50,
        rating: 3.9,
        responseMinutes: 90,
      }),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  const caller = await h.key("acme", "live");
  const dispatcher = await h.dispatcherKey("live");
  const phone = await h.contractorKey(x, "x-crew", "live");
  return { h, x, y, caller, dispatcher, phone };
}

/** An order offered to x, accepted by x, then reported cannot_complete by x. */
async function failedJob(h: Harness, caller: string, phone: string, x: string): Promise<string> {
  const booked = await h.post(
    ORDER_PATH,
    {
      trade: "plumbing",
      location: SF,
      description: "Replace the water heater",
      urgency: "scheduled",
      service_window: day(TUE),
    },
    { "x-api-key": caller },
  );
  expect(booked.statusCode, booked.body).toBe(200);
  const orderId = booked.json().order_id as string;
  const [offered] = await h.services.store.orders.byIds([orderId]);
  expect([offered?.status, offered?.contractor_id]).toEqual(["offered", x]);
  const offer = (await h.services.store.orders.offersOf(orderId)).find((o) => o.status === "pending");
  const accepted = await h.post(
    "/api/contractor/v1/offers/accept",
    { offer_id: offer?.id },
    { "x-api-key": phone },
  );
  expect(accepted.statusCode, accepted.body).toBe(200);
  const failed = await h.post(
    "/api/contractor/v1/jobs/status",
    { order_id: orderId, status: "cannot_complete", reason: "the part is not in stock" },
    { "x-api-key": phone },
  );
  expect(failed.statusCode, failed.body).toBe(200);
  const [row] = await h.services.store.orders.byIds([orderId]);
  expect([row?.status, row?.contractor_id]).toEqual(["cannot_complete", x]);
  expect(await holds(h, orderId)).toEqual([]);
  return orderId;
}

const assign = (h: Harness, key: string, orderId: string, contractorId: string, start?: string) =>
  h.post(
    ASSIGN,
    { order_id: orderId, contractor_id: contractorId, reason: "sent out again", start },
    { "x-api-key": key },
  );

/** The capacity ledger's rows of an order: [contractor, start, end]. */
async function holds(h: Harness, orderId: string) {
  const rows = await (h.services.store as KyselyStore).db
    .selectFrom("capacity_holds")
    .select(["contractor_id", "starts_at", "ends_at"])
    .where("order_id", "=", orderId)
    .execute();
  return rows.map((r) => [r.contractor_id, r.starts_at, r.ends_at]);
}

/** The counter of jobs a contractor holds. */
async function activeJobs(h: Harness, contractorId: string): Promise<number> {
  const row = await (h.services.store as KyselyStore).db
    .selectFrom("contractors")
    .select("active_jobs")
    .where("id", "=", contractorId)
    .executeTakeFirstOrThrow();
  return Number(row.active_jobs);
}

describe("dispatcher.assign after the contractor could not complete the job", () => {
  it("gives it back to the same contractor at the board's start: one unit, its block there", async () => {
    const { h, x, caller, dispatcher, phone } = await setup();
    const orderId = await failedJob(h, caller, phone, x);
    const jobsBefore = await activeJobs(h, x);

    const res = await assign(h, dispatcher, orderId, x, pdt(TUE, 13));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ order_id: orderId, status: "accepted", contractor_id: x });
    // Plumbing's typical job is 2 hours.
    expect(await holds(h, orderId)).toEqual([[x, pdt(TUE, 13), pdt(TUE, 15)]]);
    expect(await activeJobs(h, x)).toBe(jobsBefore + 1);
    expect(await orderAnomalies(h.services.store)).toEqual([]);
  });

  it("gives it back to the same contractor without a start: one unit, its block in the window", async () => {
    const { h, x, caller, dispatcher, phone } = await setup();
    const orderId = await failedJob(h, caller, phone, x);
    const jobsBefore = await activeJobs(h, x);

    const res = await assign(h, dispatcher, orderId, x);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ order_id: orderId, status: "accepted", contractor_id: x });
    const rows = await holds(h, orderId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.[0]).toBe(x);
    expect(Date.parse(String(rows[0]?.[1]))).toBeGreaterThanOrEqual(Date.parse(pdt(TUE, 8)));
    expect(Date.parse(String(rows[0]?.[1]))).toBeLessThan(Date.parse(pdt(TUE, 17)));
    expect(await activeJobs(h, x)).toBe(jobsBefore + 1);
    expect(await orderAnomalies(h.services.store)).toEqual([]);
  });

  it("gives it to another contractor at the board's start, the first one's capacity untouched", async () => {
    const { h, x, y, caller, dispatcher, phone } = await setup();
    const orderId = await failedJob(h, caller, phone, x);
    const before = [await activeJobs(h, x), await activeJobs(h, y)];

    const res = await assign(h, dispatcher, orderId, y, pdt(TUE, 14, 30));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ order_id: orderId, status: "accepted", contractor_id: y });
    expect(await holds(h, orderId)).toEqual([[y, pdt(TUE, 14, 30), pdt(TUE, 16, 30)]]);
    expect([await activeJobs(h, x), await activeJobs(h, y)]).toEqual([before[0], (before[1] ?? 0) + 1]);
    expect(await orderAnomalies(h.services.store)).toEqual([]);
  });
});

describe("dispatcher.reschedule after the contractor could not complete the job", () => {
  it("moves the window without taking capacity; a start is refused (no contractor holds the job)", async () => {
    const { h, x, caller, dispatcher, phone } = await setup();
    const orderId = await failedJob(h, caller, phone, x);
    const jobsBefore = await activeJobs(h, x);

    const withStart = await h.post(
      RESCHEDULE,
      { order_id: orderId, service_window: day(WED), reason: "moved on the board", start: pdt(WED, 9) },
      { "x-api-key": dispatcher },
    );
    expect(withStart.statusCode, withStart.body).toBe(422);
    expect(withStart.json().errors).toEqual([
      expect.objectContaining({ field: "start", code: "start_without_contractor" }),
    ]);

    const moved = await h.post(
      RESCHEDULE,
      { order_id: orderId, service_window: day(WED), reason: "moved on the board" },
      { "x-api-key": dispatcher },
    );
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ status: "cannot_complete", contractor_id: x });
    expect(await holds(h, orderId)).toEqual([]);
    expect(await activeJobs(h, x)).toBe(jobsBefore);

    // Then given back to x at a start in the new window.
    const res = await assign(h, dispatcher, orderId, x, pdt(WED, 10));
    expect(res.statusCode, res.body).toBe(200);
    expect(await holds(h, orderId)).toEqual([[x, pdt(WED, 10), pdt(WED, 12)]]);
    expect(await orderAnomalies(h.services.store)).toEqual([]);
  });
});
