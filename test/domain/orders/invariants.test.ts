// Property test: random sequences of commands from the three roles (caller, contractor, dispatcher), the
// service (offers expiring) and the clock, applied to a pool of orders the way the writer applies them
// (capacity taken only while a contractor has some left, else the command is decided again without it),
// never break the order's invariants:
// - the capacity each contractor holds equals its pending offers plus the jobs it holds, never above its
//   maximum;
// - an order has at most one pending offer, and has one exactly while it is offered, to its holder;
// - a change that moves the status carries one event, for the new status, and at least one audit record;
//   a change that does not move it carries no status event (but a reassignment's order.accepted);
// - what the evals read off the order agrees with its offers and its audit trail: offers made, declined,
//   expired and the attempt accepted; the first acceptance; assignments by the status they were made
//   from (needs_dispatcher: a dispatch automation could not make; cannot_complete: a re-dispatch).

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  acceptOffer,
  assignContractor,
  type CommandContext,
  cancelOrder,
  createOrder,
  decideNte,
  invoiceJob,
  type ProgressReport,
  reportProgress,
  requestNte,
  settleOffer,
} from "../../../src/domain/orders/commands.js";
import type {
  AuditFact,
  Decision,
  NteRequest,
  Offer,
  Order,
  OrderChange,
} from "../../../src/domain/orders/order.js";
import { holdsContractor } from "../../../src/domain/orders/transitions.js";
import { orderRequestFixture } from "../../helpers/order-fixture.js";
import { type OrderStep, orderStep } from "../../helpers/order-steps.js";

const CONTRACTORS = ["ctr_a", "ctr_b", "ctr_c", "ctr_d"];
const CAPACITY = 2;

/** The store, in memory, committing changes as storage/order-writer.ts does. */
class World {
  now = new Date("2026-11-23T12:00:00.000Z");
  orders: Order[] = [];
  offers: Offer[] = [];
  nte: NteRequest[] = [];
  held = new Map<string, number>(CONTRACTORS.map((c) => [c, 0]));
  /** Every order's audit facts, in the order they were committed. */
  facts = new Map<string, AuditFact[]>();
  private seq = 0;

  /** Decides and commits like the operations' runner: a contractor without capacity is decided without. */
  run(decide: (ctx: CommandContext) => Decision): Decision {
    const unavailable = new Set<string>();
    const ctx: CommandContext = {
      now: this.now,
      unavailable,
      sandboxPlayed: false,
      newId: (prefix) => `${prefix}_${++this.seq}`,
    };
    for (;;) {
      const decision = decide(ctx);
      if (decision.kind === "refused") return decision;
      const full = decision.capacity.take.find((c) => (this.held.get(c) ?? 0) >= CAPACITY);
      if (full !== undefined) {
        unavailable.add(full);
        continue;
      }
      this.apply(decision);
      return decision;
    }
  }

  private apply(change: OrderChange): void {
    checkChange(change);
    for (const c of change.capacity.take) this.held.set(c, (this.held.get(c) ?? 0) + 1);
    for (const c of change.capacity.release) this.held.set(c, (this.held.get(c) ?? 0) - 1);
    const at = this.orders.findIndex((o) => o.id === change.after.id);
    if (at === -1) this.orders.push(change.after);
    else this.orders[at] = change.after;
    for (const s of change.offers.settle) {
      const o = this.offers.find((x) => x.id === s.id);
      if (o?.status !== "pending") throw new Error(`settled a non-pending offer ${s.id}`);
      Object.assign(o, { status: s.status, responded_at: s.at, reason: s.reason });
    }
    this.offers.push(...change.offers.create.map((o) => ({ ...o })));
    this.facts.set(change.after.id, [...(this.facts.get(change.after.id) ?? []), ...change.audit]);
    if (change.nte.create) this.nte.push({ ...change.nte.create });
    const d = change.nte.decide;
    if (d) Object.assign(this.nte.find((r) => r.id === d.id) ?? {}, { status: d.status, decided_at: d.at });
  }

  state(order: Order) {
    return { order, offers: this.offers.filter((o) => o.order_id === order.id) };
  }
}

/** The time promised at creation (migration 0017's columns): no later command moves it. */
const PROMISE = [
  "time_zone",
  "window_start",
  "window_end",
  "window_source",
  "respond_by",
  "arrive_by",
] as const;

function checkChange(change: OrderChange): void {
  expect(change.audit.length).toBeGreaterThan(0);
  const promise = (o: Order) => PROMISE.map((k) => o[k]);
  if (change.before) expect(promise(change.after)).toEqual(promise(change.before));
  else {
    // A new order states its promise: as-soon-as-possible work its clocks, windowed work its window.
    expect(change.after.time_zone).not.toBeNull();
    expect(change.after.respond_by === null).toBe(change.after.window_start !== null);
  }
  const from = change.before?.status ?? "received";
  if (change.after.status !== from) {
    expect(change.event?.type).toBe(`order.${change.after.status}`);
  } else if (change.event && change.audit.some((a) => a.kind === "order.assigned")) {
    expect(change.event.type).toBe("order.accepted"); // a reassignment: accepted again, by another
  } else if (change.event) {
    expect(change.event.type).toMatch(/^order\.nte_/);
  }
}

