// dispatchEvals: public operational figures of the live orders received in a rolling window (completion,
// NTE, dispatch and acceptance latencies, the offer funnel, human intervention by kind, counts by status)
// with trust signals, methodology and per-field provenance (formula, sample, and a note where a figure is
// easy to misread). Self-reported: `estimated` is always true.

import { z } from "zod";
import {
  ON_TIME_EARLY_MS,
  ON_TIME_LATE_MS,
  type SlaFigures,
  slaFigures,
} from "../../domain/orders/sla-figures.js";
import { ORDER_STATUSES, type OrderStatus } from "../../domain/orders/transitions.js";
import { URGENCIES } from "../../domain/pricing.js";
import type { ActiveContractors, EvalsFigures, StatusSums } from "../../storage/evals-store.js";
import { checkpointSchema } from "../audit/attest.js";
import { defineOperation, type Services } from "../kernel/operation.js";
import { everyKeyObject } from "../kernel/schemas.js";
import { dispatchLatenciesStored } from "../orders/dispatch-latency.js";

export const EVAL_PERIODS = { rolling_7d: 7, rolling_30d: 30, rolling_90d: 90 } as const;
export type Period = keyof typeof EVAL_PERIODS;
export const PERIOD_NAMES = Object.keys(EVAL_PERIODS) as Period[];

export const PUBLISHED_TARGETS = {
  quote_turnaround_hours: 2,
  completion_rate: 0.9,
  dispatch_latency_p50_ms: 340,
  human_override_rate: 0.03,
} as const;

/** A computed report is reused for this long (per period and process): see the methodology. */
export const EVALS_CACHE_MS = 5_000;

/** The vendor-trust document's posture fields and the settings behind them (documents.ts publishes them). */
const VENDOR_FIELDS = {
  vendor: "VENDOR_NAME",
  contact_email: "VENDOR_CONTACT_EMAIL",
  license: "VENDOR_LICENSE",
  bond: "VENDOR_BOND",
  insurance: "VENDOR_INSURANCE",
  sla: "VENDOR_SLA",
} as const;
type VendorField = keyof typeof VENDOR_FIELDS;
const VENDOR_FIELD_NAMES = Object.keys(VENDOR_FIELDS) as [VendorField, ...VendorField[]];

export const metric = z.object({
  value: z.number().nullable().describe("Null when the sample is empty (or the figure is not recorded)."),
  sample_size: z
    .number()
    .int()
    .describe("How many orders (or contractors) the figure is computed over: its denominator."),
  unit: z.string().describe("ratio (0-1), ms, or offers (a mean number of offers per order)."),
});

export const evalsInput = z.object({
  period: z
    .enum(PERIOD_NAMES as [Period, ...Period[]], {
      error: `period must be one of: ${PERIOD_NAMES.join(", ")}`,
    })
    .default("rolling_30d")
    .describe("Rolling window: rolling_7d, rolling_30d (default) or rolling_90d."),
});

const count = z.number().int();

