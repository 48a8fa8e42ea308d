// Evals from real data (GET /api/dispatch/analytics/evals): the first definitions of the figures, in SQL,
// for the triggers below. Migration 0012 rebuilt the rollup with today's definitions (its own module,
// which evals-store.ts reads with); these stay as they were, as a migration must.
//
// Both dialects:
// - orders.override_count: how many times a dispatcher assigned or reassigned the order by hand, counted
//   by the override itself (OrderLifecycle.assign) and, for orders older than this migration, from their
//   `order.assigned` audit records; so the override rate is a column sum, not a join with the log.
// - indexes on the received time and on the two latencies (in the order of the latency, with the
//   received time in the key) for the nearest-rank lookup within a histogram bucket.
//
// A daily rollup of the orders by the UTC day they were received (sums per status, and latency
// histograms), kept by triggers on orders in the writing transaction. A request then reads a few hundred
// rollup rows plus the orders of part of one day, instead of every order of the window (a million rows
// take SQLite, which answers on the event loop's thread, most of a second).
// - SQLite (one writer) upserts the rollup rows directly.
// - PostgreSQL appends deltas instead (evals_daily_delta, evals_latency_delta): group commits running
//   side by side would otherwise lock the same rollup rows in different orders and deadlock. fsd_evals_compact() folds the deltas into the rollup, one caller at a time (an advisory
//   lock; a caller that does not get it skips); the evals read calls it, and so does one write statement
//   in a thousand, so the deltas stay few when nobody reads. Readers sum rollup and deltas in one
//   statement, so a compaction never shows half done.

import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../dialect.js";

/** The additive figures of an order, summed per (day, status) in the rollup and in the live queries. */
const EVALS_SUMS = [
  "orders",
  "matched",
  "dispatched",
  "overridden",
  "overrides",
  "accepted",
  "nte_orders",
  "nte_within",
  "nte_ppm",
] as const;
type EvalsSum = (typeof EVALS_SUMS)[number];

type LatencyMetric = "offer" | "accept";
const LATENCY_METRICS: readonly LatencyMetric[] = ["offer", "accept"];

const int = (dialect: Dialect) => (dialect === "postgres" ? "bigint" : "integer");

/**
 * SQL for each sum, over the order row `r` (a prefix: "NEW.", "OLD." or "" for a plain query).
 * - matched: offered automatically at creation (matched_at is the first offer).
 * - dispatched: reached a contractor, by that offer or by a dispatcher's assignment.
 * - overridden / overrides: assigned by hand at least once / how many times.
 * - accepted: has been accepted (by its contractor, or assigned); for cancelled orders, cancelled after.
 * - nte_*: completed or invoiced with an NTE in force (the approved increase, else the caller's) and a
 *   final cost (the invoice, else the contractor's reported cost): how many, how many within the NTE,
 *   and the sum of (cost - NTE) / NTE in parts per million (integers add and subtract exactly).
 */
