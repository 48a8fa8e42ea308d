// The evals' reads: per-status sums and the latency histograms of the orders received in a window,
// and the nearest-rank latencies. The SQL for each figure is defined once, in migrations/0012-evals-figures.ts.
//
// The window is read from the daily rollup the triggers keep (whole UTC days; on PostgreSQL the rollup
// plus its deltas not yet folded in, summed in one statement), corrected with live queries over the
// orders of the partial days at its edges: the shorter side of the first day (the orders before the
// window's start are subtracted, or those after it added) and any order received after the window's end.
// A percentile is found in two steps: the histograms say which bucket holds rank k and how many values
// come before it; the latency index, read in order within that bucket, gives the exact value.

import { type Kysely, sql } from "kysely";
import type { SlaFigureRow } from "../domain/orders/sla-figures.js";
import type { Dialect } from "./dialect.js";
import {
  bucketRange,
  EVALS_SUMS,
  type EvalsSum,
  evalsSumExprs,
  isElapsed,
  LATENCY_METRICS,
  type LatencyMetric,
  latencyBucketExpr,
  latencyColumn,
  latencyExpr,
  latencyPresent,
} from "./migrations/0012-evals-figures.js";
import type { Database } from "./schema.js";

export type StatusSums = Record<EvalsSum, number>;

interface LatencyFigure {
  /** Orders that have this latency. */
  n: number;
  /** Nearest-rank percentiles, milliseconds; null without orders. */
  p50: number | null;
  p95: number | null;
}

export interface EvalsFigures {
  /** Sums per order status (statuses with no order may be absent). */
  byStatus: Map<string, StatusSums>;
  latency: Record<LatencyMetric, LatencyFigure>;
}

export interface ActiveContractors {
  active: number;
  verified: number;
  /** With an insurance or a license verification date (verified then, or since run out). */
  dated: number;
}

export interface EvalsPersistence {
  /** The figures of the orders in one mode received in [since, until). */
  figures(livemode: boolean, since: string, until: string): Promise<EvalsFigures>;
  /** The figures of each UTC day in [first, last] (see EvalsStore.daily). */
  daily(
    livemode: boolean,
    first: string,
    last: string,
    metrics: readonly LatencyMetric[],
  ): Promise<Map<string, EvalsFigures>>;
  /**
   * Live contractors that are active and not excluded (those that can be given work): how many, how many
   * have insurance and license both verified through `today`, and how many have any verification date.
   */
  activeLiveContractors(today: string): Promise<ActiveContractors>;
  /**
   * The service-level columns of the orders in one mode received in [since, until) that have a promise
   * (respond_by, arrive_by or a window): read live, not rolled up (domain/orders/sla-figures.ts says why).
   */
  serviceLevelRows(livemode: boolean, since: string, until: string): Promise<SlaFigureRow[]>;
}

const DAY_MS = 86_400_000;

/** A live range of received times whose orders are added (1) or subtracted (-1). */
interface LivePart {
  from: string;
  to: string;
  sign: 1 | -1;
}

interface WindowPlan {
  /** Whole UTC days read from the rollup (inclusive), if any. */
  days: { first: string; last: string } | null;
  live: LivePart[];
}

const iso = (ms: number) => new Date(ms).toISOString();
const dayOf = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/** Splits [since, until) into rollup days and live corrections. */
function planWindow(since: string, until: string, rollup: boolean): WindowPlan {
  const s = Date.parse(since);
  const u = Date.parse(until);
  const lastDay = dayOf(u - 1);
  const firstDay = dayOf(s);
  if (!rollup || firstDay >= lastDay) return { days: null, live: [{ from: since, to: until, sign: 1 }] };
  const live: LivePart[] = [];
  let first = firstDay;
  if (s - firstDay <= firstDay + DAY_MS - s) {
    if (s > firstDay) live.push({ from: iso(firstDay), to: since, sign: -1 });
  } else {
    first = firstDay + DAY_MS;
    live.push({ from: since, to: iso(first), sign: 1 });
  }
  if (u < lastDay + DAY_MS) live.push({ from: until, to: iso(lastDay + DAY_MS), sign: -1 });
  return { days: { first: iso(first).slice(0, 10), last: iso(lastDay).slice(0, 10) }, live };
}

const zeroSums = (): StatusSums => Object.fromEntries(EVALS_SUMS.map((s) => [s, 0])) as unknown as StatusSums;

