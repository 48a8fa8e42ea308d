// The outbox: a webhook event is written in the transaction of the change it reports, so an acknowledged
// change always has its event, and an event never reports a change that did not commit. The dispatcher
// (workers/webhook-dispatcher.ts) delivers it afterwards, at least once.
//
// An event is written only when the change has a recipient then: the order's callback_url, or the
// account's default endpoint (enabled or not). An endpoint set later receives the events of later changes.

import type { Config } from "../config.js";
import type { Order, OrderEvent } from "../domain/orders/order.js";
import { newSortableId } from "../ids.js";
import type { WebhookEventsTable } from "../storage/schema.js";
import type { WebhookEnvelope } from "./events.js";

/** The base of the URLs an event carries (the order's status_url): PUBLIC_BASE_URL, else this host. */
export function webhookBaseUrl(config: Pick<Config, "PUBLIC_BASE_URL" | "PORT">): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, "");
}

/**
 * The outbox row of `event` about `order` (as it is after the change), or null when nobody would receive
 * it. `hasDefaultEndpoint` is asked only for an order without a callback_url; `orderView` builds the
 * order as the event shows it, only for an event that is written.
 */
export async function outboxEvent(
  order: Order,
  event: OrderEvent,
  hasDefaultEndpoint: () => Promise<boolean>,
  orderView: (order: Order) => Record<string, unknown>,
): Promise<WebhookEventsTable | null> {
  if (order.callback_url === null && !(await hasDefaultEndpoint())) return null;
  const id = newSortableId("msg");
  const envelope: WebhookEnvelope = {
    id,
    type: event.type,
    created_at: event.at,
    livemode: order.livemode,
    data: { order: orderView(order), ...event.details },
  };
  return {
    id,
    account_id: order.account_id,
    // The outbox row's column (0/1), as every row of webhook_events.
    livemode: order.livemode ? 1 : 0,
    order_id: order.id,
    type: event.type,
    created_at: event.at,
    callback_url: order.callback_url,
    fanned_out: 0,
    payload: JSON.stringify(envelope),
  };
}
