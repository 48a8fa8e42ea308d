// The evals' methodology, published with every report: what is counted, over which orders, by which
// formula, and how the figures are rounded and cached.

import { MAINTENANCE_METHODOLOGY } from "./maintenance.js";

export const METHODOLOGY = [
  "Computed from the orders stored by this service, for the rolling window ending at generated_at. Only live " +
    "orders count (sandbox, test-key orders are excluded), and an order belongs to the window by the time it " +
    "was received; its figures use its status and fields as they stand now, so an order received in the " +
    "window and completed later counts as completed.",
  "Completion: completion_rate = (completed + invoiced) / (completed + invoiced + cannot_complete + " +
    "cancelled), every order that reached an outcome, so an order cancelled while still offered or waiting " +
    "for a dispatcher (a dispatch failure, or a caller's change of mind) counts against it; orders still open " +
    "are left out. completion_rate_after_acceptance = (completed + invoiced) / (completed + invoiced + " +
    "cannot_complete + cancelled after a contractor accepted or was assigned): how the jobs a contractor " +
    "took ended. A job a dispatcher re-dispatched after cannot_complete and that was then completed counts " +
    "as completed in both; completed_after_redispatch says how many.",
  "NTE: over completed and invoiced orders with an NTE, the cost the contractor reported when it completed " +
    "the job (what the job cost) against the NTE in force (the last increase the caller approved, else the " +
    "caller's own): nte_variance is the mean of (cost - NTE) / NTE, negative under it; nte_within_rate the " +
    "share within it; nte_within_original_rate the share within the caller's original NTE; nte_increase_rate " +
    "the share that had an increase approved and nte_increase_mean its mean size. The invoice is not the " +
    "cost: an invoice above the NTE in force is refused, so a contractor whose job cost more invoices at most " +
    "the NTE and absorbs the rest.",
  "Dispatch latency: from the request's arrival (before its key is checked) to the moment the order and its " +
    "first offer are committed and durable, measured in process on the monotonic clock and stored with the " +
    "order by a write that joins the next commit; over the orders offered automatically; the network between " +
    "the caller and the service is not in it. Orders never offered (no eligible " +
    "contractor with capacity) have none and are counted in orders_never_offered; orders offered without a " +
    "recorded latency in dispatch_latency_unrecorded. matching_time is the in-memory match alone, a part of " +
    "it. Acceptance latency: received -> the first acceptance (the contractor offered the job accepting it, " +
    "or a dispatcher's assignment); final_assignment_latency: received -> the last one, which each " +
    "reassignment moves. Percentiles are nearest-rank (the value of rank ceil(q * n)), read from a " +
    "log-bucket sketch kept per day (DDSketch's logarithmic mapping): each published percentile is within " +
    "1 % of the exact value (a latency below zero, a wall clock stepped back, counts as 0).",
  "Offers: each automatic offer is accepted, declined, expired (no answer by its deadline), withdrawn (the " +
    "order was cancelled or assigned by hand meanwhile) or still pending. auto_match_rate says a first offer " +
    "was made; offer_funnel says what became of the offers, first_offer_acceptance_rate over orders whose " +
    "first offer was answered.",
  "Human intervention, by what a dispatcher's assignment answered: human_dispatch_rate = orders assigned " +
    "from needs_dispatcher (automation could not place them) / orders received; human_override_rate = orders " +
    "whose contractor a dispatcher replaced (assigned over a pending offer, or reassigned) / orders " +
    "dispatched; redispatch_rate = orders re-dispatched after cannot_complete / orders dispatched. overrides, " +
    "human_dispatches and redispatches count the assignments, manual_assignments all of them.",
  "Service levels: on_time_arrival_rate = orders on site on time / orders that reached on_site (on_site_at " +
    "stored) with a promise, Field Nation's rule: windowed work on site from 30 minutes before to 15 minutes " +
    "after the window's start, as-soon-as-possible work on site by arrive_by. sla_attainment, per urgency, = " +
    "orders whose every clock was met / orders whose clocks all have an outcome: the respond clock is met by " +
    "a first acceptance by respond_by, the arrive clock by on_site_at by arrive_by or the window's end; a " +
    "clock is missed when its step came late, or did not come and its breach was recorded or its deadline " +
    "passed while the order is open; an order cancelled before a deadline it had not met yet, or still " +
    "running, has no outcome and is left out. Like the figures above, these are rolled up per day as " +
    "orders change; an open order whose deadline passed before its breach was recorded (a change with no " +
    "write) is read live and counted as missed.",
  "Recalls: an order may name an earlier order of the caller's, of the same trade at the same site and " +
    "completed at most 30 days before, as its recall (recall_of): a callback for a job that did not hold. " +
    "The recalls figures count the live jobs completed (completed_at) in the report's window moved back 30 " +
    "days, so that each has had its whole 30 days to be recalled (a job completed since may still be, and is " +
    "left out rather than counted as fixed); of those, recall_rate is the share some order names as its " +
    "recall, whatever became of that order, and first_time_fix_rate the rest. Per contractor (the one " +
    "holding the job when it was completed), over the contractors with at least 10 such jobs, the lowest, " +
    "nearest-rank median and highest of their first-time-fix rates, unnamed. A callback ordered without " +
    "naming the job it follows is not seen.",
  "Trust signals: audit_log is the whole log (every account and mode: it is one tree); " +
    "contractor_verification counts live contractors that are active and not excluded, and is not_measured " +
    "when none of them has a verification date.",
  MAINTENANCE_METHODOLOGY,
  "Ratios are rounded to 4 decimals, latencies to the microsecond. A computed report is reused for up to 5 " +
    "seconds per period. The published targets are self-reported goals, not a binding service level; " +
    "completion_rate, dispatch_latency_p50 and human_override_rate are the figures they speak of.",
].join(" ");
