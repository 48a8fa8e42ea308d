// Opens the embedded SQLite store: WAL journal, and every write on disk before the query that made it
// returns (an acknowledged order survives kill -9 and power loss). The WAL is synced off the event loop
// (see wal-sync.ts), which gives synchronous=FULL's guarantee without stalling every request on fsync.

import { mkdirSync, writeFileSync } from "node:fs";
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
function withStatementCache(database: SQLite.Database, profile?: SqlProfile): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      let stmt = cache.get(sql);
      if (stmt) {
        cache.delete(sql);
      } else {
        stmt = database.prepare(sql) as unknown as SqliteStatement;
        if (profile) stmt = profile.timed(sql, stmt);
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

/**
 * Time spent per statement text (config SQL_PROFILE_FILE), written as a table to a file when the store
 * closes: a diagnostic for the benchmarks. It times the statement's execution inside SQLite and
 * better-sqlite3 (COMMIT included), not Kysely's building of it. "%p" in the file's name stands for the
 * process id (the CLI's processes and the server's would otherwise write the same file).
 */
class SqlProfile {
  private readonly spent = new Map<string, { count: number; ns: bigint }>();

  constructor(private readonly file: string) {}

  write(): void {
    writeFileSync(this.file.replaceAll("%p", String(process.pid)), this.table());
  }

  timed(sql: string, stmt: SqliteStatement): SqliteStatement {
    // Multi-row inserts differ only in their number of rows: one line for all of them.
    const key = sql.replace(/\(\?(?:, \?)*\)(?:, \(\?(?:, \?)*\))+/, "(?...), ...").replace(/\s+/g, " ");
    // Resolved once per prepared statement: a run only adds to its entry.
    let entry = this.spent.get(key);
    if (!entry) {
      entry = { count: 0, ns: 0n };
      this.spent.set(key, entry);
    }
    const spent = entry;
    const add = (started: bigint) => {
      spent.count++;
      spent.ns += process.hrtime.bigint() - started;
    };
    const wrap =
      <A extends unknown[], R>(fn: (...args: A) => R) =>
      (...args: A): R => {
        const started = process.hrtime.bigint();
        try {
          return fn(...args);
        } finally {
          add(started);
        }
      };
    return {
      reader: stmt.reader,
      all: wrap(stmt.all.bind(stmt)),
      run: wrap(stmt.run.bind(stmt)),
      iterate: stmt.iterate.bind(stmt),
    } as SqliteStatement;
  }

  table(): string {
    const rows = [...this.spent].sort((a, b) => Number(b[1].ns - a[1].ns));
    const lines = rows.map(([sql, { count, ns }]) => {
      const ms = Number(ns) / 1e6;
      return `${ms.toFixed(1).padStart(10)} ms ${String(count).padStart(9)} ${((ms * 1000) / count).toFixed(1).padStart(9)} us  ${sql.slice(0, 160)}`;
    });
    return `${"total".padStart(13)} ${"runs".padStart(9)} ${"per run".padStart(12)}  statement\n${lines.join("\n")}\n`;
  }
}

export interface SqliteStoreOptions {
  /** Config SQL_PROFILE_FILE: time every statement, and write the table there when the store closes. */
  sqlProfileFile?: string;
}

/** The embedded store in `file` (":memory:" for a throwaway one); `clock` stamps the rows it writes on its
 * own (default: the wall clock). */
export function openSqliteStore(
  file: string,
  clock: Clock = systemClock,
  options: SqliteStoreOptions = {},
): KyselyStore {
  const profile = options.sqlProfileFile ? new SqlProfile(options.sqlProfileFile) : undefined;
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
  const dialect = new DurableSqliteDialect({ database: withStatementCache(connection, profile) }, () =>
    walSync.sync(),
  );
  const store = new KyselyStore(new Kysely<Database>({ dialect }), "sqlite", { clock });
  const checkpointer = new WalCheckpointer(file);
  const close = store.close.bind(store);
  return Object.assign(store, {
    readSource: { kind: "sqlite", file } as const,
    async close() {
      await close();
      await walSync.close();
      await checkpointer.stop();
      profile?.write();
    },
  });
}
