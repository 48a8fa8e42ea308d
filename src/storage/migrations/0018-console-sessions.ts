// The web console's sessions: an API key exchanged once (POST /console/session) for an opaque cookie. Only
// the SHA-256 of the cookie's value is stored, with the key it stands for (so the key's revocation ends
// it), the CSRF token its state-changing requests must carry, and the idle expiry each use moves on.

import type { Kysely, Migration } from "kysely";

export const migration0018: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("console_sessions")
      .addColumn("id_hash", "text", (c) => c.primaryKey())
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("csrf_token", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("console_sessions_key_idx").on("console_sessions").column("key_id").execute();
    await db.schema
      .createIndex("console_sessions_expires_idx")
      .on("console_sessions")
      .column("expires_at")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("console_sessions").execute();
  },
};
