// Issue 33, do-not-dispatch: an account's entries excluding a contractor from its work (every trade, or
// the trades listed), with the reason and the seal of the record that added it; removed entries are kept
// (removed_at, removed_by, removal_reason) so the list's history stays readable beside the audit log.

import type { Kysely, Migration } from "kysely";

export const migration0034: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("do_not_dispatch")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("contractor_id", "text", (c) => c.notNull())
      // JSON array of trade codes; null: every trade.
      .addColumn("trades", "text")
      .addColumn("reason", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("seal", "text", (c) => c.notNull())
      .addColumn("removed_at", "text")
      .addColumn("removed_by", "text")
      .addColumn("removal_reason", "text")
      .execute();
    await db.schema
      .createIndex("do_not_dispatch_account")
      .on("do_not_dispatch")
      .columns(["account_id", "livemode", "removed_at"])
      .execute();
    await db.schema
      .createIndex("do_not_dispatch_contractor")
      .on("do_not_dispatch")
      .columns(["contractor_id", "removed_at"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("do_not_dispatch").execute();
  },
};
