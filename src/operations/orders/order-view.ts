// The order resource as callers see it: one schema and one mapping from the domain's order, shared by
// dispatchOrder and dispatchOrderStatus.

import { z } from "zod";
import type { ContractorRefs } from "../../auth/contractor-refs.js";
import { approximatePoint } from "../../domain/geo.js";
import type { NteRequest, Order } from "../../domain/orders/order.js";
import { ORDER_STATUSES, type OrderStatus, TRANSITIONS } from "../../domain/orders/transitions.js";
import { type OrderSiteView, orderSiteSchema } from "../kernel/order-site.js";
import { currencySchema, etaTierSchema, serviceTimeShape, timeZoneSchema } from "../kernel/schemas.js";
import { type SealRef, sealRefSchema, sealSchema } from "../matching/decision-records.js";
import { type CounterView, counterSchema } from "./counter-view.js";
import { hasReport, reportPath } from "./service-report-model.js";

export { ORDER_STATUSES };

/** The order's time promised, as every view of an order shows it (null zone: made before it was kept). */
export const orderServiceTimeShape = serviceTimeShape(
  timeZoneSchema
    .nullable()
    .describe("The job's local time zone (IANA); null for orders made before it was kept."),
);

/** A point on the map: latitude and longitude in degrees (WGS 84). */
export const coordinatesSchema = z.object({
  lat: z.number().min(-90).max(90),
  lon: z.number().min(-180).max(180),
});

/** A position as a phone reports it, with the contractor's check-in and check-out. */
export const reportedPositionSchema = z
  .strictObject({
    lat: z.number().min(-90).max(90).describe("Latitude, degrees (WGS 84)."),
    lon: z.number().min(-180).max(180).describe("Longitude, degrees (WGS 84)."),
    accuracy_m: z
      .number()
      .min(0)
      .max(100_000)
      .nullable()
      .optional()
      .describe("The position's accuracy radius, metres, as the phone reports it."),
  })
  .meta({ id: "ReportedPosition" });

/** A check-in or check-out at the site (domain/orders/site-check.ts). */
const siteCheckSchema = z
  .object({
    at: z.iso.datetime(),
    position: z
      .object({ lat: z.number(), lon: z.number(), accuracy_m: z.number().nullable() })
      .nullable()
      .describe("Where the contractor's phone said it was; null when it gave no position."),
    site_point: z
      .object({ lat: z.number(), lon: z.number(), source: z.enum(["zip", "city"]) })
      .nullable()
      .describe("The point the distance is measured to: the centroid of the order's ZIP, else its city's."),
    distance_miles: z.number().nullable().describe("Miles from the position to the site's point."),
    tolerance_miles: z
      .number()
      .nullable()
      .describe("How far the position may be (beyond its accuracy) before it is flagged."),
    flagged: z
      .boolean()
      .describe("true: further from the site than the order's location and the phone's accuracy explain."),
  })
  .meta({ id: "SiteCheck" });

/** The contractor's check-in and check-out, as every full view of an order shows them. */
export const siteChecksShape = {
  check_in: siteCheckSchema
    .nullable()
    .describe(
      'The contractor\'s "on site": when, where its phone was, how far from the site; flagged if far.',
    ),
  check_out: siteCheckSchema.nullable().describe('The contractor\'s "completed", likewise.'),
};

/** Where an order's list views place it (not its full view: creating an order does no lookup for it). */
export const orderCoordinatesShape = {
  coordinates: coordinatesSchema
    .nullable()
    .describe(
      "Approximate: the centroid of the location's ZIP, else of its city (the mean of the city's ZIP " +
        "centroids), 4 decimals; null when neither is known. To place the order on a map, never to find " +
        "the site (the address says where).",
    ),
};

/** The order's approximate point (memoised lookups of the ZIP and city centroids). */
export function orderCoordinates(row: Pick<Order, "zip" | "city" | "state">) {
  return { coordinates: approximatePoint(row.zip, row.city, row.state) };
}

