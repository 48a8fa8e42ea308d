// dispatchEvalsSeries: the evals' headline figures per UTC day, for charts (the console's evals page, or
// anyone's): orders received by status, completion rate, dispatch latency p50/p95, acceptance latency
// p50/p95 and the human override rate, computed with the same formulas as dispatchEvals, from the daily
// rollup (evals-store.ts `daily`). Public and self-reported like the evals.

import { z } from "zod";
import { ORDER_STATUSES } from "../../domain/orders/transitions.js";
import type { EvalsFigures } from "../../storage/evals-store.js";
import { defineOperation, type Services } from "../kernel/operation.js";
import { everyKeyObject } from "../kernel/schemas.js";
import { dispatchLatenciesStored } from "../orders/dispatch-latency.js";
import { EVAL_PERIODS, EVALS_CACHE_MS, metric, ms, PERIOD_NAMES, type Period, ratio } from "./evals.js";
import { FINISHED, tallyOf } from "./figures/tally.js";

const DAY_MS = 86_400_000;
const MODES = ["live", "sandbox"] as const;
type Mode = (typeof MODES)[number];

const evalsSeriesInput = z.object({
  period: z
    .enum(PERIOD_NAMES as [Period, ...Period[]], {
      error: `period must be one of: ${PERIOD_NAMES.join(", ")}`,
    })
    .default("rolling_30d")
    .describe(
      "How many UTC days, ending today: rolling_7d (7), rolling_30d (30, default) or rolling_90d (90).",
    ),
  mode: z
    .enum(MODES, { error: "mode must be live or sandbox" })
    .default("live")
    .describe(
      "live (default: the orders of live keys, as dispatchEvals counts) or sandbox (test-key orders, " +
        "for instance the sandbox's simulated traffic on a fresh install).",
    ),
});

const count = z.number().int();

const dayFigures = z.object({
  day: z.iso.date().describe("The UTC day (YYYY-MM-DD) the orders were received."),
  partial: z.boolean().describe("True for today: the day is not over, its figures are so far."),
  orders_received: count,
  orders_by_status: everyKeyObject(ORDER_STATUSES, count).describe(
    "That day's orders by their current status; every status, zero included.",
  ),
  completion_rate: metric.describe(
    "(completed + invoiced) / (completed + invoiced + cannot_complete + cancelled) of that day's orders.",
  ),
  dispatch_latency_p50: metric.describe("Received -> first offer committed, nearest-rank median (ms)."),
  dispatch_latency_p95: metric.describe(
    "Received -> first offer committed, nearest-rank 95th percentile (ms).",
  ),
  acceptance_latency_p50: metric.describe("Received -> first acceptance, nearest-rank median (ms)."),
  acceptance_latency_p95: metric.describe("Received -> first acceptance, nearest-rank 95th percentile (ms)."),
  human_override_rate: metric.describe(
    "Orders whose contractor a dispatcher replaced / orders dispatched, of that day's orders.",
  ),
});

export const evalsSeriesOutput = z
  .object({
    period: z.enum(PERIOD_NAMES as [Period, ...Period[]]),
    mode: z.enum(MODES),
    generated_at: z.iso.datetime(),
    estimated: z.literal(true).describe("True: self-reported figures computed from our own telemetry."),
    days: z.array(dayFigures).describe("One entry per UTC day, oldest first, days without orders included."),
    methodology: z.string(),
  })
  .meta({ id: "EvalsSeries" });

type Series = z.input<typeof evalsSeriesOutput>;
type Day = Series["days"][number];

const METHODOLOGY =
  "Each day's figures are those of the orders received on that UTC day, whatever happened to them since " +
  "(an order received Monday and completed Tuesday counts as completed, on Monday), with the formulas of " +
  "GET /api/dispatch/analytics/evals: completion_rate over every order that reached an outcome, latencies " +
  "nearest-rank (the value of rank ceil(q * n)) over the orders that have them, from the day's log-bucket " +
  "sketch (within 1 % of the exact value), human_override_rate over " +
  "the orders dispatched. The days are whole UTC days ending today (today partial), read from the daily " +
  "rollup the evals use. A series is reused for up to 5 seconds per period and mode.";

