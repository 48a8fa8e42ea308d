// Completion: how the window's orders that reached an outcome ended, over every outcome and over the jobs
// a contractor took.

import { ratio } from "./measures.js";
import { type Entry, ORDERS_SOURCE, type Provenance } from "./provenance.js";
import { FINISHED, type Tally } from "./tally.js";

/** The outcome counts both completion rates are computed from. */
function outcomes(t: Tally) {
  const succeeded = t.sum("orders", FINISHED);
  const cannotComplete = t.byStatus.cannot_complete;
  const cancelled = t.byStatus.cancelled;
  const cancelledAfterAcceptance = t.sum("accepted", ["cancelled"]);
  return {
    succeeded,
    cancelled,
    cancelledAfterAcceptance,
    outcomes: succeeded + cannotComplete + cancelled,
    afterAcceptance: succeeded + cannotComplete + cancelledAfterAcceptance,
  };
}

export function completionFigures(t: Tally) {
  const o = outcomes(t);
  return {
    completion_rate: ratio(o.succeeded, o.outcomes),
    completion_rate_after_acceptance: ratio(o.succeeded, o.afterAcceptance),
    completed_after_redispatch: t.sum("redispatched", FINISHED),
    cancelled_before_acceptance: o.cancelled - o.cancelledAfterAcceptance,
  };
}

export function completionProvenance(t: Tally, p: Entry): Provenance {
  const o = outcomes(t);
  return {
    "goal_fulfillment.completion_rate": p(
      `${ORDERS_SOURCE}: status`,
      "count(status in (completed, invoiced)) / count(status in (completed, invoiced, cannot_complete, cancelled))",
      o.outcomes,
      "Every order that reached an outcome is in the sample: a cancellation before any contractor accepted (the order still offered or waiting for a dispatcher) counts as not completed, whatever its reason. Open orders are not in it.",
    ),
    "goal_fulfillment.completion_rate_after_acceptance": p(
      `${ORDERS_SOURCE}: status, accepted_at`,
      "count(status in (completed, invoiced)) / count(status in (completed, invoiced, cannot_complete) or (status = cancelled and accepted_at is not null))",
      o.afterAcceptance,
      "Leaves out orders cancelled before a contractor accepted: a failure to dispatch never counts against it. Read completion_rate for every outcome.",
    ),
    "goal_fulfillment.completed_after_redispatch": p(
      `${ORDERS_SOURCE}: status, redispatch_count (assignments from cannot_complete)`,
      "count(status in (completed, invoiced) and redispatch_count > 0)",
      o.succeeded,
      "These count as completed in both completion rates, although their first contractor could not finish.",
    ),
    "goal_fulfillment.cancelled_before_acceptance": p(
      `${ORDERS_SOURCE}: status, accepted_at`,
      "count(status = cancelled and accepted_at is null)",
      o.cancelled,
    ),
  };
}
