// Opens the embedded SQLite store: WAL journal, and every write on disk before the query that made it
// returns (an acknowledged order survives kill -9 and power loss). The WAL is synced off the event loop
// (see wal-sync.ts), which gives synchronous=FULL's guarantee without stalling every request on fsync.

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from "kysely";
import { type Clock, systemClock } from "../clock.js";
import { KyselyStore } from "./kysely-store.js";
import type { Database } from "./schema.js";
import { BACKSTOP_AUTOCHECKPOINT_PAGES, WalCheckpointer } from "./sqlite-checkpointer.js";
import { DurableSqliteDialect, WalSync } from "./wal-sync.js";

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

/** The embedded store in `file` (":memory:" for a throwaway one); `clock` stamps the rows it writes on its
 * own (default: the wall clock). */
export function openSqliteStore(file: string, clock: Clock = systemClock): KyselyStore {
  const database = (memory: boolean) => {
    if (!memory) mkdirSync(dirname(file), { recursive: true });
    const db = new SQLite(file);
    db.pragma("journal_mode = WAL");
    // In memory nothing is durable; on disk WalSync syncs each commit's frames before it is reported.
    db.pragma(`synchronous = ${memory ? "FULL" : "NORMAL"}`);
    db.pragma("busy_timeout = 5000");
    db.pragma("foreign_keys = ON");
    return db;
  };
  if (file === ":memory:") {
    const config = { database: withStatementCache(database(true)) };
    return new KyselyStore(new Kysely<Database>({ dialect: new SqliteDialect(config) }), "sqlite", { clock });
  }
  const connection = database(false);
  connection.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  const walSync = new WalSync(file);
  const dialect = new DurableSqliteDialect({ database: withStatementCache(connection) }, () =>
    walSync.sync(),
  );
  const store = new KyselyStore(new Kysely<Database>({ dialect }), "sqlite", { clock });
  const checkpointer = new WalCheckpointer(file);
  const close = store.close.bind(store);
  return Object.assign(store, {
    async close() {
      await close();
      await walSync.close();
      await checkpointer.stop();
    },
  });
}
