// Counter-offers (issue 33): the contractor answers its pending offer with a counter (a price, an arrival
// window, or both) before the offer's deadline; the account accepts it (the job is its contractor's at
// that price/window) or declines it (the job goes to the next contractor) before the counter's own
// deadline, or its policy accepts counters within a band at once. Every step sealed and sent as an event
// by the order's commands (domain/orders/counter-commands.ts); the policy sealed here, as proof
// requirements are.

import { z } from "zod";
import { withinApprovalLimit } from "../../domain/key-roles.js";
import {
  AUTO_ACCEPT_MAX_PCT,
  COUNTER_PRICE_MAX_CENTS,
  type CounterPolicy,
  counterDetails,
} from "../../domain/orders/counter-rules.js";
import type { CounterOffer, Order } from "../../domain/orders/order.js";
import { ApiError } from "../../errors.js";
import type { CounterPolicyRow } from "../../storage/store.js";
import { setAccountSetting } from "../kernel/account-settings.js";
import { contractorOf, defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { rfc3339 } from "../kernel/schemas.js";
import { sealRef, sealRefSchema } from "../matching/decision-records.js";
import { acceptCounter, counterOffer, declineCounter } from "./command-runner.js";
import { contractorJobSchema, jobView } from "./contractor-actions.js";
import { counterSchema, latestCounter } from "./counter-view.js";
import { orderSchema, orderSummaryView } from "./order-view.js";

const windowSchema = z
  .strictObject({ start: rfc3339("arrival_window.start"), end: rfc3339("arrival_window.end") })
  .describe(
    "The arrival window you propose instead of the order's (routine and scheduled work only): the rules of " +
      "a caller's service_window (not in the past, within 90 days, at least the trade's typical job length).",
  );

export const contractorCounterOperation = defineOperation({
  id: "contractorCounterOffer",
  name: "contractor.counter_offer",
  summary: "Answer an offer with a counter-offer",
  description:
    "Instead of accepting or declining, asks for another price (price_cents) and/or another arrival window " +
    "(arrival_window, for routine and scheduled work only) before the offer's deadline; after it, 409 " +
    "offer_expired naming the deadline. The job stays yours (your capacity held) until the account " +
    "accepts (you hold the job at that price/window), declines (it goes to the next contractor) or lets " +
    "the counter's own deadline pass (likewise). An account's policy may accept a price within its band " +
    "at once. One counter per offer.",
  access: "contractor",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/offers/counter", input: "body" },
  problems: [404, 409],
  input: z
    .strictObject({
      offer_id: z.string().min(1).max(64).describe("The offer_id from your offers."),
      price_cents: z
        .number()
        .int()
        .min(1)
        .max(COUNTER_PRICE_MAX_CENTS)
        .optional()
        .describe("The price you ask for the job, in cents."),
      arrival_window: windowSchema.optional(),
      note: z.string().max(1000).optional().describe("Why, for the account."),
    })
    .refine((v) => v.price_cents !== undefined || v.arrival_window !== undefined, {
      message: "send price_cents, arrival_window, or both",
      path: ["price_cents"],
    }),
  output: z
    .object({
      counter: counterSchema,
      job: contractorJobSchema
        .nullable()
        .describe("Your job, when the account's policy accepted the counter at once."),
    })
    .meta({ id: "CounterOfferResult" }),
  example: { offer_id: "ofr_0VberZOdAb12Cd34Ef56", price_cents: 32_000, note: "two-storey access" },
  async handler(ctx, input) {
    const contractor = contractorOf(ctx);
    const w = input.arrival_window;
    const done = await counterOffer(ctx.services, {
      offerId: input.offer_id,
      contractor,
      priceCents: input.price_cents ?? null,
      window: w ? { start: new Date(w.start), end: new Date(w.end) } : null,
      note: input.note ?? null,
      actor: `contractor:${contractor.contractorId}`,
    });
    const counter = done.change.counter?.create as CounterOffer;
    const order = done.change.after;
    return {
      counter: counterDetails(counter),
      job: order.status === "accepted" ? jobView(order) : null,
    };
  },
});

const orderIdInput = { order_id: z.string().min(1).max(64) };
const decidedOrder = orderSchema.omit({ seals: true, seal: true, nte_requests: true });

/** The caller's own order (same account and mode), or 404. */
async function ownOrder(ctx: OperationContext, orderId: string): Promise<Order> {
  const principal = principalOf(ctx);
  const order = await ctx.services.store.orders.find(orderId, principal.accountId, principal.livemode);
  if (!order) throw new ApiError("not_found", `No order ${orderId} for this key.`);
  return order;
}

async function withCounter(ctx: OperationContext, order: Order) {
  const counters = await ctx.services.store.counters.ofOrder(order.id);
  return { ...orderSummaryView(order, ctx), counter: latestCounter(counters) };
}

export const counterAcceptOperation = defineOperation({
  id: "dispatchCounterAccept",
  name: "dispatch.counter_accept",
  summary: "Accept a contractor's counter-offer",
  description:
    "Accepts the counter-offer waiting on your order (its `counter`, status pending) before its " +
    "deadline_at: the order becomes accepted by that contractor at the counter's price (agreed_price_cents, " +
    "what the invoice is checked against; a price above the NTE in force raises it to that price) and/or " +
    "window (arrival_window, source countered). 409 invalid_transition when no counter waits, 409 " +
    "offer_expired after its deadline. Takes an approver's key (or an admin's), within its approval " +
    "limit for the counter's price (403 approval_limit_exceeded).",
  access: "key",
  role: "approver",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/orders/counter-accept", input: "body" },
  problems: [404, 409],
  input: z.strictObject(orderIdInput),
  output: decidedOrder.extend({ counter: counterSchema.nullable() }).meta({ id: "OrderAfterCounter" }),
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const order = await ownOrder(ctx, input.order_id);
    const waiting = latestCounter(await ctx.services.store.counters.ofOrder(order.id));
    const price = waiting?.status === "pending" ? waiting.price_cents : null;
    if (price !== null && !withinApprovalLimit(principal.role, principal.approvalLimitCents, price)) {
      throw new ApiError(
        "approval_limit_exceeded",
        `The counter's price (${price} cents) is above this key's approval limit (${principal.approvalLimitCents} cents).`,
        { extra: { approval_limit_cents: principal.approvalLimitCents, price_cents: price } },
      );
    }
    return withCounter(ctx, await acceptCounter(ctx.services, order.id, `key:${principal.keyId}`));
  },
});

