// dispatchEvals: public operational figures of the live orders received in a rolling window (completion,
// NTE, dispatch and acceptance latencies, the offer funnel, human intervention by kind, counts by status)
// and of the jobs completed in that window moved back 30 days (first-time fix and recalls), with trust
// signals, methodology and per-field provenance (formula, sample, and a note where a figure is easy to
// misread). Self-reported: `estimated` is always true.

import { z } from "zod";
import type { ComplianceCounts } from "../../domain/maintenance/plan.js";
import { type SlaFigures, withRunningClocks } from "../../domain/orders/sla-figures.js";
import { ORDER_STATUSES } from "../../domain/orders/transitions.js";
import { URGENCIES } from "../../domain/pricing.js";
import type { ActiveContractors, EvalsFigures, RecallCount } from "../../storage/evals-store.js";
import { checkpointSchema } from "../audit/attest.js";
import { defineOperation, type Services } from "../kernel/operation.js";
import { everyKeyObject } from "../kernel/schemas.js";
import { dispatchLatenciesStored } from "../orders/dispatch-latency.js";
import { completionFigures, completionProvenance } from "./figures/completion.js";
import { orderCounts, orderCountsProvenance } from "./figures/counts.js";
import { offerFunnel, offerFunnelProvenance } from "./figures/funnel.js";
import { humanIntervention, humanInterventionProvenance } from "./figures/human-intervention.js";
import { latencyFigures, latencyProvenance } from "./figures/latencies.js";
import { maintenanceFigures, maintenanceProvenance } from "./figures/maintenance.js";
import { METHODOLOGY } from "./figures/methodology.js";
import { nteFigures, nteProvenance } from "./figures/nte.js";
import { entriesAt } from "./figures/provenance.js";
import { RECALL_MINIMUM_JOBS, recallFigures, recallProvenance, recallWindow } from "./figures/recalls.js";
import {
  rolledServiceLevels,
  serviceLevelFigures,
  serviceLevelProvenance,
} from "./figures/service-levels.js";
import { type Tally, tallyOf } from "./figures/tally.js";
import {
  type AuditLogState,
  auditLogFigure,
  contractorVerification,
  trustSignalsProvenance,
  VENDOR_FIELD_NAMES,
  vendorTrustFigure,
} from "./figures/trust-signals.js";

export { ms, ratio } from "./figures/measures.js";

export const EVAL_PERIODS = { rolling_7d: 7, rolling_30d: 30, rolling_90d: 90 } as const;
export type Period = keyof typeof EVAL_PERIODS;
export const PERIOD_NAMES = Object.keys(EVAL_PERIODS) as Period[];

const PUBLISHED_TARGETS = {
  quote_turnaround_hours: 2,
  completion_rate: 0.9,
  dispatch_latency_p50_ms: 340,
  human_override_rate: 0.03,
} as const;

/** A computed report is reused for this long (per period and process): see the methodology. */
export const EVALS_CACHE_MS = 5_000;

export const metric = z.object({
  value: z.number().nullable().describe("Null when the sample is empty (or the figure is not recorded)."),
  sample_size: z
    .number()
    .int()
    .describe("How many orders (or contractors) the figure is computed over: its denominator."),
  unit: z.string().describe("ratio (0-1), ms, or offers (a mean number of offers per order)."),
});

const evalsInput = z.object({
  period: z
    .enum(PERIOD_NAMES as [Period, ...Period[]], {
      error: `period must be one of: ${PERIOD_NAMES.join(", ")}`,
    })
    .default("rolling_30d")
    .describe("Rolling window: rolling_7d, rolling_30d (default) or rolling_90d."),
});

const count = z.number().int();

