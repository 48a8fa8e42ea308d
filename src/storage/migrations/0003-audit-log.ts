// The audit log: sealed records, the Merkle tree's leaves and perfect-subtree nodes, signed checkpoints,
// the queue of records waiting to be sequenced into the tree, and legal holds.
//
// Append-only is enforced by the database, not the application: triggers reject every UPDATE and DELETE
// on the log tables (and TRUNCATE on PostgreSQL). The one exception is the retention purge: a DELETE of
// an audit record passes only when the record is older than 7 years by the database's own clock and no
// legal hold covers it. Its leaf stays in the tree, so old checkpoints remain provable.
// audit_pending is a work queue, not part of the log: sequencing deletes from it.

import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../dialect.js";

/** The log tables whose rows may never change. */
export const AUDIT_LOG_TABLES = [
  "audit_records",
  "audit_leaves",
  "audit_nodes",
  "audit_checkpoints",
] as const;

/** Names of the triggers that guard the log tables, per dialect (tests drop them to simulate tampering). */
export function auditTriggerNames(dialect: Dialect): Array<{ table: string; name: string }> {
  const names: Array<{ table: string; name: string }> = [];
  for (const table of AUDIT_LOG_TABLES) {
    if (dialect === "sqlite") {
      names.push({ table, name: `${table}_no_update` }, { table, name: `${table}_no_delete` });
    } else {
      names.push({ table, name: `${table}_append_only` }, { table, name: `${table}_no_truncate` });
    }
  }
  return names;
}

async function createTables(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable("audit_records")
    // Log order: ascending in the order records are written (a transaction's records in their order).
    .addColumn("seq", dialect === "postgres" ? "bigserial" : "integer", (c) =>
      dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn("seal", "text", (c) => c.notNull().unique())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("account_id", "text")
    .addColumn("livemode", "integer", (c) => c.notNull())
    .addColumn("order_id", "text")
    .addColumn("actor", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("record", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("audit_records_account_idx")
    .on("audit_records")
    .columns(["account_id", "livemode", "seq"])
    .execute();
  // Only records of an order are looked up by order (quotes have none). The retention purge, a rare
  // operator command, scans by time without an index: one index less on every write.
  await db.schema
    .createIndex("audit_records_order_idx")
    .on("audit_records")
    .column("order_id")
    .where(sql.ref("order_id"), "is not", null)
    .execute();

  await db.schema
    .createTable("audit_pending")
    .addColumn("id", dialect === "postgres" ? "bigserial" : "integer", (c) =>
      dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn("seal", "text", (c) => c.notNull())
    .addColumn("leaf_hash", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("audit_leaves")
    .addColumn("leaf_index", "bigint", (c) => c.primaryKey())
    .addColumn("seal", "text", (c) => c.notNull().unique())
    .addColumn("leaf_hash", "text", (c) => c.notNull())
    .addColumn("integrated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("audit_nodes")
    .addColumn("level", "integer", (c) => c.notNull())
    .addColumn("idx", "bigint", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("audit_nodes_pk", ["level", "idx"])
    .execute();

  await db.schema
    .createTable("audit_checkpoints")
    .addColumn("tree_size", "bigint", (c) => c.primaryKey())
    .addColumn("root_hash", "text", (c) => c.notNull())
    .addColumn("timestamp", "text", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("signature", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("audit_legal_holds")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text")
    .addColumn("order_id", "text")
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("released_at", "text")
    .execute();
}

const HOLD_CHECK = (old: string) => `EXISTS (
  SELECT 1 FROM audit_legal_holds h
  WHERE h.released_at IS NULL
    AND ((h.account_id IS NOT NULL AND h.account_id = ${old}.account_id)
      OR (h.order_id IS NOT NULL AND h.order_id = ${old}.order_id)))`;

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const table of AUDIT_LOG_TABLES) {
    await sql
      .raw(
        `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table}
         BEGIN SELECT RAISE(ABORT, '${table} is append-only: rows cannot be updated'); END`,
      )
      .execute(db);
    const when =
      table === "audit_records"
        ? `WHEN OLD.created_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-7 years') OR ${HOLD_CHECK("OLD")}`
        : "";
    const message =
      table === "audit_records"
        ? "audit records are kept 7 years, and while a legal hold covers them"
        : `${table} is append-only: rows cannot be deleted`;
    await sql
      .raw(`CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table} ${when}
         BEGIN SELECT RAISE(ABORT, '${message}'); END`)
      .execute(db);
  }
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(`CREATE FUNCTION fsd_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END $$`)
    .execute(db);
  await sql
    .raw(`CREATE FUNCTION fsd_audit_records_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE'
     AND OLD.created_at <= to_char((now() AT TIME ZONE 'UTC') - interval '7 years', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
     AND NOT ${HOLD_CHECK("OLD")} THEN
    RETURN OLD;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'audit records are kept 7 years, and while a legal hold covers them'
      USING ERRCODE = 'restrict_violation';
  END IF;
  RAISE EXCEPTION 'audit_records is append-only: % is not allowed', TG_OP USING ERRCODE = 'restrict_violation';
END $$`)
    .execute(db);
  for (const table of AUDIT_LOG_TABLES) {
    const fn = table === "audit_records" ? "fsd_audit_records_guard" : "fsd_audit_append_only";
    await sql
      .raw(`CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table}
         FOR EACH ROW EXECUTE FUNCTION ${fn}()`)
      .execute(db);
    await sql
      .raw(`CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table}
         FOR EACH STATEMENT EXECUTE FUNCTION fsd_audit_append_only()`)
      .execute(db);
  }
}

export function migration0003(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, dialect);
      if (dialect === "sqlite") await sqliteTriggers(db);
      else await postgresTriggers(db);
    },
  };
}
