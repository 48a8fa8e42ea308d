// Drops the PostgreSQL schemas and databases the tests create: this run's once every worker is done, and
// leftovers of runs that started more than two hours ago (interrupted ones). Another run in progress on
// the same database keeps its own.

import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { MIGRATION_LOCK } from "../src/storage/kysely-store.js";
import {
  admin,
  postgresTemplateInfoFile,
  runSchemaPrefix,
  sqliteTemplateDir,
  TEST_SCHEMA_PREFIX,
} from "./helpers/test-store.js";

const STALE_AFTER_MS = 2 * 60 * 60 * 1000;

/** The names a catalog query (`$1`: the tests' prefix, for LIKE) lists that `filter` keeps, on the
 * database of TEST_DATABASE_URL; `drop` is called with them there (nothing without that database). */
async function dropOwn(
  catalog: string,
  filter: (name: string) => boolean,
  drop: (c: pg.Client, names: string[]) => Promise<void>,
): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  await admin(url, async (c) => {
    const { rows } = await c.query<{ name: string }>(catalog, [`${TEST_SCHEMA_PREFIX}%`]);
    const doomed = rows.map((r) => r.name).filter(filter);
    if (doomed.length > 0) await drop(c, doomed);
  });
}

function dropSchemas(filter: (name: string) => boolean): Promise<void> {
  return dropOwn(
    "SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE $1",
    filter,
    async (c, doomed) => {
      // Under the migrations' lock: Kysely's migrator introspects every table of the database, and fails
      // ("schema ... does not exist") if a schema is dropped under it, in this run or another run on the
      // same database.
      await c.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      try {
        for (const name of doomed) await c.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
      } finally {
        await c.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
      }
    },
  );
}

/** Drops the databases the harnesses' stores were copied into (store-template.ts) and their template,
 * where `filter` says: normally each harness drops its own when it closes; these are the template and
 * what an interrupted run left. */
function dropDatabases(filter: (name: string) => boolean): Promise<void> {
  return dropOwn(
    "SELECT datname AS name FROM pg_database WHERE datname LIKE $1",
    filter,
    async (c, doomed) => {
      for (const name of doomed) await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  );
}

function startedAt(schema: string): number | null {
  // The run's id is its start time in base 36 (8 characters until 2059), then 4 random characters.
  const run = (schema.slice(TEST_SCHEMA_PREFIX.length).split("_")[0] ?? "").slice(0, 8);
  const ms = Number.parseInt(run, 36);
  return /^[0-9a-z]+$/.test(run) && Number.isFinite(ms) && ms > 1_600_000_000_000 ? ms : null;
}

export async function setup(): Promise<void> {
  // Workers inherit this: every schema of the run carries it.
  process.env.FD_TEST_RUN = Date.now().toString(36) + Math.random().toString(36).slice(2, 6);
  const stale = (name: string) => {
    const at = startedAt(name);
    return at === null || Date.now() - at > STALE_AFTER_MS;
  };
  await dropSchemas(stale);
  await dropDatabases(stale);
  // Template stores' files that interrupted runs left in the temporary directory.
  for (const name of readdirSync(tmpdir())) {
    if (name.startsWith(TEST_SCHEMA_PREFIX) && stale(name)) {
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
}

export async function teardown(): Promise<void> {
  const prefix = runSchemaPrefix();
  await dropSchemas((name) => name.startsWith(prefix));
  await dropDatabases((name) => name.startsWith(prefix));
  rmSync(postgresTemplateInfoFile(), { force: true });
  rmSync(sqliteTemplateDir(), { recursive: true, force: true });
}
