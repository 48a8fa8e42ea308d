// When a job is booked (issue 31): the dispatch team's orders (dispatcher.orders, the new dispatcher.order
// read of one, and the actions' answers) carry `booked`, the block of its contractor's time the job holds
// as the capacity ledger has it (what the Schedule draws), and the contractor's list of jobs its own; on
// SQLite and (with TEST_DATABASE_URL) PostgreSQL. The block moves with a reschedule and is gone once the
// job holds no time (cancelled); an order nobody holds has none.

import { afterEach, describe, expect, it } from "vitest";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

/** Monday 2030-06-03 08:00 in San Francisco (PDT, UTC-7). */
const NOW = new Date("2030-06-03T15:00:00Z");
const SF = { state: "CA", zip: "94103", address: "1 Market St" };
const pdt = (day: string, hour: number) =>
  new Date(`${day}T${String(hour).padStart(2, "0")}:00:00-07:00`).toISOString();
const TUESDAY = { start: pdt("2030-06-04", 8), end: pdt("2030-06-04", 12) };
const WEDNESDAY = { start: pdt("2030-06-05", 8), end: pdt("2030-06-05", 12) };

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

async function setup() {
  const h = await createHarness({}, {}, { now: () => new Date(NOW) });
  open.push(h);
  const plumber = `ctr_b${Math.random().toString(36).slice(2, 10)}`;
  const other = `ctr_b${Math.random().toString(36).slice(2, 10)}`;
  await h.services.store.contractors.insert(
    [
      liveContractor({
        id: plumber,
        name: "Bay Plumbing Co",
        hours: "mon-fri 08:00-12:00",
        maxActiveJobs: 50,
      }),
      liveContractor({ id: other, name: "Other Plumbing", hours: "mon-fri 08:00-12:00", active: false }),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  return {
    h,
    plumber,
    other,
    caller: await h.key("acme", "live"),
    dispatcher: await h.dispatcherKey("live"),
    plumberKey: await h.contractorKey(plumber, "bay-plumbing"),
    otherKey: await h.contractorKey(other, "other-plumbing"),
  };
}

async function book(h: Harness, caller: string, body: Record<string, unknown>) {
  const res = await h.post(
    ORDER_PATH,
    { trade: "plumbing", location: SF, description: "Replace the water heater", ...body },
    { "x-api-key": caller },
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json().order_id as string;
}

describe("when a job is booked", () => {
  it("the dispatch team's list, its read of one order and its actions' answers say it, as the ledger holds it", async () => {
    const { h, plumber, caller, dispatcher } = await setup();
    const asDispatcher = { "x-api-key": dispatcher };
    const orderId = await book(h, caller, { urgency: "scheduled", service_window: TUESDAY });
    const tuesday = { start: pdt("2030-06-04", 8), end: pdt("2030-06-04", 10) };

    const list = await h.get("/api/dispatcher/v1/orders?status=offered", asDispatcher);
    expect(list.statusCode, list.body).toBe(200);
    const listed = (list.json().orders as Array<Record<string, unknown>>).find((o) => o.order_id === orderId);
    expect(listed).toMatchObject({ status: "offered", contractor_id: plumber, booked: tuesday });

    const one = await h.get(`/api/dispatcher/v1/orders/${orderId}`, asDispatcher);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toMatchObject({
      order_id: orderId,
      contractor_id: plumber,
      contractor_name: "Bay Plumbing Co",
      account_name: "acme",
      booked: tuesday,
      site: null,
    });
    // The pending offer's deadline, as the list gives it.
    expect(one.json().offer_deadline_at).toBe(listed?.offer_deadline_at);

    // Rescheduled: the block moves with the window, in the answer and the read.
    const moved = await h.post(
      "/api/dispatcher/v1/orders/reschedule",
      { order_id: orderId, service_window: WEDNESDAY, reason: "the tenant is away" },
      asDispatcher,
    );
    expect(moved.statusCode, moved.body).toBe(200);
    const wednesday = { start: pdt("2030-06-05", 8), end: pdt("2030-06-05", 10) };
    expect(moved.json().booked).toEqual(wednesday);
    expect((await h.get(`/api/dispatcher/v1/orders/${orderId}`, asDispatcher)).json().booked).toEqual(
      wednesday,
    );

    // Cancelled: it holds no time.
    const cancelled = await h.post(
      "/api/dispatcher/v1/orders/cancel",
      { order_id: orderId, reason: "duplicate" },
      asDispatcher,
    );
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: "cancelled", booked: null });
  });

  it("an order nobody holds has none; the event stream's orders leave it out; other keys and modes find no order", async () => {
    const { h, plumber, caller, dispatcher } = await setup();
    const asDispatcher = { "x-api-key": dispatcher };
    // Electrical work: nobody of the trade, it waits for a dispatcher.
    const queued = await book(h, caller, { trade: "electrical", urgency: "urgent" });
    const one = await h.get(`/api/dispatcher/v1/orders/${queued}`, asDispatcher);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toMatchObject({ status: "needs_dispatcher", contractor_id: null, booked: null });

    const held = await book(h, caller, { urgency: "scheduled", service_window: TUESDAY });
    const events = await h.get("/api/events?after=0", { ...asDispatcher, accept: "application/json" });
    expect(events.statusCode, events.body).toBe(200);
    const orders = (events.json().events as Array<{ data: { order?: Record<string, unknown> } }>).flatMap(
      (e) => (e.data.order?.order_id === held ? [e.data.order] : []),
    );
    expect(orders.length).toBeGreaterThan(0);
    for (const o of orders) expect(o).not.toHaveProperty("booked");
    expect(orders[0]?.contractor_id).toBe(plumber);

    // The sandbox's dispatcher, the account and the contractor find no such dispatcher order.
    const sandbox = await h.dispatcherKey("test");
    expect((await h.get(`/api/dispatcher/v1/orders/${held}`, { "x-api-key": sandbox })).statusCode).toBe(404);
    expect(
      (await h.get(`/api/dispatcher/v1/orders/${held}`, { "x-api-key": caller })).statusCode,
    ).toBeGreaterThanOrEqual(401);
    expect((await h.get("/api/dispatcher/v1/orders/ord_nope", asDispatcher)).statusCode).toBe(404);
  });

  it("the contractor's jobs say when each of its own is booked, and no other contractor's", async () => {
    const { h, plumber, other, caller, dispatcher, plumberKey, otherKey } = await setup();
    const orderId = await book(h, caller, { urgency: "scheduled", service_window: TUESDAY });
    const offers = (await h.get("/api/contractor/v1/offers", { "x-api-key": plumberKey })).json()
      .offers as Array<{ offer_id: string; order_id: string }>;
    const offer = offers.find((o) => o.order_id === orderId);
    const accepted = await h.post(
      "/api/contractor/v1/offers/accept",
      { offer_id: offer?.offer_id },
      { "x-api-key": plumberKey },
    );
    expect(accepted.statusCode, accepted.body).toBe(200);
    const jobs = await h.get("/api/contractor/v1/jobs", { "x-api-key": plumberKey });
    expect(jobs.statusCode, jobs.body).toBe(200);
    expect(jobs.json().jobs).toEqual([
      expect.objectContaining({
        order_id: orderId,
        booked: { start: pdt("2030-06-04", 8), end: pdt("2030-06-04", 10) },
      }),
    ]);
    // The other plumber holds none of it: its list is empty.
    expect((await h.get("/api/contractor/v1/jobs", { "x-api-key": otherKey })).json().jobs).toEqual([]);

    // Reassigned to the other plumber (by hand, placed in its own time): the job and its block are the
    // new holder's; the first plumber's list no longer has it.
    await h.services.store.contractors.setFlags(other, { active: true }, testRecord());
    await h.services.pool.load();
    const reassigned = await h.post(
      "/api/dispatcher/v1/orders/assign",
      { order_id: orderId, contractor_id: other, reason: "closer", start: pdt("2030-06-04", 9) },
      { "x-api-key": dispatcher },
    );
    expect(reassigned.statusCode, reassigned.body).toBe(200);
    const nine = { start: pdt("2030-06-04", 9), end: pdt("2030-06-04", 11) };
    expect(reassigned.json()).toMatchObject({ contractor_id: other, booked: nine });
    expect((await h.get("/api/contractor/v1/jobs", { "x-api-key": plumberKey })).json().jobs).toEqual([]);
    expect((await h.get("/api/contractor/v1/jobs", { "x-api-key": otherKey })).json().jobs).toEqual([
      expect.objectContaining({ order_id: orderId, booked: nine }),
    ]);
    expect(plumber).not.toBe(other);
  });
});
