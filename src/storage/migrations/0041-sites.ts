// Issue 34, sites and assets: an account's locations (sites) and the equipment at them (assets), and
// which site and assets an order names.
//
// An order names its site and assets in tables of their own (order_sites, order_assets), not in columns
// of `orders`: an order without a site writes nothing more than before, the orders' row, its mapping
// and its prepared insert stay as they are (another change is cutting the order's write cost there), and
// an asset's history is one range of order_assets_asset. An order's view reads order_sites by its key.
//
// An asset's serial is unique among the assets in force at its site (serial_key: the serial compared
// without case, spaces or dashes); the unique partial index backs the check the operation makes first.

import { type Kysely, type Migration, sql } from "kysely";

export const migration0041: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("sites")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("city", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("zip", "text", (c) => c.notNull())
      .addColumn("time_zone", "text", (c) => c.notNull())
      // Opening hours in the working hours' text (domain/time/calendar.ts); "" any time.
      .addColumn("hours", "text", (c) => c.notNull())
      .addColumn("access_notes", "text")
      .addColumn("contact_name", "text")
      .addColumn("contact_phone", "text")
      .addColumn("contact_email", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("updated_by", "text", (c) => c.notNull())
      .addColumn("archived_at", "text")
      .addColumn("seal", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("sites_account")
      .on("sites")
      .columns(["account_id", "livemode", "id"])
      .execute();
    await db.schema
      .createTable("assets")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("site_id", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("trade", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("make", "text")
      .addColumn("model", "text")
      .addColumn("serial", "text")
      .addColumn("serial_key", "text")
      .addColumn("installed_on", "text")
      .addColumn("warranty_ends_on", "text")
      // JSON array of short strings.
      .addColumn("tags", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("updated_by", "text", (c) => c.notNull())
      .addColumn("archived_at", "text")
      .addColumn("seal", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("assets_site").on("assets").columns(["site_id", "id"]).execute();
    await db.schema
      .createIndex("assets_site_serial")
      .on("assets")
      .columns(["site_id", "serial_key"])
      .unique()
      .where(sql<boolean>`serial_key IS NOT NULL AND archived_at IS NULL`)
      .execute();
    await db.schema
      .createTable("order_sites")
      .addColumn("order_id", "text", (c) => c.primaryKey())
      .addColumn("site_id", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("order_sites_site")
      .on("order_sites")
      .columns(["site_id", "order_id"])
      .execute();
    await db.schema
      .createTable("order_assets")
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("asset_id", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("order_assets_pk", ["order_id", "asset_id"])
      .execute();
    await db.schema
      .createIndex("order_assets_asset")
      .on("order_assets")
      .columns(["asset_id", "order_id"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("order_assets").execute();
    await db.schema.dropTable("order_sites").execute();
    await db.schema.dropTable("assets").execute();
    await db.schema.dropTable("sites").execute();
  },
};
