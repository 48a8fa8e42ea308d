// When a sandbox contractor answers an offer with a counter-offer (issue 33). Now and then (one routine or
// scheduled offer in six, by its order's id) it asks 8 % more than the estimate, "parts cost more around
// here", but only where the account's counter policy accepts that at once (the sandbox account's does:
// within 10 %, under the NTE), so a sandbox job never stalls on a counter nobody answers. A description
// containing [sandbox:counter] has it ask 15 % more, whatever the policy: that counter waits for the
// account (accept or decline it, or let it expire). Pure.

import { autoAcceptCeiling, type CounterPolicy } from "../domain/orders/counter-rules.js";
import type { Order } from "../domain/orders/order.js";

/** A sandbox order's description containing this has its offer countered, at 15 % above the estimate. */
export const COUNTER_MARKER = "[sandbox:counter]";

const NOW_AND_THEN_MARKUP = 0.08;
const ASKED_MARKUP = 0.15;

const above = (order: Pick<Order, "estimated_cost_cents">, markup: number) =>
  Math.round(Number(order.estimated_cost_cents) * (1 + markup));

/** One order in six, by its id. */
function nowAndThen(id: string): boolean {
  let sum = 0;
  for (const ch of id) sum = (sum * 31 + ch.charCodeAt(0)) % 1_000_003;
  return sum % 6 === 1;
}

/** The price the sandbox's contractor counters this order's offer with, or null when it accepts it. */
export function sandboxCounterPrice(order: Order, policy: CounterPolicy | null): number | null {
  if (order.description.includes(COUNTER_MARKER)) return above(order, ASKED_MARKUP);
  if (order.urgency !== "routine" && order.urgency !== "scheduled") return null;
  if (!nowAndThen(order.id)) return null;
  const price = above(order, NOW_AND_THEN_MARKUP);
  const ceiling = autoAcceptCeiling(policy, order);
  return ceiling !== null && price <= ceiling.ceiling_cents ? price : null;
}
