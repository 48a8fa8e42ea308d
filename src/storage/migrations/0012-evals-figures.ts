// What the evals' figures are made of, in SQL, defined once: the rollup's triggers below and the live
// queries of evals-store.ts use the same expressions. Migration 0012 rebuilds the rollup of 0008 (which
// keeps its own, older definitions, as a migration must) from these.
//
// A daily rollup of the orders by the UTC day they were received (sums per status, and latency
// histograms), kept by triggers on orders in the writing transaction. A request then reads a few hundred
// rollup rows plus the orders of part of one day, instead of every order of the window (a million rows
// take SQLite, which answers on the event loop's thread, most of a second).
// - SQLite (one writer) upserts the rollup rows directly.
// - PostgreSQL appends deltas instead (evals_daily_delta, evals_latency_delta): group commits running
//   side by side would otherwise lock the same rollup rows in different orders and deadlock.
//   fsd_evals_compact() folds the deltas into the rollup, one caller at a time (an advisory lock; a
//   caller that does not get it skips); the evals read calls it, and so does one write statement in a
//   thousand, so the deltas stay few when nobody reads. Readers sum rollup and deltas in one statement,
//   so a compaction never shows half done.
// - Each latency has a partial index (in the order of the latency, with the received time in the key)
//   for the nearest-rank lookup within a histogram bucket.
//
// The rollup is rebuilt from the orders (buildEvalsRollup after dropEvalsRollup): a later change of the
// figures takes a migration that does the same with the definitions of its day.

import { type Kysely, type Migration, sql } from "kysely";
import { WORK_DONE_STATUSES } from "../../domain/orders/statuses.js";
import type { Dialect } from "../dialect.js";
import { buildRollup0008 } from "./0008-evals.js";

/** The additive figures of an order, summed per (day, status) in the rollup and in the live queries. */
export const EVALS_SUMS = [
  "orders",
  "matched",
  "dispatched",
  "accepted",
  "offer_unrecorded",
  "manual_assignments",
  "human_dispatched",
  "human_dispatches",
  "overridden",
  "overrides",
  "redispatched",
  "redispatches",
  "nte_orders",
  "nte_within",
  "nte_ppm",
  "nte_within_original",
  "nte_increased",
  "nte_increase_ppm",
  "offered",
  "offers_made",
  "offers_accepted",
  "offers_declined",
  "offers_expired",
  "first_offer_answered",
  "first_offer_accepted",
] as const;
export type EvalsSum = (typeof EVALS_SUMS)[number];

/**
 * The latencies, each kept as a histogram in the rollup:
 * - measured: a duration stored in milliseconds (with sub-millisecond precision), bucketed by its
 *   rounded microseconds;
 * - elapsed: the time from received_at to a timestamp column, in whole milliseconds.
 * offer: request received -> first offer committed; matching: the in-memory match; first_accept: received
 * -> first acceptance; final_accept: received -> the last acceptance or assignment.
 */
const LATENCIES = {
  offer: { kind: "measured", column: "dispatch_latency_ms" },
  matching: { kind: "measured", column: "matching_time_ms" },
  first_accept: { kind: "elapsed", column: "first_accepted_at" },
  final_accept: { kind: "elapsed", column: "accepted_at" },
} as const satisfies Record<string, { kind: "measured" | "elapsed"; column: string }>;
export type LatencyMetric = keyof typeof LATENCIES;
export const LATENCY_METRICS = Object.keys(LATENCIES) as LatencyMetric[];

/** The column a latency is read from (the duration, or the timestamp it ends at). */
export function latencyColumn(metric: LatencyMetric): string {
  return LATENCIES[metric].column;
}

/** Whether a latency is a timestamp difference (whole milliseconds) rather than a measured duration. */
export function isElapsed(metric: LatencyMetric): boolean {
  return LATENCIES[metric].kind === "elapsed";
}

const int = (dialect: Dialect) => (dialect === "postgres" ? "bigint" : "integer");

