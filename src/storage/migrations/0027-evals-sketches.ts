// Issue 30: every figure of the evals from per-day rollup rows, however many orders the window holds.
// Migration 0012's rollup kept sums per (day, status) and latency histograms, but two things still read
// the orders: each percentile's exact value (an OFFSET walk within its histogram bucket, in the latency's
// index) and the service levels (every order of the window with a promise, read into the service).
// On a store with years of orders, a 90-day report read ~140,000 orders for them.
//
// From this migration (the definitions below are the figures' SQL from now on; evals-store.ts reads them):
// - Latencies go into a sketch per (mode, day, latency): DDSketch's logarithmic mapping with a relative
//   accuracy of SKETCH_RELATIVE_ERROR (1 %): a value v > 0 goes to bucket ceil(ln v / ln gamma), gamma =
//   (1 + a) / (1 - a), and a bucket stands for 2 gamma^i / (1 + gamma), within a of every value in it;
//   v <= 0 (a wall clock stepped back) goes to the zero bucket, which stands for 0. Bucket counts add and
//   subtract exactly (no collapsing), so days merge and the window's partial edges are corrected exactly;
//   a percentile is the value of the bucket holding rank ceil(q * n), within 1 % of the exact one.
//   The sketch is folded into one JSON row per (mode, day, latency) (`evals_sketch_daily`, {bucket: count}),
//   from bucket deltas the triggers write in the order's transaction (`evals_sketch_delta`: on SQLite a
//   keyed upsert, on PostgreSQL appended, as 0012's deltas). An in-place JSON update in the trigger cost
//   20-40 us per order and latency on SQLite (measured, 3.53); a keyed bucket upsert costs ~2 us, and the
//   fold runs once per read, not per write. The JS DDSketch (@datadog/sketches-js) was not taken: its
//   protobuf encoding cannot be updated by SQL triggers, and its collapsing stores do not subtract.
// - The service levels are rolled up as sums too: on-time arrivals (no clock in them) and, per urgency, the
//   orders whose clocks all have an outcome, and those met, as the stored columns decide them. The one
//   thing the rows cannot say is a deadline that passed with no write (an open order, its step not done,
//   its breach not yet recorded by the watch): those orders are read live, through a partial index of the
//   orders with a clock still running (orders_sla_running_idx), and the outcome corrected in the service
//   (domain/orders/sla-figures.ts `withRunningClocks`).
// - The latency indexes of 0012 (for the exact percentile) are dropped: nothing reads them now.
//
// Up backfills the rollup from the orders there are; down rebuilds 0012's.

import { type Kysely, type Migration, sql } from "kysely";
import { OPEN_ORDERS_SQL } from "../../domain/orders/sla-clocks.js";
import type { Dialect } from "../dialect.js";
import {
  buildEvalsRollup,
  dropEvalsRollup,
  isElapsed,
  LATENCY_METRICS,
  type LatencyMetric,
  latencyColumn,
  latencyPresent,
  EVALS_SUMS as SUMS_0012,
  evalsSumExprs as sumExprs0012,
} from "./0012-evals-figures.js";

export { LATENCY_METRICS, type LatencyMetric };

const URGENCIES = ["emergency", "urgent", "routine", "scheduled"] as const;

/** The additive figures of an order: 0012's, and the service levels' as the stored columns decide them. */
export const EVALS_SUMS = [
  ...SUMS_0012,
  "on_time_arrived",
  "on_time",
  ...URGENCIES.flatMap((u) => [`sla_decided_${u}`, `sla_met_${u}`] as const),
] as const;
export type EvalsSum = (typeof EVALS_SUMS)[number];

/** The sketch's relative accuracy: a published percentile is within 1 % of the exact nearest-rank value. */
export const SKETCH_RELATIVE_ERROR = 0.01;
const GAMMA = (1 + SKETCH_RELATIVE_ERROR) / (1 - SKETCH_RELATIVE_ERROR);
const LN_GAMMA = Math.log(GAMMA);
/** The bucket of values <= 0 (below every logarithmic bucket a double can reach). */
const ZERO_BUCKET = -100_000;

