// Maintenance plans' generation across processes: two servers on one PostgreSQL (and one Redis), each
// running the generator every 25 ms, create each occurrence's order once in total: one order per
// occurrence, no order without its occurrence. Needs TEST_DATABASE_URL and TEST_REDIS_URL (CI sets both).
// The test waits for the plan to be generated through its horizon, stops both servers (which drains their
// rounds in progress), then counts.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ApiKeyService } from "../src/auth/api-key-service.js";
import { openPostgresStore } from "../src/storage/postgres.js";
import { type ChildServer, startChildServer } from "./helpers/child-server.js";
import { liveContractor, testRecord } from "./helpers/fixtures.js";
import { admin, postgresUrl, runSchemaPrefix } from "./helpers/test-store.js";

const ready = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const servers: ChildServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.kill();
});

describe.skipIf(!ready)("maintenance plans across processes", () => {
  it("generate each occurrence's order once in total from two servers' generators", async () => {
    const schema = `${runSchemaPrefix()}pm${Math.random().toString(36).slice(2, 10)}`;
    await admin(postgresUrl(), (c) => c.query(`CREATE SCHEMA ${schema}`));
    const url = new URL(postgresUrl());
    url.searchParams.set("options", `-c search_path=${schema}`);
    const vars = {
      DATABASE_URL: url.toString(),
      DATABASE_POOL_SIZE: "4",
      REDIS_URL: process.env.TEST_REDIS_URL as string,
      REDIS_KEY_PREFIX: `fsd:test:${schema}:`,
      REDIS_TIMEOUT_MS: "2000",
      DATA_DIR: mkdtempSync(join(tmpdir(), "fd-pm-")),
      SANDBOX_SIMULATION: "false",
      MAINTENANCE_INTERVAL_MS: "25",
    };
    // Two live HVAC technicians in San Francisco who work any time, in the store before the servers load
    // their pool.
    const store = openPostgresStore(vars.DATABASE_URL, { poolSize: 1, schema });
    await store.migrate();
    await store.contractors.insert(
      [0, 1].map((i) => liveContractor({ id: `ctr_pmmp${i}`, trades: ["hvac"], rating: 4.9 - i })),
      testRecord(),
    );
    const key = (
      await new ApiKeyService(store, 0).issue({
        actor: "operator:test",
        accountName: "pm",
        mode: "live",
        burst: 1000,
        ratePerMinute: 1000,
      })
    ).key;
    await store.close();
    const a = await startChildServer(vars);
    servers.push(a);
    const b = await startChildServer(vars);
    servers.push(b);
    const post = async (base: string, path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as Record<string, unknown>;
      expect(res.status, JSON.stringify(json)).toBe(200);
      return json;
    };
    const site = await post(a.baseUrl, "/api/dispatch/v1/sites", {
      name: "Store #9",
      address: "1 Market St",
      city: "San Francisco",
      state: "CA",
      zip: "94105",
    });
    // Every day: about thirty occurrences inside the horizon, each claimed by whichever server gets there.
    const plan = await post(b.baseUrl, "/api/dispatch/v1/plans", {
      site_id: site.site_id,
      trade: "hvac",
      name: "Daily check",
      description: "Walk the rooftop units",
      duration_minutes: 60,
      recurrence: "FREQ=DAILY",
      window: { days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], start: "08:00", end: "16:00" },
      horizon_days: 30,
    });
    const generatedUntil = async () =>
      (
        await admin(postgresUrl(), (c) =>
          c.query<{ g: string | null }>(
            `SELECT generated_until AS g FROM ${schema}.maintenance_plans WHERE id = $1`,
            [plan.plan_id],
          ),
        )
      ).rows[0]?.g ?? null;
    const until = Date.now() + 60_000;
    while ((await generatedUntil()) === null) {
      if (Date.now() > until) throw new Error(`the plan was not generated:\n${a.output()}\n${b.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.all([a.kill(), b.kill()]);
    const counts = await admin(postgresUrl(), async (c) => {
      const occurrences = await c.query<{ state: string; n: string }>(
        `SELECT state, count(*) AS n FROM ${schema}.plan_occurrences WHERE plan_id = $1 GROUP BY state`,
        [plan.plan_id],
      );
      const orders = await c.query<{ n: string; distinct_refs: string }>(
        `SELECT count(*) AS n, count(DISTINCT reference_id) AS distinct_refs FROM ${schema}.orders WHERE reference_id LIKE $1`,
        [`${plan.plan_id}/%`],
      );
      const linked = await c.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${schema}.orders o JOIN ${schema}.plan_occurrences p ON p.order_id = o.id WHERE p.plan_id = $1`,
        [plan.plan_id],
      );
      return {
        byState: Object.fromEntries(occurrences.rows.map((r) => [r.state, Number(r.n)])),
        orders: Number(orders.rows[0]?.n),
        distinctRefs: Number(orders.rows[0]?.distinct_refs),
        linked: Number(linked.rows[0]?.n),
      };
    });
    expect(counts.byState.generated ?? 0).toBeGreaterThanOrEqual(25);
    // One order per generated occurrence, each linked to it: none created twice, none left over.
    expect(counts.orders).toBe(counts.byState.generated);
    expect(counts.distinctRefs).toBe(counts.orders);
    expect(counts.linked).toBe(counts.orders);
  }, 120_000);
});