/**
 * SQL for each sum, over the order row `r` (a prefix: "NEW.", "OLD." or "" for a plain query). Sums are
 * kept per status; the report picks the statuses a figure is about.
 * - matched: offered automatically at creation (matched_at is the first offer); offer_unrecorded: of
 *   those, the ones without a stored dispatch latency (see operations/orders/dispatch-latency.ts).
 * - dispatched: reached a contractor, by that offer or by a dispatcher's assignment.
 * - accepted: has been accepted (by its contractor, or assigned); for cancelled orders, cancelled after.
 * - manual_assignments: every dispatcher assignment; by kind, orders with one and how many:
 *   human_dispatched/-es (from needs_dispatcher), redispatched/-es (from cannot_complete), and
 *   overridden/overrides (the rest: the contractor the order was offered to or held by, replaced).
 * - nte_*: work done (completed, invoiced, ... paid) with an NTE in force (the approved increase, else the caller's) and the
 *   cost the contractor reported: how many, how many within the NTE in force, the sum of (cost - NTE) /
 *   NTE in parts per million (integers add and subtract exactly), how many within the caller's own NTE,
 *   how many had an increase approved, and the sum of those increases relative to the caller's NTE (ppm).
 * - offered, offers_*: orders with an automatic offer, and the offers made, accepted, declined and
 *   expired; first_offer_answered / first_offer_accepted: the first offer was accepted, declined or
 *   expired (not still pending, not withdrawn) / accepted.
 */
