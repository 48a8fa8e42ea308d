// Issue 33, counter-offers: a contractor's answer to an offer with its own price and/or arrival window
// (one per offer: the offer's id is the counter's), waiting on the account until its own deadline; the
// account's policy of accepting counters within a band at once (one row per account and mode, with the
// seal of the record that set it); and the price an accepted counter agreed on the order.

import type { Kysely, Migration } from "kysely";

export const migration0038: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("counter_offers")
      .addColumn("offer_id", "text", (c) => c.primaryKey())
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("contractor_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("price_cents", "bigint")
      .addColumn("window_start", "text")
      .addColumn("window_end", "text")
      .addColumn("note", "text")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("deadline_at", "text", (c) => c.notNull())
      .addColumn("decided_at", "text")
      .addColumn("decided_by", "text")
      .addColumn("reason", "text")
      .execute();
    await db.schema
      .createIndex("counter_offers_order_idx")
      .on("counter_offers")
      .columns(["order_id", "created_at"])
      .execute();
    // The sweeper's read: pending counters by deadline.
    await db.schema
      .createIndex("counter_offers_due_idx")
      .on("counter_offers")
      .columns(["status", "deadline_at"])
      .execute();
    await db.schema
      .createTable("counter_policies")
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("auto_accept_within_pct", "integer")
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("updated_by", "text", (c) => c.notNull())
      .addColumn("seal", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("counter_policies_pk", ["account_id", "livemode"])
      .execute();
    await db.schema.alterTable("orders").addColumn("agreed_price_cents", "bigint").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("orders").dropColumn("agreed_price_cents").execute();
    await db.schema.dropTable("counter_policies").execute();
    await db.schema.dropTable("counter_offers").execute();
  },
};
