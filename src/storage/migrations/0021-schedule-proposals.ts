// The day optimiser's proposals (operations/pool/schedule.ts): what it proposed, for `apply` to carry out by
// id from any process, and the orders' versions it was computed from, so that a proposal whose orders
// changed since is refused instead of applied over the changes.

import type { Kysely, Migration } from "kysely";

export const migration0021: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("schedule_proposals")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("hash", "text", (c) => c.notNull())
      /** The proposal as answered (JSON). */
      .addColumn("body", "text", (c) => c.notNull())
      /** JSON object: order id -> the order's version the proposal was computed from. */
      .addColumn("basis", "text", (c) => c.notNull())
      .addColumn("applied_at", "text")
      .execute();
    await db.schema
      .createIndex("schedule_proposals_created_idx")
      .on("schedule_proposals")
      .column("created_at")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("schedule_proposals").execute();
  },
};