export function evalsSumExprs(r: string, dialect: Dialect): Record<EvalsSum, string> {
  const nte = `coalesce(${r}nte_approved_cents, ${r}nte_cents)`;
  const cost = `${r}final_cost_cents`;
  // The statuses of work done: completed and invoiced until migration 0039 added the invoice's own
  // (approved, paid, ...), which rebuilds the rollup with this list.
  const done = WORK_DONE_STATUSES.map((x) => `'${x}'`).join(", ");
  const eligible = `${r}status IN (${done}) AND ${nte} > 0 AND ${cost} IS NOT NULL`;
  const increased = `${eligible} AND ${r}nte_approved_cents IS NOT NULL AND ${r}nte_cents > 0`;
  const flag = (condition: string) => `(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;
  const ppm = (when: string, value: string, of: string) =>
    `(CASE WHEN ${when} THEN CAST(round((${value} - ${of}) * 1000000.0 / ${of}) AS ${int(dialect)}) ELSE 0 END)`;
  const overrides = `(${r}override_count - ${r}manual_dispatch_count - ${r}redispatch_count)`;
  return {
    orders: "1",
    matched: flag(`${r}matched_at IS NOT NULL`),
    dispatched: flag(`${r}matched_at IS NOT NULL OR ${r}override_count > 0`),
    accepted: flag(`${r}accepted_at IS NOT NULL`),
    offer_unrecorded: flag(`${r}matched_at IS NOT NULL AND ${r}dispatch_latency_ms IS NULL`),
    manual_assignments: `${r}override_count`,
    human_dispatched: flag(`${r}manual_dispatch_count > 0`),
    human_dispatches: `${r}manual_dispatch_count`,
    overridden: flag(`${overrides} > 0`),
    overrides,
    redispatched: flag(`${r}redispatch_count > 0`),
    redispatches: `${r}redispatch_count`,
    nte_orders: flag(eligible),
    nte_within: flag(`${eligible} AND ${cost} <= ${nte}`),
    nte_ppm: ppm(eligible, cost, nte),
    nte_within_original: flag(`${eligible} AND ${cost} <= ${r}nte_cents`),
    nte_increased: flag(increased),
    nte_increase_ppm: ppm(increased, `${r}nte_approved_cents`, `${r}nte_cents`),
    offered: flag(`${r}offers_made > 0`),
    offers_made: `${r}offers_made`,
    offers_accepted: flag(`${r}accepted_offer_attempt IS NOT NULL`),
    offers_declined: `${r}offers_declined`,
    offers_expired: `${r}offers_expired`,
    first_offer_answered: flag(
      `${r}accepted_offer_attempt = 1 OR ${r}offers_declined + ${r}offers_expired > 0`,
    ),
    first_offer_accepted: flag(`${r}accepted_offer_attempt = 1`),
  };
}

/** Milliseconds from received_at to `column` of the row `r`, as the index stores it. */
function elapsedExpr(column: string, r: string, dialect: Dialect): string {
  return dialect === "postgres"
    ? `(fsd_epoch_ms(${r}${column}) - fsd_epoch_ms(${r}received_at))`
    : `round((julianday(${r}${column}) - julianday(${r}received_at)) * 86400000.0)`;
}

/** A latency as stored in its index, in milliseconds. */
function latencyExpr(metric: LatencyMetric, r: string, dialect: Dialect): string {
  const { kind, column } = LATENCIES[metric];
  return kind === "measured" ? `${r}${column}` : elapsedExpr(column, r, dialect);
}

/** The condition under which an order has the latency (the partial index's WHERE). */
export function latencyPresent(metric: LatencyMetric, r: string): string {
  return `${r}${LATENCIES[metric].column} IS NOT NULL`;
}

/**
 * The latency's histogram bucket, in whole microseconds (measured) or milliseconds (elapsed): its
 * number of digits and its first two significant digits rounded down to even (`digits * 100 + pair`:
 * 34,567 -> 534, 35,999 -> 534), so buckets are 2-20 % wide at any scale and ordered like the values.
 * Negative values (a wall clock stepped back) count as 0.
 */
function latencyBucketExpr(metric: LatencyMetric, r: string, dialect: Dialect): string {
  const { kind, column } = LATENCIES[metric];
  // PostgreSQL: the same whole milliseconds as the indexed fsd_epoch_ms difference, computed inline
  // (a call of the SQL function costs several times the casts).
  const raw =
    kind === "elapsed" && dialect === "postgres"
      ? `round(date_part('epoch', ${r}${column}::timestamptz - ${r}received_at::timestamptz) * 1000)`
      : latencyExpr(metric, r, dialect);
  const scaled = kind === "measured" ? `round(${raw} * 1000.0)` : raw;
  const v =
    dialect === "postgres"
      ? `greatest(CAST(${scaled} AS bigint), 0)::text`
      : `max(CAST(${scaled} AS integer), 0)`;
  return `(length(${v}) * 100 + CAST(substr(${v}, 1, 2) AS integer) / 2 * 2)`;
}

const day = (r: string) => `substr(${r}received_at, 1, 10)`;

/** Columns whose change can change an order's contribution (every column the sums and latencies read). */
const CONTRIBUTING = [
  ...new Set([
    "livemode",
    "received_at",
    "status",
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
    ...Object.values(LATENCIES).map((l) => l.column),
  ]),
];

/** The columns whose change moves an order in a latency's histogram. */
const movedBy = (metric: LatencyMetric) => ["livemode", "received_at", LATENCIES[metric].column];

const changed = (columns: string[], dialect: Dialect = "sqlite") =>
  columns
    .map((c) => `OLD.${c} ${dialect === "sqlite" ? "IS NOT" : "IS DISTINCT FROM"} NEW.${c}`)
    .join(" OR ");

/** Adds `sign` times an order row's contribution to the daily rollup (SQLite trigger statements). */
function rollupUpsert(r: string, sign: 1 | -1, when: string): string {
  const sums = evalsSumExprs(r, "sqlite");
  const values = EVALS_SUMS.map((s) => (sign === 1 ? sums[s] : `-${sums[s]}`));
  return `INSERT INTO evals_daily (livemode, day, status, ${EVALS_SUMS.join(", ")})
      SELECT ${r}livemode, ${day(r)}, ${r}status, ${values.join(", ")} WHERE ${when}
      ON CONFLICT (livemode, day, status) DO UPDATE SET ${EVALS_SUMS.map((s) => `${s} = ${s} + excluded.${s}`).join(", ")};`;
}

function histogramUpsert(metric: LatencyMetric, r: string, sign: 1 | -1, when: string): string {
  return `INSERT INTO evals_latency_daily (livemode, metric, day, bucket, n)
      SELECT ${r}livemode, '${metric}', ${day(r)}, ${latencyBucketExpr(metric, r, "sqlite")}, ${sign}
      WHERE ${latencyPresent(metric, r)} AND ${when}
      ON CONFLICT (livemode, metric, day, bucket) DO UPDATE SET n = n + excluded.n;`;
}

/** The rollup tables (and PostgreSQL's delta tables), filled from the orders there are. */
async function rollupTables(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const n = int(dialect);
  const tail = dialect === "sqlite" ? " WITHOUT ROWID" : "";
  const sumColumns = EVALS_SUMS.map((s) => `${s} ${n} NOT NULL`).join(", ");
  const latencyColumns = `livemode integer NOT NULL, metric text NOT NULL, day text NOT NULL,
      bucket integer NOT NULL, n ${n} NOT NULL`;
  await sql
    .raw(`CREATE TABLE evals_daily (livemode integer NOT NULL, day text NOT NULL, status text NOT NULL,
      ${sumColumns}, PRIMARY KEY (livemode, day, status))${tail}`)
    .execute(db);
  await sql
    .raw(
      `CREATE TABLE evals_latency_daily (${latencyColumns}, PRIMARY KEY (livemode, metric, day, bucket))${tail}`,
    )
    .execute(db);
  if (dialect === "postgres") {
    await sql
      .raw(`CREATE TABLE evals_daily_delta (livemode integer NOT NULL, day text NOT NULL, status text NOT NULL,
        ${sumColumns})`)
      .execute(db);
    await sql.raw(`CREATE TABLE evals_latency_delta (${latencyColumns})`).execute(db);
  }
  const sums = evalsSumExprs("", dialect);
  await sql
    .raw(`INSERT INTO evals_daily (livemode, day, status, ${EVALS_SUMS.join(", ")})
      SELECT livemode, ${day("")}, status, ${EVALS_SUMS.map((s) => `sum(${sums[s]})`).join(", ")}
      FROM orders GROUP BY livemode, ${day("")}, status`)
    .execute(db);
  for (const metric of LATENCY_METRICS) {
    await sql
      .raw(`INSERT INTO evals_latency_daily (livemode, metric, day, bucket, n)
        SELECT livemode, '${metric}', ${day("")}, ${latencyBucketExpr(metric, "", dialect)}, count(*)
        FROM orders WHERE ${latencyPresent(metric, "")} GROUP BY 1, 2, 3, 4`)
      .execute(db);
  }
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  const histograms = (r: "NEW." | "OLD.", sign: 1 | -1, when: (m: LatencyMetric) => string) =>
    LATENCY_METRICS.map((m) => histogramUpsert(m, r, sign, when(m))).join("\n      ");
  await sql
    .raw(`CREATE TRIGGER orders_evals_insert AFTER INSERT ON orders BEGIN
      ${rollupUpsert("NEW.", 1, "1")}
      ${histograms("NEW.", 1, () => "1")}
    END`)
    .execute(db);
  // An update moves the order's contribution: out of its old (day, status) row, into its new one.
  const moved = (m: LatencyMetric) => `(${changed(movedBy(m))})`;
  await sql
    .raw(`CREATE TRIGGER orders_evals_update AFTER UPDATE OF ${CONTRIBUTING.join(", ")} ON orders BEGIN
      ${rollupUpsert("OLD.", -1, "1")}
      ${rollupUpsert("NEW.", 1, "1")}
      ${histograms("OLD.", -1, moved)}
      ${histograms("NEW.", 1, moved)}
    END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_evals_delete AFTER DELETE ON orders BEGIN
      ${rollupUpsert("OLD.", -1, "1")}
      ${histograms("OLD.", -1, () => "1")}
    END`)
    .execute(db);
}

/** The rows of an order transition table (`rows`) as contributions, for PostgreSQL's delta tables. */
function tableSums(rows: string): string {
  const sums = evalsSumExprs("", "postgres");
  return `SELECT livemode, ${day("")} AS day, status, ${EVALS_SUMS.map((s) => `${sums[s]} AS ${s}`).join(", ")}
    FROM ${rows}`;
}

function tableBuckets(rows: string): string {
  return LATENCY_METRICS.map(
    (metric) => `SELECT livemode, text '${metric}' AS metric, ${day("")} AS day,
      ${latencyBucketExpr(metric, "", "postgres")} AS bucket, 1 AS n
    FROM ${rows} WHERE ${latencyPresent(metric, "")}`,
  ).join(" UNION ALL ");
}

/** Appends a multi-row INSERT's orders to the deltas, summed per day and status. */
const insertedDeltas = () => `INSERT INTO evals_daily_delta (livemode, day, status, ${EVALS_SUMS.join(", ")})
      SELECT livemode, day, status, ${EVALS_SUMS.map((s) => `sum(${s})`).join(", ")}
      FROM (${tableSums("new_rows")}) d GROUP BY livemode, day, status;
    INSERT INTO evals_latency_delta (livemode, metric, day, bucket, n)
      SELECT livemode, metric, day, bucket, sum(n) FROM (${tableBuckets("new_rows")}) d
      GROUP BY livemode, metric, day, bucket;`;

/** One changed or deleted order's deltas: its old contribution out, its new one (if any) in. */
function rowDeltas(event: "update" | "delete"): string {
  const rows = event === "update" ? (["OLD.", "NEW."] as const) : (["OLD."] as const);
  const sums = rows.map((r) => {
    const e = evalsSumExprs(r, "postgres");
    const sign = r === "OLD." ? "-" : "";
    return `(${r}livemode, ${day(r)}, ${r}status, ${EVALS_SUMS.map((s) => `${sign}${e[s]}`).join(", ")})`;
  });
  const latency = LATENCY_METRICS.map((metric) => {
    const insert = `INSERT INTO evals_latency_delta (livemode, metric, day, bucket, n) ${rows
      .map(
        (r) => `SELECT ${r}livemode, '${metric}', ${day(r)}, ${latencyBucketExpr(metric, r, "postgres")},
          ${r === "OLD." ? -1 : 1} WHERE ${latencyPresent(metric, r)}`,
      )
      .join(" UNION ALL ")};`;
    if (event === "delete") return insert;
    return `IF ${changed(movedBy(metric), "postgres")} THEN ${insert} END IF;`;
  });
  return `INSERT INTO evals_daily_delta (livemode, day, status, ${EVALS_SUMS.join(", ")})
      VALUES ${sums.join(", ")};
    ${latency.join("\n    ")}`;
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  const fold = (delta: string, table: string, key: string, columns: readonly string[]) =>
    `WITH moved AS (DELETE FROM ${delta} RETURNING *)
    INSERT INTO ${table} (${key}, ${columns.join(", ")})
      SELECT ${key}, ${columns.map((c) => `sum(${c})`).join(", ")} FROM moved GROUP BY ${key}
    ON CONFLICT (${key}) DO UPDATE SET ${columns.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(", ")};`;
  await sql
    .raw(`CREATE FUNCTION fsd_evals_compact() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('fsd_evals_compact:' || current_schema())) THEN RETURN; END IF;
  ${fold("evals_daily_delta", "evals_daily", "livemode, day, status", EVALS_SUMS)}
  ${fold("evals_latency_delta", "evals_latency_daily", "livemode, metric, day, bucket", ["n"])}
