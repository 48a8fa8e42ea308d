// Issue 33, recalls: the order an order is a recall of (a callback to the same site and trade within 30
// days of that job's completion, domain/orders/recall.ts), null for every other order; and the two indexes
// the recall figures of the evals read (evals-store.ts `recalls`), both partial so that an order enters
// them only when it has what they index:
// - orders_recall_idx (recall_of) WHERE recall_of IS NOT NULL: whether a completed order was recalled,
//   and the caller's list filtered by recall_of. Only recall orders enter it.
// - orders_completed_idx (livemode, completed_at) WHERE completed_at IS NOT NULL: the orders completed in
//   a window. An order enters it once, when it is completed (completed_at is set once).

import { type Kysely, type Migration, sql } from "kysely";

export const migration0037: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("orders").addColumn("recall_of", "text").execute();
    await db.schema
      .createIndex("orders_recall_idx")
      .on("orders")
      .column("recall_of")
      .where(sql<boolean>`recall_of IS NOT NULL`)
      .execute();
    await db.schema
      .createIndex("orders_completed_idx")
      .on("orders")
      .columns(["livemode", "completed_at"])
      .where(sql<boolean>`completed_at IS NOT NULL`)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("orders_completed_idx").execute();
    await db.schema.dropIndex("orders_recall_idx").execute();
    await db.schema.alterTable("orders").dropColumn("recall_of").execute();
  },
};
