// Issue 30 (years of history): the evals' recall figures from a per-day rollup. `recallCounts` (issue 33)
// read every order completed in the window with an EXISTS per order: 160 ms of the main thread for 90 days
// on a store of a million orders (124,000 completed in the window), the largest part of the 90-day report.
//
// evals_recall_daily holds, per mode, UTC day of completion and contractor: the orders completed and how
// many of them have at least one recall. It is kept by triggers in the transaction of the change, as the
// other evals rollups (0012, 0027), and filled from the orders there are:
// - an order completed (inserted completed, or completed_at set), or its completion's contractor, day or
//   mode changed: its old contribution out, its new one in (whether it was recalled is read then);
// - a recall inserted (recall_of set): the order it recalls counts as recalled, on that order's day and
//   contractor, if it is completed and this is its first recall. On PostgreSQL the recalled order's row
//   is locked first, so that two recalls of one order committed at once count it once.
// - an order deleted (the store never deletes one; tests do): its contribution out, and the order it
//   recalled no longer counts as recalled if no recall of it is left.
// recall_of never changes once set (the store has no such write): the rollup does not follow that.
//
// SQLite's triggers update the rollup in place (one writer). PostgreSQL's insert deltas
// (evals_recall_delta), which readers add to the rollup and fsd_evals_recall_compact() folds in, one
// caller at a time: writers in parallel never wait on one rollup row, nor lock two in opposite orders.
// A window's partial edge days are read from the orders, as the other figures' (evals-store.ts).

import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../dialect.js";

const KEY = "livemode, day, contractor_id";
const COLUMNS = `${KEY}, completed, recalled`;

/** `r`'s contribution (prefix NEW. or OLD., or a table alias with its dot, then `from` names the table)
 * with `sign`, as a SELECT. */
function contribution(r: string, sign: 1 | -1, from = ""): string {
  return `SELECT ${r}livemode, substr(${r}completed_at, 1, 10), coalesce(${r}contractor_id, ''), ${sign},
      ${sign} * (CASE WHEN EXISTS (SELECT 1 FROM orders x WHERE x.recall_of = ${r}id) THEN 1 ELSE 0 END)
      ${from} WHERE ${r}completed_at IS NOT NULL`;
}

/** The recalled order's contribution when `r` is its first recall, as a SELECT. */
function firstRecall(r: string): string {
  return `SELECT p.livemode, substr(p.completed_at, 1, 10), coalesce(p.contractor_id, ''), 0, 1
      FROM orders p WHERE ${r}recall_of IS NOT NULL AND p.id = ${r}recall_of AND p.completed_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM orders x WHERE x.recall_of = ${r}recall_of AND x.id <> ${r}id)`;
}

const CHANGED = ["completed_at", "contractor_id", "livemode"];

/** The order `r` recalled no longer counted as recalled, when `r` was its last recall (SQLite, per row:
 * `r` is gone already). */
function lastRecallGone(r: string): string {
  return `SELECT p.livemode, substr(p.completed_at, 1, 10), coalesce(p.contractor_id, ''), 0, -1
      FROM orders p WHERE ${r}recall_of IS NOT NULL AND p.id = ${r}recall_of AND p.completed_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM orders x WHERE x.recall_of = ${r}recall_of)`;
}

async function sqlite(db: Kysely<unknown>): Promise<void> {
  const upsert = (select: string) => `INSERT INTO evals_recall_daily (${COLUMNS}) ${select}
      ON CONFLICT (${KEY}) DO UPDATE SET completed = completed + excluded.completed,
        recalled = recalled + excluded.recalled;`;
  await sql
    .raw(`CREATE TRIGGER orders_recalls_insert AFTER INSERT ON orders BEGIN
      ${upsert(contribution("NEW.", 1))}
      ${upsert(firstRecall("NEW."))}
    END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_recalls_update AFTER UPDATE OF ${CHANGED.join(", ")} ON orders BEGIN
      ${upsert(contribution("OLD.", -1))}
      ${upsert(contribution("NEW.", 1))}
    END`)
    .execute(db);
  // Row by row: the rows deleted before this one in the statement are gone already, those after it not
  // yet, and either order of an order and its recall leaves the rollup right.
  await sql
    .raw(`CREATE TRIGGER orders_recalls_delete AFTER DELETE ON orders BEGIN
      ${upsert(contribution("OLD.", -1))}
      ${upsert(lastRecallGone("OLD."))}
    END`)
    .execute(db);
}