END $$`)
    .execute(db);
  // Inserts come many rows to a statement (a group commit's orders): one trigger run per statement.
  // Updates and deletes come one order at a time: a row trigger, run only when a contributing column
  // changed.
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

/** Latency indexes by name: 0008's (offer, accept) and those of the metrics defined here. */
const latencyIndexNames = () => [
  ...new Set(["offer", "accept", ...LATENCY_METRICS].map((m) => `orders_${m}_latency_idx`)),
];

/** Drops the rollup, its triggers and functions and the latency indexes (0008's, or an earlier build). */
export async function dropEvalsRollup(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
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
  for (const table of ["evals_latency_delta", "evals_daily_delta", "evals_latency_daily", "evals_daily"]) {
    await sql.raw(`DROP TABLE IF EXISTS ${table}`).execute(db);
  }
  for (const index of latencyIndexNames()) await sql.raw(`DROP INDEX IF EXISTS ${index}`).execute(db);
}

/** Creates the latency indexes, the rollup (filled from the orders there are) and its triggers. */
export async function buildEvalsRollup(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  for (const metric of LATENCY_METRICS) {
    await sql
      .raw(`CREATE INDEX orders_${metric}_latency_idx ON orders
        (livemode, ${latencyExpr(metric, "", dialect)}, received_at) WHERE ${latencyPresent(metric, "")}`)
      .execute(db);
  }
  await rollupTables(db, dialect);
  if (dialect === "sqlite") await sqliteTriggers(db);
  else await postgresTriggers(db);
}

/** The columns the figures read besides 0008's, filled by the order's commands from now on. */
const COLUMNS: Array<[string, "double precision" | "text" | "integer", "zero" | "null"]> = [
  ["matching_time_ms", "double precision", "null"],
  ["first_accepted_at", "text", "null"],
  ["offers_made", "integer", "zero"],
  ["offers_declined", "integer", "zero"],
  ["offers_expired", "integer", "zero"],
  ["accepted_offer_attempt", "integer", "null"],
  ["manual_dispatch_count", "integer", "zero"],
  ["redispatch_count", "integer", "zero"],
];

/**
 * Fills the new columns of the orders there are from what they left behind: their offers, and their
 * audit records (the first acceptance or assignment, and each assignment's kind by the status it was
 * made from). matching_time_ms stays null: it was never measured for them. Clears dispatch_latency_ms,
 * whose meaning changes (below).
 */
async function backfill(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await sql`UPDATE orders SET offers_made = o.made, offers_declined = o.declined,
      offers_expired = o.expired, accepted_offer_attempt = o.accepted
    FROM (SELECT order_id, count(*) AS made,
        sum(CASE WHEN status = 'declined' THEN 1 ELSE 0 END) AS declined,
        sum(CASE WHEN status = 'expired' THEN 1 ELSE 0 END) AS expired,
        min(CASE WHEN status = 'accepted' THEN attempt END) AS accepted
      FROM offers GROUP BY order_id) o
    WHERE orders.id = o.order_id`.execute(db);
  const fromStatus =
    dialect === "postgres"
      ? sql.raw(`(record::jsonb -> 'data' ->> 'from_status')`)
      : sql.raw(`json_extract(record, '$.data.from_status')`);
  await sql`UPDATE orders SET first_accepted_at = a.first_at,
      manual_dispatch_count = a.dispatches, redispatch_count = a.redispatches
    FROM (SELECT order_id, min(created_at) AS first_at,
        sum(CASE WHEN kind = 'order.assigned' AND ${fromStatus} = 'needs_dispatcher' THEN 1 ELSE 0 END) AS dispatches,
        sum(CASE WHEN kind = 'order.assigned' AND ${fromStatus} = 'cannot_complete' THEN 1 ELSE 0 END) AS redispatches
      FROM audit_records WHERE kind IN ('order.accepted', 'order.assigned') AND order_id IS NOT NULL
      GROUP BY order_id) a
    WHERE orders.id = a.order_id`.execute(db);
  // An order whose records were purged (or that predates them) keeps its last acceptance as the first.
  await sql`UPDATE orders SET first_accepted_at = accepted_at
    WHERE first_accepted_at IS NULL AND accepted_at IS NOT NULL`.execute(db);
  // dispatch_latency_ms now means: request received -> first offer committed, stored after the commit.
  // What the orders there are hold was measured to the in-memory pick, before anything was written: not
  // that figure, so it is cleared (their order.matched audit records keep it) and those orders count as
  // offered without a recorded dispatch latency.
  await sql`UPDATE orders SET dispatch_latency_ms = NULL WHERE dispatch_latency_ms IS NOT NULL`.execute(db);
}

/** Down: the in-memory measurements back from the order.matched records that carry them. */
async function restorePickLatency(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const latency =
    dialect === "postgres"
      ? sql.raw(`(record::jsonb -> 'data' ->> 'dispatch_latency_ms')::double precision`)
      : sql.raw(`json_extract(record, '$.data.dispatch_latency_ms')`);
  await sql`UPDATE orders SET dispatch_latency_ms = m.latency
    FROM (SELECT order_id, max(${latency}) AS latency FROM audit_records
      WHERE kind = 'order.matched' AND order_id IS NOT NULL GROUP BY order_id) m
    WHERE orders.id = m.order_id AND m.latency IS NOT NULL`.execute(db);
}

export function migration0012(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // The old rollup's triggers go first: the backfill's updates would otherwise run them row by row.
      await dropEvalsRollup(db, dialect);
      for (const [column, type, initial] of COLUMNS) {
        await db.schema
          .alterTable("orders")
          .addColumn(column, type, (c) => (initial === "zero" ? c.notNull().defaultTo(0) : c))
          .execute();
      }
      await backfill(db, dialect);
      await buildEvalsRollup(db, dialect);
    },
    async down(db: Kysely<unknown>) {
      // Back to 0008's figures: its own definitions rebuild its rollup.
      await dropEvalsRollup(db, dialect);
      for (const [column] of [...COLUMNS].reverse()) {
        await db.schema.alterTable("orders").dropColumn(column).execute();
      }
      await restorePickLatency(db, dialect);
      await buildRollup0008(db, dialect);
    },
  };
}
