// The optimised day's orders read in pages (operations/pool/schedule.ts): orders_schedule_idx (migration
// 0025) gains the order's id as its last column, so a page that starts after the last (state, status, id)
// read is a range of the index, not a scan and sort of every open order of the state. A read of the 3,000
// open orders of a busy state in one statement held the event loop for 100-250 ms on SQLite; in pages of
// a few hundred, with the loop free between them, no page holds it for long.

import { type Kysely, type Migration, sql } from "kysely";

const PREDICATE = sql<boolean>`status in ('needs_dispatcher', 'offered', 'accepted', 'en_route')`;

export const migration0026: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.dropIndex("orders_schedule_idx").execute();
    await db.schema
      .createIndex("orders_schedule_idx")
      .on("orders")
      .columns(["livemode", "state", "status", "id"])
      .where(PREDICATE)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("orders_schedule_idx").execute();
    await db.schema
      .createIndex("orders_schedule_idx")
      .on("orders")
      .columns(["livemode", "state", "status"])
      .where(PREDICATE)
      .execute();
  },
};
