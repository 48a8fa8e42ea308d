// The window's orders counted: received, by status, offered automatically or never, dispatched, waiting
// for a dispatcher, and the auto-match rate.

import { ratio } from "./measures.js";
import { type Entry, ORDERS_SOURCE, type Provenance } from "./provenance.js";
import type { Tally } from "./tally.js";

export function orderCounts(t: Tally) {
  const received = t.sum("orders");
  const matched = t.sum("matched");
  return {
    orders_received: received,
    orders_by_status: t.byStatus,
    orders_matched: matched,
    orders_never_offered: received - matched,
    orders_dispatched: t.sum("dispatched"),
    orders_awaiting_dispatcher: t.byStatus.needs_dispatcher,
    auto_match_rate: ratio(matched, received),
  };
}

export function orderCountsProvenance(t: Tally, p: Entry): Provenance {
  const received = t.sum("orders");
  return {
    "operations.orders_received": p(ORDERS_SOURCE, "count(*)", received),
    "operations.orders_by_status": p(`${ORDERS_SOURCE}: status`, "count(*) group by status", received),
    "operations.orders_matched": p(`${ORDERS_SOURCE}: matched_at`, "count(matched_at is not null)", received),
    "operations.orders_never_offered": p(
      `${ORDERS_SOURCE}: matched_at`,
      "count(matched_at is null)",
      received,
      "Some of these were dispatched by hand later (human_dispatch_rate); none has a dispatch latency.",
    ),
    "operations.orders_dispatched": p(
      `${ORDERS_SOURCE}: matched_at, override_count`,
      "count(matched_at is not null or override_count > 0)",
      received,
    ),
    "operations.orders_awaiting_dispatcher": p(
      `${ORDERS_SOURCE}: status`,
      "count(status = needs_dispatcher)",
      received,
    ),
    "operations.auto_match_rate": p(
      ORDERS_SOURCE,
      "orders_matched / orders_received",
      received,
      "A first automatic offer was made; it says nothing of whether it was accepted (offer_funnel does).",
    ),
  };
}