function checkInvariants(w: World): void {
  for (const c of CONTRACTORS) {
    const offers = w.offers.filter((o) => o.contractor_id === c && o.status === "pending").length;
    const jobs = w.orders.filter(
      (o) => o.contractor_id === c && o.status !== "offered" && holdsContractor(o.status),
    ).length;
    expect(w.held.get(c), `capacity held by ${c}`).toBe(offers + jobs);
    expect(w.held.get(c)).toBeLessThanOrEqual(CAPACITY);
  }
  for (const order of w.orders) {
    const offers = w.offers.filter((o) => o.order_id === order.id);
    const count = (status: string) => offers.filter((o) => o.status === status).length;
    expect(order.offers_made, `offers of ${order.id}`).toBe(offers.length);
    expect(order.offers_declined).toBe(count("declined"));
    expect(order.offers_expired).toBe(count("expired"));
    expect(order.accepted_offer_attempt).toBe(offers.find((o) => o.status === "accepted")?.attempt ?? null);
    const facts = w.facts.get(order.id) ?? [];
    const assigned = facts.filter((f) => f.kind === "order.assigned");
    const from = (status: string) => assigned.filter((f) => f.data.from_status === status).length;
    expect(order.override_count ?? 0).toBe(assigned.length);
    expect(order.manual_dispatch_count).toBe(from("needs_dispatcher"));
    expect(order.redispatch_count).toBe(from("cannot_complete"));
    const acceptances = facts.filter((f) => f.kind === "order.accepted" || f.kind === "order.assigned");
    expect(order.first_accepted_at, `first acceptance of ${order.id}`).toBe(acceptances[0]?.at ?? null);
    expect(order.accepted_at).toBe(acceptances.at(-1)?.at ?? null);
    const pending = w.offers.filter((o) => o.order_id === order.id && o.status === "pending");
    expect(pending.length, `pending offers of ${order.id}`).toBeLessThanOrEqual(1);
    if (order.status === "offered") expect(pending[0]?.contractor_id).toBe(order.contractor_id);
    else expect(pending).toHaveLength(0);
  }
}

function play(w: World, s: OrderStep): void {
  const order = w.orders.length > 0 && "pick" in s ? w.orders[s.pick % w.orders.length] : undefined;
  const pendingOf = (o: Order) => w.offers.find((x) => x.order_id === o.id && x.status === "pending");
  switch (s.kind) {
    case "create": {
      const n = w.orders.length + 1;
      const ranking = s.ranking.map((i) => CONTRACTORS[i] as string);
      w.run((ctx) =>
        createOrder(
          {
            request: orderRequestFixture({
              id: `ord_${n}`,
              account_id: "acct_1",
              livemode: true,
              urgency: "routine",
              nte_cents: 50_000,
              callback_url: null,
              received_at: w.now.toISOString(),
              created_at: w.now.toISOString(),
            }),
            candidates: ranking.map((id) => ({
              contractorId: id,
              priceCents: 1,
              etaTier: "same_day",
              score: 1,
            })),
            modelPriceCents: 1,
            matchingTimeMs: 0,
            actor: "key:k",
            createdData: {},
            decisionData: {},
            time: { timeZone: "America/Chicago", window: null },
          },
          ctx,
        ),
      );
      return;
    }
    case "clock":
      w.now = new Date(w.now.getTime() + s.minutes * 60_000);
      return;
  }
  if (!order) return;
  const contractor = order.contractor_id ?? "ctr_a";
  const offer = pendingOf(order);
  switch (s.kind) {
    case "accept":
      if (offer)
        w.run((ctx) =>
          acceptOffer(
            w.state(order),
            {
              offerId: offer.id,
              contractor: { contractorId: offer.contractor_id, livemode: true },
              actor: "contractor:x",
            },
            ctx,
          ),
        );
      return;
    case "decline":
    case "expire":
      if (offer)
        w.run((ctx) =>
          settleOffer(
            w.state(order),
            {
              offerId: offer.id,
              outcome: s.kind === "decline" ? "declined" : "expired",
              actor: "contractor:x",
              reason: null,
              ...(s.kind === "decline"
                ? { decliner: { contractorId: offer.contractor_id, livemode: true } }
                : {}),
            },
            ctx,
          ),
        );
      return;
    case "report": {
      const report: ProgressReport =
        s.to === "en_route"
          ? { status: "en_route", eta_minutes: 30 }
          : s.to === "completed"
            ? { status: "completed", final_cost_cents: 40_000 }
            : s.to === "cannot_complete"
              ? { status: "cannot_complete", reason: "no parts" }
              : { status: "on_site" };
      w.run((ctx) =>
        reportProgress(
          w.state(order),
          {
            orderId: order.id,
            contractor: { contractorId: contractor, livemode: true },
            report,
            actor: "contractor:x",
          },
          ctx,
        ),
      );
      return;
    }
    case "cancel":
      w.run((ctx) => cancelOrder(w.state(order), { role: s.by, reason: null, actor: "key:k" }, ctx));
      return;
    case "assign":
      w.run((ctx) =>
        assignContractor(
          w.state(order),
          {
            orderId: order.id,
            livemode: true,
            contractorId: CONTRACTORS[s.to] as string,
            contractor: {
              pool: "live",
              active: true,
              excluded: false,
              insuranceVerifiedUntil: "2099-12-31",
              licenseVerifiedUntil: "2099-12-31",
            },
            reason: "r",
            complianceOverride: null,
            actor: "operator:k",
          },
          ctx,
        ),
      );
      return;
    case "nte":
      w.run((ctx) =>
        requestNte(
          w.state(order),
          {
            orderId: order.id,
            contractor: { contractorId: contractor, livemode: true },
            cents: s.cents,
            reason: "more",
            actor: "contractor:x",
            requests: w.nte.filter((r) => r.order_id === order.id),
          },
          ctx,
        ),
      );
      return;
    case "decide": {
      const request = w.nte.find((r) => r.order_id === order.id && r.status === "pending");
      if (request)
        w.run((ctx) =>
          decideNte(
            w.state(order),
            {
              request,
              requestId: request.id,
              decision: s.approve ? "approved" : "rejected",
              reason: null,
              actor: "key:k",
            },
            ctx,
          ),
        );
      return;
    }
    case "invoice":
      w.run((ctx) =>
        invoiceJob(
          w.state(order),
          {
            orderId: order.id,
            contractor: { contractorId: contractor, livemode: true },
            cents: s.cents,
            actor: "contractor:x",
          },
          ctx,
        ),
      );
      return;
  }
}

