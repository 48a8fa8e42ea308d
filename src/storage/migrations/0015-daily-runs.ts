// Once-a-day jobs: one row per job, UTC day and mode, written in the same transaction as the job's audit
// record. The primary key makes the day's run happen once across every process sharing the store.

import type { Kysely, Migration } from "kysely";

export const migration0015: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("daily_runs")
      .addColumn("job", "text", (c) => c.notNull())
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("daily_runs_pk", ["job", "day", "livemode"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("daily_runs").execute();
  },
};
