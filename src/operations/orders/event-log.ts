// The order event log's row of a change (storage/order-event-store.ts): written for every change of an
// order, in its transaction, whoever would receive it; the live event stream (operations/orders/event-stream.ts)
// resumes from it and builds each role's view of the event from it.
//
// A change with a webhook event logs that event. A change without one (a re-offer: the job passes to the
// next contractor and the order stays offered) is logged as `order.<its status>` with its previous
// status, so the contractor it leaves and the one it reaches, and the dispatch team's board, hear of it.
//
// The payload keeps the order and the offer in their rows' form (storage/order-rows.ts: livemode 0/1),
// as every earlier version wrote them: a store keeps its history across upgrades, and the stream reads
// old payloads and new ones alike.

import type { OrderChange } from "../../domain/orders/order.js";
import type { NewOrderEvent } from "../../storage/order-event-store.js";
import { type LoggedOrderRow, loggedOrderRow, type OfferRow, offerToRow } from "../../storage/order-rows.js";
import { statusEventType, type WebhookEventType } from "../../webhooks/events.js";

/** What a logged event's payload holds. */
export interface LoggedPayload {
  /** The order after the change, in its row's form without the ranking. */
  order: LoggedOrderRow;
  details: { previous_status: string | null; [key: string]: unknown };
  /** The offer the change made to the contractor now offered the job, if it made one (its row). */
  offer: OfferRow | null;
}

export function loggedEvent(change: OrderChange): NewOrderEvent | null {
  const { before, after } = change;
  let type: WebhookEventType;
  let at: string;
  let details: LoggedPayload["details"];
  if (change.event) {
    ({ type, at, details } = change.event);
  } else {
    if (after.status === "received") return null;
    type = statusEventType(after.status);
    at = after.updated_at;
    details = { previous_status: before?.status ?? null };
  }
  const order = loggedOrderRow(after);
  const offer = change.offers.create.find((o) => o.contractor_id === after.contractor_id);
  const previous = before?.contractor_id ?? null;
  const payload: LoggedPayload = { order, details, offer: offer ? offerToRow(offer) : null };
  return {
    type,
    order_id: after.id,
    account_id: after.account_id,
    livemode: order.livemode,
    contractor_id: after.contractor_id,
    previous_contractor_id: previous !== after.contractor_id ? previous : null,
    created_at: at,
    payload: JSON.stringify(payload),
  };
}
