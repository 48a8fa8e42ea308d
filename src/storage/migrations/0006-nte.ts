// NTE (not-to-exceed) increases and invoices. A contractor on an active job may ask for a higher NTE; the
// caller's account approves or rejects it; the invoice may not exceed the NTE in force (the caller's, or
// the last one approved).

import type { Kysely, Migration } from "kysely";

export const migration0006: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("nte_requests")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("contractor_id", "text", (c) => c.notNull())
      .addColumn("requested_cents", "integer", (c) => c.notNull())
      .addColumn("reason", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("decided_at", "text")
      .addColumn("decision_reason", "text")
      .execute();
    await db.schema.createIndex("nte_requests_order_idx").on("nte_requests").column("order_id").execute();
    await db.schema.alterTable("orders").addColumn("nte_approved_cents", "integer").execute();
    await db.schema.alterTable("orders").addColumn("invoice_cents", "integer").execute();
    await db.schema.alterTable("orders").addColumn("invoiced_at", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    for (const column of ["invoiced_at", "invoice_cents", "nte_approved_cents"]) {
      await db.schema.alterTable("orders").dropColumn(column).execute();
    }
    await db.schema.dropTable("nte_requests").execute();
  },
};
