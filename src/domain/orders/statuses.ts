// The order's statuses and the events its changes report: defined once, here, for the domain, webhooks,
// the event stream and the web console (which bundles this file, so it stays free of imports and of
// anything but these lists).

export const ORDER_STATUSES = [
  "received",
  "offered",
  "accepted",
  "en_route",
  "on_site",
  "completed",
  "invoiced",
  "revision_requested",
  "invoice_rejected",
  "approved",
  "paid",
  "needs_dispatcher",
  "cancelled",
  "cannot_complete",
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The statuses of a job whose work is done (completed), whatever its invoice's fate: invoiced, sent back
 * for a revision or rejected, approved, paid. Figures of finished work count all of them. */
export const WORK_DONE_STATUSES = [
  "completed",
  "invoiced",
  "revision_requested",
  "invoice_rejected",
  "approved",
  "paid",
] as const satisfies readonly OrderStatus[];

/** The events of an order's changes, as webhooks and the event stream report them (webhooks/events.ts
 * describes each): `order.<status>` for a new status (none for `received`, which no change leads to), the
 * NTE ones, and the service-level clocks' (sla-clocks.ts). */
export const ORDER_EVENT_TYPES = [
  ...ORDER_STATUSES.filter((s) => s !== "received").map((s) => `order.${s}` as const),
  "order.nte_requested",
  "order.nte_approved",
  "order.nte_rejected",
  "order.sla_at_risk",
  "order.sla_breached",
  "order.rescheduled",
  "order.invoice_revised",
  "order.countered",
  "order.counter_declined",
  "order.counter_expired",
  "order.maintenance_overdue",
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];
