// The order aggregate's commands on plain values: every status against every command, expected from the
// transition table (each legal move gives a change to the table's status, each illegal one a refusal
// naming the current status); the table against a hand-written list of the moves docs/work-orders.md describes,
// so a wrong table cannot pass by reading itself; and what each change carries (capacity, offers, audit,
// event).

import { describe, expect, it } from "vitest";
import {
  acceptOffer,
  assignContractor,
  type CommandContext,
  type ContractorStanding,
  cancelOrder,
  createOrder,
  decideNte,
  invoiceJob,
  type ProgressReport,
  reportProgress,
  requestNte,
  rescheduleOrder,
  settleOffer,
} from "../../../src/domain/orders/commands.js";
import type { Decision, Offer, Order, OrderState } from "../../../src/domain/orders/order.js";
import { MAX_OFFERS } from "../../../src/domain/orders/policy.js";
import {
  type Action,
  ORDER_STATUSES,
  type OrderStatus,
  type Role,
  TRANSITIONS,
} from "../../../src/domain/orders/transitions.js";
import { orderFixture, orderRequestFixture } from "../../helpers/order-fixture.js";

const NOW = new Date("2026-11-23T12:00:00.000Z");
let seq = 0;
const ctx = (unavailable: string[] = []): CommandContext => ({
  now: NOW,
  unavailable: new Set(unavailable),
  sandboxPlayed: false,
  newId: (prefix) => `${prefix}_${++seq}`,
});

function order(status: OrderStatus, overrides: Partial<Order> = {}): Order {
  return orderFixture({
    id: "ord_1",
    status,
    zip: "78701",
    address: "1 Main St",
    nte_cents: 50_000,
    contractor_id: status === "received" || status === "needs_dispatcher" ? null : "ctr_a",
    estimated_cost_cents: 30_000,
    match_score: 0.9,
    received_at: "2026-11-23T11:00:00.000Z",
    matched_at: "2026-11-23T11:00:00.000Z",
    created_at: "2026-11-23T11:00:00.000Z",
    updated_at: "2026-11-23T11:00:00.000Z",
    ranking: ["ctr_a", "ctr_b", "ctr_c", "ctr_d"],
    offers_made: status === "received" || status === "needs_dispatcher" ? 0 : 1,
    version: 7,
    ...overrides,
  });
}

/** What createOrder is given for order("received"): its request. */
const REQUEST = orderRequestFixture({
  id: "ord_1",
  zip: "78701",
  address: "1 Main St",
  nte_cents: 50_000,
  received_at: "2026-11-23T11:00:00.000Z",
  created_at: "2026-11-23T11:00:00.000Z",
});

function offer(overrides: Partial<Offer> = {}): Offer {
  return {
    id: "ofr_1",
    order_id: "ord_1",
    contractor_id: "ctr_a",
    livemode: true,
    attempt: 1,
    status: "pending",
    offered_at: "2026-11-23T11:00:00.000Z",
    deadline_at: "2026-11-23T13:00:00.000Z",
    responded_at: null,
    reason: null,
    ...overrides,
  };
}

/** An order in `status` held by ctr_a (so the contractor's commands reach the status check), with a
 * pending offer while offered. */
function stateIn(status: OrderStatus): OrderState {
  return {
    order: order(status, { contractor_id: "ctr_a" }),
    offers: status === "offered" ? [offer()] : [offer({ status: "accepted" })],
  };
}

const STANDING = {
  pool: "live",
  active: true,
  excluded: false,
  insuranceVerifiedUntil: "2099-12-31",
  licenseVerifiedUntil: "2099-12-31",
};

/** Each command that moves an order's status by a table action, run on `state` by `role`. */
const COMMANDS: Array<{ action: Action; role: Role; run(state: OrderState): Decision }> = [
  {
    action: "accept",
    role: "contractor",
    run: (s) =>
      acceptOffer(
        { ...s, offers: [offer()] },
        {
          offerId: "ofr_1",
          contractor: { contractorId: "ctr_a", livemode: true },
          actor: "contractor:ctr_a",
        },
        ctx(),
      ),
  },
  ...(
    [
      ["depart", { status: "en_route", eta_minutes: 20 }],
      ["arrive", { status: "on_site" }],
      ["complete", { status: "completed", final_cost_cents: 100 }],
      ["cannot_complete", { status: "cannot_complete", reason: "no parts" }],
    ] as Array<[Action, ProgressReport]>
  ).map(([action, report]) => ({
    action,
    role: "contractor" as Role,
    run: (s: OrderState) =>
      reportProgress(
        s,
        {
          orderId: "ord_1",
          contractor: { contractorId: "ctr_a", livemode: true },
          report,
          actor: "contractor:ctr_a",
        },
        ctx(),
      ),
  })),
  {
    action: "invoice",
    role: "contractor",
    run: (s) =>
      invoiceJob(
        s,
        {
          orderId: "ord_1",
          contractor: { contractorId: "ctr_a", livemode: true },
          cents: 100,
          actor: "contractor:ctr_a",
        },
        ctx(),
      ),
  },
  ...(["caller", "dispatcher"] as Role[]).map((role) => ({
    action: "cancel" as Action,
    role,
    run: (s: OrderState) => cancelOrder(s, { role, reason: "r", actor: "key:k" }, ctx()),
  })),
  {
    // assign from some statuses, reassign from others: the command picks by status.
    action: "assign",
    role: "dispatcher",
    run: (s) =>
      assignContractor(
        s,
        {
          orderId: "ord_1",
          livemode: true,
          contractorId: "ctr_z",
          contractor: STANDING,
          reason: "r",
          complianceOverride: null,
          actor: "operator:k",
        },
        ctx(),
      ),
  },
];

