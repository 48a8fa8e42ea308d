// The event log the live event stream (GET /api/events) resumes from: one compact row per change of an
// order, every change, recipient or not (the webhook outbox holds only the events someone receives). The
// id is the stream's event id: it increases in commit order (rows are only written inside the store's
// write transactions, which commit one at a time: SQLite has one writer, PostgreSQL's take an advisory
// lock first, kysely-store.ts), so resuming after an id misses nothing and repeats nothing. Kept for
// WEBHOOK_RETENTION_DAYS (created_at's index serves the purge); the resume query reads the primary key.

import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../dialect.js";

export function migration0016(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("order_events")
        .addColumn("id", dialect === "postgres" ? "bigserial" : "integer", (c) =>
          dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("order_id", "text", (c) => c.notNull())
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("livemode", "integer", (c) => c.notNull())
        // The contractor offered or holding the job after the change, and the one it was taken from by
        // it (an offer declined or expired, a reassignment): who of the contractors may see the event.
        .addColumn("contractor_id", "text")
        .addColumn("previous_contractor_id", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        // The order's row after the change, the event's details and the offer it made, as JSON: every
        // role's view of the event is built from it when it is sent.
        .addColumn("payload", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("order_events_created_idx")
        .on("order_events")
        .column("created_at")
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable("order_events").execute();
    },
  };
}
