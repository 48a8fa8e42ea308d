// Issue 33, exports for accounts payable: the invoices' export reads orders by the time they were first
// invoiced (invoiced_at, set once), a page at a time in (invoiced_at, id) order within a date range. Without
// an index each page would read every order of the account (or the mode) again, so a long export would cost
// its pages times the history. Both indexes are partial: an order enters them once, when it is invoiced.
// - orders_account_invoiced_idx (account_id, livemode, invoiced_at, id): an account's export.
// - orders_invoiced_idx (livemode, invoiced_at, id): the dispatch team's, every account's.
// The orders' export reads by created_at, a range of orders_account_idx or orders_evals_idx already.

import { type Kysely, type Migration, sql } from "kysely";

export const migration0040: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex("orders_account_invoiced_idx")
      .on("orders")
      .columns(["account_id", "livemode", "invoiced_at", "id"])
      .where(sql<boolean>`invoiced_at IS NOT NULL`)
      .execute();
    await db.schema
      .createIndex("orders_invoiced_idx")
      .on("orders")
      .columns(["livemode", "invoiced_at", "id"])
      .where(sql<boolean>`invoiced_at IS NOT NULL`)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("orders_invoiced_idx").execute();
    await db.schema.dropIndex("orders_account_invoiced_idx").execute();
  },
};
