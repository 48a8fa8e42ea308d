// Issue 33, from invoiced to paid: the roles of an account's keys (requester, approver with a limit in
// cents, admin; no role set reads as admin), the account's decisions on its invoices (approved, rejected,
// sent back, paid: one row each, written with the order's change that makes it), and each account's
// invoice policy per mode (auto-approval of clean invoices below an amount, with the seal that set it).
//
// The order gained statuses after `invoiced` (revision_requested, invoice_rejected, approved, paid). What
// counted completed and invoiced orders as work done now counts those too: the evals rollup (its triggers
// decide NTE eligibility by status) is rebuilt with the definitions of today, and the partial indexes of
// open orders (their predicate is the literal list of closed statuses) are made again. On a large store
// that reads every order once: it runs once, at the upgrade.

import { type Kysely, type Migration, sql } from "kysely";
import { OPEN_ORDERS_SQL } from "../../domain/orders/sla-clocks.js";
import type { Dialect } from "../dialect.js";
import { migration0027 } from "./0027-evals-sketches.js";

async function openOrdersIndex(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("orders_open_idx").ifExists().execute();
  await db.schema
    .createIndex("orders_open_idx")
    .on("orders")
    .column("id")
    .where(sql<boolean>`${sql.raw(OPEN_ORDERS_SQL)}`)
    .execute();
}

export function migration0039(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("api_keys").addColumn("role", "text").execute();
      await db.schema.alterTable("api_keys").addColumn("approval_limit_cents", "bigint").execute();
      await db.schema
        .createTable("invoice_decisions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("order_id", "text", (c) => c.notNull())
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("decision", "text", (c) => c.notNull())
        .addColumn("total_cents", "bigint", (c) => c.notNull())
        .addColumn("reason_code", "text")
        .addColumn("note", "text")
        .addColumn("payment_reference", "text")
        .addColumn("paid_on", "text")
        .addColumn("decided_at", "text", (c) => c.notNull())
        .addColumn("decided_by", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("invoice_decisions_order_idx")
        .on("invoice_decisions")
        .columns(["order_id", "decided_at"])
        .execute();
      await db.schema
        .createTable("invoice_policies")
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("livemode", "integer", (c) => c.notNull())
        .addColumn("auto_approve_below_cents", "bigint")
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("updated_by", "text", (c) => c.notNull())
        .addColumn("seal", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("invoice_policies_pk", ["account_id", "livemode"])
        .execute();
      const evals = migration0027(dialect);
      await evals.down?.(db);
      await evals.up(db);
      await openOrdersIndex(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable("invoice_policies").execute();
      await db.schema.dropTable("invoice_decisions").execute();
      await db.schema.alterTable("api_keys").dropColumn("approval_limit_cents").execute();
      await db.schema.alterTable("api_keys").dropColumn("role").execute();
    },
  };
}
