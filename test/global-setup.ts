// Drops the PostgreSQL schemas the tests create (fd_test_*): leftovers of an interrupted run before the
// tests start, and this run's after every worker has finished.

import { admin, TEST_SCHEMA_PREFIX } from "./helpers/test-store.js";

async function dropTestSchemas(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  await admin(url, async (c) => {
    const { rows } = await c.query<{ nspname: string }>(
      "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1",
      [`${TEST_SCHEMA_PREFIX}%`],
    );
    for (const { nspname } of rows) await c.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  });
}

export async function setup(): Promise<void> {
  await dropTestSchemas();
}

export async function teardown(): Promise<void> {
  await dropTestSchemas();
}