export const evalsOutput = z
  .object({
    period: z.string(),
    window: z.object({ start: z.iso.datetime(), end: z.iso.datetime() }),
    generated_at: z.iso.datetime().describe("When these figures were computed (the window ends then)."),
    estimated: z.literal(true).describe("True: self-reported figures computed from our own telemetry."),
    goal_fulfillment: z.object({
      completion_rate: metric.describe(
        "(completed + invoiced) / every order that reached an outcome (completed, invoiced, cannot_complete, " +
          "cancelled): cancellations before any contractor accepted (dispatch failures included) count against it.",
      ),
      completion_rate_after_acceptance: metric.describe(
        "(completed + invoiced) / (completed + invoiced + cannot_complete + cancelled after a contractor " +
          "accepted or was assigned): how jobs a contractor took ended; dispatch failures left out.",
      ),
      completed_after_redispatch: count.describe(
        "Completed or invoiced orders that a dispatcher re-dispatched after cannot_complete (counted as " +
          "completed in both rates).",
      ),
      cancelled_before_acceptance: count.describe(
        "Cancelled orders no contractor had accepted (or been assigned): in completion_rate's sample only.",
      ),
      nte_variance: metric.describe(
        "Mean of (cost the contractor reported - NTE in force) / NTE in force over completed and invoiced " +
          "orders with an NTE; negative is under the NTE.",
      ),
      nte_within_rate: metric.describe(
        "Share of those orders whose reported cost is within the NTE in force (an approved increase counts).",
      ),
      nte_within_original_rate: metric.describe(
        "Share of the same orders whose reported cost is within the caller's original NTE.",
      ),
      nte_increase_rate: metric.describe("Share of the same orders that had an NTE increase approved."),
      nte_increase_mean: metric.describe(
        "Mean approved increase, (approved NTE - original NTE) / original NTE, over the orders that had one.",
      ),
    }),
    operations: z.object({
      orders_received: count.describe("Live orders received in the window."),
      orders_by_status: everyKeyObject(ORDER_STATUSES, count).describe(
        "The window's orders by their current status; every status, zero included.",
      ),
      orders_matched: count.describe("Orders offered automatically to a contractor when received."),
      orders_never_offered: count.describe(
        "Orders no contractor was offered automatically (none eligible with capacity when received): " +
          "orders_received - orders_matched. They have no dispatch latency.",
      ),
      orders_dispatched: count.describe(
        "Orders that reached a contractor: an automatic offer or a dispatcher.",
      ),
      orders_awaiting_dispatcher: count.describe("Orders now in needs_dispatcher."),
      auto_match_rate: metric.describe(
        "orders_matched / orders_received: a first automatic offer was made (see offer_funnel for what became of it).",
      ),
      dispatch_latency_p50: metric.describe(
        "Request received (before authentication) -> first offer committed (durable), nearest-rank median.",
      ),
      dispatch_latency_p95: metric.describe(
        "Request received (before authentication) -> first offer committed (durable), nearest-rank 95th percentile.",
      ),
      dispatch_latency_unrecorded: count.describe(
        "Orders offered automatically without a recorded dispatch latency (received before it was measured " +
          "this way, or the process stopped before storing it): not in the latency's sample.",
      ),
      matching_time_p50: metric.describe(
        "The in-memory match itself (ranking the pool for the job, no I/O), nearest-rank median: a part of " +
          "the dispatch latency.",
      ),
      matching_time_p95: metric.describe("The in-memory match itself, nearest-rank 95th percentile."),
      acceptance_latency_p50: metric.describe(
        "Received -> first acceptance (by the contractor offered the job, or a dispatcher's assignment), " +
          "nearest-rank median.",
      ),
      acceptance_latency_p95: metric.describe("Received -> first acceptance, nearest-rank 95th percentile."),
      final_assignment_latency_p50: metric.describe(
        "Received -> the last acceptance or assignment (moved by each reassignment), nearest-rank median.",
      ),
      final_assignment_latency_p95: metric.describe(
        "Received -> the last acceptance or assignment, nearest-rank 95th percentile.",
      ),
      offer_funnel: z
        .object({
          offers_made: count.describe("Offers made to contractors, automatically, for the window's orders."),
          offers_accepted: count.describe("Of which accepted by their contractor."),
          offers_declined: count.describe("Declined by their contractor."),
          offers_expired: count.describe("Left unanswered until their deadline."),
          offers_withdrawn: count.describe(
            "Withdrawn: the order was cancelled or assigned by hand while the offer waited.",
          ),
          offers_pending: count.describe("Still waiting for an answer."),
          first_offer_acceptance_rate: metric.describe(
            "Orders whose first offer was accepted / orders whose first offer was answered (accepted, " +
              "declined or expired).",
          ),
          mean_offers_per_order: metric.describe(
            "offers_made / orders offered at least once automatically (unit: offers).",
          ),
        })
        .describe("What became of the automatic offers: the cascade behind auto_match_rate."),
    }),
    service_levels: z
      .object({
        on_time_arrival_rate: metric.describe(
          "Orders on site on time / orders that reached on_site with a promise (Field Nation's rule): windowed " +
            "work on site from 30 minutes before to 15 minutes after the window's start, as-soon-as-possible " +
            "work by arrive_by.",
        ),
        on_time_arrivals: count.describe("Orders on site on time: on_time_arrival_rate's numerator."),
        sla_attainment: z
          .object(
            Object.fromEntries(
              URGENCIES.map((u) => [
                u,
                metric.describe(
                  `${u} orders whose every service-level clock was met / ${u} orders whose clocks all have an outcome.`,
                ),
              ]),
            ) as Record<(typeof URGENCIES)[number], typeof metric>,
          )
          .describe(
            "Per urgency, the share of orders whose deadlines were met: respond_by (a contractor committed) and " +
              "arrive_by or the window's end (on site).",
          ),
      })
      .describe("The promised times kept: on-time arrival and service-level attainment."),
    trust_signals: z.object({
      human_override_rate: metric.describe(
        "Orders where a dispatcher replaced the contractor the order was offered to or held by (an " +
          "assignment over a pending offer, or a reassignment) / orders dispatched.",
      ),
      human_dispatch_rate: metric.describe(
        "Orders a dispatcher assigned after automation could not place them (from needs_dispatcher) / orders received.",
      ),
      redispatch_rate: metric.describe(
        "Orders a dispatcher re-dispatched after the contractor could not complete them / orders dispatched.",
      ),
      overrides: count.describe(
        "Assignments that replaced a contractor (several per order count): human_override_rate's kind.",
      ),
      human_dispatches: count.describe("Assignments from needs_dispatcher (several per order count)."),
      redispatches: count.describe("Assignments from cannot_complete (several per order count)."),
      manual_assignments: count.describe(
        "Every dispatcher assignment of the window's orders: overrides + human_dispatches + redispatches.",
      ),
      sandbox_excluded: z
        .literal(true)
        .describe("The order figures count live orders only (the audit log's size is the whole log's)."),
      audit_trail_retention_years: count,
      audit_log: z.object({
        records: count.describe(
          "Records written to the audit log: the whole log, every account, live and sandbox (it is one tree).",
        ),
        sequenced: count.describe("Of which sequenced into the signed Merkle tree."),
        latest_checkpoint: checkpointSchema.nullable().describe("The latest signed tree head."),
        checkpoint_url: z.string(),
      }),
      vendor_trust: z.object({
        document: z.string().describe("The vendor-trust document the posture is published in."),
        published: z.array(z.enum(VENDOR_FIELD_NAMES)),
        not_published: z.array(z.enum(VENDOR_FIELD_NAMES)),
      }),
      contractor_verification: z.object({
        status: z
          .enum(["measured", "not_measured", "no_contractors"])
          .describe(
            "no_contractors: the live pool has no active, non-excluded contractor; not_measured: none of them " +
              "has an insurance or license verification date, so there is no share (null), not a share of 0.",
          ),
        active_live_contractors: count.describe(
          "Live contractors that are active and not excluded: those that can be given work.",
        ),
        with_verification_dates: count.describe(
          "Of which with an insurance or a license verification date (current or run out).",
        ),
        verified_insurance_and_license: metric.describe(
          "Share of active_live_contractors with insurance and license both verified through today (UTC): " +
            "since compliance is a hard filter of matching, the share of them that may be offered work today " +
            "(the rest are never offered it). Null unless measured.",
        ),
      }),
    }),
    published_targets: z.object({
      quote_turnaround_hours: z.number(),
      completion_rate: z.number(),
      dispatch_latency_p50_ms: z.number(),
      human_override_rate: z.number(),
    }),
    methodology: z.string(),
    provenance: z.record(
      z.string(),
      z.object({
        source: z.string(),
        formula: z.string(),
        sample_size: z.number().int().nullable(),
        computed_at: z.iso.datetime(),
        note: z.string().optional().describe("Where the figure is easy to misread: what it does not say."),
      }),
    ),
  })
  .meta({ id: "EvalsReport" });

