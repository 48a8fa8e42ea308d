// The order resource as callers see it: one schema and one mapping from the stored row, shared by
// dispatchOrder and dispatchOrderStatus.

import { z } from "zod";
import { contractorRef } from "../domain/contractor.js";
import type { OrdersTable } from "../storage/schema.js";
import { type SealRef, sealRefSchema, sealSchema } from "./audit-decisions.js";
import { currencySchema, etaTierSchema } from "./schemas.js";

export const ORDER_STATUSES = ["assigned", "needs_dispatcher"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const orderSchema = z
  .object({
    order_id: z.string().describe("Order identifier, ord_..."),
    status: z
      .enum(ORDER_STATUSES)
      .describe(
        "assigned: a contractor was matched and holds the job; needs_dispatcher: no eligible contractor " +
          "was available and a dispatcher will assign one.",
      ),
    status_detail: z.string().describe("A sentence explaining the status."),
    contractor_ref: z.string().nullable().describe("Masked contractor handle ctr-<id>, null until assigned."),
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
  assigned: "A contractor from the active pool has been matched to this order.",
  needs_dispatcher: "No eligible contractor was available; the order awaits a dispatcher.",
};

export function orderView(row: OrdersTable, baseUrl: string, seals: SealRef[]): OrderView {
  const status = row.status as OrderStatus;
  return {
    order_id: row.id,
    status,
    status_detail: STATUS_DETAIL[status],
    contractor_ref: row.contractor_id ? contractorRef(row.contractor_id) : null,
    status_url: `${baseUrl}/api/dispatch/v1/orders/${row.id}`,
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
    currency: "USD",
    eta_tier: row.eta_tier as OrderView["eta_tier"],
    created_at: row.created_at,
    updated_at: row.updated_at,
    seal: seals[seals.length - 1]?.seal ?? null,
    seals,
  };
}