export const counterDeclineOperation = defineOperation({
  id: "dispatchCounterDecline",
  name: "dispatch.counter_decline",
  summary: "Decline a contractor's counter-offer",
  description:
    "Declines the counter-offer waiting on your order: the contractor's capacity is given back and the " +
    "job is offered to the next contractor in the ranking (or handed to a dispatcher when none is left), " +
    "as after a decline. 409 invalid_transition when no counter waits, 409 offer_expired after its deadline.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/orders/counter-decline", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    ...orderIdInput,
    reason: z.string().max(1000).optional().describe("Why, for the record (the contractor reads it)."),
  }),
  output: decidedOrder.extend({ counter: counterSchema.nullable() }).meta({ id: "OrderAfterCounterDecline" }),
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", reason: "over our budget" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const order = await ownOrder(ctx, input.order_id);
    const after = await declineCounter(
      ctx.services,
      order.id,
      `key:${principal.keyId}`,
      input.reason ?? null,
    );
    return withCounter(ctx, after);
  },
});

// --- The account's policy ----------------------------------------------------------------------------

const policySchema = z
  .object({
    auto_accept_within_pct: z
      .number()
      .int()
      .nullable()
      .describe(
        "Counters asking at most this many percent above the order's estimate (and never above the NTE in " +
          "force) are accepted at once, by the service (the record's actor system:counter-policy); null: " +
          "none, you answer each. Counters proposing a window always wait for you.",
      ),
    updated_at: z.iso.datetime().nullable().describe("When it was last set; null: never (off)."),
    record: sealRefSchema
      .nullable()
      .describe("The audit record that set it (account.counter_policy_set); null: never set."),
  })
  .meta({ id: "CounterPolicy" });

function policyView(row: CounterPolicyRow | undefined, ctx: OperationContext) {
  return {
    auto_accept_within_pct: row?.auto_accept_within_pct ?? null,
    updated_at: row?.updated_at ?? null,
    record: row ? sealRef(ctx.baseUrl, row.seal, "account.counter_policy_set", row.updated_at) : null,
  };
}

export const counterPolicyOperation = defineOperation({
  id: "counterPolicy",
  name: "dispatch.counter_policy",
  summary: "Your policy on counter-offers",
  description:
    "Which contractors' counter-offers your account accepts at once in this key's mode: those within a " +
    "band above the estimate and under the NTE. Off (null) until you set it.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/counter-policy", input: "query" },
  input: z.strictObject({}),
  output: policySchema,
  example: {},
  async handler(ctx) {
    const principal = principalOf(ctx);
    return policyView(await ctx.services.store.counters.policy(principal.accountId, principal.livemode), ctx);
  },
});

export const counterPolicySetOperation = defineOperation({
  id: "counterPolicySet",
  name: "dispatch.set_counter_policy",
  summary: "Accept counter-offers within a band at once",
  description:
    "Sets auto_accept_within_pct (0 to 100; null turns it off): a counter asking a price at most that " +
    "many percent above the order's estimate, and not above the NTE in force, is accepted as it arrives; " +
    "any other counter waits for you. Applies to counters made from now on. Sealed in the audit log " +
    "(account.counter_policy_set), and each acceptance it makes names it. Takes an admin's key.",
  access: "key",
  role: "admin",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/counter-policy", input: "body" },
  input: z.strictObject({
    auto_accept_within_pct: z.number().int().min(0).max(AUTO_ACCEPT_MAX_PCT).nullable(),
  }),
  output: policySchema,
  example: { auto_accept_within_pct: 10 },
  async handler(ctx, input) {
    const { store } = ctx.services;
    const row = await setAccountSetting<CounterPolicy>(ctx, {
      kind: "account.counter_policy_set",
      read: (account, livemode, tx) => store.counters.policy(account, livemode, tx),
      values: () => ({ auto_accept_within_pct: input.auto_accept_within_pct }),
      write: (next, tx) => store.counters.setPolicy(next, tx),
    });
    return policyView(row, ctx);
  },
});