type Report = z.input<typeof evalsOutput>;

const METHODOLOGY = [
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
    "reassignment moves. Percentiles are nearest-rank (the value of rank ceil(q * n)).",
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
    "running, has no outcome and is left out. Unlike the figures above (rolled up by triggers as orders " +
    "change), these are computed by a live query over the window's orders with a promise: an open order's " +
    "outcome changes when a deadline passes, with no write for a trigger to see.",
  "Trust signals: audit_log is the whole log (every account and mode: it is one tree); " +
    "contractor_verification counts live contractors that are active and not excluded, and is not_measured " +
    "when none of them has a verification date.",
  "Ratios are rounded to 4 decimals, latencies to the microsecond. A computed report is reused for up to 5 " +
    "seconds per period. The published targets are self-reported goals, not a binding service level; " +
    "completion_rate, dispatch_latency_p50 and human_override_rate are the figures they speak of.",
].join(" ");

const ORDERS_SOURCE = "orders table, live orders received in the window";

/** Figures and trust signals of one computation (URLs are added per request). */
interface Computed {
  at: Date;
  start: Date;
  figures: EvalsFigures;
  audit: {
    records: number;
    sequenced: number;
    checkpoint: Report["trust_signals"]["audit_log"]["latest_checkpoint"];
  };
  contractors: ActiveContractors;
  serviceLevels: SlaFigures;
}

