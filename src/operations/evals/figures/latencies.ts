// Latencies, nearest-rank p50 and p95: received -> first offer committed (dispatch), the in-memory match
// alone, received -> first acceptance and -> the last one.

import type { EvalsFigures } from "../../../storage/evals-store.js";
import { ms } from "./measures.js";
import { type Entry, ORDERS_SOURCE, type Provenance } from "./provenance.js";
import type { Tally } from "./tally.js";

type Latency = EvalsFigures["latency"];

const percentile = (q: 50 | 95, expr: string, over: string) =>
  `nearest-rank p${q} (the value of rank ceil(${q / 100} * n)) of ${expr} over ${over}, from the daily log-bucket sketches (within 1 % of the exact value)`;

export function latencyFigures(latency: Latency, t: Tally) {
  const { offer, matching, first_accept: firstAccept, final_accept: finalAccept } = latency;
  return {
    dispatch_latency_p50: ms(offer.p50, offer.n),
    dispatch_latency_p95: ms(offer.p95, offer.n),
    dispatch_latency_unrecorded: t.sum("offer_unrecorded"),
    matching_time_p50: ms(matching.p50, matching.n),
    matching_time_p95: ms(matching.p95, matching.n),
    acceptance_latency_p50: ms(firstAccept.p50, firstAccept.n),
    acceptance_latency_p95: ms(firstAccept.p95, firstAccept.n),
    final_assignment_latency_p50: ms(finalAccept.p50, finalAccept.n),
    final_assignment_latency_p95: ms(finalAccept.p95, finalAccept.n),
  };
}

export function latencyProvenance(latency: Latency, t: Tally, p: Entry): Provenance {
  const { offer, matching } = latency;
  const withOffer = "orders offered automatically with a recorded latency";
  return {
    "operations.dispatch_latency_p50": p(
      `${ORDERS_SOURCE}: dispatch_latency_ms (in process, monotonic clock, stored after the commit)`,
      percentile(
        50,
        "dispatch_latency_ms (request received, before authentication -> order and first offer committed, durable)",
        withOffer,
      ),
      offer.n,
      "Measured inside the service: the network between the caller and the service is not in it. Orders never offered are not in the sample (orders_never_offered), nor orders without a recorded latency (dispatch_latency_unrecorded).",
    ),
    "operations.dispatch_latency_p95": p(
      `${ORDERS_SOURCE}: dispatch_latency_ms (in process, monotonic clock, stored after the commit)`,
      percentile(95, "dispatch_latency_ms", withOffer),
      offer.n,
    ),
    "operations.dispatch_latency_unrecorded": p(
      `${ORDERS_SOURCE}: matched_at, dispatch_latency_ms`,
      "count(matched_at is not null and dispatch_latency_ms is null)",
      t.sum("matched"),
    ),
    "operations.matching_time_p50": p(
      `${ORDERS_SOURCE}: matching_time_ms (in process, monotonic clock)`,
      percentile(50, "matching_time_ms (the in-memory ranking of the pool for the job)", "orders with one"),
      matching.n,
      "Not the dispatch latency: nothing is written or committed in it.",
    ),
    "operations.matching_time_p95": p(
      `${ORDERS_SOURCE}: matching_time_ms (in process, monotonic clock)`,
      percentile(95, "matching_time_ms", "orders with one"),
      matching.n,
    ),
    ...acceptanceProvenance(latency, p),
  };
}

function acceptanceProvenance(latency: Latency, p: Entry): Provenance {
  const { first_accept: firstAccept, final_accept: finalAccept } = latency;
  const acceptedOnce = "orders accepted or assigned at least once";
  return {
    "operations.acceptance_latency_p50": p(
      `${ORDERS_SOURCE}: first_accepted_at, received_at`,
      percentile(50, "first_accepted_at - received_at (ms)", acceptedOnce),
      firstAccept.n,
      "The first acceptance: a later reassignment does not move it (final_assignment_latency shows the last one).",
    ),
    "operations.acceptance_latency_p95": p(
      `${ORDERS_SOURCE}: first_accepted_at, received_at`,
      percentile(95, "first_accepted_at - received_at (ms)", acceptedOnce),
      firstAccept.n,
    ),
    "operations.final_assignment_latency_p50": p(
      `${ORDERS_SOURCE}: accepted_at, received_at`,
      percentile(50, "accepted_at - received_at (ms), accepted_at the last acceptance", "orders with one"),
      finalAccept.n,
    ),
    "operations.final_assignment_latency_p95": p(
      `${ORDERS_SOURCE}: accepted_at, received_at`,
      percentile(95, "accepted_at - received_at (ms)", "orders with one"),
      finalAccept.n,
    ),
  };
}
