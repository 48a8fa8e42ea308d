// The outbox: a webhook event is written in the transaction of the change it reports, so an acknowledged
// change always has its event, and an event never reports a change that did not commit. The dispatcher
// (services/webhooks.ts) delivers it afterwards, at least once.

import type { Config } from "../config.js";
import { newSortableId } from "../ids.js";
import { orderSummaryView } from "../operations/order-view.js";
import type { OrdersTable } from "../storage/schema.js";
import type { WriteTx } from "../storage/store.js";
import type { WebhookEnvelope, WebhookEventType } from "./events.js";

/** The base of the URLs an event carries (the order's status_url): PUBLIC_BASE_URL, else this host. */
export function webhookBaseUrl(config: Pick<Config, "PUBLIC_BASE_URL" | "PORT">): string {
  return (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, "");
}

/**
 * Adds the event for `order` as it is after the change to the transaction's outbox. It is written only if
 * the change has a recipient then (see WriteTx.enqueueWebhook): an endpoint set later receives the
 * events of later changes.
 */
export function enqueueOrderEvent(
  tx: WriteTx,
  order: OrdersTable,
  type: WebhookEventType,
  at: string,
  baseUrl: string,
  details: { previous_status: string | null; [key: string]: unknown },
): void {
  const id = newSortableId("msg");
  tx.enqueueWebhook({
    id,
    account_id: order.account_id,
    livemode: order.livemode,
    order_id: order.id,
    type,
    created_at: at,
    callback_url: order.callback_url,
    fanned_out: 0,
    payload() {
      const envelope: WebhookEnvelope = {
        id,
        type,
        created_at: at,
        livemode: order.livemode === 1,
        data: { order: orderSummaryView(order, baseUrl), ...details },
      };
      return JSON.stringify(envelope);
    },
  });
}
