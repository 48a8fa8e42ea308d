// dispatchEvals: public operational figures of the live orders received in a rolling window (completion,
// NTE variance, dispatch latencies, human overrides, counts by status) with trust signals, methodology
// and per-field provenance. Self-reported: `estimated` is always true.

import { z } from "zod";
import { ORDER_STATUSES, type OrderStatus } from "../domain/orders/transitions.js";
import type { EvalsFigures, StatusSums } from "../storage/evals-store.js";
import { checkpointSchema } from "./attest.js";
import { dispatchLatenciesStored } from "./dispatch-latency.js";
import { defineOperation, type Services } from "./operation.js";

export const EVAL_PERIODS = { rolling_7d: 7, rolling_30d: 30, rolling_90d: 90 } as const;
type Period = keyof typeof EVAL_PERIODS;
const PERIOD_NAMES = Object.keys(EVAL_PERIODS) as Period[];

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

const metric = z.object({
  value: z.number().nullable().describe("Null when the sample is empty (or the figure is not recorded)."),
  sample_size: z.number().int().describe("How many orders (or contractors) the figure is computed over."),
  unit: z.string().describe("ratio (0-1) or ms."),
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
        "(completed + invoiced) / (completed + invoiced + cannot_complete + cancelled after acceptance).",
      ),
      nte_variance: metric.describe(
        "Mean of (final cost - NTE in force) / NTE in force over completed and invoiced orders with an NTE.",
      ),
      nte_within_rate: metric.describe("Share of those orders whose final cost is within the NTE in force."),
    }),
    operations: z.object({
      orders_received: count.describe("Live orders received in the window."),
      orders_by_status: z
        .record(z.enum(ORDER_STATUSES), count)
        .describe("The window's orders by their current status; every status, zero included."),
      orders_matched: count.describe("Orders offered automatically to a contractor when received."),
      orders_dispatched: count.describe(
        "Orders that reached a contractor: an automatic offer or a dispatcher.",
      ),
      orders_awaiting_dispatcher: count.describe("Orders now in needs_dispatcher."),
      auto_match_rate: metric.describe("orders_matched / orders_received."),
      dispatch_latency_p50: metric.describe(
        "Request received (before authentication) -> first offer committed (durable), nearest-rank median.",
      ),
      dispatch_latency_p95: metric.describe(
        "Request received (before authentication) -> first offer committed (durable), nearest-rank 95th percentile.",
      ),
      acceptance_latency_p50: metric.describe("Received -> accepted, nearest-rank median."),
      acceptance_latency_p95: metric.describe("Received -> accepted, nearest-rank 95th percentile."),
    }),
    trust_signals: z.object({
      human_override_rate: metric.describe(
        "Dispatched orders a dispatcher assigned or reassigned by hand at least once / orders dispatched.",
      ),
      overrides: count.describe(
        "Every dispatcher assignment of the window's orders (several per order count).",
      ),
      sandbox_excluded: z.literal(true),
      audit_trail_retention_years: count,
      audit_log: z.object({
        records: count.describe("Records written to the audit log (all accounts and modes)."),
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
          .enum(["measured", "no_contractors"])
          .describe("no_contractors: the live pool has no active contractor, so there is no share."),
        active_live_contractors: count,
        verified_insurance_and_license: metric,
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
      }),
    ),
  })
  .meta({ id: "EvalsReport" });

type Report = z.input<typeof evalsOutput>;

