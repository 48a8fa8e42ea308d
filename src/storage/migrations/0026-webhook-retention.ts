// Issue 30: retention that never competes with requests. The purge (webhook-store.ts `purge`) takes the
// oldest webhook events first, a small batch per statement, each batch starting where the last ended; the
// backlog gauge reads the newest event older than the cutoff. Both need webhook_events by created_at: the
// table had no such index, so every purge statement read the table from its start (and, once nothing was
// left to purge, all of it, once an hour). Events are written in created_at order, so the index appends.

import type { Kysely, Migration } from "kysely";

export const migration0026: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex("webhook_events_created_idx")
      .on("webhook_events")
      .column("created_at")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("webhook_events_created_idx").execute();
  },
};
