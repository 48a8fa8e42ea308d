// Issue 35, the customer's side, step 1: tracking links (operations/tracking/). One row per link issued
// for an order; the token itself is not stored (it is the row's id and an HMAC of it under the server's
// tracking secret, auth/tracking-tokens.ts), so the table alone opens no page. At most one link of an
// order is in force (revoked_at null): tracking_links_live_idx, a partial unique index, holds two
// processes issuing one at once to one row. expires_at is null while the order is open (a link issued
// for a closed order has it from the start); the page computes it from the order's closing time
// (TRACKING_LINK_DAYS_AFTER_CLOSE after it) whenever the row has none.

import type { Kysely, Migration } from "kysely";
import { sql } from "kysely";

export const migration0043: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("tracking_links")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("expires_at", "text")
      .addColumn("revoked_at", "text")
      .addColumn("revoked_by", "text")
      .addColumn("seal", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("tracking_links_order_idx")
      .on("tracking_links")
      .columns(["order_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("tracking_links_live_idx")
      .on("tracking_links")
      .column("order_id")
      .unique()
      .where(sql.ref("revoked_at"), "is", null)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("tracking_links").execute();
  },
};
