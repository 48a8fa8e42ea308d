// Bootstrapped stores for the harness, copied from a template instead of built each time. Every harness
// needs a store that is migrated (45 migrations) and bootstrapped (the sandbox pool of 3,320 contractors,
// the starter checklists, the sandbox account and its key). Built from scratch, that took 0.35 s on
// SQLite and 2.3 s on PostgreSQL, where the migrations of both test workers also queue on one lock for the
// whole database: 4.9 s a harness on average over a CI run, nearly half of the run's time.
//
// The template is built once by the same code (`bootstrap`, with the services' own key service), then:
// - SQLite: once per test run, in a temporary directory; each harness copies the file.
// - PostgreSQL: once per test run (FD_TEST_RUN), as a database of its own, `fd_test_<run>_tmpl`, built by
//   whichever worker asks first (under an advisory lock; the others wait and reuse it). Each harness gets
//   `CREATE DATABASE ... TEMPLATE` (PostgreSQL copies the files; about 0.3 s), its schema renamed to the
//   new database's name, so that the schema, the database and the connections' application_name are one
//   unique name, as they were when each harness had a schema in TEST_DATABASE_URL's database. Dropped when
//   the harness closes; the global teardown drops the template and any leftovers (test/global-setup.ts).
// The template's audit signing key goes with each copy (into the harness's DATA_DIR): the secrets derived
// from it (contractor handles, tracking tokens) and any checkpoint the template signed stay consistent.
// Every copy shares the template's sandbox key, returned once by the bootstrap that made it.

import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SIGNING_KEY_FILE } from "../../src/audit/signing.js";
import { bootstrap } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/config.js";
import { createServices } from "../../src/services/create-services.js";
import { openPostgresStore } from "../../src/storage/postgres.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import type { Store } from "../../src/storage/store.js";
import { closeServices } from "./close-services.js";
import {
  admin,
  postgresTemplateInfoFile,
  postgresUrl,
  registerClonedSchema,
  runSchemaPrefix,
  sqliteTemplateDir,
  type TestStore,
  testStoreKind,
} from "./test-store.js";

const SQLITE_FILE = "test.sqlite";
const TEMPLATE_INFO = "template.json";

interface Template {
  sandboxKey: string;
  signingKeyPem: string;
}

/** Bootstraps `store` with services of a throwaway DATA_DIR; returns the key and the signing key. */
async function buildTemplate(store: Store, dataDir: string): Promise<Template> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: "error", POOL_REFRESH_MS: "0", ENV_FILE: "" });
  const services = createServices(config, store);
  try {
    const boot = await bootstrap(store, services.keys);
    if (!boot.sandboxKey) throw new Error("the template's bootstrap issued no sandbox key");
    return {
      sandboxKey: boot.sandboxKey,
      signingKeyPem: readFileSync(join(dataDir, SIGNING_KEY_FILE), "utf8"),
    };
  } finally {
    await closeServices(services);
    await store.close();
  }
}

let sqliteTemplate: Promise<Template & { file: string }> | null = null;

/** The run's SQLite template (built by whichever test file asks first; each file runs in a process of its
 * own): built in a directory of its own, then renamed into place, which only one builder can do. */
function sqliteTemplateOnce(): Promise<Template & { file: string }> {
  sqliteTemplate ??= (async () => {
    const final = sqliteTemplateDir();
    const info = join(final, TEMPLATE_INFO);
    if (!existsSync(info)) {
      const dir = mkdtempSync(join(tmpdir(), "fd-template-"));
      try {
        const file = join(dir, SQLITE_FILE);
        const template = await buildTemplate(openSqliteStore(file), dir);
        // Closed: the write-ahead log is checkpointed into the file and removed.
        if (existsSync(`${file}-wal`))
          throw new Error("the SQLite template kept a write-ahead log after closing");
        writeFileSync(join(dir, TEMPLATE_INFO), JSON.stringify(template));
        renameSync(dir, final);
      } catch (error) {
        rmSync(dir, { recursive: true, force: true });
        // Another builder won the race: its template is in place.
        if (!existsSync(info)) throw error;
      }
    }
    return { ...(JSON.parse(readFileSync(info, "utf8")) as Template), file: join(final, SQLITE_FILE) };
  })();
  return sqliteTemplate;
}

/** Run-wide: the template database's name, and the file where its builder leaves the template's keys. */
function postgresTemplateNames(): { database: string; info: string } {
  return { database: `${runSchemaPrefix()}tmpl`, info: postgresTemplateInfoFile() };
}

/** `url` with its database replaced. */
function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

const TEMPLATE_SCHEMA = "fd_template";
/** Held while the run's template database is built (pg_advisory_lock's key, any constant of ours). */
const TEMPLATE_LOCK = 727_000_201;

let postgresTemplate: Promise<Template & { database: string }> | null = null;

function postgresTemplateOnce(): Promise<Template & { database: string }> {
  postgresTemplate ??= admin(postgresUrl(), async (c) => {
    const { database, info } = postgresTemplateNames();
    await c.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK]);
    try {
      if (!existsSync(info)) {
        await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
        await c.query(`CREATE DATABASE "${database}"`);
        const url = withDatabase(postgresUrl(), database);
        await admin(url, (t) => t.query(`CREATE SCHEMA ${TEMPLATE_SCHEMA}`));
        const dir = mkdtempSync(join(tmpdir(), "fd-template-"));
        try {
          const store = openPostgresStore(url, {
            poolSize: 2,
            schema: TEMPLATE_SCHEMA,
            applicationName: database,
          });
          writeFileSync(info, JSON.stringify(await buildTemplate(store, dir)));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
      return { ...(JSON.parse(readFileSync(info, "utf8")) as Template), database };
    } finally {
      await c.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK]);
    }
  });
  return postgresTemplate;
}

async function clonePostgres(template: Template & { database: string }): Promise<TestStore> {
  const name = `${runSchemaPrefix()}${Math.random().toString(36).slice(2, 10)}`;
  await admin(postgresUrl(), (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template.database}"`));
  const url = withDatabase(postgresUrl(), name);
  await admin(url, (c) => c.query(`ALTER SCHEMA ${TEMPLATE_SCHEMA} RENAME TO "${name}"`));
  registerClonedSchema(name, url);
  const store = openPostgresStore(url, { poolSize: 4, schema: name, applicationName: name });
  return {
    store,
    kind: "postgres",
    cleanup: async () => {
      await admin(postgresUrl(), (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

/**
 * A store for a harness whose DATA_DIR is `dir`: migrated and bootstrapped, a copy of the template (see
 * above), with the template's signing key in `dir`. Returns the store and the sandbox key.
 */
export async function openBootstrappedStore(dir: string): Promise<{ opened: TestStore; sandboxKey: string }> {
  if (testStoreKind() === "postgres") {
    const template = await postgresTemplateOnce();
    writeFileSync(join(dir, SIGNING_KEY_FILE), template.signingKeyPem, { mode: 0o600 });
    return { opened: await clonePostgres(template), sandboxKey: template.sandboxKey };
  }
  const template = await sqliteTemplateOnce();
  writeFileSync(join(dir, SIGNING_KEY_FILE), template.signingKeyPem, { mode: 0o600 });
  const file = join(dir, SQLITE_FILE);
  copyFileSync(template.file, file);
  return {
    opened: { store: openSqliteStore(file), kind: "sqlite", cleanup: async () => {} },
    sandboxKey: template.sandboxKey,
  };
}