const caches = new WeakMap<Services, Map<Period, { at: number; computed: Promise<Computed> }>>();

async function compute(services: Services, period: Period): Promise<Computed> {
  const at = services.now();
  const start = new Date(at.getTime() - EVAL_PERIODS[period] * 86_400_000);
  // The window includes its end: orders received in the very millisecond the report is computed count.
  const until = new Date(at.getTime() + 1).toISOString();
  // The dispatch latencies of orders this process has answered are stored after their commit: wait for
  // those writes, so that an order answered before this report counts in it.
  await dispatchLatenciesStored(services);
  const [figures, checkpoint, pending, contractors, slaRows] = await Promise.all([
    services.store.evals.figures(true, start.toISOString(), until),
    services.audit.checkpoint(),
    services.store.audit.pendingAuditCount(),
    services.store.evals.activeLiveContractors(at.toISOString().slice(0, 10)),
    services.store.evals.serviceLevelRows(true, start.toISOString(), until),
  ]);
  const sequenced = checkpoint.checkpoint?.tree_size ?? 0;
  return {
    at,
    start,
    figures,
    audit: { records: sequenced + pending, sequenced, checkpoint: checkpoint.checkpoint },
    contractors,
    serviceLevels: slaFigures(slaRows, at),
  };
}

/** The period's report computed at most EVALS_CACHE_MS ago (one computation at a time per period). */
function cached(services: Services, period: Period): Promise<Computed> {
  let cache = caches.get(services);
  if (!cache) {
    cache = new Map();
    caches.set(services, cache);
  }
  const now = services.now().getTime();
  const hit = cache.get(period);
  if (hit && now - hit.at < EVALS_CACHE_MS && now >= hit.at) return hit.computed;
  const computed = compute(services, period);
  const entry = { at: now, computed };
  cache.set(period, entry);
  computed.catch(() => {
    if (cache.get(period) === entry) cache.delete(period);
  });
  return computed;
}

const round = (v: number | null, decimals: number) =>
  v === null || !Number.isFinite(v) ? null : Math.round(v * 10 ** decimals) / 10 ** decimals;
export const ratio = (num: number, den: number) => ({
  value: den === 0 ? null : round(num / den, 4),
  sample_size: den,
  unit: "ratio",
});
/** A mean of per-order ratios kept in parts per million. */
const meanPpm = (ppm: number, n: number) => ({
  value: n === 0 ? null : round(ppm / n / 1e6, 4),
  sample_size: n,
  unit: "ratio",
});
export const ms = (v: number | null, n: number) => ({ value: round(v, 3), sample_size: n, unit: "ms" });
const FINISHED: readonly OrderStatus[] = ["completed", "invoiced"];