async function postgres(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(`CREATE TABLE evals_recall_delta (livemode integer NOT NULL, day text NOT NULL,
      contractor_id text NOT NULL, completed bigint NOT NULL, recalled bigint NOT NULL)`)
    .execute(db);
  await sql.raw("CREATE INDEX evals_recall_delta_day_idx ON evals_recall_delta (livemode, day)").execute(db);
  await sql
    .raw(`CREATE FUNCTION fsd_evals_recall_compact() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('fsd_evals_recall_compact:' || current_schema())) THEN RETURN; END IF;
  WITH moved AS (DELETE FROM evals_recall_delta RETURNING ${COLUMNS})
  INSERT INTO evals_recall_daily (${COLUMNS})
    SELECT ${KEY}, sum(completed), sum(recalled) FROM moved GROUP BY ${KEY}
    ON CONFLICT (${KEY}) DO UPDATE SET completed = evals_recall_daily.completed + excluded.completed,
      recalled = evals_recall_daily.recalled + excluded.recalled;
END $$`)
    .execute(db);
  // Inserts come many rows to a statement (the group commit's): one statement-level trigger, which sees
  // every row of the statement. The recalled orders' rows are locked (id order) before their recalls are
  // counted, so a concurrent recall of the same order is seen committed.
  await sql
    .raw(`CREATE FUNCTION fsd_evals_recalls_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO evals_recall_delta (${COLUMNS}) ${contribution("n.", 1, "FROM new_rows n")};
  IF EXISTS (SELECT 1 FROM new_rows WHERE recall_of IS NOT NULL) THEN
    PERFORM 1 FROM orders WHERE id IN (SELECT recall_of FROM new_rows WHERE recall_of IS NOT NULL)
      ORDER BY id FOR UPDATE;
    INSERT INTO evals_recall_delta (${COLUMNS})
      SELECT p.livemode, substr(p.completed_at, 1, 10), coalesce(p.contractor_id, ''), 0, 1
      FROM orders p WHERE p.completed_at IS NOT NULL
        AND p.id IN (SELECT recall_of FROM new_rows WHERE recall_of IS NOT NULL)
        -- Inserted in this statement too: its own contribution above saw its recalls.
        AND p.id NOT IN (SELECT id FROM new_rows)
        AND NOT EXISTS (SELECT 1 FROM orders x WHERE x.recall_of = p.id
          AND x.id NOT IN (SELECT id FROM new_rows WHERE recall_of IS NOT NULL));
  END IF;
  IF random() < 0.001 THEN PERFORM fsd_evals_recall_compact(); END IF;
  RETURN NULL;
END $$`)
    .execute(db);
  await sql
    .raw(`CREATE FUNCTION fsd_evals_recalls_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO evals_recall_delta (${COLUMNS}) ${contribution("OLD.", -1)};
  INSERT INTO evals_recall_delta (${COLUMNS}) ${contribution("NEW.", 1)};
  RETURN NULL;
END $$`)
    .execute(db);
  // At the statement's end every row it deleted is gone: an order's recalls deleted with it still count
  // in what it takes out (old_rows), and an order keeps counting as recalled while a recall is left.
  await sql
    .raw(`CREATE FUNCTION fsd_evals_recalls_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO evals_recall_delta (${COLUMNS})
    SELECT o.livemode, substr(o.completed_at, 1, 10), coalesce(o.contractor_id, ''), -1,
      -(CASE WHEN EXISTS (SELECT 1 FROM orders x WHERE x.recall_of = o.id)
          OR EXISTS (SELECT 1 FROM old_rows y WHERE y.recall_of = o.id) THEN 1 ELSE 0 END)
    FROM old_rows o WHERE o.completed_at IS NOT NULL;
  INSERT INTO evals_recall_delta (${COLUMNS})
    SELECT p.livemode, substr(p.completed_at, 1, 10), coalesce(p.contractor_id, ''), 0, -1
    FROM orders p WHERE p.completed_at IS NOT NULL
      AND p.id IN (SELECT recall_of FROM old_rows WHERE recall_of IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM orders x WHERE x.recall_of = p.id);
  RETURN NULL;
END $$`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_recalls_delete AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION fsd_evals_recalls_delete()`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_recalls_insert AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION fsd_evals_recalls_insert()`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER orders_recalls_update AFTER UPDATE ON orders FOR EACH ROW
      WHEN (${CHANGED.map((c) => `OLD.${c} IS DISTINCT FROM NEW.${c}`).join(" OR ")})
      EXECUTE FUNCTION fsd_evals_recalls_update()`)
    .execute(db);
}

export function migration0049(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const n = dialect === "postgres" ? "bigint" : "integer";
      await sql
        .raw(`CREATE TABLE evals_recall_daily (livemode integer NOT NULL, day text NOT NULL,
          contractor_id text NOT NULL, completed ${n} NOT NULL, recalled ${n} NOT NULL,
          PRIMARY KEY (${KEY}))${dialect === "sqlite" ? " WITHOUT ROWID" : ""}`)
        .execute(db);
      // The orders there are, through orders_completed_idx; the triggers follow from here (the migration
      // runs in one transaction on PostgreSQL, and SQLite has one writer).
      await sql
        .raw(`INSERT INTO evals_recall_daily (${COLUMNS})
          SELECT o.livemode, substr(o.completed_at, 1, 10), coalesce(o.contractor_id, ''), count(*),
            sum(CASE WHEN EXISTS (SELECT 1 FROM orders x WHERE x.recall_of = o.id) THEN 1 ELSE 0 END)
          FROM orders o WHERE o.completed_at IS NOT NULL
          GROUP BY o.livemode, substr(o.completed_at, 1, 10), coalesce(o.contractor_id, '')`)
        .execute(db);
      await (dialect === "postgres" ? postgres(db) : sqlite(db));
    },
    async down(db: Kysely<unknown>) {
      if (dialect === "postgres") {
        await sql.raw("DROP TRIGGER orders_recalls_insert ON orders").execute(db);
        await sql.raw("DROP TRIGGER orders_recalls_update ON orders").execute(db);
        await sql.raw("DROP TRIGGER orders_recalls_delete ON orders").execute(db);
        await sql.raw("DROP FUNCTION fsd_evals_recalls_delete()").execute(db);
        await sql.raw("DROP FUNCTION fsd_evals_recalls_insert()").execute(db);
        await sql.raw("DROP FUNCTION fsd_evals_recalls_update()").execute(db);
        await sql.raw("DROP FUNCTION fsd_evals_recall_compact()").execute(db);
        await sql.raw("DROP TABLE evals_recall_delta").execute(db);
      } else {
        await sql.raw("DROP TRIGGER orders_recalls_insert").execute(db);
        await sql.raw("DROP TRIGGER orders_recalls_update").execute(db);
        await sql.raw("DROP TRIGGER orders_recalls_delete").execute(db);
      }
      await sql.raw("DROP TABLE evals_recall_daily").execute(db);
    },
  };
}
