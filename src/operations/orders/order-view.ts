// The order resource as callers see it: one schema and one mapping from the stored row, shared by
// dispatchOrder and dispatchOrderStatus.

import { z } from "zod";
import type { ContractorRefs } from "../../auth/contractor-refs.js";
import { approximatePoint } from "../../domain/geo.js";
import { ORDER_STATUSES, type OrderStatus, TRANSITIONS } from "../../domain/orders/transitions.js";
import type { NteRequestsTable, OrdersTable } from "../../storage/schema.js";
import { currencySchema, etaTierSchema, serviceTimeShape, timeZoneSchema } from "../kernel/schemas.js";
import { type SealRef, sealRefSchema, sealSchema } from "../matching/decision-records.js";

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
export function orderCoordinates(row: Pick<OrdersTable, "zip" | "city" | "state">) {
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
    callback_url: z.string().nullable(),
    estimated_cost_cents: z.number().int(),
    final_cost_cents: z.number().int().nullable().describe("The contractor's final cost, once completed."),
    eta_at: z.iso.datetime().nullable().describe("When the contractor on its way expects to arrive."),
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
  invoiced: "The work is done and invoiced.",
  needs_dispatcher: "No eligible contractor took the job; the order awaits a dispatcher.",
  cancelled: "The order was cancelled.",
  cannot_complete: "The contractor could not complete the job; the order awaits a dispatcher.",
};

const num = (v: number | null | undefined) => (v === null || v === undefined ? null : Number(v));

/** The order's stated time; rows (and event payloads) from before migration 0017 have none. */
export function serviceTimeOf(row: OrdersTable) {
  const windowed = row.window_start && row.window_end;
  return {
    time_zone: row.time_zone ?? null,
    arrival_window: windowed
      ? {
          start: row.window_start as string,
          end: row.window_end as string,
          source: row.window_source === "earliest" ? ("earliest" as const) : ("requested" as const),
        }
      : null,
    respond_by: row.respond_by ?? null,
    arrive_by: row.arrive_by ?? null,
  };
}

/** What an order's view needs of its request: the base of its URLs and the accounts' contractor handles. */
export interface ViewContext {
  baseUrl: string;
  services: { refs: ContractorRefs };
}

export function orderView(
  row: OrdersTable,
  at: ViewContext,
  seals: SealRef[],
  nteRequests: NteRequestsTable[] = [],
): OrderView {
  const status = row.status as OrderStatus;
  return {
    order_id: row.id,
    status,
    status_detail: STATUS_DETAIL[status],
    contractor_ref: row.contractor_id ? at.services.refs.of(row.account_id, row.contractor_id) : null,
    status_url: `${at.baseUrl}/api/dispatch/v1/orders/${row.id}`,
    livemode: row.livemode === 1,
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
    nte_cents: row.nte_cents === null ? null : Number(row.nte_cents),
    reference_id: row.reference_id,
    callback_url: row.callback_url,
    estimated_cost_cents: Number(row.estimated_cost_cents),
    final_cost_cents:
      row.final_cost_cents === null || row.final_cost_cents === undefined
        ? null
        : Number(row.final_cost_cents),
    eta_at: row.eta_at ?? null,
    ...serviceTimeOf(row),
    status_reason: row.status_reason ?? null,
    nte_approved_cents: num(row.nte_approved_cents),
    invoice_cents: num(row.invoice_cents),
    invoiced_at: row.invoiced_at ?? null,
    nte_requests: nteRequests.map((r) => ({
      request_id: r.id,
      requested_cents: Number(r.requested_cents),
      reason: r.reason,
      status: r.status,
      created_at: r.created_at,
      decided_at: r.decided_at,
    })),
    currency: "USD",
    eta_tier: row.eta_tier as OrderView["eta_tier"],
    created_at: row.created_at,
    updated_at: row.updated_at,
    seal: seals[seals.length - 1]?.seal ?? null,
    seals,
  };
}

/** The order without its audit trail and NTE requests: what lists and state changes answer. */
export function orderSummaryView(row: OrdersTable, at: ViewContext) {
  const { seal: _seal, seals: _seals, nte_requests: _nte, ...summary } = orderView(row, at, []);
  return summary;
}
