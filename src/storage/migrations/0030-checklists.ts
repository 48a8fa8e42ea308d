// Issue 32, proof of work: checklists. Templates (the service's per trade, or an account's own), never
// edited, only retired; an order's checklist, fixed once from the templates in force (a copy of their
// items, so a later template does not change a job under way); and the answers to it, one row per item,
// each naming the seal of the audit record that holds it (the latest, when an answer was changed).

import type { Kysely, Migration } from "kysely";

export const migration0030: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("checklist_templates")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("livemode", "integer", (c) => c.notNull())
      // null: the service's (managed by the dispatch team).
      .addColumn("account_id", "text")
      .addColumn("trade", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("replaces_service", "integer", (c) => c.notNull())
      .addColumn("items", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("retired_at", "text")
      .addColumn("retired_by", "text")
      .execute();
    await db.schema
      .createIndex("checklist_templates_scope_idx")
      .on("checklist_templates")
      .columns(["livemode", "trade", "account_id"])
      .execute();
    await db.schema
      .createTable("order_checklists")
      .addColumn("order_id", "text", (c) => c.primaryKey())
      .addColumn("template_ids", "text", (c) => c.notNull())
      .addColumn("items", "text", (c) => c.notNull())
      .addColumn("fixed_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("checklist_answers")
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("item_id", "text", (c) => c.notNull())
      .addColumn("value", "text", (c) => c.notNull())
      .addColumn("answered_at", "text", (c) => c.notNull())
      .addColumn("answered_by", "text", (c) => c.notNull())
      .addColumn("seal", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("checklist_answers_pk", ["order_id", "item_id"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("checklist_answers").execute();
    await db.schema.dropTable("order_checklists").execute();
    await db.schema.dropTable("checklist_templates").execute();
  },
};