export const orderSchema = z
  .object({
    order_id: z.string().describe("Order identifier, ord_..."),
    status: z
      .enum(ORDER_STATUSES)
      .describe(
        `The order's status. received -> offered -> accepted -> en_route -> on_site -> completed -> invoiced; ` +
          `also needs_dispatcher, cancelled, cannot_complete. Transitions: ${TRANSITIONS.map((t) => `${t.from.join("|")} -> ${t.to} (${t.action} by ${t.by.join(" or ")}: ${t.meaning})`).join("; ")}.`,
      ),
    status_detail: z.string().describe("A sentence explaining the status."),
    contractor_ref: z
      .string()
      .nullable()
      .describe(
        "Your account's handle of the contractor offered or holding the job (cref-...; the same contractor has another handle for every other account); null when none.",
      ),
    status_url: z.url().describe("Absolute URL of this order's status (GET)."),
    report_url: z
      .url()
      .nullable()
      .describe(
        "Absolute URL of the order's service report (a PDF: GET it with your key) once the work is done " +
          "(completed or invoiced); null before.",
      ),
    livemode: z.boolean().describe("false for sandbox orders made with a test key."),
    trade: z.string(),
    urgency: z.string(),
    location: z.object({
      state: z.string(),
      zip: z.string().nullable(),
      city: z.string().nullable(),
      address: z.string().nullable(),
      name: z.string().nullable(),
    }),
    description: z.string(),
    nte_cents: z.number().int().nullable(),
    reference_id: z.string().nullable(),
    recall_of: z
      .string()
      .nullable()
      .describe(
        "The earlier order of yours this one is a recall of (a callback to the same site for the same trade " +
          "within 30 days of that job's completion), as given when it was created; null for any other order.",
      ),
    callback_url: z.string().nullable(),
    estimated_cost_cents: z.number().int(),
    agreed_price_cents: z
      .number()
      .int()
      .nullable()
      .describe(
        "The price of the contractor's counter-offer you (or your policy) accepted: what its invoice is " +
          "checked against instead of the estimate; null when none was accepted.",
      ),
    counter: counterSchema
      .nullable()
      .optional()
      .describe(
        "The contractor's latest counter-offer on this order (status pending: it waits for your answer, " +
          "dispatch.counter_accept or dispatch.counter_decline, by its deadline_at); null: none. Shown " +
          "when the order is read on its own, not in lists or events (an event about a counter carries " +
          "it as data.counter).",
      ),
    site: orderSiteSchema
      .nullable()
      .optional()
      .describe(
        "The site the order names (site_id) and its assets, each with warranty_in_force, with the site's " +
          "contact; null: it names none. Shown when the order is read on its own, not in lists or events.",
      ),
    final_cost_cents: z.number().int().nullable().describe("The contractor's final cost, once completed."),
    eta_at: z.iso.datetime().nullable().describe("When the contractor on its way expects to arrive."),
    ...siteChecksShape,
    ...orderServiceTimeShape,
    status_reason: z
      .string()
      .nullable()
      .describe(
        "Why the order was cancelled or could not be completed; for scheduled work without a window that " +
          "no contractor can take in any window of the next 14 days, why it waits for a dispatcher.",
      ),
    nte_approved_cents: z
      .number()
      .int()
      .nullable()
      .describe("The NTE raised by your approval of a contractor's request; the NTE in force when set."),
    invoice_cents: z.number().int().nullable(),
    invoiced_at: z.iso.datetime().nullable(),
    nte_requests: z
      .array(
        z.object({
          request_id: z.string(),
          requested_cents: z.number().int(),
          reason: z.string(),
          status: z.enum(["pending", "approved", "rejected"]),
          created_at: z.iso.datetime(),
          decided_at: z.iso.datetime().nullable(),
        }),
      )
      .describe(
        "The contractor's NTE increase requests, oldest first: decide pending ones with dispatchNteDecision.",
      ),
    currency: currencySchema,
    eta_tier: etaTierSchema.nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    seal: sealSchema
      .nullable()
      .describe(
        "Seal of the audit record of the latest decision on this order (at creation, the match). Null only " +
          "for orders created before the audit log existed.",
      ),
    seals: z.array(sealRefSchema).describe("Every audit record of this order, oldest first."),
  })
  .meta({ id: "Order" });

