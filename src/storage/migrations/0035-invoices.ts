// Issue 33, itemised invoices: every version of a job's invoice, its lines (JSON text) and the totals the
// service computed from them, in integer cents; written with the order's change that makes it (the
// invoice, or its revision), whose audit record seals the same lines.

import type { Kysely, Migration } from "kysely";

export const migration0035: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("invoice_versions")
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("lines", "text", (c) => c.notNull())
      .addColumn("subtotal_cents", "bigint", (c) => c.notNull())
      .addColumn("tax_cents", "bigint", (c) => c.notNull())
      .addColumn("total_cents", "bigint", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("invoice_versions_pk", ["order_id", "version"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("invoice_versions").execute();
  },
};
