// Initial schema: accounts, API keys, contractors, quotes, orders, idempotency keys.
// Written with Kysely's schema builder only, so it runs unchanged on SQLite and PostgreSQL.

import type { Kysely, Migration } from "kysely";

export const migration0001: Migration = {
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a migration is a table of the schema as it was, frozen, read top to bottom; splitting it would only scatter that table
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("accounts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull().unique())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("api_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("key_hint", "text", (c) => c.notNull())
      .addColumn("label", "text")
      .addColumn("rate_limit_per_minute", "integer")
      .addColumn("rate_limit_burst", "integer")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("revoked_at", "text")
      .execute();
    await db.schema.createIndex("api_keys_account_idx").on("api_keys").column("account_id").execute();

    await db.schema
      .createTable("contractors")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("pool", "text", (c) => c.notNull())
      .addColumn("external_ref", "text")
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("email", "text")
      .addColumn("phone", "text")
      .addColumn("trades", "text", (c) => c.notNull())
      .addColumn("states", "text", (c) => c.notNull())
      .addColumn("home_zip", "text")
      .addColumn("lat", "double precision")
      .addColumn("lon", "double precision")
      .addColumn("service_radius_miles", "double precision")
      .addColumn("hourly_rate_cents", "integer", (c) => c.notNull())
      .addColumn("emergency_capable", "integer", (c) => c.notNull())
      .addColumn("max_active_jobs", "integer", (c) => c.notNull())
      .addColumn("rating", "double precision", (c) => c.notNull())
      .addColumn("response_minutes", "integer", (c) => c.notNull())
      .addColumn("active", "integer", (c) => c.notNull())
      .addColumn("excluded", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("contractors_pool_ref_idx")
      .on("contractors")
      .columns(["pool", "external_ref"])
      .unique()
      .execute();

    await db.schema
      .createTable("quotes")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("trade", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("zip", "text")
      .addColumn("city", "text")
      .addColumn("urgency", "text", (c) => c.notNull())
      .addColumn("nte_cents", "bigint")
      .addColumn("contractor_id", "text")
      .addColumn("estimated_cost_cents", "bigint", (c) => c.notNull())
      .addColumn("eta_tier", "text")
      .addColumn("breakdown", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("orders")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("trade", "text", (c) => c.notNull())
      .addColumn("urgency", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("zip", "text")
      .addColumn("city", "text")
      .addColumn("address", "text")
      .addColumn("location_name", "text")
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("nte_cents", "bigint")
      .addColumn("callback_url", "text")
      .addColumn("reference_id", "text")
      .addColumn("contractor_id", "text")
      .addColumn("estimated_cost_cents", "bigint", (c) => c.notNull())
      .addColumn("currency", "text", (c) => c.notNull())
      .addColumn("eta_tier", "text")
      .addColumn("match_score", "double precision")
      .addColumn("received_at", "text", (c) => c.notNull())
      .addColumn("matched_at", "text")
      .addColumn("dispatch_latency_ms", "double precision")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("orders_account_idx")
      .on("orders")
      .columns(["account_id", "livemode", "created_at"])
      .execute();
    await db.schema
      .createIndex("orders_evals_idx")
      .on("orders")
      .columns(["livemode", "created_at"])
      .execute();
    await db.schema
      .createIndex("orders_contractor_idx")
      .on("orders")
      .columns(["contractor_id", "status"])
      .execute();

    await db.schema
      .createTable("idempotency_keys")
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("idem_key", "text", (c) => c.notNull())
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("response_status", "integer", (c) => c.notNull())
      .addColumn("response_body", "text", (c) => c.notNull())
      .addColumn("order_id", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("idempotency_keys_pk", ["account_id", "livemode", "idem_key"])
      .execute();
    await db.schema
      .createIndex("idempotency_keys_expiry_idx")
      .on("idempotency_keys")
      .column("expires_at")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ["idempotency_keys", "orders", "quotes", "contractors", "api_keys", "accounts"]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