/** Planned-maintenance compliance (figures/maintenance.ts): the public report's, and an account's own. */
export const plannedMaintenanceSchema = z
  .object({
    occurrences_due: count.describe(
      "Maintenance plans' occurrences whose window ended in the window, not skipped: the rate's sample.",
    ),
    completed_in_window: count.describe("Of which done (order completed or later) by the window's end."),
    completed_late: count.describe("Of which done after the window's end."),
    not_done: count.describe("Of which not done yet."),
    not_generated: count.describe("Of which no order could be created for the window (failed)."),
    skipped: count.describe("Occurrences the account skipped, with a reason: not due."),
    compliance_rate: z
      .object({
        value: z.number().nullable(),
        sample_size: z.number().int(),
        unit: z.string(),
      })
      .describe("completed_in_window / occurrences_due: planned work done on time."),
  })
  .describe(
    "Planned-maintenance compliance: of the maintenance plans' occurrences due in the window, the share done " +
      "within their window.",
  );

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
    recalls: z
      .object({
        completed_between: z
          .object({ start: z.iso.datetime(), end: z.iso.datetime() })
          .describe(
            "The jobs these figures count: live orders completed from start (included) to end (excluded), the " +
              "report's window moved back 30 days, so that every one has had its whole 30 days to be recalled.",
          ),
        jobs_completed: count.describe("Jobs completed in completed_between: the rates' sample."),
        jobs_recalled: count.describe("Of which named by a later order as its recall (recall_of)."),
        first_time_fix_rate: metric.describe(
          "Jobs no later order named as its recall / jobs completed (in completed_between): fixed the first time.",
        ),
        recall_rate: metric.describe(
          "Jobs a later order named as its recall (a callback within 30 days) / jobs completed: " +
            "1 - first_time_fix_rate.",
        ),
        by_contractor: z
          .object({
            minimum_jobs: count.describe(
              "A contractor is measured once it completed this many of the jobs in completed_between.",
            ),
            contractors: count.describe("Contractors that completed any of them."),
            contractors_measured: count.describe("Of which with at least minimum_jobs: the spread's sample."),
            first_time_fix_rate_lowest: metric.describe(
              "The lowest first-time-fix rate of a measured contractor (sample: contractors measured).",
            ),
            first_time_fix_rate_median: metric.describe(
              "The nearest-rank median of the measured contractors' first-time-fix rates.",
            ),
            first_time_fix_rate_highest: metric.describe("The highest of them."),
          })
          .describe(
            "The spread of the first-time-fix rate over contractors, each over the jobs it completed, unnamed " +
              "(the dispatch team reads each contractor's in the contractor directory).",
          ),
      })
      .describe(
        "First-time fix and recalls: of the jobs completed, how many did not bring the caller back to the same " +
          "site for the same trade within 30 days (an order naming the job as its recall_of).",
      ),
    planned_maintenance: plannedMaintenanceSchema,
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

/** Figures and trust signals of one computation (URLs are added per request). */
interface Computed {
  at: Date;
  start: Date;
  figures: EvalsFigures;
  audit: AuditLogState;
  contractors: ActiveContractors;
  serviceLevels: SlaFigures;
  recalls: RecallCount[];
  maintenance: ComplianceCounts;
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
  const recalled = recallWindow(start, at);
  const [figures, checkpoint, pending, contractors, running, recalls, maintenance] = await Promise.all([
    services.store.evals.figures(true, start.toISOString(), until),
    services.audit.checkpoint(),
    services.store.audit.pendingAuditCount(),
    services.store.evals.activeLiveContractors(at.toISOString().slice(0, 10)),
    services.store.evals.runningClockRows(true, start.toISOString(), until),
    services.store.evals.recallCounts(true, recalled.start.toISOString(), recalled.end.toISOString()),
    services.store.maintenance.complianceCounts({ livemode: true, since: start.toISOString(), until }),
  ]);
  const sequenced = checkpoint.checkpoint?.tree_size ?? 0;
  return {
    at,
    start,
    figures,
    audit: { records: sequenced + pending, sequenced, checkpoint: checkpoint.checkpoint },
    contractors,
    serviceLevels: withRunningClocks(rolledServiceLevels(tallyOf(figures)), running, at),
    recalls,
    maintenance,
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

/** The report: each section assembled from its figures, and every figure's provenance. */
function report(c: Computed, period: Period, services: Services, baseUrl: string): Report {
  const t = tallyOf(c.figures);
  const computedAt = c.at.toISOString();
  return {
    period,
    window: { start: c.start.toISOString(), end: computedAt },
    generated_at: computedAt,
    estimated: true as const,
    goal_fulfillment: { ...completionFigures(t), ...nteFigures(t) },
    operations: {
      ...orderCounts(t),
      ...latencyFigures(c.figures.latency, t),
      offer_funnel: offerFunnel(t),
    },
    service_levels: serviceLevelFigures(c.serviceLevels),
    recalls: recallFigures(c.recalls, recallWindow(c.start, c.at)),
    planned_maintenance: maintenanceFigures(c.maintenance),
    trust_signals: {
      ...humanIntervention(t),
      sandbox_excluded: true as const,
      audit_trail_retention_years: 7,
      audit_log: auditLogFigure(c.audit, baseUrl),
      vendor_trust: vendorTrustFigure(services.config, baseUrl),
      contractor_verification: contractorVerification(c.contractors),
    },
    published_targets: { ...PUBLISHED_TARGETS },
    methodology: METHODOLOGY,
    provenance: provenanceOf(c, t, computedAt),
  };
}

/** Every figure's provenance, in the report's order. */
function provenanceOf(c: Computed, t: Tally, computedAt: string): Report["provenance"] {
  const p = entriesAt(computedAt);
  return {
    ...completionProvenance(t, p),
    ...nteProvenance(t, p),
    ...orderCountsProvenance(t, p),
    ...latencyProvenance(c.figures.latency, t, p),
    ...offerFunnelProvenance(t, p),
    ...serviceLevelProvenance(c.serviceLevels, p),
    ...recallProvenance(c.recalls, p),
    ...maintenanceProvenance(c.maintenance, p),
    ...humanInterventionProvenance(t, p),
    ...trustSignalsProvenance(c.audit, c.contractors, p),
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
    "urgency), first-time fix (first_time_fix_rate and recall_rate, overall and their spread over contractors " +
    `with at least ${RECALL_MINIMUM_JOBS} jobs), planned-maintenance compliance and trust signals (human dispatch, override and re-dispatch ` +
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
