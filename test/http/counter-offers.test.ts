// Counter-offers (issue 33) end to end: the contractor offered a job answers with a counter (a price, a
// window, or both) before the offer's deadline; the account accepts it (the job is that contractor's at
// that price/window) or declines it (the next contractor is offered the job), or lets it expire (the
// sweeper moves the cascade on); its policy accepts counters within a band above the estimate, never
// above the NTE nor with a window. Each step sealed and sent as an event; the contractor's capacity held
// only while the counter waits. On SQLite, and on PostgreSQL in the postgres project.

import { afterEach, describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { OfferSweeper } from "../../src/workers/offer-sweeper.js";
import { type Crew, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { orderAnomalies } from "../helpers/order-invariants.js";
import { expectProblem } from "../helpers/security-suite.js";
import { type TestClock, testClock } from "../helpers/test-clock.js";

const OFFERS = "/api/contractor/v1/offers";
const COUNTER = "/api/contractor/v1/offers/counter";
const ACCEPT = "/api/dispatch/v1/orders/counter-accept";
const DECLINE = "/api/dispatch/v1/orders/counter-decline";
const POLICY = "/api/dispatch/v1/counter-policy";
const CANCEL = "/api/dispatch/v1/orders/cancel";
const MINUTE = 60_000;
const JOB = {
  trade: "plumbing",
  urgency: "urgent",
  location: { state: "CA", zip: "94103" },
  description: "Leak under the sink",
};

const open: Harness[] = [];
afterEach(async () => {
  // Every test leaves the order invariants whole (a waiting counter holds its contractor, nothing else).
  for (const h of open.splice(0)) {
    expect(await orderAnomalies(h.services.store)).toEqual([]);
    await h.close();
  }
});

interface Setup {
  h: Harness;
  clock: TestClock;
  crew: Crew;
}

async function setup(): Promise<Setup> {
  const clock = testClock();
  const h = await createHarness({}, {}, { now: clock.now });
  open.push(h);
  return { h, clock, crew: await crewOf(h) };
}

const as = (key: string) => ({ "x-api-key": key });

/** Places a job with the crew's account; the order as created (offered to the crew's first plumber). */
async function place(
  s: Setup,
  job: object = JOB,
): Promise<{ order_id: string; estimated_cost_cents: number }> {
  const res = await s.h.post(ORDER_PATH, { ...JOB, ...job }, as(s.crew.caller));
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().status).toBe("offered");
  return res.json();
}

async function offerOf(s: Setup, key: string, orderId: string) {
  const offers = (await s.h.get(OFFERS, as(key))).json().offers as Array<Record<string, unknown>>;
  return offers.find((o) => o.order_id === orderId);
}

async function counter(s: Setup, orderId: string, body: object, key = s.crew.holderKey) {
  const offer = await offerOf(s, s.crew.holderKey, orderId);
  return s.h.post(COUNTER, { offer_id: offer?.offer_id ?? "ofr_none", ...body }, as(key));
}

async function orderOf(s: Setup, orderId: string) {
  const res = await s.h.get(`/api/dispatch/v1/orders/${orderId}`, as(s.crew.caller));
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The units of capacity each of the crew's contractors holds for the order. */
async function holds(s: Setup, orderId: string): Promise<string[]> {
  const rows = await (s.h.services.store as KyselyStore).db
    .selectFrom("capacity_holds")
    .select("contractor_id")
    .where("order_id", "=", orderId)
    .execute();
  return rows.map((r) => r.contractor_id).sort();
}

async function records(s: Setup, orderId: string) {
  const res = await s.h.get(`/api/audit?order_id=${orderId}&limit=200`, as(s.crew.caller));
  expect(res.statusCode, res.body).toBe(200);
  return res.json().records as Array<{ kind: string; actor?: string; disclosed: Record<string, unknown> }>;
}

async function events(s: Setup, orderId: string) {
  const res = await s.h.get("/api/events?limit=500", { ...as(s.crew.caller), accept: "application/json" });
  return (
    res.json().events as Array<{
      type: string;
      data: Record<string, unknown> & { order: { order_id: string } };
    }>
  ).filter((e) => e.data.order.order_id === orderId);
}

describe("counter-offers", () => {
  it("a price counter waits on the account, holding the contractor; accepting assigns the job at that price", async () => {
    const s = await setup();
    const { h, crew } = s;
    const placed = await place(s, { nte_cents: 100_000 });
    const id = placed.order_id;
    const price = placed.estimated_cost_cents + 5_000;
    const res = await counter(s, id, { price_cents: price, note: "two-storey access" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      counter: { status: "pending", price_cents: price, arrival_window: null, note: "two-storey access" },
      job: null,
    });
    const deadline = res.json().counter.deadline_at as string;
    // Urgent work: the account has 15 minutes.
    expect(Date.parse(deadline) - Date.parse(res.json().counter.created_at)).toBe(15 * MINUTE);

    // The order stays offered to the contractor, whose capacity stays held; both views show the counter.
    const view = await orderOf(s, id);
    expect(view).toMatchObject({
      status: "offered",
      contractor_ref: await h.refOf(crew.caller, crew.contractorIds[0]),
      agreed_price_cents: null,
      counter: { status: "pending", price_cents: price, deadline_at: deadline },
    });
    expect(await holds(s, id)).toEqual([crew.contractorIds[0]]);
    // `pool check` counts the waiting counter as what holds the unit: no drift.
    expect(await h.services.store.contractors.capacityDrift()).toEqual([]);
    expect(await offerOf(s, crew.holderKey, id)).toMatchObject({
      counter: { status: "pending", price_cents: price },
    });
    // Countered once: the offer can no longer be countered, accepted or declined.
    expectProblem(await counter(s, id, { price_cents: price + 1 }), 409, "invalid_transition");
    const offerId = (await offerOf(s, crew.holderKey, id))?.offer_id;
    expectProblem(
      await h.post("/api/contractor/v1/offers/accept", { offer_id: offerId }, as(crew.holderKey)),
      409,
      "invalid_transition",
    );

    // Another account's key does not see the order.
    expectProblem(await h.post(ACCEPT, { order_id: id }, as(crew.otherAccount)), 404, "not_found");
    const accepted = await h.post(ACCEPT, { order_id: id }, as(crew.caller));
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({
      status: "accepted",
      agreed_price_cents: price,
      nte_approved_cents: null,
      counter: { status: "accepted", price_cents: price },
    });
    expect(await holds(s, id)).toEqual([crew.contractorIds[0]]);
    // Answered once only.
    expectProblem(await h.post(ACCEPT, { order_id: id }, as(crew.caller)), 409, "invalid_transition");
    // The contractor's job carries the agreed price; its offer list no longer the offer.
    const jobs = (await h.get("/api/contractor/v1/jobs", as(crew.holderKey))).json().jobs;
    expect(jobs.find((j: { order_id: string }) => j.order_id === id)).toMatchObject({
      status: "accepted",
      agreed_price_cents: price,
    });
    expect(await offerOf(s, crew.holderKey, id)).toBeUndefined();

    const kinds = (await records(s, id)).map((r) => r.kind);
    expect(kinds).toEqual(expect.arrayContaining(["order.countered", "order.counter_accepted"]));
    expect((await records(s, id)).find((r) => r.kind === "order.counter_accepted")?.disclosed).toMatchObject({
      agreed_price_cents: price,
    });
    const types = (await events(s, id)).map((e) => e.type);
    expect(types).toEqual(["order.offered", "order.countered", "order.accepted"]);
    const acceptedEvent = (await events(s, id)).find((e) => e.type === "order.accepted");
    expect(acceptedEvent?.data).toMatchObject({ action: "accept_counter", counter: { status: "accepted" } });
  });

  it("declining the counter gives the contractor's capacity back and offers the job to the next one", async () => {
    const s = await setup();
    const { h, crew } = s;
    const { order_id: id, estimated_cost_cents: estimate } = await place(s);
    expect((await counter(s, id, { price_cents: estimate * 2 })).statusCode).toBe(200);
    const res = await h.post(DECLINE, { order_id: id, reason: "over our budget" }, as(crew.caller));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      status: "offered",
      contractor_ref: await h.refOf(crew.caller, crew.contractorIds[1]),
      counter: { status: "declined", reason: "over our budget" },
    });
    expect(await holds(s, id)).toEqual([crew.contractorIds[1]]);
    expect(await offerOf(s, crew.otherContractorKey, id)).toMatchObject({ attempt: 2 });
    expect(await offerOf(s, crew.holderKey, id)).toBeUndefined();
    expect((await records(s, id)).map((r) => r.kind)).toEqual(
      expect.arrayContaining(["order.countered", "order.counter_declined", "order.offered"]),
    );
    expect((await events(s, id)).map((e) => e.type)).toEqual([
      "order.offered",
      "order.countered",
      "order.counter_declined",
    ]);
    // Nothing waits any more.
    expectProblem(await h.post(DECLINE, { order_id: id }, as(crew.caller)), 409, "invalid_transition");
  });

  it("a counter unanswered by its deadline expires: the sweeper moves the cascade on; a late answer is 409", async () => {
    const s = await setup();
    const { h, crew, clock } = s;
    const { order_id: id, estimated_cost_cents: estimate } = await place(s);
    const made = await counter(s, id, { price_cents: estimate + 100 });
    const deadline = made.json().counter.deadline_at as string;
    const sweeper = new OfferSweeper(h.services);
    // Before the deadline the sweeper leaves it alone.
    expect(await sweeper.tick()).toBe(0);
    expect((await orderOf(s, id)).counter.status).toBe("pending");
    clock.advance(15 * MINUTE + 1_000);
    const late = expectProblem(await h.post(ACCEPT, { order_id: id }, as(crew.caller)), 409, "offer_expired");
    expect(late.deadline_at).toBe(deadline);
    expect(late.detail).toContain(deadline);
    expect(await sweeper.tick()).toBe(1);
    const view = await orderOf(s, id);
    expect(view).toMatchObject({
      status: "offered",
      contractor_ref: await h.refOf(crew.caller, crew.contractorIds[1]),
      counter: { status: "expired" },
    });
    expect(await holds(s, id)).toEqual([crew.contractorIds[1]]);
    expect((await records(s, id)).some((r) => r.kind === "order.counter_expired")).toBe(true);
    expect((await events(s, id)).map((e) => e.type)).toContain("order.counter_expired");
    // Swept once.
    expect(await sweeper.tick()).toBe(0);
  });

  it("refuses a counter after the offer's deadline (naming it), from another contractor, or proposing nothing", async () => {
    const s = await setup();
    const { crew, clock } = s;
    const { order_id: id, estimated_cost_cents: estimate } = await place(s);
    const offer = await offerOf(s, crew.holderKey, id);
    // Not the contractor's offer: 404, as for accept and decline.
    expectProblem(
      await counter(s, id, { price_cents: estimate + 1 }, crew.otherContractorKey),
      404,
      "not_found",
    );
    // Neither a price nor a window; a price changing nothing; a window on as-soon-as-possible work.
    expectProblem(await counter(s, id, { note: "hm" }), 422, "validation_failed");
    expectProblem(await counter(s, id, { price_cents: estimate }), 422, "validation_failed");
    expectProblem(await counter(s, id, { price_cents: 0 }), 422, "validation_failed");
    const start = new Date(clock.now().getTime() + 24 * 3_600_000);
    const window = {
      start: start.toISOString(),
      end: new Date(start.getTime() + 4 * 3_600_000).toISOString(),
    };
    const asap = expectProblem(await counter(s, id, { arrival_window: window }), 422, "validation_failed");
    expect(asap.errors).toEqual([
      expect.objectContaining({ field: "arrival_window", code: "window_not_allowed" }),
    ]);

    clock.advance(15 * MINUTE + 1_000);
    const late = expectProblem(await counter(s, id, { price_cents: estimate + 1 }), 409, "offer_expired");
    expect(late.deadline_at).toBe(offer?.deadline_at);
    expect(late.detail).toContain(String(offer?.deadline_at));
    // Nothing was written: the order is still offered to the contractor, no counter.
    expect(await orderOf(s, id)).toMatchObject({ status: "offered", counter: null });
  });

  it("a window counter, accepted, books the job in that window; above the NTE it raises the NTE", async () => {
    const s = await setup();
    const { h, crew, clock } = s;
    const { order_id: id } = await place(s, { urgency: "routine", nte_cents: 20_000 });
    const start = new Date(Math.ceil((clock.now().getTime() + 26 * 3_600_000) / 3_600_000) * 3_600_000);
    const window = {
      start: start.toISOString(),
      end: new Date(start.getTime() + 4 * 3_600_000).toISOString(),
    };
    const made = await counter(s, id, { arrival_window: window, price_cents: 25_000 });
    expect(made.statusCode, made.body).toBe(200);
    // A routine job's counter waits an hour.
    const { created_at, deadline_at } = made.json().counter;
    expect(Date.parse(deadline_at) - Date.parse(created_at)).toBe(60 * MINUTE);
    const res = await h.post(ACCEPT, { order_id: id }, as(crew.caller));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      status: "accepted",
      agreed_price_cents: 25_000,
      nte_cents: 20_000,
      nte_approved_cents: 25_000,
      arrival_window: { ...window, source: "countered" },
    });
    const accepted = (await records(s, id)).find((r) => r.kind === "order.counter_accepted");
    expect(accepted?.disclosed).toMatchObject({ nte_raised_from_cents: 20_000, arrival_window: window });
  });

  it("a contractor the account excluded while its counter waited is not accepted: declining still works", async () => {
    const s = await setup();
    const order = await place(s);
    const countered = await counter(s, order.order_id, { price_cents: order.estimated_cost_cents + 5_000 });
    expect(countered.statusCode, countered.body).toBe(200);
    const ref = (await orderOf(s, order.order_id)).contractor_ref;
    const excluded = await s.h.post(
      "/api/dispatch/v1/do-not-dispatch",
      { contractor_ref: ref, reason: "left the last site unsafe" },
      as(s.crew.caller),
    );
    expect(excluded.statusCode, excluded.body).toBe(200);
    expectProblem(
      await s.h.post(ACCEPT, { order_id: order.order_id }, as(s.crew.caller)),
      409,
      "contractor_excluded",
    );
    expect((await orderOf(s, order.order_id)).status).toBe("offered");
    const declined = await s.h.post(
      DECLINE,
      { order_id: order.order_id, reason: "excluded" },
      as(s.crew.caller),
    );
    expect(declined.statusCode, declined.body).toBe(200);
  });

  it("a cancellation withdraws the waiting counter and gives the capacity back", async () => {
    const s = await setup();
    const { h, crew } = s;
    const { order_id: id, estimated_cost_cents: estimate } = await place(s);
    expect((await counter(s, id, { price_cents: estimate + 500 })).statusCode).toBe(200);
    expect((await h.post(CANCEL, { order_id: id }, as(crew.caller))).statusCode).toBe(200);
    expect((await orderOf(s, id)).counter).toMatchObject({ status: "withdrawn", reason: "order cancelled" });
    expect(await holds(s, id)).toEqual([]);
    expect(await offerOf(s, crew.holderKey, id)).toBeUndefined();
    expect(await new OfferSweeper(h.services).tick()).toBe(0);
  });
});