function allowed(status: OrderStatus, action: Action, role: Role): OrderStatus | null {
  const rule = TRANSITIONS.find((t) => t.action === action && t.from.includes(status) && t.by.includes(role));
  return rule ? rule.to : null;
}

describe("the order's commands against the transition table", () => {
  for (const status of ORDER_STATUSES) {
    for (const command of COMMANDS) {
      const action =
        command.action === "assign" && (status === "accepted" || status === "en_route")
          ? "reassign"
          : command.action;
      const to = allowed(status, action, command.role);
      it(`${action} by ${command.role} from ${status}: ${to ?? "refused"}`, () => {
        const decision = command.run(stateIn(status));
        if (to === null) {
          expect(decision).toMatchObject({
            kind: "refused",
            code: "invalid_transition",
            currentStatus: status,
          });
          expect(decision.kind === "refused" && decision.message).toContain(`The order is ${status}`);
        } else {
          expect(decision.kind).toBe("change");
          if (decision.kind !== "change") return;
          expect(decision.after.status).toBe(to);
          expect(decision.before?.version).toBe(7);
          expect(decision.after.version).toBe(8);
          // Every status change has exactly one audit record and one event.
          expect(decision.audit).toHaveLength(1);
          expect(decision.event?.type).toBe(`order.${to}`);
          expect(decision.event?.details.previous_status).toBe(status);
        }
      });
    }
  }
});

describe("the transition table against the lifecycle of docs/work-orders.md", () => {
  // Written from docs/work-orders.md "The statuses and who moves them", not from the table: [from, action, to, roles].
  const EXPECTED: Array<[OrderStatus, Action, OrderStatus, Role[]]> = [
    ["received", "offer", "offered", ["system"]],
    ["received", "no_candidate", "needs_dispatcher", ["system"]],
    ["offered", "reoffer", "offered", ["system"]],
    ["offered", "exhaust", "needs_dispatcher", ["system"]],
    ["offered", "accept", "accepted", ["contractor"]],
    // A counter-offer keeps the order offered; the account (or its policy) accepting it assigns the job.
    ["offered", "counter", "offered", ["contractor"]],
    ["offered", "accept_counter", "accepted", ["caller", "system"]],
    ["offered", "assign", "accepted", ["dispatcher"]],
    ["needs_dispatcher", "assign", "accepted", ["dispatcher"]],
    ["cannot_complete", "assign", "accepted", ["dispatcher"]],
    ["accepted", "reassign", "accepted", ["dispatcher"]],
    ["en_route", "reassign", "accepted", ["dispatcher"]],
    ["accepted", "depart", "en_route", ["contractor"]],
    ["en_route", "arrive", "on_site", ["contractor"]],
    ["on_site", "complete", "completed", ["contractor"]],
    ["accepted", "cannot_complete", "cannot_complete", ["contractor"]],
    ["en_route", "cannot_complete", "cannot_complete", ["contractor"]],
    ["on_site", "cannot_complete", "cannot_complete", ["contractor"]],
    ["completed", "invoice", "invoiced", ["contractor", "dispatcher"]],
    // The invoice: revised until approved; decided by the account (approved by its policy too); paid.
    ["invoiced", "revise", "invoiced", ["contractor"]],
    ["revision_requested", "revise", "invoiced", ["contractor"]],
    ["invoice_rejected", "revise", "invoiced", ["contractor"]],
    ["invoiced", "request_revision", "revision_requested", ["caller"]],
    ["invoiced", "reject", "invoice_rejected", ["caller"]],
    ["invoiced", "approve", "approved", ["caller", "system"]],
    ["approved", "pay", "paid", ["caller"]],
    // The caller cancels until the contractor is on site; the dispatch team even on site.
    ["received", "cancel", "cancelled", ["caller", "dispatcher"]],
    ["offered", "cancel", "cancelled", ["caller", "dispatcher"]],
    ["accepted", "cancel", "cancelled", ["caller", "dispatcher"]],
    ["en_route", "cancel", "cancelled", ["caller", "dispatcher"]],
    ["needs_dispatcher", "cancel", "cancelled", ["caller", "dispatcher"]],
    ["on_site", "cancel", "cancelled", ["dispatcher"]],
    ["cannot_complete", "cancel", "cancelled", ["dispatcher"]],
  ];

  it("holds exactly the moves the documentation describes, for exactly the roles it names", () => {
    const fromTable = TRANSITIONS.flatMap((t) =>
      t.from.flatMap((from) => t.by.map((role) => `${from} ${t.action} -> ${t.to} by ${role}`)),
    ).sort();
    const written = EXPECTED.flatMap(([from, action, to, roles]) =>
      roles.map((role) => `${from} ${action} -> ${to} by ${role}`),
    ).sort();
    expect(fromTable).toEqual(written);
  });

  it("leaves paid and cancelled as the only terminal statuses", () => {
    const terminal = ORDER_STATUSES.filter((s) => !EXPECTED.some(([from]) => from === s));
    expect(terminal.sort()).toEqual(["cancelled", "paid"]);
  });
});