/** Orders 0-4, each driven down one path: declined then expired, accepted, re-dispatched after
 * cannot_complete, assigned from needs_dispatcher, reassigned while offered and after acceptance. */
const REACHES_EVERY_PATH: OrderStep[] = [
  { kind: "create", ranking: [0, 1, 2], callback: false },
  { kind: "decline", pick: 0 },
  { kind: "clock", minutes: 90 },
  { kind: "expire", pick: 0 },
  { kind: "create", ranking: [1], callback: false },
  { kind: "accept", pick: 1 },
  { kind: "report", pick: 1, to: "en_route" },
  { kind: "report", pick: 1, to: "on_site" },
  { kind: "report", pick: 1, to: "cannot_complete" },
  { kind: "assign", pick: 1, to: 2 },
  { kind: "create", ranking: [], callback: false },
  { kind: "assign", pick: 2, to: 3 },
  { kind: "create", ranking: [3], callback: false },
  { kind: "assign", pick: 3, to: 0 },
  { kind: "create", ranking: [0], callback: false },
  { kind: "accept", pick: 4 },
  { kind: "assign", pick: 4, to: 1 },
];

describe("the order's invariants under random commands", () => {
  it("hold after every command, for any sequence", () => {
    // How often the runs reached the paths the evals' columns record, so that a generator too weak to
    // reach one fails here instead of passing by never trying it.
    const reached = new Map<string, number>();
    fc.assert(
      fc.property(fc.array(orderStep, { minLength: 1, maxLength: 120, size: "max" }), (steps) => {
        const w = new World();
        for (const s of steps) {
          play(w, s);
          checkInvariants(w);
        }
        for (const facts of w.facts.values()) {
          for (const f of facts) {
            const what = f.kind === "order.assigned" ? `assigned from ${f.data.from_status}` : f.kind;
            reached.set(what, (reached.get(what) ?? 0) + 1);
          }
        }
      }),
      {
        numRuns: 100,
        // One hand-written sequence reaching every path below runs first, so the invariants are checked on
        // each path in every run and the coverage check below does not depend on the random draw (100
        // draws missed "assigned from cannot_complete" once in CI). The check still fails if a change
        // to the commands stops that sequence reaching a path.
        examples: [[REACHES_EVERY_PATH]],
      },
    );
    for (const path of [
      "order.offer_declined",
      "order.offer_expired",
      "order.accepted",
      "assigned from needs_dispatcher",
      "assigned from cannot_complete",
      "assigned from offered",
      "assigned from accepted",
    ]) {
      expect(reached.get(path) ?? 0, path).toBeGreaterThan(0);
    }
  }, 120_000);
});
