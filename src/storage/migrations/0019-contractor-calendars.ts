// Contractor calendars (domain/time/calendar.ts): each contractor's working hours per weekday in its own
// time zone, as the canonical text (null: any time, the default for pools imported before), and its time
// off, [start, end) periods in UTC text, set by the contractor or the dispatch team (who is recorded),
// kept when removed (removed_at) so that a removal is answered the same when repeated.

import type { Kysely, Migration } from "kysely";

export const migration0019: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("contractors").addColumn("hours", "text").execute();
    await db.schema
      .createTable("contractor_time_off")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("contractor_id", "text", (c) => c.notNull())
      .addColumn("start_at", "text", (c) => c.notNull())
      .addColumn("end_at", "text", (c) => c.notNull())
      .addColumn("reason", "text")
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("removed_at", "text")
      .execute();
    await db.schema
      .createIndex("contractor_time_off_contractor_idx")
      .on("contractor_time_off")
      .columns(["contractor_id", "start_at"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("contractor_time_off").execute();
    await db.schema.alterTable("contractors").dropColumn("hours").execute();
  },
};
