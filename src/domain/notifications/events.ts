// Which changes of an order notify the people at the site, and as what: the one map (issue 35). The order
// writer writes a notification outbox row only for these events (order creation is none of them, so
// placing an order costs nothing more); the templates (templates.ts) are per kind.

import type { OrderEventType } from "../orders/statuses.js";

export const NOTIFICATION_KINDS = [
  "booked",
  "en_route",
  "arrived",
  "completed",
  "rescheduled",
  "cancelled",
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

const KIND_OF_EVENT: Partial<Record<OrderEventType, NotificationKind>> = {
  "order.accepted": "booked",
  "order.en_route": "en_route",
  "order.on_site": "arrived",
  "order.completed": "completed",
  "order.rescheduled": "rescheduled",
  "order.cancelled": "cancelled",
};

/** The notification an order event makes, or null when it makes none. */
export function notificationKindOf(event: string | undefined | null): NotificationKind | null {
  if (!event) return null;
  return KIND_OF_EVENT[event as OrderEventType] ?? null;
}
