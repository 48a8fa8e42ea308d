// Issue 30 (years of history): the dispatch team's order list by status reads only orders of that status.
// `dispatcher.orders` with a status (the board asks for every open and held status, to the last page, each
// time it opens) filtered `livemode = ?` and `status = ?` and read newest first through orders_evals_idx
// (livemode, created_at): every order of the mode was visited, each one a row read to test its status,
// until a page was full. With few orders in a status (accepted, needs_dispatcher) that is the whole store,
// synchronously on the event loop: 8.9 ms for `accepted` at 48,000 orders, so about 0.2 s a call at a
// million, nine calls a board.
//
// orders_status_idx (livemode, status, created_at, id) serves the list in its order. It is partial: the
// four statuses that accumulate with the years and that nobody waits on (completed, approved, paid,
// cancelled) stay out, so the index holds the work in flight and an order leaves it when it is done, and
// the order path pays for it only while the order is open. Its predicate is the query's own text
// (order-store.ts BOARD_STATUSES_SQL) so that SQLite, which matches a partial index's WHERE term by term,
// uses it; the store adds that text only to the dispatch team's list (no account) with a status in the
// index, so an account's list keeps orders_account_idx (a status of a small account is found among its own
// orders, not among every account's). A list of one of the four statuses left out finds its page near the
// newest orders through orders_evals_idx, as before (they are most of the orders).

import { type Kysely, type Migration, sql } from "kysely";

/** The predicate, as literal text identical to order-store.ts BOARD_STATUSES_SQL. */
const PREDICATE = "status not in ('completed', 'approved', 'paid', 'cancelled')";

export const migration0047: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex("orders_status_idx")
      .on("orders")
      .columns(["livemode", "status", "created_at", "id"])
      .where(sql.raw<boolean>(PREDICATE))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("orders_status_idx").execute();
  },
};
