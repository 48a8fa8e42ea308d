// Counter-offers' rules on plain values (domain/orders/counter-rules.ts, counter-commands.ts): what a
// counter may propose and when, the policy's band in integer cents, and what each change carries (the
// offer settled countered, the counter made and settled, the capacity held, given back or placed again,
// the records and events); and the waiting counter withdrawn by a cancellation or an assignment.

import { describe, expect, it } from "vitest";
import { assignContractor, type CommandContext, cancelOrder } from "../../../src/domain/orders/commands.js";
import { acceptCounter, counterOffer, endCounter } from "../../../src/domain/orders/counter-commands.js";
import {
  autoAcceptCeiling,
  autoAccepts,
  counteredOffer,
  POLICY_ACTOR,
} from "../../../src/domain/orders/counter-rules.js";
import type {
  CounterOffer,
  Decision,
  Offer,
  OrderChange,
  OrderState,
} from "../../../src/domain/orders/order.js";
import { orderFixture } from "../../helpers/order-fixture.js";

const NOW = new Date("2026-11-23T12:00:00.000Z");
let seq = 0;
const ctx = (now = NOW): CommandContext => ({
  now,
  unavailable: new Set(),
  sandboxPlayed: false,
  newId: (prefix) => `${prefix}_${++seq}`,
});
const KEY = { contractorId: "ctr_a", livemode: true };

function offered(overrides: Partial<Offer> = {}): OrderState {
  const order = orderFixture({
    id: "ord_1",
    status: "offered",
    urgency: "urgent",
    contractor_id: "ctr_a",
    estimated_cost_cents: 30_000,
    nte_cents: 50_000,
    ranking: ["ctr_a", "ctr_b"],
    offers_made: 1,
    version: 3,
  });
  const offer: Offer = {
    id: "ofr_1",
    order_id: "ord_1",
    contractor_id: "ctr_a",
    livemode: true,
    attempt: 1,
    status: "pending",
    offered_at: "2026-11-23T11:55:00.000Z",
    deadline_at: "2026-11-23T12:10:00.000Z",
    responded_at: null,
    reason: null,
    ...overrides,
  };
  return { order, offers: [offer] };
}

const cmd = (over: Partial<Parameters<typeof counterOffer>[1]> = {}) => ({
  offerId: "ofr_1",
  contractor: KEY,
  priceCents: 33_000,
  window: null,
  note: null,
  actor: "contractor:ctr_a" as const,
  policy: null,
  ...over,
});

function change(d: Decision): OrderChange {
  if (d.kind !== "change") throw new Error(`refused: ${d.code} ${d.message}`);
  return d;
}

/** The state after the counter `d` was committed, with its counter row. */
function countered(d: Decision): { state: OrderState; counters: CounterOffer[] } {
  const c = change(d);
  const before = offered();
  const offers = before.offers.map((o) =>
    c.offers.settle.some((s) => s.id === o.id) ? { ...o, status: "countered" as const } : o,
  );
  return { state: { order: c.after, offers }, counters: c.counter?.create ? [c.counter.create] : [] };
}

describe("a contractor's counter", () => {
  it("settles the offer countered and waits, with its own deadline, the capacity still held", () => {
    const c = change(counterOffer(offered(), cmd({ note: "two-storey" }), ctx()));
    expect(c.after.status).toBe("offered");
    expect(c.after.contractor_id).toBe("ctr_a");
    expect(c.offers.settle).toEqual([
      { id: "ofr_1", status: "countered", at: NOW.toISOString(), reason: "two-storey" },
    ]);
    expect(c.counter?.create).toMatchObject({
      offer_id: "ofr_1",
      status: "pending",
      price_cents: 33_000,
      // Urgent: 15 minutes.
      deadline_at: "2026-11-23T12:15:00.000Z",
    });
    expect(c.capacity).toEqual({ take: [], release: [] });
    expect(c.audit.map((a) => a.kind)).toEqual(["order.countered"]);
    expect(c.event?.type).toBe("order.countered");
    expect(counteredOffer(countered(c).state)?.id).toBe("ofr_1");
  });

  it("is refused after the offer's deadline (offer_expired, naming it), on another's offer, or twice", () => {
    const late = counterOffer(offered(), cmd(), ctx(new Date("2026-11-23T12:10:00.000Z")));
    expect(late).toMatchObject({
      kind: "refused",
      code: "offer_expired",
      extra: { deadline_at: "2026-11-23T12:10:00.000Z" },
    });
    expect(late.kind === "refused" && late.message).toContain("2026-11-23T12:10:00.000Z");
    expect(
      counterOffer(offered(), cmd({ contractor: { contractorId: "ctr_b", livemode: true } }), ctx()),
    ).toMatchObject({
      code: "not_found",
    });
    expect(
      counterOffer(offered(), cmd({ contractor: { contractorId: "ctr_a", livemode: false } }), ctx()),
    ).toMatchObject({
      code: "not_found",
    });
    expect(counterOffer(offered({ status: "countered" }), cmd(), ctx())).toMatchObject({
      code: "invalid_transition",
      currentStatus: "countered",
    });
  });

  it("proposes a change: not the estimate again, a window only for windowed urgencies, well-formed", () => {
    expect(counterOffer(offered(), cmd({ priceCents: 30_000 }), ctx())).toMatchObject({
      code: "validation_failed",
    });
    const tomorrow = {
      start: new Date("2026-11-24T16:00:00.000Z"),
      end: new Date("2026-11-24T20:00:00.000Z"),
    };
    expect(counterOffer(offered(), cmd({ priceCents: null, window: tomorrow }), ctx())).toMatchObject({
      code: "validation_failed",
      errors: [expect.objectContaining({ field: "arrival_window", code: "window_not_allowed" })],
    });
    const routine = offered();
    routine.order.urgency = "routine";
    const backwards = { start: tomorrow.end, end: tomorrow.start };
    expect(counterOffer(routine, cmd({ window: backwards }), ctx())).toMatchObject({
      errors: [expect.objectContaining({ field: "arrival_window.end", code: "window_not_ordered" })],
    });
    expect(
      change(counterOffer(routine, cmd({ priceCents: null, window: tomorrow }), ctx())).counter?.create,
    ).toMatchObject({
      window_start: tomorrow.start.toISOString(),
      window_end: tomorrow.end.toISOString(),
      // Routine: an hour.
      deadline_at: "2026-11-23T13:00:00.000Z",
    });
  });
});