describe("what each change carries", () => {
  const created = (candidates: string[], unavailable: string[] = []) =>
    createOrder(
      {
        request: REQUEST,
        candidates: candidates.map((id, i) => ({
          contractorId: id,
          priceCents: 20_000 + i,
          etaTier: "same_day",
          score: 1 - i / 10,
        })),
        modelPriceCents: 25_000,
        matchingTimeMs: 0.02,
        actor: "key:k",
        createdData: { input: {} },
        decisionData: { candidates: candidates.length },
        time: { timeZone: "America/Chicago", window: null },
      },
      ctx(unavailable),
    );

  it("creates an order offered to the best candidate with capacity, holding one unit of it", () => {
    const change = created(["ctr_a", "ctr_b"], ["ctr_a"]);
    expect(change.before).toBeNull();
    expect(change.after).toMatchObject({
      status: "offered",
      contractor_id: "ctr_b",
      estimated_cost_cents: 20_001,
    });
    expect(change.capacity).toEqual({ take: ["ctr_b"], release: [] });
    expect(change.offers.create).toHaveLength(1);
    expect(change.offers.create[0]).toMatchObject({ contractor_id: "ctr_b", attempt: 1, status: "pending" });
    expect(change.audit.map((a) => a.kind)).toEqual(["order.created", "order.matched"]);
    expect(change.event).toMatchObject({ type: "order.offered", details: { previous_status: "received" } });
  });

  it("creates an order for a dispatcher when no candidate has capacity, at the model price", () => {
    const change = created(["ctr_a"], ["ctr_a"]);
    expect(change.after).toMatchObject({
      status: "needs_dispatcher",
      contractor_id: null,
      estimated_cost_cents: 25_000,
    });
    expect(change.capacity.take).toEqual([]);
    expect(change.audit.map((a) => a.kind)).toEqual(["order.created", "order.unmatched"]);
  });

  it("re-offers a declined job to the next untried contractor, then hands it to a dispatcher", () => {
    const state = stateIn("offered");
    const decline = (s: OrderState, unavailable: string[] = []) =>
      settleOffer(
        s,
        {
          offerId: s.offers.at(-1)?.id ?? "",
          outcome: "declined",
          actor: "contractor:x",
          reason: "busy",
          decliner: { contractorId: s.order.contractor_id ?? "", livemode: true },
        },
        ctx(unavailable),
      );
    const first = decline(state, ["ctr_b"]);
    if (first.kind !== "change") throw new Error("refused");
    expect(first.after).toMatchObject({ status: "offered", contractor_id: "ctr_c" });
    expect(first.capacity).toEqual({ take: ["ctr_c"], release: ["ctr_a"] });
    expect(first.offers.settle).toEqual([
      { id: "ofr_1", status: "declined", at: NOW.toISOString(), reason: "busy" },
    ]);
    expect(first.offers.create[0]).toMatchObject({ contractor_id: "ctr_c", attempt: 2 });
    expect(first.event).toBeNull(); // still offered: no status event
    // After MAX_OFFERS offers the cascade ends.
    const offers = Array.from({ length: MAX_OFFERS }, (_, i) =>
      offer({
        id: `ofr_${i}`,
        attempt: i + 1,
        contractor_id: `ctr_${"abc"[i]}`,
        status: i + 1 < MAX_OFFERS ? "declined" : "pending",
      }),
    );
    const last = decline({ order: order("offered", { contractor_id: "ctr_c" }), offers });
    expect(last).toMatchObject({
      kind: "change",
      after: { status: "needs_dispatcher", contractor_id: null },
    });
    if (last.kind === "change") expect(last.capacity).toEqual({ take: [], release: ["ctr_c"] });
  });

  it("settles an offer the order moved past without touching the order's status", () => {
    const state: OrderState = { order: order("cancelled"), offers: [offer()] };
    const change = settleOffer(
      state,
      {
        offerId: "ofr_1",
        outcome: "declined",
        actor: "contractor:ctr_a",
        reason: null,
        decliner: { contractorId: "ctr_a", livemode: true },
      },
      ctx(),
    );
    expect(change).toMatchObject({ kind: "change", patch: {}, after: { status: "cancelled", version: 8 } });
  });

  it("expires an offer only once its deadline has passed", () => {
    const pending = { order: order("offered"), offers: [offer({ deadline_at: "2026-11-23T12:00:01.000Z" })] };
    expect(
      settleOffer(
        pending,
        { offerId: "ofr_1", outcome: "expired", actor: "system:dispatch", reason: null },
        ctx(),
      ).kind,
    ).toBe("refused");
    const due = { order: order("offered"), offers: [offer({ deadline_at: "2026-11-23T12:00:00.000Z" })] };
    expect(
      settleOffer(
        due,
        { offerId: "ofr_1", outcome: "expired", actor: "system:dispatch", reason: null },
        ctx(),
      ).kind,
    ).toBe("change");
  });

  it("cancels with every pending offer withdrawn and the holder's capacity given back", () => {
    const change = cancelOrder(
      stateIn("offered"),
      { role: "caller", reason: "fixed it", actor: "key:k" },
      ctx(),
    );
    if (change.kind !== "change") throw new Error("refused");
    expect(change.offers.settle).toEqual([
      { id: "ofr_1", status: "withdrawn", at: NOW.toISOString(), reason: "order cancelled" },
    ]);
    expect(change.capacity).toEqual({ take: [], release: ["ctr_a"] });
  });

  it("refuses an assignment to a contractor without capacity, or outside the key's pool", () => {
    const run = (standing: typeof STANDING | undefined, unavailable: string[] = []) =>
      assignContractor(
        stateIn("needs_dispatcher"),
        {
          orderId: "ord_1",
          livemode: true,
          contractorId: "ctr_z",
          contractor: standing,
          reason: "r",
          complianceOverride: null,
          actor: "operator:k",
        },
        ctx(unavailable),
      );
    expect(run(STANDING, ["ctr_z"])).toMatchObject({ kind: "refused", code: "contractor_unavailable" });
    expect(run({ ...STANDING, pool: "sandbox" })).toMatchObject({ kind: "refused", code: "not_found" });
    expect(run({ ...STANDING, excluded: true })).toMatchObject({
      kind: "refused",
      code: "contractor_unavailable",
      message: "Contractor ctr_z is excluded.",
    });
    expect(run(STANDING)).toMatchObject({
      kind: "change",
      capacity: { take: ["ctr_z"], release: [] },
      after: { override_count: 1 },
    });
  });

  it("moves a windowed order's window before anyone set off, re-placing its holder's time, strictly", () => {
    const windowed = (status: OrderStatus): OrderState => {
      const s = stateIn(status);
      return {
        ...s,
        order: {
          ...s.order,
          urgency: "scheduled",
          window_start: "2026-11-24T14:00:00.000Z",
          window_end: "2026-11-24T18:00:00.000Z",
          window_source: "requested",
          sla_arrive_at_risk_at: "2026-11-24T17:00:00.000Z",
          sla_arrive_breached_at: null,
        },
      };
    };
    const to = { start: new Date("2026-11-25T14:00:00.000Z"), end: new Date("2026-11-25T18:00:00.000Z") };
    const run = (state: OrderState, window = to, unavailable: string[] = []) =>
      rescheduleOrder(
        state,
        { orderId: "ord_1", livemode: true, window, reason: "tenant away", actor: "operator:k" },
        ctx(unavailable),
      );
    const moved = run(windowed("accepted"));
    expect(moved).toMatchObject({
      kind: "change",
      patch: {
        window_start: "2026-11-25T14:00:00.000Z",
        window_end: "2026-11-25T18:00:00.000Z",
        window_source: "rescheduled",
        sla_arrive_at_risk_at: null,
      },
      capacity: { take: [], release: [], retime: ["ctr_a"] },
      audit: [{ kind: "order.rescheduled", data: { contractor_id: "ctr_a", reason: "tenant away" } }],
      event: { type: "order.rescheduled", details: { previous_status: null } },
      after: { status: "accepted", contractor_id: "ctr_a" },
    });
    // No contractor holds a needs_dispatcher order: only its window moves.
    const waiting = windowed("needs_dispatcher");
    expect(run({ ...waiting, order: { ...waiting.order, contractor_id: null } })).toMatchObject({
      kind: "change",
      capacity: { retime: [] },
    });
    // The holder has no room in the new window.
    expect(run(windowed("offered"), to, ["ctr_a"])).toMatchObject({
      kind: "refused",
      code: "window_unavailable",
      extra: { contractor_id: "ctr_a" },
    });
    for (const status of ["en_route", "on_site", "completed", "invoiced", "cancelled"] as const) {
      expect(run(windowed(status)), status).toMatchObject({ kind: "refused", code: "invalid_transition" });
    }
    const past = { start: new Date("2026-11-22T14:00:00.000Z"), end: new Date("2026-11-22T18:00:00.000Z") };
    expect(run(windowed("accepted"), past)).toMatchObject({
      kind: "refused",
      code: "validation_failed",
      errors: [{ field: "service_window.start", code: "window_in_past" }],
    });
    expect(
      run({ ...windowed("accepted"), order: { ...windowed("accepted").order, urgency: "urgent" } }),
    ).toMatchObject({
      kind: "refused",
      errors: [{ code: "window_not_allowed" }],
    });
  });

  it("assigns at an exact start: 422 on start against the order's window, the writer's conflict as 409", () => {
    const s = stateIn("offered");
    const windowed: OrderState = {
      ...s,
      order: {
        ...s.order,
        urgency: "scheduled",
        window_start: "2026-11-24T14:00:00.000Z",
        window_end: "2026-11-24T18:00:00.000Z",
      },
    };
    const run = (contractorId: string, start: string, c: CommandContext = ctx()) =>
      assignContractor(
        windowed,
        {
          orderId: "ord_1",
          livemode: true,
          contractorId,
          contractor: STANDING,
          reason: "board",
          complianceOverride: null,
          start: new Date(start),
          actor: "operator:k",
        },
        c,
      );
    expect(run("ctr_z", "2026-11-24T15:00:00.000Z")).toMatchObject({
      kind: "change",
      capacity: { take: ["ctr_z"], release: ["ctr_a"] },
      audit: [
        { kind: "order.assigned", data: { to_contractor: "ctr_z", start: "2026-11-24T15:00:00.000Z" } },
      ],
    });
    // The contractor offered the job keeps its unit; its block is placed again at the start.
    expect(run("ctr_a", "2026-11-24T15:00:00.000Z")).toMatchObject({
      kind: "change",
      capacity: { take: ["ctr_a"], release: ["ctr_a"], retime: ["ctr_a"] },
    });
    expect(run("ctr_z", "2026-11-24T18:00:00.000Z")).toMatchObject({
      kind: "refused",
      code: "validation_failed",
      errors: [{ field: "start", code: "start_outside_window" }],
    });
    expect(run("ctr_z", "2026-11-23T11:00:00.000Z")).toMatchObject({
      errors: [{ code: "start_in_past" }, { code: "start_outside_window" }],
    });
    const why = new Map([["ctr_z", { conflict: "time_off" as const, detail: "Contractor ctr_z is off." }]]);
    expect(
      run("ctr_z", "2026-11-24T15:00:00.000Z", { ...ctx(["ctr_z"]), unavailableWhy: why }),
    ).toMatchObject({
      kind: "refused",
      code: "window_unavailable",
      extra: { contractor_id: "ctr_z", conflict: "time_off" },
    });
    // Without a reason (no unit left by count) it is the capacity refusal it always was.
    expect(run("ctr_z", "2026-11-24T15:00:00.000Z", ctx(["ctr_z"]))).toMatchObject({
      code: "contractor_unavailable",
    });
  });

  it("gives a job its contractor could not complete back to it: a unit taken, none to retime or give back", () => {
    const run = (state: OrderState, start?: string) =>
      assignContractor(
        state,
        {
          orderId: "ord_1",
          livemode: true,
          contractorId: "ctr_a",
          contractor: STANDING,
          reason: "back with the part",
          complianceOverride: null,
          ...(start ? { start: new Date(start) } : {}),
          actor: "operator:k",
        },
        ctx(),
      );
    const windowed = (status: OrderStatus): OrderState => {
      const s = stateIn(status);
      return {
        ...s,
        order: {
          ...s.order,
          urgency: "scheduled",
          window_start: "2026-11-24T14:00:00.000Z",
          window_end: "2026-11-24T18:00:00.000Z",
        },
      };
    };
    // The order still names ctr_a, which holds none of its capacity since it could not complete it.
    const failed = windowed("cannot_complete");
    for (const start of [undefined, "2026-11-24T15:00:00.000Z"]) {
      const decision = run(failed, start);
      expect(decision, start).toMatchObject({
        kind: "change",
        after: { status: "accepted", contractor_id: "ctr_a" },
        capacity: { take: ["ctr_a"], release: [] },
      });
      expect(decision.kind === "change" && decision.capacity.retime, start).toBeFalsy();
    }
    // The contractor holding the job is not given it again.
    expect(run(windowed("accepted"))).toMatchObject({ kind: "refused", code: "invalid_transition" });
    expect(run(windowed("en_route"))).toMatchObject({ kind: "refused", code: "invalid_transition" });
  });

  it("reschedules at an exact start: within the same window too, not where the job starts already", () => {
    const s = stateIn("accepted");
    const order = {
      ...s.order,
      urgency: "scheduled" as const,
      window_start: "2026-11-24T14:00:00.000Z",
      window_end: "2026-11-24T18:00:00.000Z",
      window_source: "requested" as const,
      sla_arrive_at_risk_at: "2026-11-24T17:00:00.000Z",
    };
    const same = { start: new Date("2026-11-24T14:00:00.000Z"), end: new Date("2026-11-24T18:00:00.000Z") };
    const run = (state: OrderState, start: string, c: CommandContext = ctx()) =>
      rescheduleOrder(
        state,
        {
          orderId: "ord_1",
          livemode: true,
          window: same,
          reason: "board",
          start: new Date(start),
          currentStart: "2026-11-24T14:00:00.000Z",
          actor: "operator:k",
        },
        c,
      );
    const within = run({ ...s, order }, "2026-11-24T16:00:00.000Z");
    expect(within).toMatchObject({
      kind: "change",
      capacity: { retime: ["ctr_a"] },
      audit: [{ kind: "order.rescheduled", data: { start: "2026-11-24T16:00:00.000Z" } }],
    });
    // The window, its source and its clock stay.
    if (within.kind !== "change") throw new Error("refused");
    expect(within.patch).toEqual({ updated_at: NOW.toISOString() });
    expect(run({ ...s, order }, "2026-11-24T14:00:00.000Z")).toMatchObject({ code: "invalid_transition" });
    const why = new Map([
      ["ctr_a", { conflict: "overlap" as const, orderId: "ord_9", detail: "Contractor ctr_a holds ord_9." }],
    ]);
    expect(
      run({ ...s, order }, "2026-11-24T16:00:00.000Z", { ...ctx(["ctr_a"]), unavailableWhy: why }),
    ).toMatchObject({
      code: "window_unavailable",
      extra: { contractor_id: "ctr_a", conflict: "overlap", order_id: "ord_9" },
    });
    const waiting = { ...s, order: { ...order, status: "needs_dispatcher" as const, contractor_id: null } };
    expect(run(waiting, "2026-11-24T16:00:00.000Z")).toMatchObject({
      code: "validation_failed",
      errors: [{ field: "start", code: "start_without_contractor" }],
    });
  });

  it("refuses a contractor whose insurance or license is not valid today unless the dispatcher overrides, audited", () => {
    const run = (standing: ContractorStanding, override: string | null) =>
      assignContractor(
        stateIn("needs_dispatcher"),
        {
          orderId: "ord_1",
          livemode: true,
          contractorId: "ctr_z",
          contractor: standing,
          reason: "only one nearby",
          complianceOverride: override,
          actor: "operator:k",
        },
        ctx(),
      );
    // NOW is 2026-11-23: a license valid through the 22nd expired on the 23rd; through the 23rd still holds.
    const lapsed = { ...STANDING, licenseVerifiedUntil: "2026-11-22", insuranceVerifiedUntil: null };
    expect(run(lapsed, null)).toMatchObject({
      kind: "refused",
      code: "contractor_not_compliant",
      message: expect.stringContaining(
        "license expired (verified until 2026-11-22, expired since 2026-11-23)",
      ),
      extra: {
        compliance: [
          { document: "insurance", state: "not_verified", verified_until: null },
          { document: "license", state: "expired", verified_until: "2026-11-22" },
        ],
      },
    });
    expect(run({ ...STANDING, licenseVerifiedUntil: "2026-11-23" }, null)).toMatchObject({ kind: "change" });
    const overridden = run(lapsed, "renewal in the mail, customer insists");
    if (overridden.kind !== "change") throw new Error("refused");
    expect(overridden.audit[0]).toMatchObject({
      kind: "order.assigned",
      data: {
        reason: "only one nearby",
        compliance_override: {
          reason: "renewal in the mail, customer insists",
          issues: [{ document: "insurance" }, { document: "license", verified_until: "2026-11-22" }],
        },
      },
    });
    // A compliant contractor's record carries no override, even when one was stated.
    const plain = run(STANDING, "not needed");
    if (plain.kind !== "change") throw new Error("refused");
    expect(plain.audit[0]?.data).not.toHaveProperty("compliance_override");
  });

  it("asks for, decides and invoices within the NTE in force", () => {
    const state = stateIn("completed");
    const asked = requestNte(
      state,
      {
        orderId: "ord_1",
        contractor: { contractorId: "ctr_a", livemode: true },
        cents: 60_000,
        reason: "pipe",
        actor: "contractor:ctr_a",
        requests: [],
      },
      ctx(),
    );
    if (asked.kind !== "change" || !asked.nte.create) throw new Error("refused");
    expect(asked.event?.type).toBe("order.nte_requested");
    const again = requestNte(
      state,
      {
        orderId: "ord_1",
        contractor: { contractorId: "ctr_a", livemode: true },
        cents: 70_000,
        reason: "pipe",
        actor: "contractor:ctr_a",
        requests: [asked.nte.create],
      },
      ctx(),
    );
    expect(again).toMatchObject({ kind: "refused", code: "invalid_transition" });
    const low = requestNte(
      state,
      {
        orderId: "ord_1",
        contractor: { contractorId: "ctr_a", livemode: true },
        cents: 50_000,
        reason: "pipe",
        actor: "contractor:ctr_a",
        requests: [],
      },
      ctx(),
    );
    expect(low).toMatchObject({
      kind: "refused",
      code: "validation_failed",
      errors: [{ field: "requested_nte_cents" }],
    });
    const approved = decideNte(
      state,
      {
        request: asked.nte.create,
        requestId: asked.nte.create.id,
        decision: "approved",
        reason: null,
        actor: "key:k",
      },
      ctx(),
    );
    if (approved.kind !== "change") throw new Error("refused");
    expect(approved.after.nte_approved_cents).toBe(60_000);
    const over = invoiceJob(
      { ...state, order: approved.after },
      {
        orderId: "ord_1",
        contractor: { contractorId: "ctr_a", livemode: true },
        cents: 60_001,
        actor: "contractor:ctr_a",
      },
      ctx(),
    );
    expect(over).toMatchObject({
      kind: "refused",
      code: "nte_exceeded",
      extra: { nte_in_force_cents: 60_000 },
    });
    const within = invoiceJob(
      { ...state, order: approved.after },
      {
        orderId: "ord_1",
        contractor: { contractorId: "ctr_a", livemode: true },
        cents: 60_000,
        actor: "contractor:ctr_a",
      },
      ctx(),
    );
    expect(within).toMatchObject({ kind: "change", after: { status: "invoiced", invoice_cents: 60_000 } });
  });

  it("keeps a contractor to its own offers and jobs", () => {
    expect(
      acceptOffer(
        stateIn("offered"),
        {
          offerId: "ofr_1",
          contractor: { contractorId: "ctr_b", livemode: true },
          actor: "contractor:ctr_b",
        },
        ctx(),
      ),
    ).toMatchObject({ kind: "refused", code: "not_found" });
    expect(
      reportProgress(
        stateIn("accepted"),
        {
          orderId: "ord_1",
          contractor: { contractorId: "ctr_b", livemode: true },
          report: { status: "on_site" },
          actor: "contractor:ctr_b",
        },
        ctx(),
      ),
    ).toMatchObject({ kind: "refused", code: "not_found" });
  });

  it("decides an NTE increase only while the job is active", () => {
    const request = {
      id: "nte_1",
      order_id: "ord_1",
      contractor_id: "ctr_a",
      requested_cents: 60_000,
      reason: "pipe",
      status: "pending" as const,
      created_at: NOW.toISOString(),
      decided_at: null,
      decision_reason: null,
    };
    for (const status of ["invoiced", "cancelled", "cannot_complete"] as const) {
      const decision = decideNte(
        stateIn(status),
        { request, requestId: "nte_1", decision: "approved", reason: null, actor: "key:k" },
        ctx(),
      );
      expect(decision).toMatchObject({ kind: "refused", code: "invalid_transition", currentStatus: status });
    }
  });

  it("keeps a contractor's key to its own mode: a test key never reaches a live offer or job", () => {
    const sandboxKey = { contractorId: "ctr_a", livemode: false };
    expect(
      acceptOffer(
        stateIn("offered"),
        { offerId: "ofr_1", contractor: sandboxKey, actor: "contractor:ctr_a" },
        ctx(),
      ),
    ).toMatchObject({ kind: "refused", code: "not_found" });
    expect(
      invoiceJob(
        stateIn("completed"),
        { orderId: "ord_1", contractor: sandboxKey, cents: 1, actor: "contractor:ctr_a" },
        ctx(),
      ),
    ).toMatchObject({ kind: "refused", code: "not_found" });
  });
});

