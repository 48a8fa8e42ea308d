// Opens the PostgreSQL store: the same Kysely store over a pg pool. Commits are durable when they return
// (PostgreSQL's default synchronous_commit=on waits for the WAL flush).

import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { type Clock, systemClock } from "../clock.js";
import { KyselyStore } from "./kysely-store.js";
import { EVENTS_CHANNEL, type RemoteListener } from "./order-event-store.js";
import { PG_TYPES } from "./pg-types.js";
import type { Database } from "./schema.js";

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
    types: PG_TYPES,
  });
  // A connection that dies (server restart, failover, network) must not crash the process with an
  // unhandled 'error' event: idle ones are dropped by the pool; one in use fails its next query (the
  // request answers 503) and the pool discards it on release.
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const store = new KyselyStore(db, "postgres", {
    schema: options.schema,
    // Batches of every process commit side by side, each locking only the rows its writes declared, in
    // the one lock order (kysely-store.ts lockDeclared); one batch at a time in this process.
    commitLanes: 1,
    clock: options.clock ?? systemClock,
    listen: listenForEvents(url, options),
  });
  return Object.assign(store, {
    readSource: { kind: "postgres", url, schema: options.schema } as const,
    pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  });
}

const RELISTEN_DELAY_MS = 1_000;

/**
 * LISTENs for order events committed by any process on this schema, on a connection of its own (a pooled
 * one cannot hold a LISTEN). A lost connection is opened again after a second, and `onCommit` is called
 * then too: events committed while nobody listened are read from the log like any others.
 */
function listenForEvents(url: string, options: PostgresOptions): RemoteListener {
  return async (onCommit) => {
    let stopped = false;
    let client: pg.Client | null = null;
    let retry: ReturnType<typeof setTimeout> | null = null;
    const connect = async (): Promise<void> => {
      const c = new pg.Client({
        connectionString: url,
        application_name: `${options.applicationName ?? "field-dispatch"} events`,
        ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
      });
      const again = () => {
        if (stopped || retry !== null) return;
        client = null;
        c.end().catch(() => {});
        retry = setTimeout(() => {
          retry = null;
          connect().then(onCommit, again);
        }, RELISTEN_DELAY_MS);
        retry.unref();
      };
      c.on("error", again);
      c.on("end", again);
      await c.connect();
      const schema = (await c.query<{ s: string }>("select current_schema() as s")).rows[0]?.s;
      c.on("notification", (msg) => {
        if (msg.channel === EVENTS_CHANNEL && msg.payload === schema) onCommit();
      });
      await c.query(`LISTEN ${EVENTS_CHANNEL}`);
      client = c;
      if (stopped) await c.end();
    };
    await connect();
    return async () => {
      stopped = true;
      if (retry !== null) clearTimeout(retry);
      await (client as pg.Client | null)?.end().catch(() => {});
    };
  };
}