describe("the account's counter policy", () => {
  it("is off until set; set by the account's key and sealed, per account", async () => {
    const s = await setup();
    const { h, crew } = s;
    expect((await h.get(POLICY, as(crew.caller))).json()).toEqual({
      auto_accept_within_pct: null,
      updated_at: null,
      record: null,
    });
    const set = await h.post(POLICY, { auto_accept_within_pct: 10 }, as(crew.caller));
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({
      auto_accept_within_pct: 10,
      record: { kind: "account.counter_policy_set" },
    });
    expect((await h.get(POLICY, as(crew.caller))).json()).toEqual(set.json());
    expect((await h.get(POLICY, as(crew.otherAccount))).json().auto_accept_within_pct).toBeNull();
    expectProblem(
      await h.post(POLICY, { auto_accept_within_pct: 101 }, as(crew.caller)),
      422,
      "validation_failed",
    );
    expectProblem(
      await h.post(POLICY, { auto_accept_within_pct: 10 }, as(crew.holderKey)),
      403,
      "key_kind_not_allowed",
    );
    const audit = await h.get("/api/audit?kind=account.counter_policy_set&limit=10", as(crew.caller));
    expect(audit.json().records.map((r: { disclosed: unknown }) => r.disclosed)).toContainEqual({
      auto_accept_within_pct: 10,
      previous: null,
    });
  });

  it("accepts at once a price within the band and under the NTE; a price above either waits", async () => {
    const s = await setup();
    const { h, crew } = s;
    expect((await h.post(POLICY, { auto_accept_within_pct: 10 }, as(crew.caller))).statusCode).toBe(200);

    // Within 10 % of the estimate: accepted by the policy, named in the record.
    const within = await place(s);
    const price = Math.floor(within.estimated_cost_cents * 1.05);
    const res = await counter(s, within.order_id, { price_cents: price });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      counter: { status: "accepted", price_cents: price },
      job: { status: "accepted", agreed_price_cents: price },
    });
    const record = (await records(s, within.order_id)).find((r) => r.kind === "order.counter_accepted");
    expect(record?.disclosed).toMatchObject({ policy: { auto_accept_within_pct: 10 } });
    expect((await orderOf(s, within.order_id)).status).toBe("accepted");

    // Above the band: waits for the account.
    const above = await place(s);
    const high = await counter(s, above.order_id, {
      price_cents: Math.ceil(above.estimated_cost_cents * 1.2),
    });
    expect(high.json().counter.status).toBe("pending");

    // Within the band but above the NTE (a cent above the estimate): waits too.
    const capped = await place(s, { nte_cents: within.estimated_cost_cents });
    expect(capped.estimated_cost_cents).toBe(within.estimated_cost_cents);
    const held = await counter(s, capped.order_id, { price_cents: capped.estimated_cost_cents + 1 });
    expect(held.json().counter.status).toBe("pending");
    // A window counter waits whatever its price.
    const windowed = await place(s, { urgency: "routine" });
    const start = new Date(Math.ceil((s.clock.now().getTime() + 26 * 3_600_000) / 3_600_000) * 3_600_000);
    const window = {
      start: start.toISOString(),
      end: new Date(start.getTime() + 4 * 3_600_000).toISOString(),
    };
    const timed = await counter(s, windowed.order_id, { arrival_window: window });
    expect(timed.json().counter.status).toBe("pending");
  });
});
