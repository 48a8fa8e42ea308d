// The service-level clocks across a real restart, on an injected clock: the services fire an order's
// respond clock at risk, are shut down and started again on the same store (the same SQLite file, the
// same PostgreSQL schema), the clock passes the deadline, and the new process's watch fires the breach
// once and the at-risk event not again. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bootstrap } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/config.js";
import { createServices } from "../../src/services/create-services.js";
import { openPostgresStore } from "../../src/storage/postgres.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import type { Store } from "../../src/storage/store.js";
import { buildApp } from "../../src/transports/http/app.js";
import { SlaWatch } from "../../src/workers/sla-watch.js";
import { ORDER_PATH, validOrder } from "../helpers/harness.js";
import { admin, runSchemaPrefix } from "../helpers/test-store.js";

const MINUTE = 60_000;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One run of the service on `openStore()`: services, the HTTP app, and how to stop them all. */
async function start(openStore: (now: () => Date) => Store, dir: string, now: () => Date) {
  const store = openStore(now);
  const config = loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: "error",
    API_KEY_CACHE_TTL_MS: "0",
    POOL_REFRESH_MS: "0",
    SANDBOX_SIMULATION: "false",
    SLA_WATCH_INTERVAL_MS: "0",
  });
  const services = createServices(config, store, { now });
  await bootstrap(store, services.keys, now);
  await services.pool.load();
  const app = await buildApp(services, {});
  await app.ready();
  return {
    services,
    app,
    async stop() {
      await app.close();
      await services.audit.stop();
      await services.limiter.close();
      await services.fetcher.close();
      await store.close();
    },
  };
}

function suite(opener: () => Promise<(now: () => Date) => Store>) {
  it("fires at risk before the restart and breached after it, each once", async () => {
    const openStore = await opener();
    const dir = mkdtempSync(join(tmpdir(), "fd-sla-restart-"));
    dirs.push(dir);
    let nowMs = Date.parse("2026-11-24T09:00:00.000Z");
    const now = () => new Date(nowMs);

    const first = await start(openStore, dir, now);
    const issued = await first.services.keys.issue({
      accountName: "restart",
      mode: "test",
      actor: "operator:test",
    });
    const res = await first.app.inject({
      method: "POST",
      url: ORDER_PATH,
      headers: { "content-type": "application/json", "x-api-key": issued.key },
      payload: JSON.stringify(validOrder({ urgency: "emergency" })),
    });
    expect(res.statusCode, res.body).toBe(200);
    const orderId = res.json().order_id as string;
    const receivedAt = Date.parse((await first.services.store.orders.byId(orderId))?.received_at as string);

    nowMs = receivedAt + 12 * MINUTE; // 80 % of the 15 minutes to respond_by
    const before = new SlaWatch(first.services);
    expect(await before.tick()).toBe(1);
    expect(await before.tick()).toBe(0);
    await first.stop();

    nowMs = receivedAt + 15.5 * MINUTE; // past respond_by, while no process ran
    const second = await start(openStore, dir, now);
    try {
      const after = new SlaWatch(second.services);
      expect(await after.tick()).toBe(1);
      expect(await after.tick()).toBe(0);
      expect(await new SlaWatch(second.services).tick()).toBe(0);

      const row = await second.services.store.orders.byId(orderId);
      expect(row?.sla_respond_at_risk_at).toBe(new Date(receivedAt + 12 * MINUTE).toISOString());
      expect(row?.sla_respond_breached_at).toBe(new Date(receivedAt + 15.5 * MINUTE).toISOString());
      const audit = await second.app.inject({
        method: "GET",
        url: `/api/audit?order_id=${orderId}&limit=100`,
        headers: { "x-api-key": issued.key },
      });
      expect(audit.statusCode, audit.body).toBe(200);
      const kinds = (audit.json().records as Array<{ kind: string }>)
        .map((r) => r.kind)
        .filter((k) => k.startsWith("order.sla_"));
      expect(kinds.sort()).toEqual(["order.sla_at_risk", "order.sla_breached"]);
    } finally {
      await second.stop();
    }
  });
}

describe("on SQLite", () => {
  suite(async () => {
    const file = join(mkdtempSync(join(tmpdir(), "fd-sla-store-")), "store.sqlite");
    dirs.push(join(file, ".."));
    return (now) => openSqliteStore(file, now);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(async () => {
    const url = process.env.TEST_DATABASE_URL as string;
    // A schema of this run's (the global teardown drops it), opened by each start in turn.
    const schema = `${runSchemaPrefix()}${Math.random().toString(36).slice(2, 10)}`;
    await admin(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
    return (now) => openPostgresStore(url, { poolSize: 2, schema, applicationName: schema, clock: now });
  });
});
