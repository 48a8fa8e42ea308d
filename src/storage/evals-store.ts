// The evals' reads: per-status sums and the latency sketches of the orders received in a window, and the
// orders whose service-level clocks still run. The SQL of each figure is defined once, in
// migrations/0027-evals-sketches.ts (which says why the figures are made this way).
//
// The window is read from the daily rollup the triggers keep (whole UTC days: the sums per day and status,
// and one sketch row per day and latency, plus the bucket deltas not yet folded into them, summed in one
// statement), corrected with live queries over the orders of the partial days at its edges: the shorter
// side of the first day (the orders before the window's start are subtracted, or those after it added)
// and any order received after the window's end. Sketch buckets add and subtract exactly, so the window's
// sketch is the one its orders would make; a percentile is the value of the bucket holding its rank,
// within SKETCH_RELATIVE_ERROR (1 %) of the exact value. No read walks the orders of whole days.

import { type Kysely, sql } from "kysely";
import type { SlaFigureRow } from "../domain/orders/sla-figures.js";
import type { Dialect } from "./dialect.js";
import {
  EVALS_SUMS,
  type EvalsSum,
  evalsSumExprs,
  LATENCY_METRICS,
  type LatencyMetric,
  latencyPresent,
  RUNNING_CLOCKS_SQL,
  SQLITE_FOLD,
  SQLITE_FOLD_CLEAR,
  sketchBucketExpr,
  sketchValue,
} from "./migrations/0027-evals-sketches.js";
import type { Database } from "./schema.js";

export type StatusSums = Record<EvalsSum, number>;

interface LatencyFigure {
  /** Orders that have this latency. */
  n: number;
  /** Nearest-rank percentiles from the sketch (within 1 %), milliseconds; null without orders. */
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

/** One contractor's jobs completed in a window, and how many of them a later order named as its recall. */
export interface RecallCount {
  /** The contractor holding the order when it was completed (null only for an order completed with none,
   * which the lifecycle does not allow). */
  contractorId: string | null;
  completed: number;
  recalled: number;
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
   * The orders in one mode received in [since, until) with a service-level clock still running (open,
   * step not done, breach not recorded), read live through their partial index: the sums count their
   * outcome as the stored columns decide it, and a deadline passing changes it with no write
   * (domain/orders/sla-figures.ts `withRunningClocks`).
   */
  runningClockRows(livemode: boolean, since: string, until: string): Promise<SlaFigureRow[]>;
  /**
   * Per contractor, the orders in one mode completed in [since, until) and how many of them another order
   * names as its recall_of: whole UTC days of completion from their rollup (migration 0049), the partial
   * days at the window's edges from the orders (orders_completed_idx, orders_recall_idx).
   */
  recallCounts(livemode: boolean, since: string, until: string): Promise<RecallCount[]>;
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
/** A folded sketch ({bucket: count}: text on SQLite, parsed jsonb on PostgreSQL) or one bucket's delta. */
type SketchRow = {
  day?: string;
  metric: string;
  sketch: string | Record<string, number | string> | null;
  bucket: number | string | null;
  n: number | string | null;
};

/** Bucket counts of one latency, merged from days, deltas and live edges. */
type Counts = Map<number, number>;

function addToCounts(counts: Counts, row: SketchRow, sign: number): void {
  const add = (bucket: number, n: number) => counts.set(bucket, (counts.get(bucket) ?? 0) + sign * n);
  if (row.sketch === null) {
    add(Number(row.bucket), Number(row.n));
    return;
  }
  const sketch =
    typeof row.sketch === "string" ? (JSON.parse(row.sketch) as Record<string, number>) : row.sketch;
  for (const key in sketch) add(Number(key), Number(sketch[key]));
}

/** n, and the nearest-rank p50 and p95 (the value of the bucket that holds rank ceil(q * n)). */
function percentiles(counts: Counts | undefined): LatencyFigure {
  const buckets = [...(counts ?? [])].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const n = buckets.reduce((sum, [, count]) => sum + count, 0);
  const at = (q: number): number | null => {
    if (n === 0) return null;
    // The epsilon keeps q * n from landing just above a whole number (0.95 * 20 in floating point).
    const rank = Math.max(1, Math.ceil(q * n - 1e-9));
    let before = 0;
    for (const [bucket, count] of buckets) {
      before += count;
      if (before >= rank) return sketchValue(bucket);
    }
    return null;
  };
  return { n, p50: at(0.5), p95: at(0.95) };
}

const sumsList = (f: (s: EvalsSum) => string) => sql.raw(EVALS_SUMS.map((s) => `${f(s)} AS ${s}`).join(", "));

export class EvalsStore implements EvalsPersistence {
  private readonly rollup: boolean;
  private readonly compact: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    /**
     * rollup: false reads every window from the orders themselves; compact: false leaves the deltas
     * unfolded before a read (the tests compare all three ways).
     */
    options: { rollup?: boolean; compact?: boolean } = {},
  ) {
    this.rollup = options.rollup !== false;
    this.compact = options.compact !== false;
  }

