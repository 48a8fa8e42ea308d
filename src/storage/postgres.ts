// Opens the PostgreSQL store: the same Kysely store over a pg pool. Commits are durable when they return
// (PostgreSQL's default synchronous_commit=on waits for the WAL flush).

import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { type Clock, systemClock } from "../clock.js";
import { KyselyStore } from "./kysely-store.js";
import type { Database } from "./schema.js";

const INT8_OID = 20;

export interface PostgresOptions {
  poolSize: number;
  /** Schema to work in (search_path); the tests give each harness its own. */
  schema?: string;
  applicationName?: string;
  /** The time the store stamps rows it writes on its own (default: the wall clock). */
  clock?: Clock;
}

export function openPostgresStore(url: string, options: PostgresOptions): KyselyStore {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    application_name: options.applicationName ?? "field-dispatch",
    connectionTimeoutMillis: 5_000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    // bigint columns (counts, cents) come back as numbers: every value we store fits in 2^53.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A connection that dies (server restart, failover, network) must not crash the process with an
  // unhandled 'error' event: idle ones are dropped by the pool; one in use fails its next query (the
  // request answers 503) and the pool discards it on release.
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // Up to half the pool commits batches at once; the other half serves reads meanwhile.
  const store = new KyselyStore(db, "postgres", {
    schema: options.schema,
    // Group commits run one at a time across every process on the schema (an advisory lock): a batch
    // locks its commands' rows in the batch's order, and two batches at once could deadlock.
    commitLanes: 1,
    serializeWrites: true,
    clock: options.clock ?? systemClock,
  });
  return Object.assign(store, {
    pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  });
}
