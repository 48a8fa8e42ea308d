// Opens a fresh store for a test: SQLite in a temporary directory, or, when TEST_STORE=postgres, a
// PostgreSQL schema of its own on TEST_DATABASE_URL (dropped again at cleanup).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import pg from "pg";
import type { Clock } from "../../src/clock.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { openPostgresStore } from "../../src/storage/postgres.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import type { Store } from "../../src/storage/store.js";

export interface TestStore {
  store: Store;
  kind: "sqlite" | "postgres";
  /** Drops what the store left behind (after store.close()). */
  cleanup(): Promise<void>;
}

export function testStoreKind(): "sqlite" | "postgres" {
  return process.env.TEST_STORE === "postgres" ? "postgres" : "sqlite";
}

/** The databases of the harnesses' stores (copies of a template: store-template.ts), by schema name. */
const clonedSchemas = new Map<string, string>();

export function registerClonedSchema(schema: string, url: string): void {
  clonedSchemas.set(schema, url);
}

/** TEST_DATABASE_URL; with `schema`, the URL of the database that holds it (a harness's store has a
 * database of its own, its schema named as it is). */
export function postgresUrl(schema?: string): string {
  const cloned = schema === undefined ? undefined : clonedSchemas.get(schema);
  if (cloned) return cloned;
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error("TEST_STORE=postgres needs TEST_DATABASE_URL (postgres://...)");
  return url;
}

export const TEST_SCHEMA_PREFIX = "fd_test_";

/**
 * Prefix of the schemas this test run creates: fd_test_<run>_, where <run> (set by the global setup,
 * inherited by the workers) starts with the run's start time in base 36, so a run only ever drops its
 * own schemas and the leftovers of runs long finished, never those of another run in progress.
 */
export function runSchemaPrefix(): string {
  return `${TEST_SCHEMA_PREFIX}${process.env.FD_TEST_RUN ?? `solo${process.pid}`}_`;
}

/** Where the worker that builds the run's PostgreSQL template store leaves its keys for the others
 * (store-template.ts); removed by the global teardown. */
export function postgresTemplateInfoFile(): string {
  return join(tmpdir(), `${runSchemaPrefix()}template.json`);
}

/** The run's SQLite template store, a directory (store-template.ts); removed by the global teardown. */
export function sqliteTemplateDir(): string {
  return join(tmpdir(), `${runSchemaPrefix()}sqlite-template`);
}

export function redisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error("TEST_LIMITER=redis needs TEST_REDIS_URL (redis://...)");
  return url;
}

export async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Time allowed to a test that walks the migration chain up and down. Each walk grows with every migration
 * (43 by now), and on PostgreSQL Kysely's migrator takes one advisory lock for the whole database, so the
 * walks of every worker's test stores queue behind one another: 4 s on a quiet machine, over 30 s in a
 * loaded CI run.
 */
export const MIGRATION_TEST_TIMEOUT = 120_000;

export async function openPostgresTestStore(poolSize = 4, clock?: Clock): Promise<TestStore> {
  const url = postgresUrl();
  const schema = `${runSchemaPrefix()}${Math.random().toString(36).slice(2, 10)}`;
  await admin(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
  const store = openPostgresStore(url, {
    poolSize,
    schema,
    applicationName: schema,
    ...(clock ? { clock } : {}),
  });
  return {
    store,
    kind: "postgres",
    // Schemas are dropped by the global teardown (test/global-setup.ts), after every worker is done:
    // dropping one while another process migrates breaks Kysely's introspection of all schemas.
    cleanup: async () => {},
  };
}

export async function openTestStore(dir?: string): Promise<TestStore> {
  if (testStoreKind() === "postgres") return openPostgresTestStore();
  const base = dir ?? mkdtempSync(join(tmpdir(), "fd-store-"));
  return {
    store: openSqliteStore(join(base, "test.sqlite")),
    kind: "sqlite",
    cleanup: async () => {
      if (!dir) rmSync(base, { recursive: true, force: true });
    },
  };
}

/** The column names of `table` in the store's own schema. On PostgreSQL it reads information_schema for
 * that schema alone: Kysely's introspection reads every schema of the database, so another test file's
 * migration running at the same time (dropping a column in its schema) can make it fail. */
export async function columnsOf(store: KyselyStore, table: string): Promise<string[]> {
  if (store.dialect === "postgres") {
    const { rows } = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_schema = coalesce(${store.schema ?? null}, current_schema()) and table_name = ${table}`.execute(
      store.db,
    );
    return rows.map((r) => r.column_name);
  }
  const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(
    store.db,
  );
  return rows.map((r) => r.name);
}

/** The index names of `table` in the store's own schema (on PostgreSQL that schema alone, as columnsOf),
 * sorted. */
export async function indexesOf(store: KyselyStore, table: string): Promise<string[]> {
  const rows =
    store.dialect === "sqlite"
      ? await sql<{ name: string }>`select name from sqlite_master
          where type = 'index' and tbl_name = ${table}`.execute(store.db)
      : await sql<{ name: string }>`select indexname as name from pg_indexes
          where tablename = ${table} and schemaname = coalesce(${store.schema ?? null}, current_schema())`.execute(
          store.db,
        );
  return rows.rows.map((r) => r.name).sort();
}
