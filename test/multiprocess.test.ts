import { testRecord } from "./helpers/fixtures.js";
// Several processes on one PostgreSQL and one Redis behave as one: the same number of requests admitted
// on a key, one order per idempotency key, and `--workers 2` serving. Needs TEST_DATABASE_URL and
// TEST_REDIS_URL (CI sets both).

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ApiKeyService } from "../src/auth/api-key-service.js";
import { openPostgresStore } from "../src/storage/postgres.js";
import { type ChildServer, startChildServer } from "./helpers/child-server.js";
import { rfcVerifyConsistency } from "./helpers/rfc9162.js";
import { admin, postgresUrl, runSchemaPrefix } from "./helpers/test-store.js";

const ready = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const servers: ChildServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.kill();
});

async function freshDatabaseUrl(): Promise<{ url: string; schema: string }> {
  const schema = `${runSchemaPrefix()}mp${Math.random().toString(36).slice(2, 10)}`;
  await admin(postgresUrl(), (c) => c.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(postgresUrl());
  url.searchParams.set("options", `-c search_path=${schema}`);
  return { url: url.toString(), schema };
}

async function env(): Promise<{ vars: Record<string, string>; schema: string }> {
  const { url, schema } = await freshDatabaseUrl();
  return {
    schema,
    vars: {
      DATABASE_URL: url,
      DATABASE_POOL_SIZE: "4",
      REDIS_URL: process.env.TEST_REDIS_URL as string,
      REDIS_KEY_PREFIX: `fsd:test:${schema}:`,
      REDIS_TIMEOUT_MS: "2000",
      LOG_LEVEL: "info",
      // One host's processes share the data directory, and with it the audit log's signing key.
      DATA_DIR: mkdtempSync(join(tmpdir(), "fd-mp-")),
    },
  };
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.skipIf(!ready)("several processes on one PostgreSQL and one Redis", () => {
  it("admit what one process would on one key, and create one order per idempotency key", async () => {
    const { vars, schema } = await env();
    const a = await startChildServer(vars);
    servers.push(a);
    const key = (await a.waitFor(/(fsd_test_[0-9A-Za-z]{36})/))[1] ?? "";
    const b = await startChildServer(vars);
    servers.push(b);
    const urls = [a.baseUrl, b.baseUrl];

    const job = { trade: "plumbing", location: { state: "TX", zip: "78701" } };
    const started = performance.now();
    const quotes = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        post(urls[i % 2] as string, "/api/dispatch/v1/quote", job, { "x-api-key": key }),
      ),
    );
    const admitted = quotes.filter((r) => r.status === 200).length;
    expect(quotes.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    // One process admits the burst of 200, plus what refilled while the requests ran (100 a minute: one
    // every 600 ms), however slow the machine made them.
    const refilled = Math.ceil((performance.now() - started) / 600);
    expect(admitted).toBeGreaterThanOrEqual(199);
    expect(admitted).toBeLessThanOrEqual(200 + refilled);

    // A key with room for the race, so the first key's spent bucket does not interfere.
    const store = openPostgresStore(vars.DATABASE_URL as string, { poolSize: 1, schema });
    const orderKey = (
      await new ApiKeyService(store, 0).issue({
        actor: "operator:test",
        accountName: "race",
        mode: "test",
        ratePerMinute: 100_000,
        burst: 100_000,
      })
    ).key;
    await store.close();
    const other = await startChildServer({ ...vars });
    servers.push(other);
    const order = { ...job, description: "One order, many retries" };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post([a.baseUrl, b.baseUrl, other.baseUrl][i % 3] as string, "/api/dispatch/v1/order", order, {
          "x-api-key": orderKey,
          "idempotency-key": "race-1",
        }),
      ),
    );
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const created = new Set(results.filter((r) => r.status === 200).map((r) => r.body.order_id));
    expect(created.size).toBe(1);
    const counted = await admin(postgresUrl(), (c) =>
      c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.orders WHERE description = $1`, [
        order.description,
      ]),
    );
    expect(counted.rows[0]?.n).toBe(1);
  }, 120_000);
});

describe.skipIf(!ready)("one audit log across processes", () => {
  it("sequences every process's records into one tree whose checkpoints each extend the previous", async () => {
    const { vars, schema } = await env();
    const fast = { ...vars, AUDIT_SEQUENCE_INTERVAL_MS: "20" };
    const a = await startChildServer(fast);
    servers.push(a);
    const b = await startChildServer(fast);
    servers.push(b);
    const store = openPostgresStore(vars.DATABASE_URL as string, { poolSize: 2, schema });
    try {
      const key = (
        await new ApiKeyService(store, 0).issue({
          actor: "operator:test",
          accountName: "auditor",
          mode: "test",
          ratePerMinute: 100_000,
          burst: 100_000,
        })
      ).key;
      const job = { trade: "electrical", location: { state: "CA", zip: "94103" } };
      const seals: string[] = [];
      for (let round = 0; round < 6; round++) {
        const quotes = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            post([a.baseUrl, b.baseUrl][i % 2] as string, "/api/dispatch/v1/quote", job, {
              "x-api-key": key,
            }),
          ),
        );
        seals.push(...quotes.map((q) => q.body.seal as string));
      }
      await vi.waitFor(async () => expect(await store.audit.pendingAuditCount()).toBe(0), {
        timeout: 20_000,
      });

      const checkpoints = await store.audit.listCheckpoints(0, 10_000);
      expect(checkpoints.length).toBeGreaterThan(2);
      const last = checkpoints[checkpoints.length - 1];
      expect(Number(last?.tree_size)).toBeGreaterThanOrEqual(seals.length);
      for (let i = 1; i < checkpoints.length; i++) {
        const [first, second] = [checkpoints[i - 1], checkpoints[i]] as const;
        const via = [a.baseUrl, b.baseUrl][i % 2] as string;
        const res = await fetch(
          `${via}/api/attest/consistency?first=${first?.tree_size}&second=${second?.tree_size}`,
        );
        const proof = (await res.json()) as { hashes: string[] };
        expect(
          rfcVerifyConsistency(
            Number(first?.tree_size),
            Number(second?.tree_size),
            Buffer.from(first?.root_hash as string, "hex"),
            Buffer.from(second?.root_hash as string, "hex"),
            proof.hashes.map((h) => Buffer.from(h, "hex")),
          ),
          `${first?.tree_size} -> ${second?.tree_size}`,
        ).toBe(true);
      }
      for (const [i, seal] of seals.filter((_, i) => i % 20 === 0).entries()) {
        const v = await (await fetch(`${[a.baseUrl, b.baseUrl][i % 2]}/api/attest/verify/${seal}`)).json();
        expect((v as { status: string }).status).toBe("verified");
      }
    } finally {
      await store.close();
    }
  }, 120_000);
});

describe.skipIf(!ready)("contractor capacity across processes", () => {
  it("never assigns a contractor more jobs than its capacity when two processes take orders at once", async () => {
    const { vars, schema } = await env();
    const a = await startChildServer(vars);
    servers.push(a);
    const store = openPostgresStore(vars.DATABASE_URL as string, { poolSize: 1, schema });
    await store.contractors.upsert(
      [
        {
          id: "ctr_capacity3",
          pool: "live",
          externalRef: "cap-3",
          name: "Three Jobs Plumbing",
          email: null,
          phone: null,
          homeZip: "78701",
          trades: ["plumbing"],
          states: ["TX"],
          lat: 30.27,
          lon: -97.74,
          serviceRadiusMiles: null,
          hourlyRateCents: 9000,
          emergencyCapable: true,
          maxActiveJobs: 3,
          rating: 4.5,
          responseMinutes: 60,
          active: true,
          excluded: false,
          insuranceVerifiedUntil: "2099-12-31",
          licenseVerifiedUntil: "2099-12-31",
        },
      ],
      () => testRecord(),
    );
    const key = (
      await new ApiKeyService(store, 0).issue({
        actor: "operator:test",
        accountName: "cap",
        mode: "live",
        burst: 1000,
        ratePerMinute: 1000,
      })
    ).key;
    await store.close();
    // Started after the import: both processes load the contractor with no jobs.
    const b = await startChildServer(vars);
    servers.push(b);
    await fetch(`${a.baseUrl}/readyz`);
    const c = await startChildServer(vars);
    servers.push(c);
    const order = { trade: "plumbing", location: { state: "TX", zip: "78701" }, description: "Leak" };
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post([b.baseUrl, c.baseUrl][i % 2] as string, "/api/dispatch/v1/order", order, { "x-api-key": key }),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    // Both processes answer the same handle for the contractor (they share the signing key it comes from).
    const matched = results.filter((r) => r.body.contractor_ref !== null);
    expect(matched).toHaveLength(3);
    expect(new Set(matched.map((r) => r.body.contractor_ref)).size).toBe(1);
    expect(results.filter((r) => r.body.status === "needs_dispatcher")).toHaveLength(17);
  }, 120_000);
});

describe.skipIf(!ready)("--workers", () => {
  it("runs N processes sharing the port and stops them all cleanly", async () => {
    const { vars } = await env();
    const server = await startChildServer(vars, 110_000, ["--workers", "2"]);
    servers.push(server);
    await server.waitFor(/with 2 workers/);
    const key = (await server.waitFor(/(fsd_test_[0-9A-Za-z]{36})/))[1] ?? "";
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        post(
          server.baseUrl,
          "/api/dispatch/v1/order",
          { trade: "hvac", location: { state: "NY" }, description: "x" },
          {
            "x-api-key": key,
          },
        ),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    // The primary's metrics listener reports the whole cluster's counts, scrape after scrape; the API
    // port does not serve them.
    const metricsUrl = (await server.waitFor(/metrics listening at (http:\/\/[^\s"]+)/))[1] ?? "";
    expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(404);
    for (let i = 0; i < 4; i++) {
      const text = await (await fetch(metricsUrl)).text();
      const line = text
        .split("\n")
        .find((l) => l.startsWith("fsd_http_requests_total{") && l.includes('operation="dispatchOrder"'));
      expect(line, text).toBeDefined();
      expect(Number(line?.split(" ").pop())).toBe(20);
      expect(text).toMatch(/^fsd_rate_limiter_fallback 0$/m);
    }
    const exited = new Promise<number | null>((resolve) => server.proc.once("exit", (code) => resolve(code)));
    server.proc.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 120_000);

  it("stops with one clean shutdown message on a terminal's Ctrl-C (SIGINT to every process of the group)", async () => {
    const { vars } = await env();
    const server = await startChildServer(vars, 110_000, ["--workers", "2"], { detached: true });
    servers.push(server);
    await server.waitFor(/with 2 workers/);
    const pid = server.proc.pid as number;
    const exited = new Promise<number | null>((resolve) => server.proc.once("exit", (code) => resolve(code)));
    process.kill(-pid, "SIGINT"); // the group: the primary and both workers, as the terminal sends it
    expect(await exited).toBe(0);
    await server.closed;
    const printed = server.output() + server.errors();
    expect(printed).not.toMatch(/second SIG/);
    expect(printed).not.toMatch(/killed by timeout|worker died/);
    expect(printed.match(/stopping workers|shutting down/g)).toEqual(["stopping workers"]);
  }, 120_000);

  it("refuses several workers without a shared store and limiter", async () => {
    await expect(startChildServer({ DATA_DIR: "/tmp/fd-never" }, 30_000, ["--workers", "2"])).rejects.toThrow(
      /needs DATABASE_URL and REDIS_URL/,
    );
  });
});