type SumsRow = { status: string } & Record<EvalsSum, number | string | null>;
type HistogramRow = { metric: string; bucket: number | string; n: number | string };

export class EvalsStore implements EvalsPersistence {
  private readonly rollup: boolean;
  private readonly compact: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    /**
     * rollup: false reads every window from the orders themselves; compact: false leaves PostgreSQL's
     * deltas unfolded before a read (the tests compare all three ways).
     */
    options: { rollup?: boolean; compact?: boolean } = {},
  ) {
    this.rollup = options.rollup !== false;
    this.compact = options.compact !== false;
  }

  /** The rollup's rows (PostgreSQL: and the deltas not yet folded in). */
  private source(table: "evals_daily" | "evals_latency_daily", columns: string) {
    if (this.dialect === "sqlite") return sql.raw(table);
    const delta = table === "evals_daily" ? "evals_daily_delta" : "evals_latency_delta";
    return sql.raw(`(SELECT ${columns} FROM ${table} UNION ALL SELECT ${columns} FROM ${delta}) AS rollup`);
  }

  async figures(livemode: boolean, since: string, until: string): Promise<EvalsFigures> {
    const mode = livemode ? 1 : 0;
    const plan = planWindow(since, until, this.rollup);
    const byStatus = new Map<string, StatusSums>();
    const histograms = Object.fromEntries(
      LATENCY_METRICS.map((m) => [m, new Map<number, number>()]),
    ) as Record<LatencyMetric, Map<number, number>>;
    const addSums = (rows: SumsRow[], sign: number) => {
      for (const row of rows) {
        const sums = byStatus.get(row.status) ?? zeroSums();
        for (const s of EVALS_SUMS) sums[s] += sign * Number(row[s] ?? 0);
        byStatus.set(row.status, sums);
      }
    };
    const addHistogram = (rows: HistogramRow[], sign: number) => {
      for (const row of rows) {
        const h = histograms[row.metric as LatencyMetric];
        const bucket = Number(row.bucket);
        h.set(bucket, (h.get(bucket) ?? 0) + sign * Number(row.n));
      }
    };

    if (plan.days) {
      const { first, last } = plan.days;
      if (this.dialect === "postgres" && this.compact) await sql`SELECT fsd_evals_compact()`.execute(this.db);
      const daily = this.source("evals_daily", `livemode, day, status, ${EVALS_SUMS.join(", ")}`);
      const sums = await sql<SumsRow>`
        SELECT status, ${sql.raw(EVALS_SUMS.map((s) => `sum(${s}) AS ${s}`).join(", "))}
        FROM ${daily} WHERE livemode = ${mode} AND day >= ${first} AND day <= ${last}
        GROUP BY status`.execute(this.db);
      addSums(sums.rows, 1);
      const latency = this.source("evals_latency_daily", "livemode, metric, day, bucket, n");
      const histogram = await sql<HistogramRow>`
        SELECT metric, bucket, sum(n) AS n FROM ${latency}
        WHERE livemode = ${mode} AND day >= ${first} AND day <= ${last}
        GROUP BY metric, bucket`.execute(this.db);
      addHistogram(histogram.rows, 1);
    }
    const exprs = evalsSumExprs("", this.dialect);
    for (const part of plan.live) {
      const range = sql`livemode = ${mode} AND received_at >= ${part.from} AND received_at < ${part.to}`;
      const sums = await sql<SumsRow>`
        SELECT status, ${sql.raw(EVALS_SUMS.map((s) => `sum(${exprs[s]}) AS ${s}`).join(", "))}
        FROM orders WHERE ${range} GROUP BY status`.execute(this.db);
      addSums(sums.rows, part.sign);
      for (const metric of LATENCY_METRICS) {
        const histogram = await sql<HistogramRow>`
          SELECT ${sql.lit(metric)} AS metric, ${sql.raw(latencyBucketExpr(metric, "", this.dialect))} AS bucket,
            count(*) AS n
          FROM orders WHERE ${range} AND ${sql.raw(latencyPresent(metric, ""))}
          GROUP BY 2`.execute(this.db);
        addHistogram(histogram.rows, part.sign);
      }
    }

    // A status whose orders all moved on leaves a row of zeros in the rollup.
    for (const [status, sums] of byStatus) if (sums.orders === 0) byStatus.delete(status);
    const latency = {} as Record<LatencyMetric, LatencyFigure>;
    for (const metric of LATENCY_METRICS) {
      const buckets = [...histograms[metric].entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
      const n = buckets.reduce((sum, [, count]) => sum + count, 0);
      const at = (q: number) => this.nearestRank(metric, buckets, n, q, mode, since, until);
      latency[metric] = { n, p50: await at(0.5), p95: await at(0.95) };
    }
    return { byStatus, latency };
  }

  /**
   * The figures of each UTC day from `first` to `last` (YYYY-MM-DD, both included) of one mode: the orders
   * received that day, whole days, read from the rollup in two statements (sums per day and status, and
   * the latency histograms per day), with the nearest-rank p50 and p95 of `metrics` per day from the
   * latency index. A day without orders is absent.
   */
  async daily(
    livemode: boolean,
    first: string,
    last: string,
    metrics: readonly LatencyMetric[],
  ): Promise<Map<string, EvalsFigures>> {
    const out = new Map<string, EvalsFigures>();
    const dayStart = (day: string) => `${day}T00:00:00.000Z`;
    const nextDay = (day: string) => iso(Date.parse(dayStart(day)) + DAY_MS).slice(0, 10);
    if (!this.rollup) {
      // Without the rollup (the tests' reference), each day is read from the orders themselves.
      for (let day = first; day <= last; day = nextDay(day)) {
        const f = await this.figures(livemode, dayStart(day), dayStart(nextDay(day)));
        if (f.byStatus.size > 0) out.set(day, f);
      }
      return out;
    }
    const mode = livemode ? 1 : 0;
    if (this.dialect === "postgres" && this.compact) await sql`SELECT fsd_evals_compact()`.execute(this.db);
    const dailySource = this.source("evals_daily", `livemode, day, status, ${EVALS_SUMS.join(", ")}`);
    const sums = await sql<SumsRow & { day: string }>`
      SELECT day, status, ${sql.raw(EVALS_SUMS.map((s) => `sum(${s}) AS ${s}`).join(", "))}
      FROM ${dailySource} WHERE livemode = ${mode} AND day >= ${first} AND day <= ${last}
      GROUP BY day, status`.execute(this.db);
    const emptyLatency = () =>
      Object.fromEntries(LATENCY_METRICS.map((m) => [m, { n: 0, p50: null, p95: null }])) as Record<
        LatencyMetric,
        LatencyFigure
      >;
    for (const row of sums.rows) {
      const sumsOf = zeroSums();
      for (const f of EVALS_SUMS) sumsOf[f] = Number(row[f] ?? 0);
      if (sumsOf.orders === 0) continue; // a status whose orders all moved on
      const day = out.get(row.day) ?? { byStatus: new Map(), latency: emptyLatency() };
      day.byStatus.set(row.status, sumsOf);
      out.set(row.day, day);
    }
    if (metrics.length === 0 || out.size === 0) return out;
    const latencySource = this.source("evals_latency_daily", "livemode, metric, day, bucket, n");
    const histogram = await sql<HistogramRow & { day: string }>`
      SELECT day, metric, bucket, sum(n) AS n FROM ${latencySource}
      WHERE livemode = ${mode} AND day >= ${first} AND day <= ${last}
        AND metric IN (${sql.join(metrics.map((m) => sql.lit(m)))})
      GROUP BY day, metric, bucket`.execute(this.db);
    const buckets = new Map<string, Array<[number, number]>>(); // day|metric -> [bucket, n]
    for (const row of histogram.rows) {
      const n = Number(row.n);
      if (n <= 0) continue;
      const key = `${row.day}|${row.metric}`;
      const list = buckets.get(key) ?? [];
      list.push([Number(row.bucket), n]);
      buckets.set(key, list);
    }
    for (const [key, list] of buckets) {
      const [day, metric] = key.split("|") as [string, LatencyMetric];
      const figures = out.get(day);
      if (!figures) continue;
      list.sort((a, b) => a[0] - b[0]);
      const n = list.reduce((sum, [, count]) => sum + count, 0);
      const since = dayStart(day);
      const until = dayStart(nextDay(day));
      const at = (q: number) => this.nearestRank(metric, list, n, q, mode, since, until);
      figures.latency[metric] = { n, p50: await at(0.5), p95: await at(0.95) };
    }
    return out;
  }

  /** The value of rank ceil(q * n) (1-based) in ascending order, located by the histogram. */
  private async nearestRank(
    metric: LatencyMetric,
    buckets: Array<[number, number]>,
    n: number,
    q: number,
    mode: number,
    since: string,
    until: string,
  ): Promise<number | null> {
    if (n === 0) return null;
    // The epsilon keeps q * n from landing just above a whole number (0.95 * 20 in floating point).
    const rank = Math.max(1, Math.ceil(q * n - 1e-9));
    let before = 0;
    for (const [bucket, count] of buckets) {
      if (before + count >= rank) {
        return this.valueInBucket(metric, bucket, rank - before, count, mode, since, until);
      }
      before += count;
    }
    return null;
  }

  /**
   * The `offset`-th (1-based) of the window's `count` latencies in a bucket, read from the latency index
   * from whichever end of the bucket is nearer.
   */
  private async valueInBucket(
    metric: LatencyMetric,
    bucket: number,
    offset: number,
    count: number,
    mode: number,
    since: string,
    until: string,
  ): Promise<number | null> {
    const value = sql.raw(latencyExpr(metric, "", this.dialect));
    const { lo, hi } = bucketRange(bucket);
    const elapsed = isElapsed(metric);
    // Elapsed latencies are whole milliseconds: the bucket is exactly [lo, hi), all of it index
    // conditions (bucket 0 also holds the negative ones). Measured ones are fractional milliseconds
    // bucketed by rounded microseconds: the range is widened by a microsecond and the bucket tested.
    const range = elapsed
      ? sql`${lo === 0 ? sql`` : sql`AND ${value} >= ${lo}`} AND ${value} < ${hi}`
      : sql`${lo === 0 ? sql`` : sql`AND ${value} >= ${(lo - 1) / 1000}`} AND ${value} < ${(hi + 1) / 1000}
          AND ${sql.raw(latencyBucketExpr(metric, "", this.dialect))} = ${bucket}`;
    const fromTop = offset > count / 2;
    // PostgreSQL computes a selected expression for every row the OFFSET passes over (two function calls
    // each): it returns the two timestamps instead, and their difference is taken here.
    const timestamps = elapsed && this.dialect === "postgres";
    const result = await sql<{ v?: number | string; t?: string; received_at?: string }>`
      SELECT ${timestamps ? sql`${sql.ref(latencyColumn(metric))} AS t, received_at` : sql`${value} AS v`} FROM orders
      WHERE livemode = ${mode} AND ${sql.raw(latencyPresent(metric, ""))} ${range}
        AND received_at >= ${since} AND received_at < ${until}
      ORDER BY ${value} ${sql.raw(fromTop ? "DESC" : "ASC")} LIMIT 1
      OFFSET ${fromTop ? count - offset : offset - 1}`.execute(this.db);
    const row = result.rows[0];
    if (!row) return null;
    return timestamps ? Date.parse(row.t as string) - Date.parse(row.received_at as string) : Number(row.v);
  }

  async activeLiveContractors(today: string): Promise<ActiveContractors> {
    const row = await this.db
      .selectFrom("contractors")
      .select((eb) => [
        eb.fn.countAll<number>().as("n"),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(
                eb.and([
                  eb("insurance_verified_until", ">=", today),
                  eb("license_verified_until", ">=", today),
                ]),
              )
              .then(1)
              .else(0)
              .end(),
          )
          .as("verified"),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(
                eb.or([
                  eb("insurance_verified_until", "is not", null),
                  eb("license_verified_until", "is not", null),
                ]),
              )
              .then(1)
              .else(0)
              .end(),
          )
          .as("dated"),
      ])
      .where("pool", "=", "live")
      .where("active", "=", 1)
      .where("excluded", "=", 0)
      .executeTakeFirstOrThrow();
    return { active: Number(row.n), verified: Number(row.verified ?? 0), dated: Number(row.dated ?? 0) };
  }

  serviceLevelRows(livemode: boolean, since: string, until: string): Promise<SlaFigureRow[]> {
    return this.db
      .selectFrom("orders")
      .select([
        "urgency",
        "status",
        "received_at",
        "respond_by",
        "arrive_by",
        "window_start",
        "window_end",
        "first_accepted_at",
        "eta_at",
        "on_site_at",
        "sla_respond_at_risk_at",
        "sla_respond_breached_at",
        "sla_arrive_at_risk_at",
        "sla_arrive_breached_at",
      ])
      .where("livemode", "=", livemode ? 1 : 0)
      .where("received_at", ">=", since)
      .where("received_at", "<", until)
      .where((eb) =>
        eb.or([
          eb("respond_by", "is not", null),
          eb("arrive_by", "is not", null),
          eb("window_end", "is not", null),
        ]),
      )
      .execute();
  }
}