describe("the account's answer", () => {
  it("accepts: the order accepted at the counter's price, the counter settled, nothing taken again", () => {
    const { state, counters } = countered(counterOffer(offered(), cmd({ priceCents: 60_000 }), ctx()));
    const c = change(acceptCounter(state, { orderId: "ord_1", counters, actor: "key:k1" }, ctx()));
    expect(c.after).toMatchObject({
      status: "accepted",
      contractor_id: "ctr_a",
      agreed_price_cents: 60_000,
      // Above the NTE: the account's acceptance raises it to the agreed price.
      nte_approved_cents: 60_000,
      accepted_offer_attempt: 1,
    });
    expect(c.counter?.settle).toMatchObject({ offer_id: "ofr_1", status: "accepted", by: "key:k1" });
    expect(c.capacity).toEqual({ take: [], release: [] });
    expect(c.audit[0]).toMatchObject({
      kind: "order.counter_accepted",
      data: { nte_raised_from_cents: 50_000 },
    });
    expect(c.event).toMatchObject({ type: "order.accepted", details: { action: "accept_counter" } });
  });

  it("accepting a window books it (source countered) and places the contractor's time again", () => {
    const state = offered();
    state.order.urgency = "routine";
    const window = { start: new Date("2026-11-24T16:00:00.000Z"), end: new Date("2026-11-24T20:00:00.000Z") };
    const made = countered(counterOffer(state, cmd({ priceCents: null, window }), ctx()));
    const c = change(
      acceptCounter(made.state, { orderId: "ord_1", counters: made.counters, actor: "key:k1" }, ctx()),
    );
    expect(c.after).toMatchObject({
      window_start: window.start.toISOString(),
      window_end: window.end.toISOString(),
      window_source: "countered",
      agreed_price_cents: null,
    });
    expect(c.capacity.retime).toEqual(["ctr_a"]);
  });

  it("declines, or the deadline passes: the capacity given back and the next contractor offered", () => {
    const { state, counters } = countered(counterOffer(offered(), cmd(), ctx()));
    const declined = change(
      endCounter(
        state,
        { orderId: "ord_1", counters, outcome: "declined", actor: "key:k1", reason: "no" },
        ctx(),
      ),
    );
    expect(declined.after).toMatchObject({ status: "offered", contractor_id: "ctr_b", offers_made: 2 });
    expect(declined.capacity).toEqual({ take: ["ctr_b"], release: ["ctr_a"] });
    expect(declined.counter?.settle).toMatchObject({ status: "declined", reason: "no" });
    expect(declined.audit.map((a) => a.kind)).toEqual(["order.counter_declined", "order.offered"]);
    expect(declined.event?.type).toBe("order.counter_declined");

    // Not yet due: the sweeper's expiry is refused; once due, it expires, and an answer is too late.
    const expire = {
      orderId: "ord_1",
      counters,
      outcome: "expired" as const,
      actor: "system:dispatch" as const,
      reason: null,
    };
    expect(endCounter(state, expire, ctx())).toMatchObject({ code: "invalid_transition" });
    const due = ctx(new Date("2026-11-23T12:15:00.000Z"));
    expect(change(endCounter(state, expire, due)).audit[0]?.kind).toBe("order.counter_expired");
    expect(acceptCounter(state, { orderId: "ord_1", counters, actor: "key:k1" }, due)).toMatchObject({
      code: "offer_expired",
      extra: { deadline_at: "2026-11-23T12:15:00.000Z" },
    });
  });

  it("the last contractor's counter declined ends the cascade: a dispatcher takes over", () => {
    const start = offered();
    start.order.ranking = ["ctr_a"];
    const { state, counters } = countered(counterOffer(start, cmd(), ctx()));
    const c = change(
      endCounter(
        state,
        { orderId: "ord_1", counters, outcome: "declined", actor: "key:k1", reason: null },
        ctx(),
      ),
    );
    expect(c.after).toMatchObject({ status: "needs_dispatcher", contractor_id: null });
    expect(c.event).toMatchObject({
      type: "order.needs_dispatcher",
      details: { counter: { status: "declined" } },
    });
  });

  it("a cancellation or an assignment withdraws the waiting counter", () => {
    const { state } = countered(counterOffer(offered(), cmd(), ctx()));
    const cancelled = change(cancelOrder(state, { role: "caller", reason: null, actor: "key:k1" }, ctx()));
    expect(cancelled.counter?.settle).toMatchObject({ offer_id: "ofr_1", status: "withdrawn" });
    expect(cancelled.capacity.release).toEqual(["ctr_a"]);
    const standing = {
      pool: "live",
      active: true,
      excluded: false,
      insuranceVerifiedUntil: "2099-12-31",
      licenseVerifiedUntil: "2099-12-31",
    };
    const assigned = change(
      assignContractor(
        state,
        {
          orderId: "ord_1",
          livemode: true,
          contractorId: "ctr_b",
          contractor: standing,
          reason: "r",
          complianceOverride: null,
          actor: "operator:o",
        },
        ctx(),
      ),
    );
    expect(assigned.counter?.settle).toMatchObject({
      status: "withdrawn",
      reason: "assigned by a dispatcher",
    });
    // Without a waiting counter, nothing to withdraw.
    expect(
      change(cancelOrder(offered(), { role: "caller", reason: null, actor: "key:k1" }, ctx())).counter,
    ).toBeUndefined();
  });
});

