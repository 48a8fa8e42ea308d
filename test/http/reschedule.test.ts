// The dispatch team moves an order's arrival window (dispatcherReschedule), on SQLite and (with
// TEST_DATABASE_URL) PostgreSQL: the contractor keeps the job and its block of time moves with the window,
// strictly inside its hours and around its other jobs (409 window_unavailable otherwise, nothing
// changed); the window's rules are an order's (422 on the field); the move is sealed and reported.

import { afterEach, describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

/** Monday 2030-06-03 08:00 in San Francisco (PDT, UTC-7). */
const NOW = new Date("2030-06-03T15:00:00Z");
const RESCHEDULE = "/api/dispatcher/v1/orders/reschedule";
const SF = { state: "CA", zip: "94103", address: "1 Market St" };

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** A local (PDT) time, in UTC. */
const pdt = (day: string, hour: number) =>
  new Date(`${day}T${String(hour).padStart(2, "0")}:00:00-07:00`).toISOString();
const morning = (day: string) => ({ start: pdt(day, 8), end: pdt(day, 12) });
const TUESDAY = morning("2030-06-04");
const WEDNESDAY = morning("2030-06-05");

/** One live CA plumber working weekday mornings, a caller and a dispatcher, with a webhook endpoint (so
 * that the order's changes are written to the outbox). */
async function setup() {
  const h = await createHarness({}, {}, { now: () => new Date(NOW) });
  open.push(h);
  const id = `ctr_t${Math.random().toString(36).slice(2, 10)}`;
  await h.services.store.contractors.insert(
    [liveContractor({ id, hours: "mon-fri 08:00-12:00", maxActiveJobs: 50 })],
    testRecord(),
  );
  await h.services.pool.load();
  const caller = await h.key("acme", "live");
  const acme = await h.services.store.keys.ensureAccount("acme");
  await h.services.store.webhooks.setDefaultEndpoint(
    acme.id,
    true,
    "https://hooks.example.com/acme",
    NOW.toISOString(),
  );
  return { h, id, caller, dispatcher: await h.dispatcherKey("live") };
}

async function book(
  h: Harness,
  caller: string,
  window: { start: string; end: string },
  urgency = "scheduled",
) {
  const res = await h.post(
    ORDER_PATH,
    {
      trade: "plumbing",
      location: SF,
      description: "Replace the water heater",
      urgency,
      service_window: window,
    },
    { "x-api-key": caller },
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json().order_id as string;
}

async function blocks(h: Harness, contractorId: string) {
  const rows = await (h.services.store as KyselyStore).db
    .selectFrom("capacity_holds")
    .select(["order_id", "starts_at", "ends_at"])
    .where("contractor_id", "=", contractorId)
    .orderBy("starts_at")
    .execute();
  return rows.map((r) => [r.order_id, r.starts_at, r.ends_at]);
}

const move = (h: Harness, key: string, orderId: string, window: object, reason = "the tenant is away") =>
  h.post(RESCHEDULE, { order_id: orderId, service_window: window, reason }, { "x-api-key": key });

describe("rescheduling an order's window", () => {
  it("moves the window and the contractor's block with it; sealed, reported, and seen by the caller", async () => {
    const { h, id, caller, dispatcher } = await setup();
    const orderId = await book(h, caller, TUESDAY);
    expect(await blocks(h, id)).toEqual([[orderId, pdt("2030-06-04", 8), pdt("2030-06-04", 10)]]);

    const res = await move(h, dispatcher, orderId, WEDNESDAY);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      order_id: orderId,
      status: "offered",
      contractor_id: id,
      arrival_window: { ...WEDNESDAY, source: "rescheduled" },
    });
    // The contractor keeps the job; its block is Wednesday's now, and Tuesday is free again.
    expect(await blocks(h, id)).toEqual([[orderId, pdt("2030-06-05", 8), pdt("2030-06-05", 10)]]);
    const again = await book(h, caller, TUESDAY);
    expect((await blocks(h, id)).map((b) => b[0])).toEqual([again, orderId]);

    const status = await h.get(`/api/dispatch/v1/orders/${orderId}`, { "x-api-key": caller });
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json().arrival_window).toEqual({ ...WEDNESDAY, source: "rescheduled" });

    const audit = await h.get(`/api/dispatcher/v1/audit?order_id=${orderId}`, { "x-api-key": dispatcher });
    expect(audit.statusCode, audit.body).toBe(200);
    const record = (audit.json().records as Array<{ kind: string; disclosed: Record<string, unknown> }>).find(
      (r) => r.kind === "order.rescheduled",
    );
    expect(record?.disclosed).toMatchObject({
      from_window: TUESDAY,
      to_window: WEDNESDAY,
      contractor_id: id,
      reason: "the tenant is away",
    });
    const events = await h.services.store.webhooks.eventsOfOrder(orderId);
    expect(events.map((e) => e.type)).toContain("order.rescheduled");
  });

  it("refuses a window the contractor has no room in, naming it, and changes nothing", async () => {
    const { h, id, caller, dispatcher } = await setup();
    const first = await book(h, caller, TUESDAY);
    await book(h, caller, TUESDAY);
    const third = await book(h, caller, WEDNESDAY);
    const before = await blocks(h, id);
    // Its hours end at noon: nothing fits an afternoon.
    const afternoon = await move(h, dispatcher, first, {
      start: pdt("2030-06-04", 13),
      end: pdt("2030-06-04", 17),
    });
    expect(afternoon.statusCode, afternoon.body).toBe(409);
    expect(afternoon.json()).toMatchObject({ code: "window_unavailable", contractor_id: id });
    // Tuesday morning is taken by its two other jobs.
    const full = await move(h, dispatcher, third, TUESDAY);
    expect(full.statusCode, full.body).toBe(409);
    expect(full.json().code).toBe("window_unavailable");
    expect(await blocks(h, id)).toEqual(before);
    const [row] = await h.services.store.orders.byIds([third]);
    expect([row?.window_start, row?.window_source]).toEqual([WEDNESDAY.start, "requested"]);
  });

  it("holds the window to an order's rules, and the order to a status before anyone set off", async () => {
    const { h, caller, dispatcher } = await setup();
    const orderId = await book(h, caller, TUESDAY);
    const past = await move(h, dispatcher, orderId, {
      start: pdt("2030-06-02", 8),
      end: pdt("2030-06-02", 12),
    });
    expect(past.statusCode, past.body).toBe(422);
    expect(past.json().errors).toContainEqual(
      expect.objectContaining({ field: "service_window.start", code: "window_in_past" }),
    );
    const short = await move(h, dispatcher, orderId, {
      start: pdt("2030-06-05", 8),
      end: pdt("2030-06-05", 9),
    });
    expect(short.statusCode, short.body).toBe(422);
    expect(short.json().errors).toContainEqual(expect.objectContaining({ code: "window_too_short" }));
    const same = await move(h, dispatcher, orderId, TUESDAY);
    expect(same.statusCode, same.body).toBe(409);
    expect(same.json().code).toBe("invalid_transition");

    const urgent = await h.post(
      ORDER_PATH,
      { trade: "plumbing", location: SF, description: "Burst pipe", urgency: "urgent" },
      { "x-api-key": caller },
    );
    expect(urgent.statusCode, urgent.body).toBe(200);
    const asap = await move(h, dispatcher, urgent.json().order_id, WEDNESDAY);
    expect(asap.statusCode, asap.body).toBe(422);
    expect(asap.json().errors).toContainEqual(expect.objectContaining({ code: "window_not_allowed" }));

    const cancelled = await h.post(
      "/api/dispatch/v1/orders/cancel",
      { order_id: orderId, reason: "not needed" },
      { "x-api-key": caller },
    );
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const closed = await move(h, dispatcher, orderId, WEDNESDAY);
    expect(closed.statusCode, closed.body).toBe(409);
    expect(closed.json()).toMatchObject({ code: "invalid_transition", current_status: "cancelled" });

    expect((await move(h, dispatcher, "ord_unknown", WEDNESDAY)).statusCode).toBe(404);
    // A caller's key is not the dispatch team's; a sandbox dispatcher does not see live orders.
    expect((await move(h, caller, orderId, WEDNESDAY)).statusCode).toBe(403);
    expect((await move(h, await h.dispatcherKey("test"), orderId, WEDNESDAY)).statusCode).toBe(404);
  });
});
