// NTE (not-to-exceed): the cost the contractor reported against the NTE in force and the caller's
// original one, and the increases the caller approved, over completed and invoiced orders with an NTE.

import { meanPpm, ratio } from "./measures.js";
import { type Entry, ORDERS_SOURCE, type Provenance } from "./provenance.js";
import type { Tally } from "./tally.js";

const NTE_SAMPLE =
  "over status in (completed, invoiced) with nte = coalesce(nte_approved_cents, nte_cents) > 0 and final_cost_cents not null";

export function nteFigures(t: Tally) {
  const nteOrders = t.sum("nte_orders");
  const nteIncreased = t.sum("nte_increased");
  return {
    nte_variance: meanPpm(t.sum("nte_ppm"), nteOrders),
    nte_within_rate: ratio(t.sum("nte_within"), nteOrders),
    nte_within_original_rate: ratio(t.sum("nte_within_original"), nteOrders),
    nte_increase_rate: ratio(nteIncreased, nteOrders),
    nte_increase_mean: meanPpm(t.sum("nte_increase_ppm"), nteIncreased),
  };
}

export function nteProvenance(t: Tally, p: Entry): Provenance {
  const nteOrders = t.sum("nte_orders");
  return {
    "goal_fulfillment.nte_variance": p(
      `${ORDERS_SOURCE}: final_cost_cents (the cost the contractor reported), nte_approved_cents, nte_cents`,
      `mean((final_cost_cents - nte) / nte) ${NTE_SAMPLE}; each term rounded to 1e-6`,
      nteOrders,
      "The reported cost, not the invoice: an invoice is capped at the NTE in force (a higher one is refused), so it would read as within the NTE by construction.",
    ),
    "goal_fulfillment.nte_within_rate": p(
      `${ORDERS_SOURCE}: as nte_variance`,
      `count(final_cost_cents <= nte) / count(*) ${NTE_SAMPLE}`,
      nteOrders,
      "Within the NTE in force, which includes increases the caller approved; nte_within_original_rate compares with what the caller first authorised.",
    ),
    "goal_fulfillment.nte_within_original_rate": p(
      `${ORDERS_SOURCE}: final_cost_cents, nte_cents`,
      `count(final_cost_cents <= nte_cents) / count(*) ${NTE_SAMPLE}`,
      nteOrders,
    ),
    "goal_fulfillment.nte_increase_rate": p(
      `${ORDERS_SOURCE}: nte_approved_cents`,
      `count(nte_approved_cents is not null) / count(*) ${NTE_SAMPLE}`,
      nteOrders,
    ),
    "goal_fulfillment.nte_increase_mean": p(
      `${ORDERS_SOURCE}: nte_approved_cents, nte_cents`,
      `mean((nte_approved_cents - nte_cents) / nte_cents) over the orders of nte_variance with nte_approved_cents not null; each term rounded to 1e-6`,
      t.sum("nte_increased"),
    ),
  };
}
