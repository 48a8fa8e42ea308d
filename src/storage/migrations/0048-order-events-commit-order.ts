// Issue 29 (the write path without a global lock): the order event log's order on PostgreSQL is the
// transaction's, not the id's. Until now every write transaction took one advisory lock per schema first,
// so they committed one at a time and a bigserial id increased in commit order: the live stream resumed
// after an id and missed nothing. Without that lock two transactions commit in either order whatever
// ids they drew, and a reader that moved past id 120 would never see id 119 committed after it.
//
// Each row now records its transaction (`tx`, xid8, the writer's pg_current_xact_id(): every row of one
// transaction has the same). A reader takes events in (tx, id) order, and only those whose transaction
// is below its snapshot's xmin (pg_snapshot_xmin(pg_current_snapshot())): every transaction below it has
// ended, so nothing can be added there later, and the point the reader reached never moves back
// (xmin only grows). An event committed while an older transaction still runs waits for it (storage/
// order-event-store.ts reads again shortly). order_events_tx_idx serves that read.
//
// Rows written before this migration keep tx 0 (one transaction, in id order): they were committed in id
// order under the lock, and sort before every later row. SQLite has one writer and keeps id order: the
// migration changes nothing there.

import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../dialect.js";

export function migration0048(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== "postgres") return;
      // A constant default first (no table rewrite: every existing row reads 0), then the writer's own.
      await sql`alter table order_events add column tx xid8 not null default '0'`.execute(db);
      await sql`alter table order_events alter column tx set default pg_current_xact_id()`.execute(db);
      await db.schema.createIndex("order_events_tx_idx").on("order_events").columns(["tx", "id"]).execute();
    },
    async down(db: Kysely<unknown>) {
      if (dialect !== "postgres") return;
      await db.schema.dropIndex("order_events_tx_idx").execute();
      await sql`alter table order_events drop column tx`.execute(db);
    },
  };
}
