// Issue 35, the customer's side: the request form without a key (operations/requests/). Three tables:
//
// - request_links: a site's signed request link (/r/<token>). The token is not stored (it is the row's id
//   and an HMAC of it under the server's request-link secret, auth/tracking-tokens.ts), so the table alone
//   opens no form. At most one link of a site is in force (revoked_at null): request_links_live_idx, a
//   partial unique index, holds two processes issuing one at once to one row. Rotating revokes the one in
//   force and inserts another, in one transaction: the old token answers 404 from that commit on.
// - requests: what the form (or the account's agent) reported at a site, and what became of it: pending
//   (held for the account), ordered (an order was created from it), linked (an open order at the same site
//   and trade already covers it) or rejected (with the reason). The guessed trade and its confidence (in
//   thousandths: an integer, the same on both dialects) are kept beside the trade the order used.
// - request_photos: up to two photos a reporter sent with a request (their bytes in the blob store, by
//   SHA-256, as attachments' are; the orphan collector keeps every blob a row here names), attached to the
//   order the request becomes or is linked to.
// - request_policies: per account and mode, whether a confident request becomes an order at once
//   ("create") or waits for approval ("hold"); no row reads as "hold".

import type { Kysely, Migration } from "kysely";
import { sql } from "kysely";

export const migration0045: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("request_links")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("site_id", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("revoked_at", "text")
      .addColumn("revoked_by", "text")
      .addColumn("seal", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("request_links_live_idx")
      .on("request_links")
      .column("site_id")
      .unique()
      .where(sql.ref("revoked_at"), "is", null)
      .execute();
    await db.schema
      .createTable("requests")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("site_id", "text", (c) => c.notNull())
      .addColumn("link_id", "text")
      .addColumn("source", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("urgency", "text", (c) => c.notNull())
      .addColumn("reporter_name", "text", (c) => c.notNull())
      .addColumn("reporter_contact", "text", (c) => c.notNull())
      .addColumn("guessed_trade", "text")
      .addColumn("guess_confidence_pm", "integer", (c) => c.notNull())
      .addColumn("trade", "text")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("order_id", "text")
      .addColumn("reason", "text")
      .addColumn("decided_by", "text")
      .addColumn("decided_at", "text")
      .addColumn("created_by", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("seal", "text", (c) => c.notNull())
      .addColumn("decision_seal", "text")
      .execute();
    await db.schema
      .createIndex("requests_account_idx")
      .on("requests")
      .columns(["account_id", "livemode", "id"])
      .execute();
    await db.schema.createIndex("requests_site_idx").on("requests").columns(["site_id", "id"]).execute();
    await db.schema
      .createTable("request_photos")
      .addColumn("request_id", "text", (c) => c.notNull())
      .addColumn("position", "integer", (c) => c.notNull())
      .addColumn("sha256", "text", (c) => c.notNull())
      .addColumn("size", "integer", (c) => c.notNull())
      .addColumn("media_type", "text", (c) => c.notNull())
      .addColumn("thumbnail_sha256", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("request_photos_pk", ["request_id", "position"])
      .execute();
    await db.schema.createIndex("request_photos_sha_idx").on("request_photos").column("sha256").execute();
    await db.schema
      .createIndex("request_photos_thumb_idx")
      .on("request_photos")
      .column("thumbnail_sha256")
      .execute();
    await db.schema
      .createTable("request_policies")
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("updated_by", "text", (c) => c.notNull())
      .addColumn("seal", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("request_policies_pk", ["account_id", "livemode"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("request_policies").execute();
    await db.schema.dropTable("request_photos").execute();
    await db.schema.dropTable("requests").execute();
    await db.schema.dropTable("request_links").execute();
  },
};
