// The web console's sessions (migration 0018): stored by the SHA-256 of the cookie, read with the hash of
// the API key they stand for, so a session is checked exactly as its key is (auth/console-sessions.ts).

import type { Kysely } from "kysely";
import type { ConsoleSessionsTable, Database } from "./schema.js";
import type { ConsoleSessionStore, StoredConsoleSession } from "./store.js";

export class KyselyConsoleSessionStore implements ConsoleSessionStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ConsoleSessionsTable): Promise<void> {
    await this.db.insertInto("console_sessions").values(row).execute();
  }

  find(idHash: string): Promise<StoredConsoleSession | undefined> {
    return this.db
      .selectFrom("console_sessions")
      .innerJoin("api_keys", "api_keys.id", "console_sessions.key_id")
      .selectAll("console_sessions")
      .select("api_keys.key_hash as key_hash")
      .where("console_sessions.id_hash", "=", idHash)
      .executeTakeFirst();
  }

  async extend(idHash: string, expiresAt: string): Promise<void> {
    await this.db
      .updateTable("console_sessions")
      .set({ expires_at: expiresAt })
      .where("id_hash", "=", idHash)
      .where("expires_at", "<", expiresAt)
      .execute();
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom("console_sessions").where("id_hash", "=", idHash).execute();
  }

  async purgeExpired(now: string): Promise<number> {
    const result = await this.db
      .deleteFrom("console_sessions")
      .where("expires_at", "<=", now)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
