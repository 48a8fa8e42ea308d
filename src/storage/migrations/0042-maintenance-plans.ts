// Issue 34, preventive maintenance: plans and their occurrences (domain/maintenance/plan.ts).
// - maintenance_plans: one row per plan, changed in place (version counts the changes; each change is
//   sealed in the audit log, the row keeps the latest record's seal). The generator reads the active ones
//   (maintenance_plans_active_idx) and remembers per plan up to when it has generated (generated_until) and
//   when its horizon will have moved on by a day (refresh_at), so a tick reads only the plans with
//   something new inside their horizon.
// - plan_occurrences: one row per occurrence acted on (generated into an order, skipped, failed), keyed by
//   (plan_id, occurrence_key): the key is the rule's local date, so two processes generating the same
//   occurrence cannot both insert it (the second's insert conflicts and its order is not written).
//   plan_occurrences_due_idx serves the calendar and the overdue sweep by window; the order index finds an
//   order's occurrence (an order's view names its plan).

import type { Kysely, Migration } from "kysely";

export const migration0042: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("maintenance_plans")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("site_id", "text", (c) => c.notNull())
      .addColumn("asset_id", "text")
      .addColumn("trade", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("checklist_template_id", "text")
      .addColumn("duration_minutes", "integer", (c) => c.notNull())
      .addColumn("recurrence", "text", (c) => c.notNull())
      .addColumn("exceptions", "text", (c) => c.notNull())
      .addColumn("starts_on", "text", (c) => c.notNull())
      .addColumn("window", "text", (c) => c.notNull())
      .addColumn("horizon_days", "integer", (c) => c.notNull())
      .addColumn("nte_cents", "integer")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("generated_until", "text")
      .addColumn("refresh_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("updated_by", "text", (c) => c.notNull())
      .addColumn("seal", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("maintenance_plans_account_idx")
      .on("maintenance_plans")
      .columns(["account_id", "livemode", "site_id"])
      .execute();
    await db.schema
      .createIndex("maintenance_plans_active_idx")
      .on("maintenance_plans")
      .columns(["status", "refresh_at"])
      .execute();
    await db.schema
      .createTable("plan_occurrences")
      .addColumn("plan_id", "text", (c) => c.notNull())
      .addColumn("occurrence_key", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("site_id", "text", (c) => c.notNull())
      .addColumn("asset_id", "text")
      .addColumn("window_start", "text", (c) => c.notNull())
      .addColumn("window_end", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("order_id", "text")
      .addColumn("reason", "text")
      .addColumn("moved_from", "text")
      .addColumn("overdue_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("seal", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("plan_occurrences_pk", ["plan_id", "occurrence_key"])
      .execute();
    await db.schema
      .createIndex("plan_occurrences_due_idx")
      .on("plan_occurrences")
      .columns(["account_id", "livemode", "window_start"])
      .execute();
    await db.schema
      .createIndex("plan_occurrences_window_end_idx")
      .on("plan_occurrences")
      .columns(["livemode", "window_end"])
      .execute();
    await db.schema
      .createIndex("plan_occurrences_order_idx")
      .on("plan_occurrences")
      .columns(["order_id"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("plan_occurrences").execute();
    await db.schema.dropTable("maintenance_plans").execute();
  },
};
