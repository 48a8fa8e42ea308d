// When a sandbox contractor answers an offer with a counter-offer (issue 33): now and then (one offer in
// six, by its order's id, or a description asking for it) it asks 8 % more than the estimate, "parts cost
// more around here". The sandbox account's counter policy accepts counters within 10 % of the estimate (and
// under the NTE) at once; another account's counter, or one above its NTE, waits for a person. Pure.

import type { Order } from "../domain/orders/order.js";

/** A sandbox order's description containing this has its offers countered. */
export const COUNTER_MARKER = "[sandbox:counter]";

/** How much above the estimate a sandbox contractor's counter asks. */
const COUNTER_MARKUP = 0.08;

/** Whether the sandbox's contractor counters this order's offer rather than accepting it. */
export function countersOffer(order: Pick<Order, "id" | "description">): boolean {
  if (order.description.includes(COUNTER_MARKER)) return true;
  let sum = 0;
  for (const ch of order.id) sum = (sum * 31 + ch.charCodeAt(0)) % 1_000_003;
  return sum % 6 === 1;
}

/** The price a sandbox contractor's counter asks: the estimate and 8 %, in whole cents. */
export function counterPrice(order: Pick<Order, "estimated_cost_cents">): number {
  return Math.round(Number(order.estimated_cost_cents) * (1 + COUNTER_MARKUP));
}
