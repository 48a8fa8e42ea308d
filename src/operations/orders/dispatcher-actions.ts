// The dispatch team's side (dispatcher keys): every account's orders by status, assigning or reassigning
// a contractor by hand (an override, with a reason, counted in the human-override rate), cancelling, and
// the contractor pool's flags. A dispatcher key works in its own mode: live keys on live orders and the
// live pool, test keys on the sandbox.

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import type { Order } from "../../domain/orders/order.js";
import { slaStanding } from "../../domain/orders/sla-clocks.js";
import { ApiError } from "../../errors.js";
import { defineOperation, principalOf, type Services } from "../kernel/operation.js";
import { storedOrderSites } from "../kernel/order-site.js";
import {
  cursorSchema,
  orderPosition,
  orderPositionOf,
  pageLimitSchema,
  pageOf,
} from "../kernel/pagination.js";
import { contractorIdSchema, rfc3339, serviceWindowSchema } from "../kernel/schemas.js";
import { assign, cancelOrder, reschedule } from "./command-runner.js";
import {
  ORDER_STATUSES,
  orderCoordinates,
  orderCoordinatesShape,
  orderSchema,
  orderSummaryView,
  type ViewContext,
} from "./order-view.js";

const CURSOR_KIND = "d1";

const dispatcherOrderSchema = orderSchema
  .omit({ seals: true, seal: true, nte_requests: true })
  .extend({
    account_id: z.string().describe("The caller's account."),
    contractor_id: z
      .string()
      .nullable()
      .describe("The contractor offered or holding the job (contractor_ref is the account's handle of it)."),
    offer_deadline_at: z.iso
      .datetime()
      .nullable()
      .describe("While the order is offered: when the pending offer lapses and the job moves on; else null."),
    account_name: z
      .string()
      .nullable()
      .describe("The account's name; null in the event stream's orders (the lists and answers carry it)."),
    contractor_name: z
      .string()
      .nullable()
      .describe(
        "The name of the contractor offered or holding the job; null when none, and in the event stream's " +
          "orders (the lists and answers carry it).",
      ),
    service_levels: z
      .array(
        z.object({
          clock: z
            .enum(["respond", "arrive"])
            .describe(
              "respond: a contractor committed by respond_by; arrive: on site by arrive_by or the window's end.",
            ),
          started_at: z.iso.datetime(),
          deadline: z.iso.datetime(),
          at_risk_at: z.iso
            .datetime()
            .describe("When the clock is at risk by time alone (80 % of its time)."),
          done_at: z.iso.datetime().nullable().describe("When its step was done; null while it is not."),
          standing: z
            .enum(["on_track", "at_risk", "breached", "met"])
            .describe(
              "At the answer's time: met (done in time), on_track, at_risk (time used, or the reported ETA " +
                "after the deadline) or breached.",
            ),
        }),
      )
      .describe("The order's service-level clocks (none once closed, or without a stated promise)."),
    booked: z
      .object({
        start: z.iso.datetime().describe("On site from, as the job was placed."),
        end: z.iso.datetime().describe("Until (the trade's typical job length later)."),
      })
      .nullable()
      .describe(
        "The block of its contractor's time the job holds (offered, accepted, en route, on site): the " +
          "capacity ledger's, where the Schedule draws it, inside the arrival window or from when the " +
          "contractor can be there; null when it holds none (no contractor, closed, or placed without a " +
          "time). Not in the event stream's orders (read the order).",
      ),
    ...orderCoordinatesShape,
  })
  .meta({ id: "DispatcherOrder" });

type Booked = { start: string; end: string };

/** The names a dispatcher order shows, read for a page of orders at once. */
export interface OrderNames {
  accounts: ReadonlyMap<string, string>;
  contractors: ReadonlyMap<string, string>;
}

const NO_NAMES: OrderNames = { accounts: new Map(), contractors: new Map() };

/** The account and contractor names of these orders, two queries for the lot. */
export async function orderNames(
  services: Services,
  rows: ReadonlyArray<Pick<Order, "account_id" | "contractor_id">>,
): Promise<OrderNames> {
  const contractorIds = [...new Set(rows.flatMap((r) => (r.contractor_id ? [r.contractor_id] : [])))];
  const [accounts, listings] = await Promise.all([
    services.store.keys.accountNames(rows.map((r) => r.account_id)),
    contractorIds.length > 0 ? services.store.contractors.listings(contractorIds) : [],
  ]);
  return { accounts, contractors: new Map(listings.map((c) => [c.id, c.name])) };
}

/** The block each of these orders holds of its contractor's time (the one offered or holding the job), by
 * order id, one query for the lot. */
