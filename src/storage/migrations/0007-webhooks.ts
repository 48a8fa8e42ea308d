// Webhooks (Standard Webhooks): per-account signing secrets, endpoints (the account's default and the
// orders' callback URLs), the outbox of events written in the transaction of the change they report, one
// delivery per (event, endpoint) with its retry schedule and lease, and the log of every attempt.

import type { Kysely, Migration } from "kysely";

export const migration0007: Migration = {
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a migration is a table of the schema as it was, frozen, read top to bottom; splitting it would only scatter that table
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("webhook_secrets")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("secret", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      // Null while current; set when rotated: the old secret keeps signing until then (the overlap).
      .addColumn("expires_at", "text")
      .execute();
    await db.schema
      .createIndex("webhook_secrets_account_idx")
      .on("webhook_secrets")
      .columns(["account_id", "livemode"])
      .execute();

    await db.schema
      .createTable("webhook_endpoints")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("is_default", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("disabled_reason", "text")
      .addColumn("disabled_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addUniqueConstraint("webhook_endpoints_url_uq", ["account_id", "livemode", "url"])
      .execute();

    await db.schema
      .createTable("webhook_events")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("order_id", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("callback_url", "text")
      .addColumn("payload", "text", (c) => c.notNull())
      // 0 until the dispatcher has made its deliveries (one per endpoint).
      .addColumn("fanned_out", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex("webhook_events_fanout_idx")
      .on("webhook_events")
      .columns(["fanned_out", "id"])
      .execute();
    await db.schema
      .createIndex("webhook_events_order_idx")
      .on("webhook_events")
      .columns(["order_id", "id"])
      .execute();

    await db.schema
      .createTable("webhook_deliveries")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("endpoint_id", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_at", "text")
      .addColumn("lease_until", "text")
      .addColumn("last_status_code", "integer")
      .addColumn("last_error", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("delivered_at", "text")
      .addUniqueConstraint("webhook_deliveries_event_endpoint_uq", ["event_id", "endpoint_id"])
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_due_idx")
      .on("webhook_deliveries")
      .columns(["status", "next_attempt_at"])
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_endpoint_idx")
      .on("webhook_deliveries")
      .columns(["endpoint_id", "id"])
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_account_idx")
      .on("webhook_deliveries")
      .columns(["account_id", "livemode", "id"])
      .execute();

    await db.schema
      .createTable("webhook_attempts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("delivery_id", "text", (c) => c.notNull())
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("started_at", "text", (c) => c.notNull())
      .addColumn("duration_ms", "integer", (c) => c.notNull())
      .addColumn("status_code", "integer")
      .addColumn("error", "text")
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("next_attempt_at", "text")
      .execute();
    await db.schema
      .createIndex("webhook_attempts_delivery_idx")
      .on("webhook_attempts")
      .columns(["delivery_id", "attempt"])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of [
      "webhook_attempts",
      "webhook_deliveries",
      "webhook_events",
      "webhook_endpoints",
      "webhook_secrets",
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
