// Opens the embedded SQLite store: WAL journal with synchronous=FULL, so a committed transaction is on
// disk before the commit returns (an acknowledged order survives kill -9 and power loss).

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from "kysely";
import { KyselyStore } from "./kysely-store.js";
import type { Database } from "./schema.js";
import { BACKSTOP_AUTOCHECKPOINT_PAGES, WalCheckpointer } from "./sqlite-checkpointer.js";

const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query it runs; preparing is the costliest step of a small SQLite query. The
 * store's queries are a small fixed set of SQL texts, so prepared statements are kept and reused
 * (least recently used dropped past 256).
 */
export function withStatementCache(database: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      let stmt = cache.get(sql);
      if (stmt) {
        cache.delete(sql);
      } else {
        stmt = database.prepare(sql) as unknown as SqliteStatement;
        if (cache.size >= STATEMENT_CACHE_SIZE) {
          const oldest = cache.keys().next().value;
          if (oldest !== undefined) cache.delete(oldest);
        }
      }
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

export function openSqliteStore(file: string): KyselyStore {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = FULL");
  database.pragma("busy_timeout = 5000");
  database.pragma("foreign_keys = ON");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  const store = new KyselyStore(db, "sqlite");
  if (file === ":memory:") return store;
  database.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  const checkpointer = new WalCheckpointer(file);
  const close = store.close.bind(store);
  return Object.assign(store, {
    async close() {
      await close();
      await checkpointer.stop();
    },
  });
}