async function bookedSlots(
  services: Services,
  rows: ReadonlyArray<Pick<Order, "id" | "contractor_id">>,
): Promise<Map<string, Booked>> {
  const holder = new Map(rows.flatMap((r) => (r.contractor_id ? [[r.id, r.contractor_id] as const] : [])));
  const out = new Map<string, Booked>();
  for (const held of await services.store.orders.heldTimes([...holder.keys()])) {
    if (holder.get(held.orderId) === held.contractorId) {
      out.set(held.orderId, { start: held.start, end: held.end });
    }
  }
  return out;
}

/** An order as the dispatch team sees it at `now`; `offerDeadline`: its pending offer's, while it is
 * offered; `names`: its account's and contractor's (none in the event stream). */
export function dispatcherOrderView(
  row: Order,
  at: ViewContext,
  now: Date,
  offerDeadline: string | null = null,
  names: OrderNames = NO_NAMES,
) {
  const view = orderSummaryView(row, at);
  return {
    ...view,
    account_id: row.account_id,
    contractor_id: row.contractor_id,
    offer_deadline_at: row.status === "offered" ? offerDeadline : null,
    account_name: names.accounts.get(row.account_id) ?? null,
    contractor_name: row.contractor_id ? (names.contractors.get(row.contractor_id) ?? null) : null,
    service_levels: slaStanding(row, now).map((c) => ({
      clock: c.clock,
      started_at: c.startedAt.toISOString(),
      deadline: c.deadline.toISOString(),
      at_risk_at: c.atRiskAt.toISOString(),
      done_at: c.doneAt?.toISOString() ?? null,
      standing: c.standing,
    })),
    ...orderCoordinates(row),
  };
}

/** The view of one order with its names and its booked time (an action's answer). */
async function namedView(ctx: { services: Services } & ViewContext, row: Order) {
  const [names, booked] = await Promise.all([
    orderNames(ctx.services, [row]),
    bookedSlots(ctx.services, [row]),
  ]);
  return {
    ...dispatcherOrderView(row, ctx, ctx.services.now(), null, names),
    booked: booked.get(row.id) ?? null,
  };
}

/** Orders as dispatcher.orders lists them (and dispatcher.order reads one): each with its names, its
 * pending offer's deadline while offered, its booked time and its site, read for the lot at once. */
async function listedViews(ctx: { services: Services } & ViewContext, rows: Order[]) {
  const { store } = ctx.services;
  const offered = rows.filter((row) => row.status === "offered").map((row) => row.id);
  const now = ctx.services.now();
  const [pending, names, booked, sites] = await Promise.all([
    store.orders.pendingOffersOf(offered),
    orderNames(ctx.services, rows),
    bookedSlots(ctx.services, rows),
    // The site and assets each order names (the site's contact is the account's and its contractor's).
    storedOrderSites(
      store,
      rows.map((row) => row.id),
      now,
      false,
    ),
  ]);
  const deadlines = new Map(pending.map((o) => [o.order_id, o.deadline_at]));
  return rows.map((row) => ({
    ...dispatcherOrderView(row, ctx, now, deadlines.get(row.id) ?? null, names),
    booked: booked.get(row.id) ?? null,
    site: sites.get(row.id) ?? null,
  }));
}

const reasonSchema = z.string().min(1).max(1000).describe("Why: recorded in the audit log with the change.");

/** An exact start for the contractor's job (the schedule board's drop on a lane at a time). */
const startSchema = (rule: string) =>
  rfc3339("start")
    .optional()
    .describe(
      "When the contractor's job begins (arrival on site), RFC 3339 with a UTC offset: the job's block " +
        "of its time is placed exactly there, for the trade's typical job length, or the request is " +
        `refused. ${rule} Absent: the job is placed as the operation describes.`,
    );

const START_REFUSALS =
  "409 window_unavailable (with contractor_id and conflict: outside_hours, time_off, or overlap with " +
  "order_id, the job it would overlap counting the drive between the two) when the contractor has no " +
  "room at that start; ";

export const dispatcherOrdersOperation = defineOperation({
  id: "dispatcherOrders",
  name: "dispatcher.orders",
  summary: "List every account's orders",
  description:
    "Orders of every account in the key's mode, newest first, filtered by status (needs_dispatcher for the " +
    "queue a human must take). Page with next_cursor.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/orders", input: "query" },
  input: z.strictObject({
    status: z
      .enum(ORDER_STATUSES, { error: () => `status must be one of: ${ORDER_STATUSES.join(", ")}` })
      .optional(),
    cursor: cursorSchema,
    limit: pageLimitSchema,
  }),
  output: z
    .object({ orders: z.array(dispatcherOrderSchema), next_cursor: z.string().nullable() })
    .meta({ id: "DispatcherOrderPage" }),
  example: { status: "needs_dispatcher", limit: 50 },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const rows = await ctx.services.store.orders.list({
      livemode: principal.livemode,
      status: input.status,
      before: orderPosition(input.cursor, CURSOR_KIND),
      limit: input.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, orderPositionOf);
    return { orders: await listedViews(ctx, page), next_cursor };
  },
});