/** The value a bucket stands for, milliseconds: within SKETCH_RELATIVE_ERROR of every value in it. */
export function sketchValue(bucket: number): number {
  return bucket === ZERO_BUCKET ? 0 : (2 * Math.exp(bucket * LN_GAMMA)) / (1 + GAMMA);
}

const int = (dialect: Dialect) => (dialect === "postgres" ? "bigint" : "integer");

/** Whole milliseconds from the timestamp `a` to `b` (SQL expressions). */
function msBetween(a: string, b: string, dialect: Dialect): string {
  return dialect === "postgres"
    ? `round(date_part('epoch', ${b}::timestamptz - ${a}::timestamptz) * 1000)`
    : `round((julianday(${b}) - julianday(${a})) * 86400000.0)`;
}

/** A latency in milliseconds: the measured duration, or received_at -> its timestamp, whole ms. */
function latencyValue(metric: LatencyMetric, r: string, dialect: Dialect): string {
  const column = `${r}${latencyColumn(metric)}`;
  return isElapsed(metric) ? msBetween(`${r}received_at`, column, dialect) : column;
}

/** The latency's sketch bucket (the order must have the latency: `latencyPresent`). */
export function sketchBucketExpr(metric: LatencyMetric, r: string, dialect: Dialect): string {
  const v = latencyValue(metric, r, dialect);
  return `(CASE WHEN ${v} > 0 THEN CAST(ceil(ln(${v}) / ${LN_GAMMA}) AS integer) ELSE ${ZERO_BUCKET} END)`;
}

export { latencyPresent };

/**
 * The service levels' sums of the row `r` (domain/orders/sla-figures.ts, with no deadline passed unless
 * its breach is recorded): on-time arrival over the orders on site with a promise; per urgency, the
 * orders whose clocks (respond: respond_by, stopped by first_accepted_at; arrive: arrive_by or else the
 * window's end, stopped by on_site_at) all have an outcome, and those whose every clock was met.
 */
