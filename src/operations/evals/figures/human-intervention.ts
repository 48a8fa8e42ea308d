// Human intervention, by what a dispatcher's assignment answered: replacing the contractor an order was
// with (override), placing an order automation could not (human dispatch), or re-dispatching after
// cannot_complete; as rates over orders and as counts of assignments.

import { ratio } from "./measures.js";
import { type Entry, ORDERS_SOURCE, type Provenance } from "./provenance.js";
import type { Tally } from "./tally.js";

export function humanIntervention(t: Tally) {
  const dispatched = t.sum("dispatched");
  return {
    human_override_rate: ratio(t.sum("overridden"), dispatched),
    human_dispatch_rate: ratio(t.sum("human_dispatched"), t.sum("orders")),
    redispatch_rate: ratio(t.sum("redispatched"), dispatched),
    overrides: t.sum("overrides"),
    human_dispatches: t.sum("human_dispatches"),
    redispatches: t.sum("redispatches"),
    manual_assignments: t.sum("manual_assignments"),
  };
}

export function humanInterventionProvenance(t: Tally, p: Entry): Provenance {
  const received = t.sum("orders");
  const dispatched = t.sum("dispatched");
  return {
    "trust_signals.human_override_rate": p(
      `${ORDERS_SOURCE}: override_count - manual_dispatch_count - redispatch_count (order.assigned from offered, accepted or en_route)`,
      "count(orders with such an assignment) / orders_dispatched",
      dispatched,
      "Only assignments that replaced the contractor the order was with: picking up an order automation could not place (human_dispatch_rate) and re-dispatching after a failure (redispatch_rate) are counted apart.",
    ),
    "trust_signals.human_dispatch_rate": p(
      `${ORDERS_SOURCE}: manual_dispatch_count (order.assigned from needs_dispatcher)`,
      "count(manual_dispatch_count > 0) / orders_received",
      received,
    ),
    "trust_signals.redispatch_rate": p(
      `${ORDERS_SOURCE}: redispatch_count (order.assigned from cannot_complete)`,
      "count(redispatch_count > 0) / orders_dispatched",
      dispatched,
    ),
    "trust_signals.overrides": p(
      `${ORDERS_SOURCE}: override_count, manual_dispatch_count, redispatch_count`,
      "sum(override_count - manual_dispatch_count - redispatch_count)",
      received,
    ),
    "trust_signals.human_dispatches": p(
      `${ORDERS_SOURCE}: manual_dispatch_count`,
      "sum(manual_dispatch_count)",
      received,
    ),
    "trust_signals.redispatches": p(`${ORDERS_SOURCE}: redispatch_count`, "sum(redispatch_count)", received),
    "trust_signals.manual_assignments": p(
      `${ORDERS_SOURCE}: override_count (one per order.assigned audit record, counted by the assign command)`,
      "sum(override_count)",
      received,
    ),
  };
}