describe("what the evals read, as the commands record it", () => {
  const create = (candidates: string[], unavailable: string[] = []) =>
    createOrder(
      {
        request: REQUEST,
        candidates: candidates.map((id) => ({
          contractorId: id,
          priceCents: 1,
          etaTier: "same_day",
          score: 1,
        })),
        modelPriceCents: 1,
        matchingTimeMs: 0.02,
        actor: "key:k",
        createdData: {},
        decisionData: {},
        time: { timeZone: "America/Chicago", window: null },
      },
      ctx(unavailable),
    );
  const assign = (state: OrderState, to = "ctr_z") =>
    assignContractor(
      state,
      {
        orderId: "ord_1",
        livemode: true,
        contractorId: to,
        contractor: STANDING,
        reason: "r",
        complianceOverride: null,
        actor: "operator:k",
      },
      ctx(),
    );
  const settle = (state: OrderState, outcome: "declined" | "expired") =>
    settleOffer(
      state,
      { offerId: "ofr_1", outcome, actor: "system:dispatch", reason: null },
      { ...ctx(), now: new Date("2026-11-23T13:00:00.000Z") },
    );

  it("counts a new order's first offer, with its matching time, and none for an order nobody could take", () => {
    expect(create(["ctr_a"]).after).toMatchObject({
      offers_made: 1,
      matching_time_ms: 0.02,
      first_accepted_at: null,
    });
    expect(create(["ctr_a"], ["ctr_a"]).after).toMatchObject({ offers_made: 0, matching_time_ms: 0.02 });
  });

  it("counts each declined and expired offer, and each offer the cascade makes next", () => {
    const declined = settle(stateIn("offered"), "declined");
    expect(declined).toMatchObject({ after: { offers_made: 2, offers_declined: 1, offers_expired: 0 } });
    const expired = settle(stateIn("offered"), "expired");
    expect(expired).toMatchObject({ after: { offers_made: 2, offers_declined: 0, offers_expired: 1 } });
    // The last offer of the cascade: answered, and no next one.
    const last = settleOffer(
      {
        order: order("offered", { contractor_id: "ctr_c", offers_made: 3, offers_declined: 2 }),
        offers: [
          offer({ id: "ofr_1", attempt: 1, status: "declined" }),
          offer({ id: "ofr_2", attempt: 2, contractor_id: "ctr_b", status: "declined" }),
          offer({ id: "ofr_3", attempt: 3, contractor_id: "ctr_c" }),
        ],
      },
      { offerId: "ofr_3", outcome: "declined", actor: "contractor:ctr_c", reason: null },
      ctx(),
    );
    expect(last).toMatchObject({
      after: { status: "needs_dispatcher", offers_made: 3, offers_declined: 3 },
    });
    // An offer the order moved past still counts as answered.
    const late = settleOffer(
      { order: order("cancelled"), offers: [offer()] },
      {
        offerId: "ofr_1",
        outcome: "declined",
        actor: "contractor:ctr_a",
        reason: null,
        decliner: { contractorId: "ctr_a", livemode: true },
      },
      ctx(),
    );
    expect(late).toMatchObject({ after: { status: "cancelled", offers_made: 1, offers_declined: 1 } });
  });

  it("records which attempt was accepted, and the first acceptance", () => {
    const accepted = acceptOffer(
      { order: order("offered", { offers_made: 2 }), offers: [offer({ attempt: 2 })] },
      { offerId: "ofr_1", contractor: { contractorId: "ctr_a", livemode: true }, actor: "contractor:ctr_a" },
      ctx(),
    );
    expect(accepted).toMatchObject({
      after: {
        accepted_offer_attempt: 2,
        accepted_at: NOW.toISOString(),
        first_accepted_at: NOW.toISOString(),
      },
    });
  });

  it("tells a dispatcher's assignments apart by what they answered, and keeps the first acceptance", () => {
    const earlier = "2026-11-23T11:30:00.000Z";
    expect(assign(stateIn("needs_dispatcher"))).toMatchObject({
      after: {
        override_count: 1,
        manual_dispatch_count: 1,
        redispatch_count: 0,
        first_accepted_at: NOW.toISOString(),
      },
    });
    const failed = {
      order: order("cannot_complete", { accepted_at: earlier, first_accepted_at: earlier }),
      offers: [],
    };
    expect(assign(failed)).toMatchObject({
      after: {
        override_count: 1,
        manual_dispatch_count: 0,
        redispatch_count: 1,
        accepted_at: NOW.toISOString(),
        first_accepted_at: earlier,
      },
    });
    // A reassignment, and an assignment over a pending automatic offer: the contractor replaced.
    const held = {
      order: order("accepted", {
        accepted_at: earlier,
        first_accepted_at: earlier,
        override_count: 1,
        manual_dispatch_count: 1,
      }),
      offers: [],
    };
    expect(assign(held)).toMatchObject({
      after: { override_count: 2, manual_dispatch_count: 1, redispatch_count: 0, first_accepted_at: earlier },
    });
    expect(assign(stateIn("offered"))).toMatchObject({
      after: { override_count: 1, manual_dispatch_count: 0, redispatch_count: 0 },
    });
  });
});
