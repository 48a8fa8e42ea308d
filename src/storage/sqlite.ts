// Opens the embedded SQLite store: WAL journal with synchronous=FULL, so a committed transaction is on
// disk before the commit returns (an acknowledged order survives kill -9 and power loss).

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { KyselyStore } from "./kysely-store.js";
import type { Database } from "./schema.js";

export function openSqliteStore(file: string): KyselyStore {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = FULL");
  database.pragma("busy_timeout = 5000");
  database.pragma("foreign_keys = ON");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return new KyselyStore(db, "sqlite");
}