  /**
   * Folds the deltas into the rollup before a read, so that a read sums few rows. PostgreSQL: its
   * fsd_evals_compact() (one caller at a time). SQLite: the sketch deltas into the day's sketch rows, in
   * one write transaction, when there are any.
   */
  private async fold(): Promise<void> {
    if (!this.compact) return;
    if (this.dialect === "postgres") {
      await sql`SELECT fsd_evals_compact()`.execute(this.db);
      await sql`SELECT fsd_evals_recall_compact()`.execute(this.db);
      return;
    }
    const pending = await sql`SELECT 1 AS pending FROM evals_sketch_delta LIMIT 1`.execute(this.db);
    if (pending.rows.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await sql.raw(SQLITE_FOLD).execute(trx);
      await sql.raw(SQLITE_FOLD_CLEAR).execute(trx);
    });
  }

  /** A daily rollup to read `columns` of: on PostgreSQL with its deltas not yet folded in, one relation
   * for one statement (one snapshot). */
  private rollupOf(daily: string, deltas: string, columns: string) {
    if (this.dialect === "sqlite") return sql.raw(daily);
    return sql.raw(`(SELECT ${columns} FROM ${daily} UNION ALL SELECT ${columns} FROM ${deltas}) AS rollup`);
  }

  /** The sums of whole days (PostgreSQL: the rollup and its deltas not yet folded in). */
  private daySums(mode: number, first: string, last: string, perDay: boolean) {
    const source = this.rollupOf(
      "evals_daily",
      "evals_daily_delta",
      `livemode, day, status, ${EVALS_SUMS.join(", ")}`,
    );
    const keys = sql.raw(perDay ? "day, status" : "status");
    return sql<SumsRow & { day: string }>`
      SELECT ${keys}, ${sumsList((s) => `sum(${s})`)}
      FROM ${source} WHERE livemode = ${mode} AND day >= ${first} AND day <= ${last}
      GROUP BY ${keys}`.execute(this.db);
  }

  /** The sketches of whole days and their deltas not yet folded in, in one statement (one snapshot). */
  private daySketches(mode: number, first: string, last: string, metrics: readonly LatencyMetric[]) {
    const only = sql`AND metric IN (${sql.join(metrics.map((m) => sql.lit(m)))})`;
    return sql<SketchRow & { day: string }>`
      SELECT day, metric, sketch, NULL AS bucket, NULL AS n FROM evals_sketch_daily
        WHERE livemode = ${mode} AND day >= ${first} AND day <= ${last} ${only}
      UNION ALL
      SELECT day, metric, NULL, bucket, sum(n) FROM evals_sketch_delta
        WHERE livemode = ${mode} AND day >= ${first} AND day <= ${last} ${only}
        GROUP BY day, metric, bucket`.execute(this.db);
  }

  async figures(livemode: boolean, since: string, until: string): Promise<EvalsFigures> {
    const mode = livemode ? 1 : 0;
    const plan = planWindow(since, until, this.rollup);
    const byStatus = new Map<string, StatusSums>();
    const counts = new Map<string, Counts>(LATENCY_METRICS.map((m) => [m, new Map()]));
    const addSums = (rows: SumsRow[], sign: number) => {
      for (const row of rows) {
        const sums = byStatus.get(row.status) ?? zeroSums();
        for (const s of EVALS_SUMS) sums[s] += sign * Number(row[s] ?? 0);
        byStatus.set(row.status, sums);
      }
    };
    const addSketches = (rows: SketchRow[], sign: number) => {
      for (const row of rows) {
        const c = counts.get(row.metric);
        if (c) addToCounts(c, row, sign);
      }
    };
    if (plan.days) {
      const { first, last } = plan.days;
      await this.fold();
      addSums((await this.daySums(mode, first, last, false)).rows, 1);
      addSketches((await this.daySketches(mode, first, last, LATENCY_METRICS)).rows, 1);
    }
    const exprs = evalsSumExprs("", this.dialect);
    for (const part of plan.live) {
      const range = sql`livemode = ${mode} AND received_at >= ${part.from} AND received_at < ${part.to}`;
      const sums = await sql<SumsRow>`
        SELECT status, ${sumsList((s) => `sum(${exprs[s]})`)}
        FROM orders WHERE ${range} GROUP BY status`.execute(this.db);
      addSums(sums.rows, part.sign);
      const buckets = LATENCY_METRICS.map(
        (m) => sql`SELECT ${sql.lit(m)} AS metric, NULL AS sketch,
            ${sql.raw(sketchBucketExpr(m, "", this.dialect))} AS bucket, count(*) AS n
          FROM orders WHERE ${range} AND ${sql.raw(latencyPresent(m, ""))} GROUP BY 3`,
      );
      addSketches(
        (await sql<SketchRow>`${sql.join(buckets, sql` UNION ALL `)}`.execute(this.db)).rows,
        part.sign,
      );
    }

    // A status whose orders all moved on leaves a row of zeros in the rollup.
    for (const [status, sums] of byStatus) if (sums.orders === 0) byStatus.delete(status);
    const latency = Object.fromEntries(LATENCY_METRICS.map((m) => [m, percentiles(counts.get(m))])) as Record<
      LatencyMetric,
      LatencyFigure
    >;
    return { byStatus, latency };
  }

