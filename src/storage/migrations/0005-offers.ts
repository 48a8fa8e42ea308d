// The work order's life: an order is offered to one contractor at a time, with a deadline kept in the
// store (a restart neither loses nor repeats one); a decline or an expiry moves it down the ranking
// fixed at creation. The contractor then reports its progress. Orders matched before this step (status
// 'assigned', held by their contractor) become 'accepted'.

import { type Kysely, type Migration, sql } from "kysely";

export const migration0005: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("offers")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("contractor_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("offered_at", "text", (c) => c.notNull())
      .addColumn("deadline_at", "text", (c) => c.notNull())
      .addColumn("responded_at", "text")
      .addColumn("reason", "text")
      .execute();
    await db.schema.createIndex("offers_due_idx").on("offers").columns(["status", "deadline_at"]).execute();
    await db.schema
      .createIndex("offers_contractor_idx")
      .on("offers")
      .columns(["contractor_id", "status"])
      .execute();
    await db.schema.createIndex("offers_order_idx").on("offers").column("order_id").execute();
    // The contractors considered at creation, best first (a JSON array of ids): the cascade's order.
    for (const [column, type] of [
      ["ranking", "text"],
      ["accepted_at", "text"],
      ["eta_at", "text"],
      ["completed_at", "text"],
      ["final_cost_cents", "integer"],
      ["status_reason", "text"],
    ] as const) {
      await db.schema.alterTable("orders").addColumn(column, type).execute();
    }
    await db.schema
      .createIndex("orders_lifecycle_idx")
      .on("orders")
      .columns(["livemode", "status", "updated_at"])
      .execute();
    await sql`UPDATE orders SET status = 'accepted', accepted_at = matched_at WHERE status = 'assigned'`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("orders_lifecycle_idx").execute();
    for (const column of [
      "status_reason",
      "final_cost_cents",
      "completed_at",
      "eta_at",
      "accepted_at",
      "ranking",
    ]) {
      await db.schema.alterTable("orders").dropColumn(column).execute();
    }
    await db.schema.dropTable("offers").execute();
  },
};