export type OrderView = z.infer<typeof orderSchema>;

const STATUS_DETAIL: Record<OrderStatus, string> = {
  received: "The order was received and is being matched.",
  offered: "The job is offered to the best-ranked available contractor, who has a deadline to accept it.",
  accepted: "A contractor accepted the job.",
  en_route: "The contractor is on the way.",
  on_site: "The contractor is on site.",
  completed: "The work is done.",
  invoiced: "The work is done and invoiced; the invoice waits for the account's approval.",
  revision_requested: "The account sent the invoice back for a revision; the contractor revises it.",
  invoice_rejected: "The account rejected the invoice (with a reason code); the contractor may revise it.",
  approved: "The account approved the invoice; payment comes next.",
  paid: "The account recorded its payment of the invoice.",
  needs_dispatcher: "No eligible contractor took the job; the order awaits a dispatcher.",
  cancelled: "The order was cancelled.",
  cannot_complete: "The contractor could not complete the job; the order awaits a dispatcher.",
};

/** The order's stated time; orders from before migration 0017 have none. */
export function serviceTimeOf(order: Order) {
  const { window_start: start, window_end: end } = order;
  return {
    time_zone: order.time_zone,
    arrival_window: start && end ? { start, end, source: order.window_source ?? "requested" } : null,
    respond_by: order.respond_by,
    arrive_by: order.arrive_by,
  };
}

/** What an order's view needs of its request: the base of its URLs and the accounts' contractor handles. */
export interface ViewContext {
  baseUrl: string;
  services: { refs: ContractorRefs };
}

export function orderView(
  row: Order,
  at: ViewContext,
  seals: SealRef[],
  nteRequests: readonly NteRequest[] = [],
  /** The order's latest counter-offer, when the view reads it (its own read). */
  counter?: CounterView | null,
  /** The site and assets the order names, when the view reads them (its own read). */
  site?: OrderSiteView | null,
): OrderView {
  const { status } = row;
  return {
    order_id: row.id,
    status,
    status_detail: STATUS_DETAIL[status],
    contractor_ref: row.contractor_id ? at.services.refs.of(row.account_id, row.contractor_id) : null,
    status_url: `${at.baseUrl}/api/dispatch/v1/orders/${row.id}`,
    report_url: hasReport(row) ? `${at.baseUrl}${reportPath(row.id)}` : null,
    livemode: row.livemode,
    trade: row.trade,
    urgency: row.urgency,
    location: {
      state: row.state,
      zip: row.zip,
      city: row.city,
      address: row.address,
      name: row.location_name,
    },
    description: row.description,
    nte_cents: row.nte_cents,
    reference_id: row.reference_id,
    recall_of: row.recall_of,
    callback_url: row.callback_url,
    estimated_cost_cents: row.estimated_cost_cents,
    agreed_price_cents: row.agreed_price_cents,
    ...(counter !== undefined ? { counter } : {}),
    ...(site !== undefined ? { site } : {}),
    final_cost_cents: row.final_cost_cents,
    eta_at: row.eta_at,
    check_in: row.check_in,
    check_out: row.check_out,
    ...serviceTimeOf(row),
    status_reason: row.status_reason,
    nte_approved_cents: row.nte_approved_cents,
    invoice_cents: row.invoice_cents,
    invoiced_at: row.invoiced_at,
    nte_requests: nteRequests.map((r) => ({
      request_id: r.id,
      requested_cents: r.requested_cents,
      reason: r.reason,
      status: r.status,
      created_at: r.created_at,
      decided_at: r.decided_at,
    })),
    currency: "USD",
    eta_tier: row.eta_tier,
    created_at: row.created_at,
    updated_at: row.updated_at,
    seal: seals[seals.length - 1]?.seal ?? null,
    seals,
  };
}

/** The order without its audit trail and NTE requests: what lists and state changes answer. */
export function orderSummaryView(row: Order, at: ViewContext) {
  const { seal: _seal, seals: _seals, nte_requests: _nte, ...summary } = orderView(row, at, []);
  return summary;
}