  /**
   * The figures of each UTC day from `first` to `last` (YYYY-MM-DD, both included) of one mode: the orders
   * received that day, whole days, read from the rollup (sums per day and status, and the sketches of
   * `metrics` per day, with their p50 and p95). A day without orders is absent.
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
    await this.fold();
    const emptyLatency = () =>
      Object.fromEntries(LATENCY_METRICS.map((m) => [m, percentiles(undefined)])) as Record<
        LatencyMetric,
        LatencyFigure
      >;
    for (const row of (await this.daySums(mode, first, last, true)).rows) {
      const sumsOf = zeroSums();
      for (const f of EVALS_SUMS) sumsOf[f] = Number(row[f] ?? 0);
      if (sumsOf.orders === 0) continue; // a status whose orders all moved on
      const day = out.get(row.day) ?? { byStatus: new Map(), latency: emptyLatency() };
      day.byStatus.set(row.status, sumsOf);
      out.set(row.day, day);
    }
    if (metrics.length === 0 || out.size === 0) return out;
    const counts = new Map<string, Counts>(); // day|metric -> bucket counts
    for (const row of (await this.daySketches(mode, first, last, metrics)).rows) {
      const key = `${row.day}|${row.metric}`;
      const c = counts.get(key) ?? new Map();
      addToCounts(c, row, 1);
      counts.set(key, c);
    }
    for (const [key, c] of counts) {
      const [day, metric] = key.split("|") as [string, LatencyMetric];
      const figures = out.get(day);
      if (figures) figures.latency[metric] = percentiles(c);
    }
    return out;
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

  async runningClockRows(livemode: boolean, since: string, until: string): Promise<SlaFigureRow[]> {
    const result = await sql<SlaFigureRow>`
      SELECT urgency, status, received_at, respond_by, arrive_by, window_start, window_end, first_accepted_at,
        eta_at, on_site_at, sla_respond_at_risk_at, sla_respond_breached_at, sla_arrive_at_risk_at,
        sla_arrive_breached_at
      FROM orders WHERE ${sql.raw(RUNNING_CLOCKS_SQL)}
        AND livemode = ${livemode ? 1 : 0} AND received_at >= ${since} AND received_at < ${until}`.execute(
      this.db,
    );
    return result.rows;
  }

  async recallCounts(livemode: boolean, since: string, until: string): Promise<RecallCount[]> {
    const mode = livemode ? 1 : 0;
    const plan = planWindow(since, until, this.rollup);
    const counts = new Map<string, { completed: number; recalled: number }>();
    type Row = { contractor_id: string | null; completed: number | string; recalled: number | string | null };
    const add = (rows: Row[], sign: number) => {
      for (const r of rows) {
        // The rollup keys an order completed without a contractor by '' (never, in practice).
        const key = r.contractor_id ?? "";
        const c = counts.get(key) ?? { completed: 0, recalled: 0 };
        c.completed += sign * Number(r.completed);
        c.recalled += sign * Number(r.recalled ?? 0);
        counts.set(key, c);
      }
    };
    if (plan.days) {
      const { first, last } = plan.days;
      const source = this.rollupOf(
        "evals_recall_daily",
        "evals_recall_delta",
        "livemode, day, contractor_id, completed, recalled",
      );
      const days = await sql<Row>`
        SELECT contractor_id, sum(completed) AS completed, sum(recalled) AS recalled FROM ${source}
        WHERE livemode = ${mode} AND day >= ${first} AND day <= ${last} GROUP BY contractor_id`.execute(
        this.db,
      );
      add(days.rows, 1);
    }
    for (const part of plan.live) {
      const edge = await sql<Row>`
        SELECT o.contractor_id, count(*) AS completed,
          sum(CASE WHEN EXISTS (SELECT 1 FROM orders r WHERE r.recall_of = o.id) THEN 1 ELSE 0 END) AS recalled
        FROM orders o
        WHERE o.livemode = ${mode} AND o.completed_at IS NOT NULL
          AND o.completed_at >= ${part.from} AND o.completed_at < ${part.to}
        GROUP BY o.contractor_id`.execute(this.db);
      add(edge.rows, part.sign);
    }
    return [...counts]
      .filter(([, c]) => c.completed !== 0 || c.recalled !== 0)
      .map(([key, c]) => ({
        contractorId: key === "" ? null : key,
        completed: c.completed,
        recalled: c.recalled,
      }));
  }
}
