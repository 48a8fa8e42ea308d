// PostgreSQL connection loss: a request whose connection dies mid-transaction gets a clear 503 problem
// and leaves no partial order; the service recovers by itself. Runs only on the PostgreSQL project.

import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import type { Store } from "../../src/storage/store.js";
import { createHarness, ORDER_PATH, validOrder } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";
import { postgresUrl, testStoreKind } from "../helpers/test-store.js";

/** The test store's own schema; also its connections' application_name. */
function schemaOf(store: Store): string {
  const schema = (store as KyselyStore).schema;
  if (!schema) throw new Error("the PostgreSQL test store has a schema of its own");
  return schema;
}

async function terminateBackends(applicationName: string): Promise<number> {
  const client = new pg.Client({ connectionString: postgresUrl(applicationName) });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
      [applicationName],
    );
    return rowCount ?? 0;
  } finally {
    await client.end();
  }
}

/** Backends of the test store's connections still alive. */
async function backends(applicationName: string): Promise<number> {
  const client = new pg.Client({ connectionString: postgresUrl(applicationName) });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
      [applicationName],
    );
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}

async function countOrders(applicationName: string): Promise<number> {
  const client = new pg.Client({ connectionString: postgresUrl(applicationName) });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${applicationName}".orders`);
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}

describe.skipIf(testStoreKind() !== "postgres")("PostgreSQL connection loss", () => {
  it("answers 503 when the connection dies mid-transaction, writes nothing, and recovers", async () => {
    const h = await createHarness();
    const schema = schemaOf(h.services.store);
    const before = await countOrders(schema);

    const write = h.services.store.write.bind(h.services.store);
    let killed = false;
    h.services.store.write = (work) =>
      write(async (tx) => {
        if (!killed) {
          killed = true;
          // The transaction has begun on a pooled connection: kill every connection of this store.
          expect(await terminateBackends(schema)).toBeGreaterThan(0);
        }
        return work(tx);
      });

    const failed = await h.post(ORDER_PATH, validOrder(), { "x-api-key": h.sandboxKey });
    expectProblem(failed, 503, "service_unavailable");
    expect(failed.headers["retry-after"]).toBe("1");
    expect(await countOrders(schema)).toBe(before);

    // No restart, no intervention: the next request gets a fresh connection.
    const ok = await h.post(ORDER_PATH, validOrder(), { "x-api-key": h.sandboxKey });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await countOrders(schema)).toBe(before + 1);
    expect((await h.get("/readyz")).statusCode).toBe(200);
  });

  it("survives idle connections being killed between requests", async () => {
    const h = await createHarness();
    const schema = schemaOf(h.services.store);
    await h.post(ORDER_PATH, validOrder(), { "x-api-key": h.sandboxKey });
    await terminateBackends(schema);
    // The killed backends are gone (the server has closed their sockets): the pool's idle connections are
    // dead before the next request, whether or not the pool has noticed yet.
    await vi.waitFor(async () => expect(await backends(schema)).toBe(0), { timeout: 10_000, interval: 20 });
    const res = await h.post(ORDER_PATH, validOrder(), { "x-api-key": h.sandboxKey });
    expect([200, 503]).toContain(res.statusCode);
    const again = await h.post(ORDER_PATH, validOrder(), { "x-api-key": h.sandboxKey });
    expect(again.statusCode).toBe(200);
  });
});
