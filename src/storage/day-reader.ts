// The optimised day's orders read on a connection of the day planner's thread's own (issue 30), so that
// reading a 3,000-job day never holds the server's event loop: SQLite, a read-only connection to the
// store's file (WAL: it reads the last commit while the server's connection writes); PostgreSQL, a client
// of its own (a pool of one) on the store's schema. The same query as the store's scheduledPage.

import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { scheduledPageOf } from "./order-store.js";
import { PG_TYPES } from "./pg-types.js";
import type { Database } from "./schema.js";
import type { ReadSource, ScheduledCursor, ScheduledOrder } from "./store.js";

export interface DayReader {
  /** store.ts OrderStore.scheduledPage, on this connection. */
  scheduledPage(
    livemode: boolean,
    state: string | undefined,
    after: ScheduledCursor | null,
    limit: number,
  ): Promise<ScheduledOrder[]>;
  close(): Promise<void>;
}

function databaseOf(source: ReadSource): Kysely<Database> {
  if (source.kind === "sqlite") {
    const connection = new SQLite(source.file, { readonly: true, fileMustExist: true });
    connection.pragma("busy_timeout = 5000");
    return new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  }
  const pool = new pg.Pool({
    connectionString: source.url,
    max: 1,
    application_name: "field-dispatch day planner",
    connectionTimeoutMillis: 5_000,
    ...(source.schema ? { options: `-c search_path=${source.schema}` } : {}),
    types: PG_TYPES,
  });
  // A lost connection fails its query (the call answers 503); the pool discards it and opens another.
  pool.on("error", () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** A reader of `source`'s day: its connection opens on first use and stays open until close(). */
export function openDayReader(source: ReadSource): DayReader {
  const db = databaseOf(source);
  return {
    scheduledPage: (livemode, state, after, limit) => scheduledPageOf(db, livemode, state, after, limit),
    close: () => db.destroy(),
  };
}
