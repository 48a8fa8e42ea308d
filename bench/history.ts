// Years of history (issue 30): the service on a store with a million orders against the same service on a
// fresh store, in one run, same process type (the service's own server process, `npm start`'s flags),
// same load, one store after the other.
//
//   npm run bench:history
//
// Settings (environment):
//   BENCH_HISTORY_ORDERS=1000000   history orders (about 7.5 audit records each: 7.5 M records and leaves)
//   BENCH_HISTORY_YEARS=2          spread evenly over this many years back from now
//   BENCH_HISTORY_DIR=/path        keep the large store there and reuse it on the next run (built if it
//                                  holds fewer history orders); without it, a temporary directory
//   BENCH_HISTORY_BACKLOG=5000000  old order events (older than WEBHOOK_RETENTION_DAYS) written before the
//                                  retention phase, into each store
//   BENCH_HISTORY_DAY_JOBS=3000    scheduled orders in the optimiser's day
//   BENCH_SECONDS=10               seconds of each load
//   BENCH_HISTORY_SAMPLE=2000      distinct orders / seals / sizes asked per read load
//
// Building the large store (bench/history-store.ts): 1 M orders and ~7.5 M sealed audit records with
// their leaves, nodes, tiles and signed checkpoints, order events for the last 30 days, through the
// evals' rollups rebuilt by migration 0027's backfill; about 2.5-3 ms a order on this 2-core VM shared
// with other work, so about 50 minutes for 1 M (bench/RESULTS.md has the figures).
// Reuse it with BENCH_HISTORY_DIR: the measurement itself takes 10-15 minutes (both stores, 10 s loads).
//
// Phases, on each store (fresh first), with the server's event-loop delay (bench/loop-delay.ts,
// monitorEventLoopDelay at 1 ms: max and p99) and GET /healthz's latency (polled every 25 ms from this
// process) over each phase, and the server's RSS sampled throughout:
//   1. orders (bursts the pool matches, the offered orders worked to completed between bursts) and quotes:
//      server CPU per request (/proc, all threads) and p99;
//   2. status reads of the newest and of the oldest orders; the audit listing (newest page, and one old
//      order's records); the dispatch board's list (GET /api/dispatcher/v1/orders, the console's call) newest first
//      and of one status in flight (accepted, as the board asks when it opens);
//   3. verify of recent and old seals, consistency proofs from an old and a recent size;
//   4. evals rolling 7/30/90 days uncached (each period asked once every 5.1 s, past the report cache):
//      latency, server CPU; and a check of the 90-day report against a direct count in the store;
//   5. the server restarted on the store with BENCH_HISTORY_BACKLOG old order events to purge, and a day of
//      BENCH_HISTORY_DAY_JOBS scheduled orders: the order load while retention drains, then one optimiser
//      call (POST /api/dispatcher/v1/schedule/optimize, time_limit_ms 2000).
// Then a table fresh vs large: each figure, the ratio, the issue's target and whether it is met.

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { ApiKeyService } from "../src/auth/api-key-service.js";
import { loadConfig } from "../src/config.js";
import { zonedInstant } from "../src/domain/time/local-time.js";
import { openStore } from "../src/services/create-services.js";
import { buildHistory, historyOrders, writeBacklog } from "./history-store.js";
import {
  auditSealed,
  CONNECTIONS,
  closeReaders,
  DIST,
  drive,
  type Figures,
  figuresOf,
  type Load,
  type LoopDelay,
  loopDelay,
  SERVICE_NODE_FLAGS,
  type Server,
  sampleIndices,
  start,
  stop,
  us,
  WARMUP_SECONDS,
} from "./lib.js";
import {
  benchEnv,
  demandJobs,
  driveWorked,
  matchedOrderLoad,
  type Placed,
  type Prepared,
  prepareStore,
  Releaser,
} from "./workload.js";