function report(c: Computed, period: Period, services: Services, baseUrl: string): Report {
  const { byStatus, latency } = c.figures;
  const of = (status: OrderStatus): StatusSums | undefined => byStatus.get(status);
  const sum = (field: keyof StatusSums, statuses: readonly OrderStatus[] = ORDER_STATUSES) =>
    statuses.reduce((total, s) => total + (of(s)?.[field] ?? 0), 0);
  const ordersByStatus = Object.fromEntries(ORDER_STATUSES.map((s) => [s, of(s)?.orders ?? 0])) as Record<
    OrderStatus,
    number
  >;
  const received = sum("orders");
  const succeeded = sum("orders", FINISHED);
  const cannotComplete = ordersByStatus.cannot_complete;
  const cancelled = ordersByStatus.cancelled;
  const cancelledAfterAcceptance = sum("accepted", ["cancelled"]);
  const outcomes = succeeded + cannotComplete + cancelled;
  const afterAcceptance = succeeded + cannotComplete + cancelledAfterAcceptance;
  const nteOrders = sum("nte_orders");
  const nteIncreased = sum("nte_increased");
  const dispatched = sum("dispatched");
  const matched = sum("matched");
  const offers = {
    made: sum("offers_made"),
    accepted: sum("offers_accepted"),
    declined: sum("offers_declined"),
    expired: sum("offers_expired"),
    pending: ordersByStatus.offered,
  };
  const withdrawn = offers.made - offers.accepted - offers.declined - offers.expired - offers.pending;
  const offered = sum("offered");
  const firstAnswered = sum("first_offer_answered");
  const { offer, matching, first_accept: firstAccept, final_accept: finalAccept } = latency;
  const { active, verified, dated } = c.contractors;
  const verification = active === 0 ? "no_contractors" : dated === 0 ? "not_measured" : "measured";
  const computedAt = c.at.toISOString();
  const sl = c.serviceLevels;
  const vendor = (published: boolean) =>
    VENDOR_FIELD_NAMES.filter((f) => (services.config[VENDOR_FIELDS[f]] !== undefined) === published);

  const p = (source: string, formula: string, sampleSize: number | null, note?: string) => ({
    source,
    formula,
    sample_size: sampleSize,
    computed_at: computedAt,
    ...(note === undefined ? {} : { note }),
  });
  const NTE_SAMPLE =
    "over status in (completed, invoiced) with nte = coalesce(nte_approved_cents, nte_cents) > 0 and final_cost_cents not null";
  const percentile = (q: 50 | 95, expr: string, over: string) =>
    `nearest-rank p${q} (the value of rank ceil(${q / 100} * n)) of ${expr} over ${over}`;
  const provenance: Report["provenance"] = {
    "goal_fulfillment.completion_rate": p(
      `${ORDERS_SOURCE}: status`,
      "count(status in (completed, invoiced)) / count(status in (completed, invoiced, cannot_complete, cancelled))",
      outcomes,
      "Every order that reached an outcome is in the sample: a cancellation before any contractor accepted (the order still offered or waiting for a dispatcher) counts as not completed, whatever its reason. Open orders are not in it.",
    ),
    "goal_fulfillment.completion_rate_after_acceptance": p(
      `${ORDERS_SOURCE}: status, accepted_at`,
      "count(status in (completed, invoiced)) / count(status in (completed, invoiced, cannot_complete) or (status = cancelled and accepted_at is not null))",
      afterAcceptance,
      "Leaves out orders cancelled before a contractor accepted: a failure to dispatch never counts against it. Read completion_rate for every outcome.",
    ),
    "goal_fulfillment.completed_after_redispatch": p(
      `${ORDERS_SOURCE}: status, redispatch_count (assignments from cannot_complete)`,
      "count(status in (completed, invoiced) and redispatch_count > 0)",
      succeeded,
      "These count as completed in both completion rates, although their first contractor could not finish.",
    ),
    "goal_fulfillment.cancelled_before_acceptance": p(
      `${ORDERS_SOURCE}: status, accepted_at`,
      "count(status = cancelled and accepted_at is null)",
      cancelled,
    ),
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
      nteIncreased,
    ),
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
    "operations.dispatch_latency_p50": p(
      `${ORDERS_SOURCE}: dispatch_latency_ms (in process, monotonic clock, stored after the commit)`,
      percentile(
        50,
        "dispatch_latency_ms (request received, before authentication -> order and first offer committed, durable)",
        "orders offered automatically with a recorded latency",
      ),
      offer.n,
      "Measured inside the service: the network between the caller and the service is not in it. Orders never offered are not in the sample (orders_never_offered), nor orders without a recorded latency (dispatch_latency_unrecorded).",
    ),
    "operations.dispatch_latency_p95": p(
      `${ORDERS_SOURCE}: dispatch_latency_ms (in process, monotonic clock, stored after the commit)`,
      percentile(95, "dispatch_latency_ms", "orders offered automatically with a recorded latency"),
      offer.n,
    ),
    "operations.dispatch_latency_unrecorded": p(
      `${ORDERS_SOURCE}: matched_at, dispatch_latency_ms`,
      "count(matched_at is not null and dispatch_latency_ms is null)",
      matched,
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
    "operations.acceptance_latency_p50": p(
      `${ORDERS_SOURCE}: first_accepted_at, received_at`,
      percentile(50, "first_accepted_at - received_at (ms)", "orders accepted or assigned at least once"),
      firstAccept.n,
      "The first acceptance: a later reassignment does not move it (final_assignment_latency shows the last one).",
    ),
    "operations.acceptance_latency_p95": p(
      `${ORDERS_SOURCE}: first_accepted_at, received_at`,
      percentile(95, "first_accepted_at - received_at (ms)", "orders accepted or assigned at least once"),
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
    "operations.offer_funnel": p(
      `${ORDERS_SOURCE}: offers_made, offers_declined, offers_expired, accepted_offer_attempt, status`,
      "offers_made = sum(offers_made); offers_accepted = count(accepted_offer_attempt is not null); offers_declined = sum(offers_declined); offers_expired = sum(offers_expired); offers_pending = count(status = offered); offers_withdrawn = the rest",
      offered,
    ),
    "operations.offer_funnel.first_offer_acceptance_rate": p(
      `${ORDERS_SOURCE}: accepted_offer_attempt, offers_declined, offers_expired`,
      "count(accepted_offer_attempt = 1) / count(accepted_offer_attempt = 1 or offers_declined + offers_expired > 0)",
      firstAnswered,
      "First offers still pending, or withdrawn before an answer, are not in the sample.",
    ),
    "operations.offer_funnel.mean_offers_per_order": p(
      `${ORDERS_SOURCE}: offers_made`,
      "sum(offers_made) / count(offers_made > 0)",
      offered,
    ),
    "service_levels.on_time_arrival_rate": p(
      `${ORDERS_SOURCE} with a promise (live query): on_site_at, window_start, arrive_by`,
      `count(on_site_at between window_start - ${ON_TIME_EARLY_MS / 60_000} min and window_start + ${ON_TIME_LATE_MS / 60_000} min, or on_site_at <= arrive_by without a window) / count(on_site_at is not null and (window_start or arrive_by is not null))`,
      sl.onTime.arrived,
      "on_site_at is the arrival of the contractor holding the job (a reassignment clears it); orders received before it was stored (migration 0013) or without a promise (migration 0017) are not in the sample.",
    ),
    "service_levels.on_time_arrivals": p(
      `${ORDERS_SOURCE} with a promise (live query): on_site_at, window_start, arrive_by`,
      "on_time_arrival_rate's numerator",
      sl.onTime.arrived,
    ),
    ...Object.fromEntries(
      URGENCIES.map((u) => [
        `service_levels.sla_attainment.${u}`,
        p(
          `${ORDERS_SOURCE} with a promise (live query): respond_by, first_accepted_at, arrive_by, window_end, on_site_at, sla_*_breached_at, status`,
          `count(urgency = ${u} and every clock met) / count(urgency = ${u} and every clock has an outcome); respond met: first_accepted_at <= respond_by; arrive met: on_site_at <= coalesce(arrive_by, window_end)`,
          sl.attainment[u].decided,
          "Orders with a clock still running, or cancelled before a deadline they had not yet met, are not in the sample; a deadline that passed while the order is open counts as missed before the watch records the breach.",
        ),
      ]),
    ),
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
    "trust_signals.audit_log": p(
      "audit log: latest signed checkpoint and the queue of records not yet sequenced",
      "records = checkpoint tree_size + queued records",
      c.audit.records,
      "The whole log: every account, live and sandbox records alike (sandbox_excluded is about the order figures).",
    ),
    "trust_signals.vendor_trust": p(
      "service configuration (VENDOR_* settings), as published in /.well-known/vendor-trust.json",
      "a field is published when its setting is given",
      null,
    ),
    "trust_signals.contractor_verification": p(
      "contractors table, live pool, active = 1 and excluded = 0: insurance_verified_until and license_verified_until (from the pool file)",
      "count(both verified through today, UTC) / count(*); not_measured when no such contractor has either date",
      active,
      "Verification dates come from the pool file we are given; a share is published only when at least one contractor has one.",
    ),
  };

  return {
    period,
    window: { start: c.start.toISOString(), end: computedAt },
    generated_at: computedAt,
    estimated: true as const,
    goal_fulfillment: {
      completion_rate: ratio(succeeded, outcomes),
      completion_rate_after_acceptance: ratio(succeeded, afterAcceptance),
      completed_after_redispatch: sum("redispatched", FINISHED),
      cancelled_before_acceptance: cancelled - cancelledAfterAcceptance,
      nte_variance: meanPpm(sum("nte_ppm"), nteOrders),
      nte_within_rate: ratio(sum("nte_within"), nteOrders),
      nte_within_original_rate: ratio(sum("nte_within_original"), nteOrders),
      nte_increase_rate: ratio(nteIncreased, nteOrders),
      nte_increase_mean: meanPpm(sum("nte_increase_ppm"), nteIncreased),
    },
    operations: {
      orders_received: received,
      orders_by_status: ordersByStatus,
      orders_matched: matched,
      orders_never_offered: received - matched,
      orders_dispatched: dispatched,
      orders_awaiting_dispatcher: ordersByStatus.needs_dispatcher,
      auto_match_rate: ratio(matched, received),
      dispatch_latency_p50: ms(offer.p50, offer.n),
      dispatch_latency_p95: ms(offer.p95, offer.n),
      dispatch_latency_unrecorded: sum("offer_unrecorded"),
      matching_time_p50: ms(matching.p50, matching.n),
      matching_time_p95: ms(matching.p95, matching.n),
      acceptance_latency_p50: ms(firstAccept.p50, firstAccept.n),
      acceptance_latency_p95: ms(firstAccept.p95, firstAccept.n),
      final_assignment_latency_p50: ms(finalAccept.p50, finalAccept.n),
      final_assignment_latency_p95: ms(finalAccept.p95, finalAccept.n),
      offer_funnel: {
        offers_made: offers.made,
        offers_accepted: offers.accepted,
        offers_declined: offers.declined,
        offers_expired: offers.expired,
        offers_withdrawn: withdrawn,
        offers_pending: offers.pending,
        first_offer_acceptance_rate: ratio(sum("first_offer_accepted"), firstAnswered),
        mean_offers_per_order: {
          value: offered === 0 ? null : round(offers.made / offered, 4),
          sample_size: offered,
          unit: "offers",
        },
      },
    },
    service_levels: {
      on_time_arrival_rate: ratio(sl.onTime.onTime, sl.onTime.arrived),
      on_time_arrivals: sl.onTime.onTime,
      sla_attainment: {
        emergency: ratio(sl.attainment.emergency.met, sl.attainment.emergency.decided),
        urgent: ratio(sl.attainment.urgent.met, sl.attainment.urgent.decided),
        routine: ratio(sl.attainment.routine.met, sl.attainment.routine.decided),
        scheduled: ratio(sl.attainment.scheduled.met, sl.attainment.scheduled.decided),
      },
    },
    trust_signals: {
      human_override_rate: ratio(sum("overridden"), dispatched),
      human_dispatch_rate: ratio(sum("human_dispatched"), received),
      redispatch_rate: ratio(sum("redispatched"), dispatched),
      overrides: sum("overrides"),
      human_dispatches: sum("human_dispatches"),
      redispatches: sum("redispatches"),
      manual_assignments: sum("manual_assignments"),
      sandbox_excluded: true as const,
      audit_trail_retention_years: 7,
      audit_log: {
        records: c.audit.records,
        sequenced: c.audit.sequenced,
        latest_checkpoint: c.audit.checkpoint,
        checkpoint_url: `${baseUrl}/api/attest/checkpoint`,
      },
      vendor_trust: {
        document: `${baseUrl}/.well-known/vendor-trust.json`,
        published: vendor(true),
        not_published: vendor(false),
      },
      contractor_verification: {
        status: verification,
        active_live_contractors: active,
        with_verification_dates: dated,
        verified_insurance_and_license:
          verification === "measured"
            ? ratio(verified, active)
            : { value: null, sample_size: active, unit: "ratio" },
      },
    },
    published_targets: { ...PUBLISHED_TARGETS },
    methodology: METHODOLOGY,
    provenance,
  };
}

export const evalsOperation = defineOperation({
  id: "dispatchEvals",
  name: "dispatch.evals",
  summary: "Operational evals",
  description:
    "Public operational figures of the live orders received in a rolling window (rolling_7d, rolling_30d, " +
    "rolling_90d): goal fulfillment (completion rate over every outcome and after acceptance, NTE against the " +
    "reported cost), operations (counts by status, dispatch latency p50/p95 to the first offer committed, " +
    "time to first acceptance, the offer funnel), service levels (on-time arrival rate, SLA attainment per " +
    "urgency) and trust signals (human dispatch, override and re-dispatch " +
    "rates, audit log size and latest signed checkpoint, vendor-trust posture, contractor verification), with " +
    "methodology and per-field provenance. Figures are estimated: true (self-reported).",
  access: "public",
  effect: "read",
  limit: "none",
  http: { method: "GET", path: "/api/dispatch/analytics/evals", input: "query" },
  problems: [503],
  input: evalsInput,
  output: evalsOutput,
  example: { period: "rolling_30d" },
  async handler(ctx, input) {
    const computed = await cached(ctx.services, input.period);
    return report(computed, input.period, ctx.services, ctx.baseUrl);
  },
});