function dayOf(day: string, partial: boolean, figures: EvalsFigures | undefined): Day {
  const { byStatus, sum } = tallyOf(figures);
  const succeeded = sum("orders", FINISHED);
  const outcomes = succeeded + byStatus.cannot_complete + byStatus.cancelled;
  const offer = figures?.latency.offer ?? { n: 0, p50: null, p95: null };
  const accept = figures?.latency.first_accept ?? { n: 0, p50: null, p95: null };
  return {
    day,
    partial,
    orders_received: sum("orders"),
    orders_by_status: byStatus,
    completion_rate: ratio(succeeded, outcomes),
    dispatch_latency_p50: ms(offer.p50, offer.n),
    dispatch_latency_p95: ms(offer.p95, offer.n),
    acceptance_latency_p50: ms(accept.p50, accept.n),
    acceptance_latency_p95: ms(accept.p95, accept.n),
    human_override_rate: ratio(sum("overridden"), sum("dispatched")),
  };
}

async function compute(services: Services, period: Period, mode: Mode): Promise<Series> {
  const at = services.now();
  const today = at.toISOString().slice(0, 10);
  const days = EVAL_PERIODS[period];
  const first = new Date(Date.parse(`${today}T00:00:00.000Z`) - (days - 1) * DAY_MS)
    .toISOString()
    .slice(0, 10);
  // As the evals do: the dispatch latencies this process answered are stored after their commit.
  await dispatchLatenciesStored(services);
  const figures = await services.store.evals.daily(mode === "live", first, today, ["offer", "first_accept"]);
  const out: Day[] = [];
  for (let i = 0; i < days; i++) {
    const day = new Date(Date.parse(`${first}T00:00:00.000Z`) + i * DAY_MS).toISOString().slice(0, 10);
    out.push(dayOf(day, day === today, figures.get(day)));
  }
  return {
    period,
    mode,
    generated_at: at.toISOString(),
    estimated: true,
    days: out,
    methodology: METHODOLOGY,
  };
}

const caches = new WeakMap<Services, Map<string, { at: number; series: Promise<Series> }>>();

/** The series computed at most EVALS_CACHE_MS ago (one computation at a time per period and mode). */
function cached(services: Services, period: Period, mode: Mode): Promise<Series> {
  let cache = caches.get(services);
  if (!cache) {
    cache = new Map();
    caches.set(services, cache);
  }
  const key = `${period}|${mode}`;
  const now = services.now().getTime();
  const hit = cache.get(key);
  if (hit && now - hit.at < EVALS_CACHE_MS && now >= hit.at) return hit.series;
  const series = compute(services, period, mode);
  const entry = { at: now, series };
  cache.set(key, entry);
  series.catch(() => {
    if (cache.get(key) === entry) cache.delete(key);
  });
  return series;
}

export const evalsSeriesOperation = defineOperation({
  id: "dispatchEvalsSeries",
  name: "dispatch.evals_series",
  summary: "Operational evals per day",
  description:
    "The evals' headline figures per UTC day for charts: orders received by status, completion rate, " +
    "dispatch latency p50/p95, acceptance latency p50/p95 and human override rate, for the last 7, 30 or " +
    "90 days ending today, live (default) or sandbox orders. Same formulas as the evals; estimated: true.",
  access: "public",
  effect: "read",
  limit: "none",
  http: { method: "GET", path: "/api/dispatch/analytics/evals/series", input: "query" },
  problems: [503],
  input: evalsSeriesInput,
  output: evalsSeriesOutput,
  example: { period: "rolling_7d", mode: "live" },
  handler(ctx, input) {
    return cached(ctx.services, input.period, input.mode);
  },
});
