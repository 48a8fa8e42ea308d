// Event stream across processes (console issue's budget): how long an order's event takes from its commit
// on one server process to a dispatch team's open stream (GET /api/events) held by another process on the
// same PostgreSQL (LISTEN/NOTIFY). Target: under 1 s at p99.
//
//   npm run bench:events     (BENCH_DATABASE_URL, BENCH_REDIS_URL default to the local test services;
//                             BENCH_EVENTS orders, default 400; BENCH_EVENTS_CONCURRENCY, default 8)
//
// Two processes A and B on one fresh schema. A stream is held on B with a dispatcher key (it sees every
// order of its mode). Orders are created on A, BENCH_EVENTS_CONCURRENCY at a time. For each order two
// spans are read, both on this process's clock:
// - upper bound: from sending the order's request to A until its first event arrives on B's
//   stream (the commit happens inside this span);
// - lower bound: from A's answer (sent once the commit is durable) until the event arrives on B.
// The commit-to-stream time lies between them; the target is judged on the upper bound.

import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ApiKeyService } from "../src/auth/api-key-service.js";
import { openPostgresStore } from "../src/storage/postgres.js";
import { DIST, median, type Server, start, stop } from "./lib.js";

const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const ORDERS = Number(process.env.BENCH_EVENTS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_EVENTS_CONCURRENCY ?? 8);
const WARMUP = 20;

/** Holds GET /api/events open and calls `onOrderEvent` with each event's order id as it arrives. */
function holdStream(
  baseUrl: string,
  key: string,
  onOrderEvent: (orderId: string) => void,
): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/api/events`, {
      headers: { "x-api-key": key, accept: "text/event-stream" },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET /api/events answered ${res.statusCode}`));
        return;
      }
      res.setEncoding("utf8");
      let buffer = "";
      res.on("data", (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let data = "";
          for (const line of block.split("\n")) if (line.startsWith("data:")) data += line.slice(5).trim();
          if (data === "") continue; // a heartbeat comment
          const parsed = JSON.parse(data) as { data?: { order?: { order_id?: string } } };
          const id = parsed.data?.order?.order_id;
          if (id !== undefined) onOrderEvent(id);
        }
      });
      resolve(() => req.destroy());
    });
    req.end();
  });
}

async function issueKeys(url: string, schema: string): Promise<{ caller: string; dispatcher: string }> {
  const store = openPostgresStore(url, { poolSize: 1, schema });
  await store.migrate();
  const keys = new ApiKeyService(store, 0);
  const issue = (accountName: string, kind?: "dispatcher") =>
    keys.issue({
      actor: "operator:bench",
      accountName,
      mode: "test",
      ratePerMinute: 100_000_000,
      burst: 100_000_000,
      ...(kind ? { kind } : {}),
    });
  const caller = (await issue("bench")).key;
  const dispatcher = (await issue("bench-dispatch", "dispatcher")).key;
  await store.close();
  return { caller, dispatcher };
}

function quantile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const schema = `fd_bench_ev_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const dataDir = mkdtempSync(join(tmpdir(), "fd-bench-ev-"));
  const servers: Server[] = [];
  try {
    const url = new URL(DATABASE_URL);
    url.searchParams.set("options", `-c search_path=${schema}`);
    const { caller, dispatcher } = await issueKeys(url.toString(), schema);
    const env = {
      DATABASE_URL: url.toString(),
      DATABASE_POOL_SIZE: "4",
      REDIS_URL,
      REDIS_KEY_PREFIX: `fsd:bench:${schema}:`,
      DATA_DIR: dataDir,
      // Orders stay as created: no simulated contractor adds traffic of its own.
      SANDBOX_SIMULATION: "false",
    };
    const main = join(DIST, "src/main.js");
    const a = await start(main, env, "/readyz");
    servers.push(a);
    const b = await start(main, env, "/readyz");
    servers.push(b);

    const sentAt = new Map<string, number>();
    const answeredAt = new Map<string, number>();
    const arrived = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    const close = await holdStream(b.url, dispatcher, (id) => {
      // The order's first event, whichever it is (created, offered or needs_dispatcher).
      if (arrived.has(id)) return;
      arrived.set(id, performance.now());
      waiting.get(id)?.();
    });

    let made = 0;
    const one = async (i: number) => {
      const t0 = performance.now();
      const res = await fetch(`${a.url}/api/dispatch/v1/order`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": caller },
        body: JSON.stringify({
          trade: "plumbing",
          location: { state: "TX", zip: "78701" },
          urgency: "routine",
          description: `Bench order ${i}`,
        }),
      });
      const t1 = performance.now();
      if (res.status !== 200) throw new Error(`order answered ${res.status}: ${await res.text()}`);
      const id = ((await res.json()) as { order_id: string }).order_id;
      sentAt.set(id, t0);
      answeredAt.set(id, t1);
      if (!arrived.has(id)) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no event for ${id} on B within 30 s`)), 30_000);
          waiting.set(id, () => {
            clearTimeout(timer);
            resolve();
          });
        });
        waiting.delete(id);
      }
      made++;
    };
    const total = WARMUP + ORDERS;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) await one(next++);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    close();

    // The first WARMUP orders (connections, JIT) are not counted.
    const ids = [...sentAt.keys()].sort((x, y) => (sentAt.get(x) ?? 0) - (sentAt.get(y) ?? 0)).slice(WARMUP);
    const upper = ids
      .map((id) => (arrived.get(id) ?? Number.NaN) - (sentAt.get(id) ?? 0))
      .sort((x, y) => x - y);
    const lower = ids
      .map((id) => Math.max(0, (arrived.get(id) ?? Number.NaN) - (answeredAt.get(id) ?? 0)))
      .sort((x, y) => x - y);
    const fmt = (xs: number[]) =>
      `p50 ${median(xs).toFixed(1)}  p95 ${quantile(xs, 0.95).toFixed(1)}  p99 ${quantile(xs, 0.99).toFixed(1)}  max ${quantile(xs, 1).toFixed(1)}`;
    const p99 = quantile(upper, 0.99);
    process.stdout.write(
      `node ${process.version}; PostgreSQL, two server processes (A writes, B holds a dispatcher's stream); ` +
        `${ids.length} orders measured after ${WARMUP} warm-up, ${CONCURRENCY} at a time, ${made} in ${seconds.toFixed(1)} s\n` +
        `request sent on A -> event on B (upper bound), ms: ${fmt(upper)}\n` +
        `answer from A -> event on B (lower bound), ms:    ${fmt(lower)}\n` +
        `target: commit -> another process's stream p99 < 1000 ms: ${p99 < 1000 ? "ok" : "MISS"} (upper bound ${p99.toFixed(1)} ms)\n`,
    );
    if (p99 >= 1000) process.exitCode = 1;
  } finally {
    for (const s of servers) await stop(s);
    rmSync(dataDir, { recursive: true, force: true });
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

await main();