export const dispatcherOrderOperation = defineOperation({
  id: "dispatcherOrder",
  name: "dispatcher.order",
  summary: "Read one order of any account",
  description:
    "One order of any account in the key's mode, as dispatcher.orders lists it (its names, service-level " +
    "clocks, the pending offer's deadline, its booked time and its site): what the board's detail reads " +
    "when the order changes. 404 for an order of the other mode.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/orders/:order_id", input: "params" },
  problems: [404],
  input: z.strictObject({ order_id: z.string().min(1).max(64) }),
  output: dispatcherOrderSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { store } = ctx.services;
    const row = await store.orders.byId(input.order_id);
    if (!row || row.livemode !== principal.livemode) {
      throw new ApiError("not_found", `No order ${input.order_id}.`);
    }
    const [view] = await listedViews(ctx, [row]);
    return view as NonNullable<typeof view>;
  },
});

export const dispatcherAssignOperation = defineOperation({
  id: "dispatcherAssign",
  name: "dispatcher.assign",
  summary: "Assign or reassign a contractor by hand",
  description:
    "Gives the job to a contractor of the pool (an override, counted in the human-override rate): from " +
    "offered, needs_dispatcher or cannot_complete, or away from the contractor holding it (accepted, " +
    "en_route). The order becomes accepted. Its job takes the contractor's time where it fits (inside " +
    "the window, or as soon as it can be there), else at the window's start: a person's decision stands. " +
    "With start (the schedule board), the job is placed exactly there instead, strictly: 422 on start " +
    "(start_in_past, start_outside_window: not inside the order's arrival window [start, end), " +
    "start_after_arrive_by, start_not_schedulable: the order states no time) or " +
    START_REFUSALS +
    "the order.assigned audit record carries the start. 409 contractor_unavailable when the contractor " +
    "is inactive, excluded or at capacity; 409 contractor_not_compliant when its insurance or license is expired or not " +
    "verified on the day (the problem's `compliance` lists each document and its date), unless " +
    "compliance_override_reason says why it gets the job anyway (audited with the assignment); 409 " +
    "invalid_transition otherwise.",
  access: "dispatcher",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatcher/v1/orders/assign", input: "body" },
  problems: [404, 409, 422],
  input: z.strictObject({
    order_id: z.string().min(1).max(64),
    contractor_id: contractorIdSchema,
    reason: reasonSchema,
    start: startSchema(
      "Not in the past; inside the order's arrival window (from its start, before its end), or, for " +
        "as-soon-as-possible work, at or before arrive_by.",
    ),
    compliance_override_reason: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        "Only to assign a contractor whose insurance or license is expired or not verified: why it gets " +
          "the job anyway. Recorded in the order.assigned audit record with the documents at fault; " +
          "without it such an assignment answers 409 contractor_not_compliant.",
      ),
  }),
  output: dispatcherOrderSchema,
  example: {
    order_id: "ord_0VberZOdAb12Cd34Ef56",
    contractor_id: "ctr_2f6a9c1d7e3b",
    reason: "customer asked for them",
  },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const order = await assign(
      ctx.services,
      input.order_id,
      principal.livemode,
      input.contractor_id,
      input.reason,
      `operator:${principal.keyId}`,
      input.compliance_override_reason ?? null,
      input.start === undefined ? undefined : new Date(input.start),
    );
    return namedView(ctx, order);
  },
});

