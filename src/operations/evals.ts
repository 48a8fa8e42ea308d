// dispatchEvals: public operational figures computed from the live orders in the store for a rolling
// window. Figures that need the later order lifecycle are null with sample_size 0 until data exists.

import { z } from "zod";
import { defineOperation } from "./types.js";

export const EVAL_PERIODS = { rolling_7d: 7, rolling_30d: 30, rolling_90d: 90 } as const;
type Period = keyof typeof EVAL_PERIODS;
const PERIOD_NAMES = Object.keys(EVAL_PERIODS) as Period[];

export const PUBLISHED_TARGETS = {
  quote_turnaround_hours: 2,
  completion_rate: 0.9,
  dispatch_latency_p50_ms: 340,
  human_override_rate: 0.03,
} as const;

const metric = z.object({
  value: z.number().nullable(),
  sample_size: z.number().int(),
  unit: z.string(),
});

export const evalsInput = z.object({
  period: z
    .enum(PERIOD_NAMES as [Period, ...Period[]], {
      error: `period must be one of: ${PERIOD_NAMES.join(", ")}`,
    })
    .default("rolling_30d")
    .describe("Rolling window: rolling_7d, rolling_30d (default) or rolling_90d."),
});

export const evalsOutput = z
  .object({
    period: z.string(),
    window: z.object({ start: z.iso.datetime(), end: z.iso.datetime() }),
    generated_at: z.iso.datetime(),
    estimated: z.literal(true).describe("True: self-reported figures computed from our own telemetry."),
    goal_fulfillment: z.object({ completion_rate: metric, nte_variance: metric }),
    operations: z.object({
      orders_received: z.number().int(),
      orders_matched: z.number().int(),
      orders_awaiting_dispatcher: z.number().int(),
      auto_match_rate: metric,
      dispatch_latency_p50: metric,
      dispatch_latency_p95: metric,
    }),
    trust_signals: z.object({
      human_override_rate: metric,
      sandbox_excluded: z.literal(true),
      audit_trail_retention_years: z.number().int(),
    }),
    published_targets: z.object({
      quote_turnaround_hours: z.number(),
      completion_rate: z.number(),
      dispatch_latency_p50_ms: z.number(),
      human_override_rate: z.number(),
    }),
    methodology: z.string(),
    provenance: z.record(z.string(), z.object({ source: z.string(), computation: z.string() })),
  })
  .meta({ id: "EvalsReport" });

const PROVENANCE = {
  "operations.orders_received": {
    source: "orders table, live orders only",
    computation: "count of orders created in the window",
  },
  "operations.orders_matched": {
    source: "orders table",
    computation: "orders in the window that were matched to a contractor automatically",
  },
  "operations.orders_awaiting_dispatcher": {
    source: "orders table",
    computation: "orders in the window with status needs_dispatcher",
  },
  "operations.auto_match_rate": {
    source: "orders table",
    computation: "orders_matched / orders_received",
  },
  "operations.dispatch_latency_p50": {
    source: "orders.dispatch_latency_ms",
    computation: "nearest-rank median of (contractor matched - order request received), matched orders",
  },
  "operations.dispatch_latency_p95": {
    source: "orders.dispatch_latency_ms",
    computation: "nearest-rank 95th percentile of the same",
  },
  "goal_fulfillment.completion_rate": {
    source: "not yet recorded",
    computation:
      "completed / (completed + cannot_complete + cancelled after assignment); null until orders carry completion outcomes",
  },
  "goal_fulfillment.nte_variance": {
    source: "not yet recorded",
    computation: "mean of (final invoice - nte_cents) / nte_cents; null until invoices are recorded",
  },
  "trust_signals.human_override_rate": {
    source: "not yet recorded",
    computation:
      "orders with a manual assignment or override / orders dispatched; null until dispatchers act through the API",
  },
};

export const evalsOperation = defineOperation({
  id: "dispatchEvals",
  name: "dispatch.evals",
  summary: "Operational evals",
  description:
    "Public operational metrics for a rolling window (rolling_7d, rolling_30d, rolling_90d): goal fulfillment " +
    "(completion rate, NTE variance), operations (order counts, dispatch latency p50/p95) and trust signals " +
    "(human-override rate), with methodology and per-field provenance. Figures are estimated: true.",
  access: "public",
  limit: "none",
  http: { method: "GET", path: "/api/dispatch/analytics/evals", input: "query" },
  problems: [503],
  input: evalsInput,
  output: evalsOutput,
  example: { period: "rolling_30d" },
  async handler(ctx, input) {
    const { store } = ctx.services;
    const end = ctx.services.now();
    const start = new Date(end.getTime() - EVAL_PERIODS[input.period] * 86_400_000);
    const [since, until] = [start.toISOString(), new Date(end.getTime() + 1).toISOString()];
    const [counts, p50, p95] = await Promise.all([
      store.orderCounts(true, since, until),
      store.latencyQuantile(true, since, until, 0.5),
      store.latencyQuantile(true, since, until, 0.95),
    ]);
    const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
    const pending = (unit: string) => ({ value: null, sample_size: 0, unit });
    return {
      period: input.period,
      window: { start: start.toISOString(), end: end.toISOString() },
      generated_at: end.toISOString(),
      estimated: true as const,
      goal_fulfillment: { completion_rate: pending("ratio"), nte_variance: pending("ratio") },
      operations: {
        orders_received: counts.received,
        orders_matched: counts.matched,
        orders_awaiting_dispatcher: counts.awaiting_dispatcher,
        auto_match_rate: {
          value: counts.received === 0 ? null : round(counts.matched / counts.received),
          sample_size: counts.received,
          unit: "ratio",
        },
        dispatch_latency_p50: { value: round(p50), sample_size: counts.matched, unit: "ms" },
        dispatch_latency_p95: { value: round(p95), sample_size: counts.matched, unit: "ms" },
      },
      trust_signals: {
        human_override_rate: pending("ratio"),
        sandbox_excluded: true as const,
        audit_trail_retention_years: 7,
      },
      published_targets: { ...PUBLISHED_TARGETS },
      methodology:
        "Computed on request from the orders stored by this service for the rolling window ending now. " +
        "Only live orders count: sandbox (test-key) orders are excluded. Dispatch latency is measured in " +
        "process from the arrival of the order request to the moment a contractor is matched. Figures that " +
        "need the later order lifecycle are null with sample_size 0 until such data exists. The published " +
        "targets are self-reported goals, not a binding service level.",
      provenance: PROVENANCE,
    };
  },
});
