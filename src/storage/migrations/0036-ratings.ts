// Issue 33, ratings: an account's rating of a completed order (one per order, its four scores, comment,
// when first given and last changed, and the seal of the record of its last change), and on each
// contractor the tally of its ratings (how many, and each dimension's sum), kept in the rating's
// transaction so that the in-memory pool, which loads contractors' rows, scores by it. rated_at is the
// last time a contractor's tally moved: the pool's version reads it, so every process reloads.

import type { Kysely, Migration } from "kysely";

const TALLY_COLUMNS = [
  "rating_count",
  "rating_quality_sum",
  "rating_timeliness_sum",
  "rating_communication_sum",
  "rating_value_sum",
] as const;

export const migration0036: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("order_ratings")
      .addColumn("order_id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("contractor_id", "text", (c) => c.notNull())
      .addColumn("quality", "integer", (c) => c.notNull())
      .addColumn("timeliness", "integer", (c) => c.notNull())
      .addColumn("communication", "integer", (c) => c.notNull())
      .addColumn("value", "integer", (c) => c.notNull())
      .addColumn("comment", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("updated_by", "text", (c) => c.notNull())
      .addColumn("edits", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("seal", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("order_ratings_contractor")
      .on("order_ratings")
      .columns(["contractor_id", "created_at"])
      .execute();
    for (const column of TALLY_COLUMNS) {
      await db.schema
        .alterTable("contractors")
        .addColumn(column, "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    }
    await db.schema.alterTable("contractors").addColumn("rated_at", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("order_ratings").execute();
    for (const column of [...TALLY_COLUMNS, "rated_at"]) {
      await db.schema.alterTable("contractors").dropColumn(column).execute();
    }
  },
};