export const dispatcherRescheduleOperation = defineOperation({
  id: "dispatcherReschedule",
  name: "dispatcher.reschedule",
  summary: "Move an order's arrival window",
  description:
    "Moves the arrival window of a routine or scheduled order that is not under way yet (offered, " +
    "accepted, needs_dispatcher or cannot_complete). The new service_window meets the rules an order's " +
    "does (422 on the field: in the past, more than 90 days ahead, shorter than the trade's typical job, " +
    "or an emergency or urgent order, which is as soon as possible). The contractor holding or offered the " +
    "job keeps it, its time placed again inside the new window: 409 window_unavailable (naming the " +
    "contractor) when it has no room there (working hours, time off, its other jobs); assign another " +
    "contractor first. With start (the schedule board), its job is placed exactly there instead, " +
    "strictly: 422 on start (start_without_contractor when no contractor holds or is offered the job, " +
    "start_in_past, start_outside_window: not inside the new window) or " +
    START_REFUSALS +
    "the window may then be the one the order has, to move the job within it. The order's " +
    "arrival_window then has source rescheduled; the order.rescheduled event and audit record carry the " +
    "previous window and the reason (the audit record the start too). 409 invalid_transition when the " +
    "order is under way or closed, or the window is the one it has (and start is absent, or where the " +
    "job starts already).",
  access: "dispatcher",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatcher/v1/orders/reschedule", input: "body" },
  problems: [404, 409, 422],
  input: z.strictObject({
    order_id: z.string().min(1).max(64),
    service_window: serviceWindowSchema.describe(
      "The new arrival window (RFC 3339 with a UTC offset), under the rules of an order's service_window.",
    ),
    reason: reasonSchema,
    start: startSchema("Not in the past, inside the new service_window (from its start, before its end)."),
  }),
  output: dispatcherOrderSchema,
  example: {
    order_id: "ord_0VberZOdAb12Cd34Ef56",
    service_window: { start: "2026-11-24T13:00:00-05:00", end: "2026-11-24T17:00:00-05:00" },
    reason: "the tenant is out in the morning",
  },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const order = await reschedule(
      ctx.services,
      input.order_id,
      principal.livemode,
      { start: new Date(input.service_window.start), end: new Date(input.service_window.end) },
      input.reason,
      `operator:${principal.keyId}`,
      input.start === undefined ? undefined : new Date(input.start),
    );
    return namedView(ctx, order);
  },
});

export const dispatcherCancelOperation = defineOperation({
  id: "dispatcherCancel",
  name: "dispatcher.cancel",
  summary: "Cancel an order",
  description: "Cancels any account's order in the key's mode, even on site, with a reason.",
  access: "dispatcher",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatcher/v1/orders/cancel", input: "body" },
  problems: [404, 409],
  input: z.strictObject({ order_id: z.string().min(1).max(64), reason: reasonSchema }),
  output: dispatcherOrderSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", reason: "duplicate of another order" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const [order] = await ctx.services.store.orders.byIds([input.order_id]);
    if (!order || order.livemode !== principal.livemode) {
      throw new ApiError("not_found", `No order ${input.order_id}.`);
    }
    const cancelled = await cancelOrder(
      ctx.services,
      order.id,
      input.reason,
      "dispatcher",
      `operator:${principal.keyId}`,
    );
    return namedView(ctx, cancelled);
  },
});

const POOL_ACTIONS = {
  activate: { active: true },
  deactivate: { active: false },
  exclude: { excluded: true },
  include: { excluded: false },
} as const;

export const dispatcherPoolOperation = defineOperation({
  id: "dispatcherPool",
  name: "dispatcher.pool",
  summary: "Activate, deactivate or exclude a contractor",
  description:
    "Changes a contractor's standing in the pool of the key's mode: deactivate (temporarily off), activate, " +
    "exclude (never matched, e.g. after a complaint) or include. Matching in every process follows within " +
    "the pool refresh interval. Jobs already held are not affected.",
  access: "dispatcher",
  effect: "destructive",
  // Activating an active contractor (or excluding an excluded one) leaves its standing as it was.
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatcher/v1/contractors/status", input: "body" },
  problems: [404],
  input: z.strictObject({
    contractor_id: contractorIdSchema,
    action: z.enum(["activate", "deactivate", "exclude", "include"]),
    reason: reasonSchema,
  }),
  output: z
    .object({ contractor_id: z.string(), active: z.boolean(), excluded: z.boolean() })
    .meta({ id: "ContractorStanding" }),
  example: { contractor_id: "ctr_2f6a9c1d7e3b", action: "exclude", reason: "no-show twice" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { store, pool } = ctx.services;
    const state = await store.contractors.standing(input.contractor_id);
    if (!state || state.pool !== (principal.livemode ? "live" : "sandbox")) {
      throw new ApiError("not_found", `No contractor ${input.contractor_id} in this pool.`);
    }
    const flags = POOL_ACTIONS[input.action];
    const at = ctx.services.now().toISOString();
    await store.contractors.setFlags(
      input.contractor_id,
      flags,
      sealRecord({
        kind: "pool.changed",
        at,
        accountId: null,
        livemode: principal.livemode,
        actor: `operator:${principal.keyId}`,
        data: { action: input.action, contractor_id: input.contractor_id, reason: input.reason },
      }),
    );
    await pool.refresh(); // this process matches by the new standing at once
    const after = await store.contractors.standing(input.contractor_id);
    return {
      contractor_id: input.contractor_id,
      active: Boolean(after?.active),
      excluded: Boolean(after?.excluded),
    };
  },
});