describe("the account's policy", () => {
  const order = orderFixture({ estimated_cost_cents: 30_001, nte_cents: null });

  it("accepts at once a price within the band above the estimate, rounded down in integer cents", () => {
    const policy = { auto_accept_within_pct: 10 };
    // 30,001 x 110 / 100 = 33,001.1 -> 33,001.
    expect(autoAcceptCeiling(policy, order)).toEqual({
      band_cents: 33_001,
      nte_in_force_cents: null,
      ceiling_cents: 33_001,
    });
    expect(autoAccepts(policy, order, { price_cents: 33_001, window_start: null })).toBe(true);
    expect(autoAccepts(policy, order, { price_cents: 33_002, window_start: null })).toBe(false);
    // A lower price is within any band; a window never is; no policy, nothing.
    expect(autoAccepts(policy, order, { price_cents: 1, window_start: null })).toBe(true);
    expect(autoAccepts(policy, order, { price_cents: 1, window_start: "2026-11-24T16:00:00.000Z" })).toBe(
      false,
    );
    expect(autoAccepts(null, order, { price_cents: 1, window_start: null })).toBe(false);
    expect(autoAccepts({ auto_accept_within_pct: null }, order, { price_cents: 1, window_start: null })).toBe(
      false,
    );
  });

  it("never above the NTE in force (an approved increase counts)", () => {
    const policy = { auto_accept_within_pct: 50 };
    const capped = { ...order, nte_cents: 32_000 };
    expect(autoAcceptCeiling(policy, capped)?.ceiling_cents).toBe(32_000);
    expect(autoAccepts(policy, capped, { price_cents: 32_001, window_start: null })).toBe(false);
    expect(
      autoAccepts(
        policy,
        { ...capped, nte_approved_cents: 40_000 },
        { price_cents: 32_001, window_start: null },
      ),
    ).toBe(true);
  });

  it("a counter within the band is made and accepted in one change, by the policy, named in its record", () => {
    const c = change(
      counterOffer(offered(), cmd({ priceCents: 31_000, policy: { auto_accept_within_pct: 5 } }), ctx()),
    );
    expect(c.after.status).toBe("accepted");
    expect(c.counter?.create).toMatchObject({ status: "accepted", decided_by: POLICY_ACTOR });
    expect(c.counter?.settle).toBeUndefined();
    expect(c.audit.map((a) => [a.kind, a.actor])).toEqual([
      ["order.countered", "contractor:ctr_a"],
      ["order.counter_accepted", POLICY_ACTOR],
    ]);
    expect(c.audit[1]?.data).toMatchObject({ policy: { auto_accept_within_pct: 5, band_cents: 31_500 } });
  });
});