function serviceLevelExprs(r: string, dialect: Dialect): Record<string, string> {
  const flag = (condition: string) => `(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;
  const diff = (a: string, b: string) => msBetween(`${r}${a}`, `${r}${b}`, dialect);
  const promised = `(${r}respond_by IS NOT NULL OR ${r}arrive_by IS NOT NULL OR ${r}window_end IS NOT NULL)`;
  const arrived = `${r}on_site_at IS NOT NULL AND (${r}window_start IS NOT NULL OR ${r}arrive_by IS NOT NULL) AND ${promised}`;
  const onTime = `CASE WHEN ${r}window_start IS NOT NULL THEN ${diff("window_start", "on_site_at")} BETWEEN -1800000 AND 900000
    ELSE ${diff("on_site_at", "arrive_by")} >= 0 END`;
  const arriveBy = `coalesce(${r}arrive_by, ${r}window_end)`;
  const respond = `${r}respond_by IS NOT NULL`;
  const arrive = `${arriveBy} IS NOT NULL`;
  const respondDecided = `(${r}first_accepted_at IS NOT NULL OR ${r}sla_respond_breached_at IS NOT NULL)`;
  const arriveDecided = `(${r}on_site_at IS NOT NULL OR ${r}sla_arrive_breached_at IS NOT NULL)`;
  const respondMet = `(${r}first_accepted_at IS NOT NULL AND ${diff("first_accepted_at", "respond_by")} >= 0)`;
  const arriveMet = `(${r}on_site_at IS NOT NULL AND ${msBetween(`${r}on_site_at`, arriveBy, dialect)} >= 0)`;
  const decided = `(${respond} OR ${arrive}) AND (NOT ${respond} OR ${respondDecided}) AND (NOT ${arrive} OR ${arriveDecided})`;
  const met = `${decided} AND (NOT ${respond} OR ${respondMet}) AND (NOT ${arrive} OR ${arriveMet})`;
  const out: Record<string, string> = {
    on_time_arrived: flag(arrived),
    on_time: flag(`${arrived} AND (${onTime})`),
  };
  for (const u of URGENCIES) {
    out[`sla_decided_${u}`] = flag(`${r}urgency = '${u}' AND ${decided}`);
    out[`sla_met_${u}`] = flag(`${r}urgency = '${u}' AND ${met}`);
  }
  return out;
}

/** SQL for each sum over the order row `r` ("NEW.", "OLD." or "" for a plain query). */
export function evalsSumExprs(r: string, dialect: Dialect): Record<EvalsSum, string> {
  return { ...sumExprs0012(r, dialect), ...serviceLevelExprs(r, dialect) } as Record<EvalsSum, string>;
}

/**
 * The orders with a service-level clock still running (open, its step not done, its breach not recorded):
 * the only ones whose outcome can change with no write, when a deadline passes. Literal text, identical
 * in the partial index and its query (SQLite matches a partial index's WHERE term by term).
 */
export const RUNNING_CLOCKS_SQL =
  `${OPEN_ORDERS_SQL} AND ((respond_by IS NOT NULL AND first_accepted_at IS NULL AND sla_respond_breached_at IS NULL) ` +
  "OR (coalesce(arrive_by, window_end) IS NOT NULL AND on_site_at IS NULL AND sla_arrive_breached_at IS NULL))";

const day = (r: string) => `substr(${r}received_at, 1, 10)`;

/** Columns whose change can change an order's contribution. */
const CONTRIBUTING = [
  ...new Set([
    "livemode",
    "received_at",
    "status",
    "urgency",
    "matched_at",
    "override_count",
    "manual_dispatch_count",
    "redispatch_count",
    "nte_cents",
    "nte_approved_cents",
    "final_cost_cents",
    "offers_made",
    "offers_declined",
    "offers_expired",
    "accepted_offer_attempt",
    "respond_by",
    "arrive_by",
    "window_start",
    "window_end",
    "on_site_at",
    "sla_respond_breached_at",
    "sla_arrive_breached_at",
    ...LATENCY_METRICS.map(latencyColumn),
  ]),
];

const movedBy = (metric: LatencyMetric) => ["livemode", "received_at", latencyColumn(metric)];

const changed = (columns: string[], dialect: Dialect) =>
  columns
    .map((c) => `OLD.${c} ${dialect === "sqlite" ? "IS NOT" : "IS DISTINCT FROM"} NEW.${c}`)
    .join(" OR ");

/** SQLite: the statements that add `sign` times the row's contribution (sums, and each sketch's bucket). */
function sqliteContribution(r: "NEW." | "OLD.", sign: 1 | -1, moved: (m: LatencyMetric) => string): string {
  const sums = evalsSumExprs(r, "sqlite");
  const values = EVALS_SUMS.map((s) => (sign === 1 ? sums[s] : `-${sums[s]}`));
  const rollup = `INSERT INTO evals_daily (livemode, day, status, ${EVALS_SUMS.join(", ")})
      SELECT ${r}livemode, ${day(r)}, ${r}status, ${values.join(", ")} WHERE 1
      ON CONFLICT (livemode, day, status) DO UPDATE SET ${EVALS_SUMS.map((s) => `${s} = ${s} + excluded.${s}`).join(", ")};`;
  const buckets = LATENCY_METRICS.map(
    (m) => `INSERT INTO evals_sketch_delta (livemode, day, metric, bucket, n)
      SELECT ${r}livemode, ${day(r)}, '${m}', ${sketchBucketExpr(m, r, "sqlite")}, ${sign}
      WHERE ${latencyPresent(m, r)} AND ${moved(m)}
      ON CONFLICT (livemode, day, metric, bucket) DO UPDATE SET n = n + excluded.n;`,
  );
  return [rollup, ...buckets].join("\n      ");
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  const always = () => "1";
  const moved = (m: LatencyMetric) => `(${changed(movedBy(m), "sqlite")})`;
  await sql
    .raw(`CREATE TRIGGER orders_evals_insert AFTER INSERT ON orders BEGIN
      ${sqliteContribution("NEW.", 1, always)}
    END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_evals_update AFTER UPDATE OF ${CONTRIBUTING.join(", ")} ON orders BEGIN
      ${sqliteContribution("OLD.", -1, moved)}
      ${sqliteContribution("NEW.", 1, moved)}
    END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_evals_delete AFTER DELETE ON orders BEGIN
      ${sqliteContribution("OLD.", -1, always)}
    END`)
    .execute(db);
}

/**
 * SQLite's fold of the bucket deltas into the daily sketches (run in one transaction with
 * SQLITE_FOLD_CLEAR, by the evals' reads: evals-store.ts). The first statement writes, so it takes the
 * write lock before it reads.
 */
export const SQLITE_FOLD = `INSERT INTO evals_sketch_daily (livemode, day, metric, sketch)
  SELECT livemode, day, metric, json_group_object(CAST(bucket AS text), n) FILTER (WHERE n <> 0) FROM (
    SELECT livemode, day, metric, bucket, sum(n) AS n FROM (
      SELECT livemode, day, metric, bucket, n FROM evals_sketch_delta
      UNION ALL
      SELECT s.livemode, s.day, s.metric, CAST(j.key AS integer), j.value
      FROM evals_sketch_daily s
        JOIN (SELECT DISTINCT livemode, day, metric FROM evals_sketch_delta) t
          ON t.livemode = s.livemode AND t.day = s.day AND t.metric = s.metric,
        json_each(s.sketch) j)
    GROUP BY livemode, day, metric, bucket)
  WHERE true GROUP BY livemode, day, metric
  ON CONFLICT (livemode, day, metric) DO UPDATE SET sketch = excluded.sketch`;
export const SQLITE_FOLD_CLEAR = "DELETE FROM evals_sketch_delta";

/** PostgreSQL: the deltas of a multi-row INSERT's orders (sums per day and status, bucket counts). */
function insertedDeltas(): string {
  const sums = evalsSumExprs("", "postgres");
  const buckets = LATENCY_METRICS.map(
    (m) => `SELECT livemode, ${day("")} AS day, text '${m}' AS metric,
      ${sketchBucketExpr(m, "", "postgres")} AS bucket FROM new_rows WHERE ${latencyPresent(m, "")}`,
  ).join(" UNION ALL ");
  return `INSERT INTO evals_daily_delta (livemode, day, status, ${EVALS_SUMS.join(", ")})
      SELECT livemode, ${day("")}, status, ${EVALS_SUMS.map((s) => `sum(${sums[s]})`).join(", ")}
      FROM new_rows GROUP BY livemode, ${day("")}, status;
    INSERT INTO evals_sketch_delta (livemode, day, metric, bucket, n)
      SELECT livemode, day, metric, bucket, count(*) FROM (${buckets}) b GROUP BY 1, 2, 3, 4;`;
}

/** PostgreSQL: one changed or deleted order's deltas, its old contribution out and its new one in. */
function rowDeltas(event: "update" | "delete"): string {
  const rows = event === "update" ? (["OLD.", "NEW."] as const) : (["OLD."] as const);
  const sums = rows.map((r) => {
    const e = evalsSumExprs(r, "postgres");
    const sign = r === "OLD." ? "-" : "";
    return `(${r}livemode, ${day(r)}, ${r}status, ${EVALS_SUMS.map((s) => `${sign}${e[s]}`).join(", ")})`;
  });
  const buckets = LATENCY_METRICS.map((m) => {
    const insert = `INSERT INTO evals_sketch_delta (livemode, day, metric, bucket, n) ${rows
      .map(
        (r) => `SELECT ${r}livemode, ${day(r)}, '${m}', ${sketchBucketExpr(m, r, "postgres")},
          ${r === "OLD." ? -1 : 1} WHERE ${latencyPresent(m, r)}`,
      )
      .join(" UNION ALL ")};`;
    return event === "delete" ? insert : `IF ${changed(movedBy(m), "postgres")} THEN ${insert} END IF;`;
  });
  return `INSERT INTO evals_daily_delta (livemode, day, status, ${EVALS_SUMS.join(", ")})
      VALUES ${sums.join(", ")};
    ${buckets.join("\n    ")}`;
}

/** PostgreSQL's fold (inside fsd_evals_compact, under its advisory lock): sums, then sketches. */
function postgresFold(): string {
  const columns = EVALS_SUMS;
  const key = "livemode, day, status";
  return `WITH moved AS (DELETE FROM evals_daily_delta RETURNING *)
    INSERT INTO evals_daily (${key}, ${columns.join(", ")})
      SELECT ${key}, ${columns.map((c) => `sum(${c})`).join(", ")} FROM moved GROUP BY ${key}
    ON CONFLICT (${key}) DO UPDATE SET ${columns.map((c) => `${c} = evals_daily.${c} + excluded.${c}`).join(", ")};
  WITH moved AS (DELETE FROM evals_sketch_delta RETURNING livemode, day, metric, bucket, n),
  touched AS (SELECT DISTINCT livemode, day, metric FROM moved),
  merged AS (
    SELECT livemode, day, metric, bucket, sum(n) AS n FROM (
      SELECT livemode, day, metric, bucket, n FROM moved
      UNION ALL
      SELECT s.livemode, s.day, s.metric, e.key::integer, e.value::bigint
      FROM evals_sketch_daily s JOIN touched t USING (livemode, day, metric), jsonb_each_text(s.sketch) e
    ) x GROUP BY livemode, day, metric, bucket)
  INSERT INTO evals_sketch_daily (livemode, day, metric, sketch)
    SELECT t.livemode, t.day, t.metric,
      coalesce(jsonb_object_agg(m.bucket, m.n) FILTER (WHERE m.n <> 0), '{}'::jsonb)
    FROM touched t LEFT JOIN merged m USING (livemode, day, metric)
    GROUP BY t.livemode, t.day, t.metric
  ON CONFLICT (livemode, day, metric) DO UPDATE SET sketch = excluded.sketch;`;
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(`CREATE FUNCTION fsd_evals_compact() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('fsd_evals_compact:' || current_schema())) THEN RETURN; END IF;
  ${postgresFold()}
END $$`)
    .execute(db);
  const functions = { insert: insertedDeltas(), update: rowDeltas("update"), delete: rowDeltas("delete") };
  for (const [event, body] of Object.entries(functions)) {
    await sql
      .raw(`CREATE FUNCTION fsd_evals_${event}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  ${body}
  IF random() < 0.001 THEN PERFORM fsd_evals_compact(); END IF;
  RETURN NULL;
END $$`)
      .execute(db);
  }
  await sql
    .raw(`CREATE TRIGGER orders_evals_insert AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION fsd_evals_insert()`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_evals_update AFTER UPDATE ON orders FOR EACH ROW
      WHEN (${changed(CONTRIBUTING, "postgres")}) EXECUTE FUNCTION fsd_evals_update()`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_evals_delete AFTER DELETE ON orders FOR EACH ROW
      EXECUTE FUNCTION fsd_evals_delete()`)
    .execute(db);
}

/** The rollup's tables, filled from the orders there are (the backfill). */
async function rollupTables(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const n = int(dialect);
  const tail = dialect === "sqlite" ? " WITHOUT ROWID" : "";
  const sumColumns = EVALS_SUMS.map((s) => `${s} ${n} NOT NULL`).join(", ");
  const sumsTable = (name: string, key: string) =>
    sql
      .raw(`CREATE TABLE ${name} (livemode integer NOT NULL, day text NOT NULL, status text NOT NULL,
        ${sumColumns}${key})${key ? tail : ""}`)
      .execute(db);
  await sumsTable("evals_daily", ", PRIMARY KEY (livemode, day, status)");
  const sketch = dialect === "postgres" ? "jsonb" : "text";
  await sql
    .raw(`CREATE TABLE evals_sketch_daily (livemode integer NOT NULL, day text NOT NULL, metric text NOT NULL,
      sketch ${sketch} NOT NULL, PRIMARY KEY (livemode, day, metric))${tail}`)
    .execute(db);
  const bucketColumns = `livemode integer NOT NULL, day text NOT NULL, metric text NOT NULL,
    bucket integer NOT NULL, n ${n} NOT NULL`;
  if (dialect === "postgres") {
    await sumsTable("evals_daily_delta", "");
    await sql.raw(`CREATE TABLE evals_sketch_delta (${bucketColumns})`).execute(db);
  } else {
    await sql
      .raw(`CREATE TABLE evals_sketch_delta (${bucketColumns},
        PRIMARY KEY (livemode, day, metric, bucket)) WITHOUT ROWID`)
      .execute(db);
  }
  const sums = evalsSumExprs("", dialect);
  await sql
    .raw(`INSERT INTO evals_daily (livemode, day, status, ${EVALS_SUMS.join(", ")})
      SELECT livemode, ${day("")}, status, ${EVALS_SUMS.map((s) => `sum(${sums[s]})`).join(", ")}
      FROM orders GROUP BY livemode, ${day("")}, status`)
    .execute(db);
  // The sketches straight from the orders: their buckets counted, one JSON object per day and latency.
  const object =
    dialect === "postgres" ? "jsonb_object_agg(bucket, n)" : "json_group_object(CAST(bucket AS text), n)";
  for (const m of LATENCY_METRICS) {
    await sql
      .raw(`INSERT INTO evals_sketch_daily (livemode, day, metric, sketch)
        SELECT livemode, day, '${m}', ${object} FROM (
          SELECT livemode, ${day("")} AS day, ${sketchBucketExpr(m, "", dialect)} AS bucket, count(*) AS n
          FROM orders WHERE ${latencyPresent(m, "")} GROUP BY 1, 2, 3) b
        GROUP BY livemode, day`)
      .execute(db);
  }
}

async function dropRollup(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === "sqlite") {
    for (const t of ["orders_evals_insert", "orders_evals_update", "orders_evals_delete"]) {
      await sql.raw(`DROP TRIGGER IF EXISTS ${t}`).execute(db);
    }
  } else {
    for (const event of ["insert", "update", "delete"]) {
      await sql.raw(`DROP TRIGGER IF EXISTS orders_evals_${event} ON orders`).execute(db);
      await sql.raw(`DROP FUNCTION IF EXISTS fsd_evals_${event}()`).execute(db);
    }
    await sql.raw("DROP FUNCTION IF EXISTS fsd_evals_compact()").execute(db);
  }
  for (const table of ["evals_sketch_delta", "evals_sketch_daily", "evals_daily_delta", "evals_daily"]) {
    await sql.raw(`DROP TABLE IF EXISTS ${table}`).execute(db);
  }
  await sql.raw("DROP INDEX IF EXISTS orders_sla_running_idx").execute(db);
}

export function migration0027(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await dropEvalsRollup(db, dialect);
      await sql
        .raw(
          `CREATE INDEX orders_sla_running_idx ON orders (livemode, received_at) WHERE ${RUNNING_CLOCKS_SQL}`,
        )
        .execute(db);
      await rollupTables(db, dialect);
      if (dialect === "sqlite") await sqliteTriggers(db);
      else await postgresTriggers(db);
    },
    async down(db: Kysely<unknown>) {
      await dropRollup(db, dialect);
      await buildEvalsRollup(db, dialect);
    },
  };
}
