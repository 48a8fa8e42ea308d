// The capacity ledger: one row per unit of a contractor's capacity an order holds (its pending offer, then
// its job), written in the transaction that takes the unit and deleted in the one that gives it back.
// contractors.active_jobs stays the counter a reservation checks against the contractor's maximum; it
// moves only with a row of the ledger, so giving a unit back twice is impossible (the second delete finds
// no row). Backfilled from the open offers and jobs; `pool check` reports any drift between the two.

import { type Kysely, type Migration, sql } from "kysely";

export const migration0011: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("capacity_holds")
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("contractor_id", "text", (c) => c.notNull())
      .addColumn("taken_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("capacity_holds_pk", ["order_id", "contractor_id"])
      .execute();
    await db.schema
      .createIndex("capacity_holds_contractor_idx")
      .on("capacity_holds")
      .column("contractor_id")
      .execute();
    await sql`
      INSERT INTO capacity_holds (order_id, contractor_id, taken_at)
      SELECT order_id, contractor_id, offered_at FROM offers WHERE status = 'pending'
      UNION
      SELECT id, contractor_id, updated_at FROM orders
      WHERE status IN ('accepted', 'en_route', 'on_site') AND contractor_id IS NOT NULL`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("capacity_holds").execute();
  },
};