function evalsSumExprs(r: string, dialect: Dialect): Record<EvalsSum, string> {
  const nte = `coalesce(${r}nte_approved_cents, ${r}nte_cents)`;
  const cost = `coalesce(${r}invoice_cents, ${r}final_cost_cents)`;
  const eligible = `${r}status IN ('completed', 'invoiced') AND ${nte} > 0 AND ${cost} IS NOT NULL`;
  const flag = (condition: string) => `(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;
  return {
    orders: "1",
    matched: flag(`${r}matched_at IS NOT NULL`),
    dispatched: flag(`${r}matched_at IS NOT NULL OR ${r}override_count > 0`),
    overridden: flag(`${r}override_count > 0`),
    overrides: `${r}override_count`,
    accepted: flag(`${r}accepted_at IS NOT NULL`),
    nte_orders: flag(eligible),
    nte_within: flag(`${eligible} AND ${cost} <= ${nte}`),
    nte_ppm: `(CASE WHEN ${eligible} THEN CAST(round((${cost} - ${nte}) * 1000000.0 / ${nte}) AS ${int(dialect)}) ELSE 0 END)`,
  };
}

/**
 * A latency as stored in its index: received -> first offer is the in-process measurement
 * (dispatch_latency_ms, milliseconds with sub-millisecond precision); received -> accepted is the
 * difference of the two timestamps, in whole milliseconds.
 */
function latencyExpr(metric: LatencyMetric, r: string, dialect: Dialect): string {
  if (metric === "offer") return `${r}dispatch_latency_ms`;
  return dialect === "postgres"
    ? `(fsd_epoch_ms(${r}accepted_at) - fsd_epoch_ms(${r}received_at))`
    : `round((julianday(${r}accepted_at) - julianday(${r}received_at)) * 86400000.0)`;
}

/** The condition under which an order has the latency (the partial index's WHERE). */
function latencyPresent(metric: LatencyMetric, r: string): string {
  return metric === "offer" ? `${r}dispatch_latency_ms IS NOT NULL` : `${r}accepted_at IS NOT NULL`;
}

/**
 * The latency's histogram bucket, in whole microseconds (first offer) or milliseconds (acceptance): its
 * number of digits and its first two significant digits rounded down to even (`digits * 100 + pair`:
 * 34,567 -> 534, 35,999 -> 534), so buckets are 2-20 % wide at any scale and ordered like the values.
 * Negative values (a wall clock stepped back) count as 0.
 */
function latencyBucketExpr(metric: LatencyMetric, r: string, dialect: Dialect): string {
  // PostgreSQL: the same whole milliseconds as the indexed fsd_epoch_ms difference, computed inline
  // (a call of the SQL function costs several times the casts).
  const raw =
    metric === "accept" && dialect === "postgres"
      ? `round(date_part('epoch', ${r}accepted_at::timestamptz - ${r}received_at::timestamptz) * 1000)`
      : latencyExpr(metric, r, dialect);
  const scaled = metric === "offer" ? `round(${raw} * 1000.0)` : raw;
  const v =
    dialect === "postgres"
      ? `greatest(CAST(${scaled} AS bigint), 0)::text`
      : `max(CAST(${scaled} AS integer), 0)`;
  return `(length(${v}) * 100 + CAST(substr(${v}, 1, 2) AS integer) / 2 * 2)`;
}

const day = (r: string) => `substr(${r}received_at, 1, 10)`;

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

/** Columns whose change can change an order's contribution. */
const CONTRIBUTING = [
  "livemode",
  "received_at",
  "status",
  "matched_at",
  "dispatch_latency_ms",
  "accepted_at",
  "override_count",
  "nte_cents",
  "nte_approved_cents",
  "final_cost_cents",
  "invoice_cents",
];

const changed = (columns: string[], dialect: Dialect = "sqlite") =>
  columns
    .map((c) => `OLD.${c} ${dialect === "sqlite" ? "IS NOT" : "IS DISTINCT FROM"} NEW.${c}`)
    .join(" OR ");

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
  const offerMoved = changed(["livemode", "received_at", "dispatch_latency_ms"]);
  const acceptMoved = changed(["livemode", "received_at", "accepted_at"]);
  await sql
    .raw(`CREATE TRIGGER orders_evals_insert AFTER INSERT ON orders BEGIN
      ${rollupUpsert("NEW.", 1, "1")}
      ${histogramUpsert("offer", "NEW.", 1, "1")}
      ${histogramUpsert("accept", "NEW.", 1, "1")}
    END`)
    .execute(db);
  // An update moves the order's contribution: out of its old (day, status) row, into its new one.
  await sql
    .raw(`CREATE TRIGGER orders_evals_update AFTER UPDATE OF ${CONTRIBUTING.join(", ")} ON orders BEGIN
      ${rollupUpsert("OLD.", -1, "1")}
      ${rollupUpsert("NEW.", 1, "1")}
      ${histogramUpsert("offer", "OLD.", -1, `(${offerMoved})`)}
      ${histogramUpsert("offer", "NEW.", 1, `(${offerMoved})`)}
      ${histogramUpsert("accept", "OLD.", -1, `(${acceptMoved})`)}
      ${histogramUpsert("accept", "NEW.", 1, `(${acceptMoved})`)}
    END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_evals_delete AFTER DELETE ON orders BEGIN
      ${rollupUpsert("OLD.", -1, "1")}
      ${histogramUpsert("offer", "OLD.", -1, "1")}
      ${histogramUpsert("accept", "OLD.", -1, "1")}
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
const insertedDeltas = `INSERT INTO evals_daily_delta (livemode, day, status, ${EVALS_SUMS.join(", ")})
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
    const moved = ["livemode", "received_at", metric === "offer" ? "dispatch_latency_ms" : "accepted_at"];
    return `IF ${changed(moved, "postgres")} THEN ${insert} END IF;`;
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
  const functions = { insert: insertedDeltas, update: rowDeltas("update"), delete: rowDeltas("delete") };
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

async function overrideCount(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("orders")
    .addColumn("override_count", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`UPDATE orders SET override_count = (
      SELECT count(*) FROM audit_records a WHERE a.order_id = orders.id AND a.kind = 'order.assigned')
    WHERE id IN (SELECT order_id FROM audit_records WHERE kind = 'order.assigned')`.execute(db);
}

/**
 * The latency indexes, the rollup (filled from the orders) and its triggers, as this migration defines
 * them; migration 0012's down rebuilds them with it.
 */
export async function buildRollup0008(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
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

export function migration0008(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === "postgres") {
        // The service writes every timestamp as ISO-8601 UTC ('...Z'), which reads the same under any
        // TimeZone or DateStyle: immutable for our data, so an index may use it. PL/pgSQL and date_part
        // (a double) cost a third of a SQL function with extract (a numeric).
        await sql
          .raw(`CREATE FUNCTION fsd_epoch_ms(ts text) RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
            AS $$ BEGIN RETURN round(date_part('epoch', ts::timestamptz) * 1000)::bigint; END $$`)
          .execute(db);
      }
      await overrideCount(db);
      await db.schema
        .createIndex("orders_received_idx")
        .on("orders")
        .columns(["livemode", "received_at"])
        .execute();
      await buildRollup0008(db, dialect);
    },
    async down(db: Kysely<unknown>) {
      if (dialect === "sqlite") {
        for (const t of ["orders_evals_insert", "orders_evals_update", "orders_evals_delete"]) {
          await sql.raw(`DROP TRIGGER ${t}`).execute(db);
        }
        await db.schema.dropTable("evals_latency_daily").execute();
        await db.schema.dropTable("evals_daily").execute();
      } else {
        for (const event of ["insert", "update", "delete"]) {
          await sql.raw(`DROP TRIGGER orders_evals_${event} ON orders`).execute(db);
          await sql.raw(`DROP FUNCTION fsd_evals_${event}()`).execute(db);
        }
        await sql.raw("DROP FUNCTION fsd_evals_compact()").execute(db);
        for (const table of [
          "evals_latency_delta",
          "evals_daily_delta",
          "evals_latency_daily",
          "evals_daily",
        ]) {
          await db.schema.dropTable(table).execute();
        }
      }
      for (const index of ["orders_accept_latency_idx", "orders_offer_latency_idx", "orders_received_idx"]) {
        await db.schema.dropIndex(index).execute();
      }
      if (dialect === "postgres") await sql.raw("DROP FUNCTION fsd_epoch_ms(text)").execute(db);
      await db.schema.alterTable("orders").dropColumn("override_count").execute();
    },
  };
}