const ORDERS = Number(process.env.BENCH_HISTORY_ORDERS ?? 1_000_000);
const YEARS = Number(process.env.BENCH_HISTORY_YEARS ?? 2);
const BACKLOG = Number(process.env.BENCH_HISTORY_BACKLOG ?? 5_000_000);
const DAY_JOBS = Number(process.env.BENCH_HISTORY_DAY_JOBS ?? 3_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SAMPLE = Number(process.env.BENCH_HISTORY_SAMPLE ?? 2_000);
const BURST_SHARE = 0.04; // as bench/run.ts: bursts the pool matches
const DAY = 86_400_000;
const EVALS_ROUNDS = 3;
const EVALS_CACHE_GAP_MS = 5_100; // past the report's 5 s cache

type Loop = LoopDelay;
interface Phase {
  name: string;
  loop: Loop;
  healthzMaxMs: number;
  healthzN: number;
}
/** One figure of one store: its value, and what the table compares. */
interface Figure {
  name: string;
  unit: string;
  value: number;
  /** The issue's target: `ratio` (large / fresh at most), `max` (large's value at most). */
  target?: { ratio?: number; max?: number };
}

function rssMiB(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** GET /healthz every 25 ms while the server runs, its latencies kept per phase; RSS every poll. */
class Watch {
  private latencies: number[] = [];
  private running = true;
  private readonly done: Promise<void>;
  rssMax = 0;
  constructor(server: Server) {
    this.done = (async () => {
      while (this.running) {
        const t0 = performance.now();
        try {
          await (await fetch(`${server.url}/healthz`)).arrayBuffer();
          this.latencies.push(performance.now() - t0);
        } catch {
          this.latencies.push(performance.now() - t0);
        }
        this.rssMax = Math.max(this.rssMax, rssMiB(server.proc.pid));
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
  }
  take(): { max: number; n: number } {
    const l = this.latencies;
    this.latencies = [];
    return { max: Math.max(0, ...l), n: l.length };
  }
  async close(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/** A few of `file`'s rows, read on a read-only connection (costs the server nothing). */
function read<T>(file: string, query: string, ...args: unknown[]): T[] {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(query).all(...args) as T[];
  } finally {
    db.close();
  }
}

/** A dispatcher's key (the board's and the optimiser's caller), issued in the store under `env`. */
async function dispatcherKey(env: Record<string, string>): Promise<string> {
  const store = openStore(loadConfig({ ...process.env, ...env }));
  try {
    const keys = new ApiKeyService(store, 0);
    const issued = await keys.issue({
      accountName: "ops",
      mode: "live",
      label: "bench dispatcher",
      ratePerMinute: 100_000_000,
      burst: 100_000_000,
      actor: "operator:cli",
      kind: "dispatcher",
    });
    return issued.key;
  } finally {
    await store.close();
  }
}

/** A weekday three days ahead (the optimiser's day) and an instant of it in Los Angeles. */
function optimiserDay(): { date: string; la: (hour: number) => string } {
  const day = new Date(Date.now() + 3 * DAY);
  while (day.getUTCDay() === 0 || day.getUTCDay() === 6) day.setUTCDate(day.getUTCDate() + 1);
  const date = day.toISOString().slice(0, 10);
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const la = (hour: number) =>
    zonedInstant("America/Los_Angeles", { year: y, month: m, day: d, hour, minute: 0 }).toISOString();
  return { date, la };
}

/**
 * The optimiser's day, as bench/day.ts seeds it: scheduled orders placed in Los Angeles through the API
 * (while the pool takes them), then copies of those (new id and window) written into the store with the
 * server stopped, up to `count`.
 */
async function placeDay(server: Server, callerKey: string, count: number): Promise<string[]> {
  const { la } = optimiserDay();
  const zips = ["90012", "90017", "90028", "90036", "90046", "90057", "90064", "90210", "91101", "90802"];
  const trades = ["plumbing", "electrical", "hvac", "handyman"];
  const ids: string[] = [];
  for (let i = 0; i < Math.min(count, 60); i++) {
    const startHour = 8 + (i % 7);
    const res = await fetch(`${server.url}/api/dispatch/v1/order`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": callerKey },
      body: JSON.stringify({
        trade: trades[i % trades.length],
        location: { state: "CA", zip: zips[i % zips.length], address: `${i} Main St`, name: `Site ${i}` },
        description: "Bench job",
        urgency: "scheduled",
        service_window: { start: la(startHour), end: la(startHour + 4) },
      }),
    });
    const body = (await res.json()) as { order_id?: string };
    if (res.ok && body.order_id) ids.push(body.order_id);
  }
  return ids;
}

function copyDay(file: string, models: readonly string[], count: number): number {
  if (models.length === 0) return 0;
  const { la } = optimiserDay();
  const db = new SQLite(file);
  try {
    const columns = (
      db.prepare("select name from pragma_table_info('orders')").pluck().all() as string[]
    ).filter((c) => !["id", "reference_id", "window_start", "window_end"].includes(c));
    const copy = db.prepare(
      `insert into orders (id, reference_id, window_start, window_end, ${columns.join(", ")})
       select ?, null, ?, ?, ${columns.join(", ")} from orders where id = ?`,
    );
    let n = 0;
    db.transaction(() => {
      for (let i = models.length; i < count; i++, n++) {
        const h = 8 + (i % 7);
        copy.run(
          `ord_day${i.toString(36).padStart(6, "0")}${Date.now().toString(36)}`,
          la(h),
          la(h + 4),
          models[i % models.length],
        );
      }
    })();
    return n;
  } finally {
    db.close();
  }
}

interface Store {
  label: string;
  dir: string;
  prepared: Prepared;
  opsKey: string;
}

/** Every phase on one store; its figures and the phases' loop and /healthz figures. */
async function measure(
  s: Store,
): Promise<{ figures: Figure[]; phases: Phase[]; rss: number; evalsCheck: string }> {
  const file = join(s.dir, "field-dispatch.sqlite");
  const delayFile = join(s.dir, "loop-delay.json");
  const env: Record<string, string> = {
    ...benchEnv(s.dir),
    METRICS_PORT: "off",
    LOOP_DELAY_FILE: delayFile,
    LOG_LEVEL: "warn",
  };
  const flags = [...SERVICE_NODE_FLAGS, "--import", join(DIST, "bench/loop-delay.js")];
  const figures: Figure[] = [];
  const phases: Phase[] = [];
  const { prepared } = s;
  const caller = { "x-api-key": prepared.callerKey };
  const ops = { "x-api-key": s.opsKey };
  const jobs = demandJobs(prepared.byBucket, 20_000);
  const burst = Math.floor(prepared.capacity * BURST_SHARE);
  let placed: Placed[] = [];
  const orderLoad: Load = matchedOrderLoad({
    name: "order",
    headers: caller,
    jobs,
    burst,
    contractorOfRef: prepared.contractorOfRef,
    onAnswer: ({ placed: p }) => {
      if (p) placed.push(p);
    },
  });
  const quoteLoad: Load = {
    name: "quote",
    method: "POST",
    path: "/api/dispatch/v1/quote",
    headers: caller,
    bodies: jobs.map((j) => j.quote),
  };

  let server = await start(join(DIST, "src/main.js"), env, "/readyz", [], flags);
  let watch = new Watch(server);
  let seq = 0;
  let rss = 0;
  /** Runs `body` as a named phase: the loop's delay and /healthz over it. */
  const phase = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
    await loopDelay(server, delayFile, ++seq);
    watch.take();
    const out = await body();
    const loop = await loopDelay(server, delayFile, ++seq);
    const h = watch.take();
    phases.push({ name, loop, healthzMaxMs: h.max, healthzN: h.n });
    return out;
  };
  /** The order load for `seconds`, in bursts, the offered orders worked to completed between them. */
  const orders = async (seconds: number): Promise<Figures> => {
    const releaser = new Releaser(server.url, prepared.contractorKeys);
    const runs = await driveWorked(server, orderLoad, seconds, releaser, () => {
      const done = placed;
      placed = [];
      return done;
    });
    await releaser.close();
    return figuresOf(runs);
  };
  const reads = (name: string, paths: string[], headers: Record<string, string>): Load => ({
    name,
    method: "GET",
    path: paths[0] as string,
    paths,
    headers,
    maxRequests: paths.length,
  });
  const perRequest = (name: string, f: Figures, target?: Figure["target"]) => {
    figures.push({
      name: `${name}: cpu/req`,
      unit: "us",
      value: f.cpuUsPerRequest ?? Number.NaN,
      ...(target ? { target } : {}),
    });
    figures.push({ name: `${name}: p99`, unit: "ms", value: f.p99 });
    if (f.non2xx + f.errors > 0)
      process.stdout.write(`  ${s.label} ${name}: ${f.non2xx} non-2xx, ${f.errors} errors\n`);
  };
  let evalsCheck = "";
  try {
    await orders(WARMUP_SECONDS);
    perRequest("order", await phase("orders", () => orders(SECONDS)), { ratio: 1.1 });
    await drive(server, quoteLoad, WARMUP_SECONDS);
    perRequest("quote", await phase("quotes", () => drive(server, quoteLoad, SECONDS)));

    // Reads: the account's newest and oldest orders, its audit records, the board.
    const account = read<{ id: string }>(file, "select id from accounts where name = 'bench'")[0]?.id;
    const ids = (order: "asc" | "desc") =>
      read<{ id: string }>(
        file,
        `select id from orders where account_id = ? order by received_at ${order} limit ?`,
        account,
        SAMPLE,
      ).map((r) => `/api/dispatch/v1/orders/${r.id}`);
    const recentIds = ids("desc");
    const oldIds = ids("asc");
    const oldOrder = /orders\/(.+)$/.exec(oldIds[0] as string)?.[1] as string;
    await auditSealed(file);
    await phase("reads", async () => {
      perRequest(
        "status, recent orders",
        await drive(server, reads("status recent", recentIds, caller), SECONDS),
      );
      perRequest("status, old orders", await drive(server, reads("status old", oldIds, caller), SECONDS));
      perRequest(
        "audit list, newest page",
        await drive(
          server,
          { name: "audit", method: "GET", path: "/api/audit?limit=50", headers: caller },
          SECONDS,
        ),
      );
      perRequest(
        "audit list, an old order",
        await drive(
          server,
          {
            name: "audit old",
            method: "GET",
            path: `/api/audit?order_id=${oldOrder}&limit=50`,
            headers: caller,
          },
          SECONDS,
        ),
      );
      perRequest(
        "board list (dispatcher)",
        await drive(
          server,
          { name: "board", method: "GET", path: "/api/dispatcher/v1/orders?limit=50", headers: ops },
          SECONDS,
        ),
      );
      // The board asks for every status in flight when it opens; accepted is one of the rarest in a
      // store of finished work, so its list walked every order of the mode before orders_status_idx.
      perRequest(
        "board list, accepted",
        await drive(
          server,
          {
            name: "board accepted",
            method: "GET",
            path: "/api/dispatcher/v1/orders?status=accepted&limit=200",
            headers: ops,
          },
          SECONDS,
        ),
      );
    });

    // Verify and proofs: seals and sizes of the newest and of the oldest part of the log.
    const size = read<{ n: number }>(file, "select max(tree_size) as n from audit_checkpoints")[0]?.n ?? 0;
    const n = Math.min(SAMPLE, Math.floor(size / 4));
    const sealsAt = (indices: number[]) => {
      const db = new SQLite(file, { readonly: true });
      try {
        const get = db.prepare("select seal from audit_leaves where leaf_index = ?").pluck();
        return indices.map((i) => `/api/attest/verify/${get.get(i) as string}`);
      } finally {
        db.close();
      }
    };
    await phase("verify and proofs", async () => {
      const warm = sealsAt(sampleIndices(0, size, 300, 6));
      await drive(server, reads("warm", warm, {}), 2);
      const consistency = (firsts: number[]) => firsts.map((f) => `/api/attest/consistency?first=${f + 1}`);
      const half = Math.floor(size / 2);
      // Each a figure against the fresh store's (target: at most 2x), its paths sampled with its own seed.
      const cases: Array<[figure: string, label: string, paths: string[]]> = [
        ["verify, recent seals", "verify recent", sealsAt(sampleIndices(size - n, size, n, 1))],
        ["verify, old seals", "verify old", sealsAt(sampleIndices(0, half, n, 2))],
        ["consistency, from old", "cons old", consistency(sampleIndices(0, half, n, 3))],
        ["consistency, from recent", "cons recent", consistency(sampleIndices(size - n - 1, size - 1, n, 4))],
      ];
      for (const [figure, label, paths] of cases) {
        perRequest(figure, await drive(server, reads(label, paths, {}), SECONDS), { ratio: 2 });
      }
    });

    // Evals: each period once every 5.1 s, so every answer is computed afresh.
    await phase("evals", async () => {
      const periods = ["rolling_7d", "rolling_30d", "rolling_90d"] as const;
      const times = new Map<string, number[]>(periods.map((p) => [p, []]));
      const cpu = new Map<string, number>(periods.map((p) => [p, 0]));
      let report90: { operations?: { orders_received?: number } } = {};
      let since90 = "";
      let until90 = "";
      for (let round = 0; round < EVALS_ROUNDS; round++) {
        if (round > 0) await new Promise((r) => setTimeout(r, EVALS_CACHE_GAP_MS));
        for (const p of periods) {
          const c0 = cpuTicks(server.proc.pid);
          const t0 = performance.now();
          since90 = new Date(Date.now() - 90 * DAY).toISOString();
          const res = await fetch(`${server.url}/api/dispatch/analytics/evals?period=${p}`, {
            headers: caller,
          });
          const body = await res.json();
          until90 = new Date().toISOString();
          times.get(p)?.push(performance.now() - t0);
          cpu.set(p, (cpu.get(p) ?? 0) + (cpuTicks(server.proc.pid) - c0) * 10);
          if (!res.ok) throw new Error(`evals answered ${res.status}`);
          if (p === "rolling_90d") report90 = body as typeof report90;
        }
      }
      for (const p of periods) {
        const t = (times.get(p) ?? []).sort((a, b) => a - b);
        figures.push({
          name: `evals ${p} uncached: latency p50`,
          unit: "ms",
          value: t[Math.floor(t.length / 2)] as number,
          ...(p === "rolling_90d" ? { target: { max: 50 } } : {}),
        });
        figures.push({
          name: `evals ${p} uncached: server cpu`,
          unit: "ms",
          value: (cpu.get(p) ?? 0) / EVALS_ROUNDS,
        });
      }
      // The 90-day report against the store: its orders received, counted directly.
      const direct = read<{ n: number }>(
        file,
        "select count(*) as n from orders where livemode = 1 and received_at >= ? and received_at < ?",
        since90,
        until90,
      )[0]?.n;
      const got = report90.operations?.orders_received;
      evalsCheck = `${s.label}: evals rolling_90d orders_received ${got}, direct count ${direct} (${since90} .. ${until90})`;
    });
    rss = Math.max(rss, watch.rssMax);

    // Retention backlog and the optimiser's day: with the server stopped, then started on them.
    const models = await placeDay(server, prepared.callerKey, DAY_JOBS);
    await auditSealed(file);
    await watch.close();
    await stop(server);
    const wrote = writeBacklog(file, BACKLOG);
    const copied = copyDay(file, models, DAY_JOBS);
    // The backlog's one transaction leaves a WAL of its size (2.25 GB for 5 M rows): checkpointed before
    // the server starts, as a store restored from a backup would be, or every read goes through it.
    const wal = new SQLite(file);
    wal.pragma("wal_checkpoint(TRUNCATE)");
    wal.close();
    process.stdout.write(
      `  ${s.label}: ${BACKLOG} old order events written in ${wrote.toFixed(0)} s; day of ${models.length + copied} scheduled orders\n`,
    );
    server = await start(join(DIST, "src/main.js"), env, "/readyz", [], flags);
    watch = new Watch(server);
    seq = 0;
    const backlog0 =
      read<{ n: number }>(
        file,
        "select count(*) as n from order_events where created_at < ?",
        new Date(Date.now() - 30 * DAY).toISOString(),
      )[0]?.n ?? 0;
    perRequest("order, retention draining", await phase("orders, retention backlog", () => orders(SECONDS)), {
      ratio: 1.1,
    });
    const backlog1 =
      read<{ n: number }>(
        file,
        "select count(*) as n from order_events where created_at < ?",
        new Date(Date.now() - 30 * DAY).toISOString(),
      )[0]?.n ?? 0;
    figures.push({ name: "retention: rows purged under load", unit: "rows", value: backlog0 - backlog1 });
    const { date } = optimiserDay();
    await phase("optimiser call", async () => {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/api/dispatcher/v1/schedule/optimize`, {
        method: "POST",
        headers: { "content-type": "application/json", ...ops },
        body: JSON.stringify({ date, state: "CA", time_limit_ms: 2000, iterations: 1000 }),
      });
      const body = (await res.json()) as { totals?: { jobs: number; served: number } };
      if (!res.ok) throw new Error(`optimize answered ${res.status}: ${JSON.stringify(body)}`);
      figures.push({ name: "optimiser 2000 ms call: wall", unit: "ms", value: performance.now() - t0 });
      figures.push({ name: "optimiser: jobs in the day", unit: "jobs", value: body.totals?.jobs ?? 0 });
    });
    rss = Math.max(rss, watch.rssMax);
  } finally {
    await watch.close();
    await stop(server);
    closeReaders();
  }
  figures.push({ name: "RSS max", unit: "MiB", value: rss });
  for (const p of phases) {
    figures.push({ name: `loop max, ${p.name}`, unit: "ms", value: p.loop.maxMs, target: { max: 50 } });
    figures.push({ name: `loop p99, ${p.name}`, unit: "ms", value: p.loop.p99Ms });
    figures.push({
      name: `/healthz max, ${p.name}`,
      unit: "ms",
      value: p.healthzMaxMs,
      target: { max: 100 },
    });
  }
  return { figures, phases, rss, evalsCheck };
}

function cpuTicks(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return Number(fields[11]) + Number(fields[12]);
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return "n/a";
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1);
}

async function main(): Promise<void> {
  const kept = process.env.BENCH_HISTORY_DIR;
  const largeDir = kept ?? mkdtempSync(join(tmpdir(), "fd-bench-history-large-"));
  mkdirSync(largeDir, { recursive: true });
  const freshDir = mkdtempSync(join(tmpdir(), "fd-bench-history-fresh-"));
  const largeFile = join(largeDir, "field-dispatch.sqlite");
  process.stdout.write(
    `node ${process.version}; SQLite store; ${CONNECTIONS} connections, ${SECONDS} s per load; ${ORDERS} history orders over ${YEARS} years\n`,
  );
  try {
    // The large store: the pool and keys first, then the history (or the store kept from a run before).
    const largeEnv = benchEnv(largeDir);
    const have = historyOrders(largeFile);
    let largePrepared: Prepared;
    if (have >= ORDERS) {
      process.stdout.write(`reusing the store in ${largeDir} (${have} history orders)\n`);
      largePrepared = await prepareStore(largeEnv);
    } else {
      if (have > 0) rmSync(largeDir, { recursive: true, force: true });
      mkdirSync(largeDir, { recursive: true });
      largePrepared = await prepareStore(largeEnv);
      // The records of the import and the keys go under a checkpoint before the bulk history follows them.
      const s = await start(join(DIST, "src/main.js"), { ...largeEnv, METRICS_PORT: "off" }, "/readyz");
      await auditSealed(largeFile);
      closeReaders();
      await stop(s);
      const t0 = Date.now();
      const built = await buildHistory(largeDir, {
        orders: ORDERS,
        years: YEARS,
        now: Date.now() - 60_000,
        eventDays: 30,
        accountName: "bench",
        progress: (done) => {
          if (done % 100_000 === 0 || done === ORDERS)
            process.stdout.write(`  ${done} orders, ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
        },
      });
      process.stdout.write(
        `built ${built.orders} orders, ${built.records} audit records (tree size ${built.treeSize}), ${built.events} order events in ${built.seconds.toFixed(0)} s (${largeDir})\n`,
      );
    }
    const largeOps = await dispatcherKey(largeEnv);
    const freshEnv = benchEnv(freshDir);
    const freshPrepared = await prepareStore(freshEnv);
    const freshOps = await dispatcherKey(freshEnv);
    const counts = read<{ o: number; a: number }>(
      largeFile,
      "select (select count(*) from orders) as o, (select count(*) from audit_records) as a",
    )[0];
    process.stdout.write(`large store: ${counts?.o} orders, ${counts?.a} audit records\n`);

    const fresh = await measure({ label: "fresh", dir: freshDir, prepared: freshPrepared, opsKey: freshOps });
    const large = await measure({ label: "large", dir: largeDir, prepared: largePrepared, opsKey: largeOps });

    const w = [44, 7, 10, 10, 8, 12, 6];
    const line = (cells: string[]) => `${cells.map((c, i) => c.padEnd(w[i] ?? 10)).join("")}\n`;
    process.stdout.write(`\n${line(["figure", "unit", "fresh", "large", "ratio", "target", "met"])}`);
    for (const f of fresh.figures) {
      const l = large.figures.find((x) => x.name === f.name);
      if (!l) continue;
      const ratio = l.value / f.value;
      const t = f.target;
      const target = t?.ratio ? `<= ${t.ratio}x` : t?.max ? `<= ${t.max} ${f.unit}` : "";
      const met = t?.ratio ? ratio <= t.ratio : t?.max ? l.value <= t.max : undefined;
      process.stdout.write(
        line([
          f.name,
          f.unit,
          fmt(f.value),
          fmt(l.value),
          Number.isFinite(ratio) ? ratio.toFixed(2) : "n/a",
          target,
          met === undefined ? "" : met ? "yes" : "NO",
        ]),
      );
    }
    process.stdout.write(`\n${fresh.evalsCheck}\n${large.evalsCheck}\n`);
    process.stdout.write(
      `(cpu per request from /proc ticks of 10 ms; ${us(null)} where /proc is unavailable)\n`,
    );
  } finally {
    rmSync(freshDir, { recursive: true, force: true });
    if (!kept) rmSync(largeDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