const METHODOLOGY =
  "Computed from the orders stored by this service, for the rolling window ending at generated_at. Only live " +
  "orders count (sandbox, test-key orders are excluded), and an order belongs to the window by the time it was " +
  "received; its figures use its status and fields as they stand now, so an order received in the window and " +
  "completed later counts as completed. Completion rate: (completed + invoiced) / (completed + invoiced + " +
  "cannot_complete + cancelled after a contractor accepted or was assigned); orders still open, and orders " +
  "cancelled before acceptance, are left out. NTE variance: the mean of (final cost - NTE in force) / NTE in " +
  "force over completed and invoiced orders that have an NTE, where the final cost is the invoice, else the " +
  "cost the contractor reported, and the NTE in force is the last increase the caller approved, else the " +
  "caller's own; negative means under the NTE. Dispatch latency: received -> first offer is measured in " +
  "process on the monotonic clock, from the request's arrival (before its key is checked) to the moment the " +
  "order and its first offer are committed and durable, and stored with the order right after; received -> accepted is accepted_at - received_at, where a dispatcher's assignment " +
  "counts as acceptance and a reassignment moves accepted_at. Percentiles are nearest-rank (the value of rank " +
  "ceil(q * n)). Human-override rate: orders a dispatcher assigned or reassigned by hand at least once / " +
  "orders dispatched (offered automatically or assigned); `overrides` counts every assignment. Ratios are " +
  "rounded to 4 decimals, latencies to the microsecond. A computed report is reused for up to 5 seconds " +
  "per period. The published targets are self-reported goals, not a binding service level.";

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
  contractors: { active: number; verified: number };
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
  const [figures, checkpoint, pending, contractors] = await Promise.all([
    services.store.evals.figures(true, start.toISOString(), until),
    services.audit.checkpoint(),
    services.store.audit.pendingAuditCount(),
    services.store.evals.activeLiveContractors(at.toISOString().slice(0, 10)),
  ]);
  const sequenced = checkpoint.checkpoint?.tree_size ?? 0;
  return {
    at,
    start,
    figures,
    audit: { records: sequenced + pending, sequenced, checkpoint: checkpoint.checkpoint },
    contractors,
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
const ratio = (num: number, den: number) => ({
  value: den === 0 ? null : round(num / den, 4),
  sample_size: den,
  unit: "ratio",
});
const ms = (v: number | null, n: number) => ({ value: round(v, 3), sample_size: n, unit: "ms" });

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
  const succeeded = sum("orders", ["completed", "invoiced"]);
  const failed = sum("orders", ["cannot_complete"]) + sum("accepted", ["cancelled"]);
  const nteOrders = sum("nte_orders");
  const dispatched = sum("dispatched");
  const matched = sum("matched");
  const offer = latency.offer;
  const accept = latency.accept;
  const computedAt = c.at.toISOString();
  const vendor = (published: boolean) =>
    VENDOR_FIELD_NAMES.filter((f) => (services.config[VENDOR_FIELDS[f]] !== undefined) === published);

  const p = (source: string, formula: string, sampleSize: number | null) => ({
    source,
    formula,
    sample_size: sampleSize,
    computed_at: computedAt,
  });
  const provenance: Report["provenance"] = {
    "goal_fulfillment.completion_rate": p(
      `${ORDERS_SOURCE}: status, accepted_at`,
      "count(status in (completed, invoiced)) / count(status in (completed, invoiced, cannot_complete) or (status = cancelled and accepted_at is not null))",
      succeeded + failed,
    ),
    "goal_fulfillment.nte_variance": p(
      `${ORDERS_SOURCE}: invoice_cents, final_cost_cents, nte_approved_cents, nte_cents`,
      "mean((coalesce(invoice_cents, final_cost_cents) - nte) / nte), nte = coalesce(nte_approved_cents, nte_cents), over status in (completed, invoiced) with nte > 0; each term rounded to 1e-6",
      nteOrders,
    ),
    "goal_fulfillment.nte_within_rate": p(
      `${ORDERS_SOURCE}: as nte_variance`,
      "count(coalesce(invoice_cents, final_cost_cents) <= nte) / count(orders of nte_variance)",
      nteOrders,
    ),
    "operations.orders_received": p(ORDERS_SOURCE, "count(*)", received),
    "operations.orders_by_status": p(`${ORDERS_SOURCE}: status`, "count(*) group by status", received),
    "operations.orders_matched": p(`${ORDERS_SOURCE}: matched_at`, "count(matched_at is not null)", received),
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
    "operations.auto_match_rate": p(ORDERS_SOURCE, "orders_matched / orders_received", received),
    "operations.dispatch_latency_p50": p(
      `${ORDERS_SOURCE}: dispatch_latency_ms (measured in process, monotonic clock, stored after the commit)`,
      "nearest-rank p50 of dispatch_latency_ms (request received, before authentication -> first offer committed, durable) over orders offered automatically with a recorded latency",
      offer.n,
    ),
    "operations.dispatch_latency_p95": p(
      `${ORDERS_SOURCE}: dispatch_latency_ms (measured in process, monotonic clock, stored after the commit)`,
      "nearest-rank p95 of dispatch_latency_ms (request received -> first offer committed)",
      offer.n,
    ),
    "operations.acceptance_latency_p50": p(
      `${ORDERS_SOURCE}: accepted_at, received_at`,
      "nearest-rank p50 of accepted_at - received_at (ms) over orders with accepted_at",
      accept.n,
    ),
    "operations.acceptance_latency_p95": p(
      `${ORDERS_SOURCE}: accepted_at, received_at`,
      "nearest-rank p95 of accepted_at - received_at (ms)",
      accept.n,
    ),
    "trust_signals.human_override_rate": p(
      `${ORDERS_SOURCE}: override_count (one per order.assigned audit record)`,
      "count(override_count > 0) / orders_dispatched",
      dispatched,
    ),
    "trust_signals.overrides": p(
      `${ORDERS_SOURCE}: override_count (one per order.assigned audit record)`,
      "sum(override_count)",
      received,
    ),
    "trust_signals.audit_log": p(
      "audit log: latest signed checkpoint and the queue of records not yet sequenced",
      "records = checkpoint tree_size + queued records",
      c.audit.records,
    ),
    "trust_signals.vendor_trust": p(
      "service configuration (VENDOR_* settings), as published in /.well-known/vendor-trust.json",
      "a field is published when its setting is given",
      null,
    ),
    "trust_signals.contractor_verification": p(
      "contractors table, live pool, active and not excluded: insurance_verified_until and license_verified_until (from the pool file)",
      "count(both verified through today, UTC) / count(active live contractors)",
      c.contractors.active,
    ),
  };

  return {
    period,
    window: { start: c.start.toISOString(), end: computedAt },
    generated_at: computedAt,
    estimated: true as const,
    goal_fulfillment: {
      completion_rate: ratio(succeeded, succeeded + failed),
      nte_variance: {
        value: nteOrders === 0 ? null : round(sum("nte_ppm") / nteOrders / 1e6, 4),
        sample_size: nteOrders,
        unit: "ratio",
      },
      nte_within_rate: ratio(sum("nte_within"), nteOrders),
    },
    operations: {
      orders_received: received,
      orders_by_status: ordersByStatus,
      orders_matched: matched,
      orders_dispatched: dispatched,
      orders_awaiting_dispatcher: ordersByStatus.needs_dispatcher,
      auto_match_rate: ratio(matched, received),
      dispatch_latency_p50: ms(offer.p50, offer.n),
      dispatch_latency_p95: ms(offer.p95, offer.n),
      acceptance_latency_p50: ms(accept.p50, accept.n),
      acceptance_latency_p95: ms(accept.p95, accept.n),
    },
    trust_signals: {
      human_override_rate: ratio(sum("overridden"), dispatched),
      overrides: sum("overrides"),
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
        status: c.contractors.active === 0 ? ("no_contractors" as const) : ("measured" as const),
        active_live_contractors: c.contractors.active,
        verified_insurance_and_license: ratio(c.contractors.verified, c.contractors.active),
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
    "rolling_90d): goal fulfillment (completion rate, NTE variance and share within NTE), operations (counts by " +
    "status, dispatch latency p50/p95 to the first offer and to acceptance) and trust signals (human-override " +
    "rate, audit log size and latest signed checkpoint, vendor-trust posture, contractor verification), with " +
    "methodology and per-field provenance. Figures are estimated: true (self-reported).",
  access: "public",
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
