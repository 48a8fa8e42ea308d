// The service-level clocks across processes: two servers on one PostgreSQL (and one Redis), each running
// its SLA watch, fire each due clock once in total. Needs TEST_DATABASE_URL and TEST_REDIS_URL (CI sets
// both). The deadlines are moved into the past in the store (the children run on the wall clock); the
// test waits for the firings it expects, stops both servers (which drains their watches), then counts.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ApiKeyService } from "../src/auth/api-key-service.js";
import { openPostgresStore } from "../src/storage/postgres.js";
import { type ChildServer, startChildServer } from "./helpers/child-server.js";
import { admin, postgresUrl, runSchemaPrefix } from "./helpers/test-store.js";

const ready = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const servers: ChildServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.kill();
});

const ORDERS = 12;

async function breachedCounts(schema: string): Promise<Map<string, number>> {
  const rows = await admin(postgresUrl(), (c) =>
    c.query<{ order_id: string; n: string }>(
      `SELECT order_id, count(*) AS n FROM ${schema}.audit_records WHERE kind = 'order.sla_breached' GROUP BY order_id`,
    ),
  );
  return new Map(rows.rows.map((r) => [r.order_id, Number(r.n)]));
}

describe.skipIf(!ready)("service-level clocks across processes", () => {
  it("fire each due clock once in total from two servers' watches", async () => {
    const schema = `${runSchemaPrefix()}sla${Math.random().toString(36).slice(2, 10)}`;
    await admin(postgresUrl(), (c) => c.query(`CREATE SCHEMA ${schema}`));
    const url = new URL(postgresUrl());
    url.searchParams.set("options", `-c search_path=${schema}`);
    const vars = {
      DATABASE_URL: url.toString(),
      DATABASE_POOL_SIZE: "4",
      REDIS_URL: process.env.TEST_REDIS_URL as string,
      REDIS_KEY_PREFIX: `fsd:test:${schema}:`,
      REDIS_TIMEOUT_MS: "2000",
      DATA_DIR: mkdtempSync(join(tmpdir(), "fd-sla-")),
      SANDBOX_SIMULATION: "false",
      SLA_WATCH_INTERVAL_MS: "25",
    };
    const a = await startChildServer(vars);
    servers.push(a);
    const b = await startChildServer(vars);
    servers.push(b);
    const store = openPostgresStore(vars.DATABASE_URL, { poolSize: 1, schema });
    const key = (
      await new ApiKeyService(store, 0).issue({
        actor: "operator:test",
        accountName: "sla",
        mode: "live",
        burst: 1000,
        ratePerMinute: 1000,
      })
    ).key;
    await store.close();
    // Live emergency orders with no live contractor: they wait for a dispatcher, their clocks running.
    const ids: string[] = [];
    for (let i = 0; i < ORDERS; i++) {
      const res = await fetch(`${[a, b][i % 2]?.baseUrl}/api/dispatch/v1/order`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({
          trade: "plumbing",
          urgency: "emergency",
          location: { state: "TX", zip: "78701" },
          description: "Burst pipe",
        }),
      });
      const body = (await res.json()) as { order_id: string; status: string };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.status).toBe("needs_dispatcher");
      ids.push(body.order_id);
    }
    // Twenty minutes ago, to respond in fifteen: every respond clock is past its deadline at once.
    const received = new Date(Date.now() - 20 * 60_000);
    await admin(postgresUrl(), async (c) => {
      // The evals triggers name their tables unqualified.
      await c.query(`SET search_path TO ${schema}`);
      await c.query("UPDATE orders SET received_at = $1, respond_by = $2, arrive_by = $3", [
        received.toISOString(),
        new Date(received.getTime() + 15 * 60_000).toISOString(),
        new Date(received.getTime() + 120 * 60_000).toISOString(),
      ]);
    });
    const until = Date.now() + 20_000;
    while ((await breachedCounts(schema)).size < ORDERS) {
      if (Date.now() > until) throw new Error(`not every clock fired:\n${a.output()}\n${b.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Stopping drains each watch's round in progress: whatever they would write is written.
    await Promise.all([a.kill(), b.kill()]);
    const counts = await breachedCounts(schema);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const events = await admin(postgresUrl(), (c) =>
      c.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${schema}.order_events WHERE type = 'order.sla_breached'`,
      ),
    );
    expect(Number(events.rows[0]?.n)).toBe(ORDERS);
  }, 120_000);
});
