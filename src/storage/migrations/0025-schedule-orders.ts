// The optimised day's orders (operations/pool/schedule.ts): the open orders of one mode not yet on site
// (needs_dispatcher, offered, accepted, en_route), of one state when the dispatcher names one. They were
// read through orders_evals_idx (livemode, created_at), every order of the mode newest first, filtered
// after reading: with years of history, every call walked the whole mode. orders_schedule_idx holds only
// the orders in those statuses (an order enters it when it is placed and leaves it when work starts, is
// cancelled or completes), by mode, state and status, so a call reads that state's open orders and
// nothing else (status last: with a state it wins SQLite's choice over orders_sandbox_idx, which holds
// the test mode's orders by status; without one either index reads only the mode's open orders).
// Its predicate is the query's own text (order-store.ts SCHEDULED_ORDERS_SQL), so that SQLite, which
// matches a partial index's WHERE term by term, uses it. The order's id is its last column, so that the
// day is read in pages (store.ts scheduledPage): a page that starts after the last (state, status, id)
// read is a range of the index, not a scan and sort of every open order of the state. A read of the
// 3,000 open orders of a busy state in one statement held the event loop for 100-250 ms on SQLite; in
// pages of a few hundred, with the loop free between them, no page holds it for long.

import { type Kysely, type Migration, sql } from "kysely";

export const migration0025: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex("orders_schedule_idx")
      .on("orders")
      .columns(["livemode", "state", "status", "id"])
      .where(sql<boolean>`status in ('needs_dispatcher', 'offered', 'accepted', 'en_route')`)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("orders_schedule_idx").execute();
  },
};
