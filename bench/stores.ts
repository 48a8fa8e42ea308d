// Engines benchmark (issue 29): the matched order load and the quote load against the embedded SQLite
// store (one process), then against PostgreSQL + Redis with `--workers 1`, `--workers 2` and
// `--workers 4`, all in one run, each PostgreSQL run in a fresh schema of its own; then the latency of one
// limiter decision over Redis.
//
// The load is `npm run bench`'s (bench/workload.ts): the simulator's live pool imported with the CLI, a
// live caller's key, order and quote bodies from the demand model; orders are measured in bursts of at most
// BENCH_BURST_SHARE (4 %) of the pool's capacity, and after each burst the contractors offered an order
// accept it and work it to completed over HTTP, between measured windows, so the pool never fills up.
// A run in which under 95 % of the orders were offered to a contractor at creation measured the unmatched
// path: its share is printed and its verdict is MISS.
//
// What is measured, per engine and load:
// - req/s, p50 and p99 (autocannon, in this process, BENCH_CONNECTIONS connections), matched share;
// - CPU per request summed over every process involved, from /proc/<pid>/stat (utime + stime, all threads)
//   of every process on the machine, read before and after each measured window (and, for quote and order,
//   after the audit sequencer has sealed the window's records, so their deferred work is counted):
//   workers = the service's primary and every process under it; postgres = every process whose command is
//   `postgres` (the backends serving the service, and also the postmaster, checkpointer, background
//   writer, walwriter, autovacuum: whatever the run makes them do), with the part of the service's own
//   backends shown apart; redis = `redis-server`. A process that exits inside a window is counted through
//   its parent's cutime + cstime (PostgreSQL's autovacuum workers, say). The bench's own PostgreSQL
//   connections (the wait sampler, the audit poll) are counted with the load generator, not PostgreSQL.
//   For SQLite the total is the one service process.
// - where the cores went: each group's CPU over the wall time of the driven part of the windows, the
//   load generator (this process: autocannon runs in it) and everything else on the machine included,
//   against the machine's own busy time from /proc/stat;
// - on PostgreSQL, pg_stat_activity sampled every BENCH_SAMPLE_MS (50 ms) from a connection of its own
//   during the driven windows: the wait events of the service's backends (application_name
//   `field-dispatch...`, narrowed to this run's connections by their client ports) in state 'active', with
//   `Lock:advisory` split by the statement waiting (the write turn, the audit sequencer, the evals fold).
//
// Then issue 29's ratios with verdicts: PostgreSQL's CPU per order with 2 workers / SQLite's (<= 2x),
// order throughput with 2 workers / 1 worker (>= 1.5x) and 4 workers / 1 worker (>= 2x), no Lock:advisory
// among the order path's sampled waits, matched share >= 95 % everywhere. Every server started has
// METRICS_PORT=off. Traffic goes to 127.0.0.1 only; each load runs BENCH_SECONDS and the run then stops.
//
//   npm run bench:stores                     builds, then all engines, 10 s per load (about 4 minutes)
//   BENCH_SECONDS=10 METRICS_PORT=off node dist/bench/stores.js
//   BENCH_ENGINES=sqlite,pg1,pg2,pg4         the engines to run (default all, in that order)
//   BENCH_DATABASE_URL, BENCH_REDIS_URL      default to the local test services (TEST_DATABASE_URL, ...)
//   BENCH_POOL_SIZE=10                       DATABASE_POOL_SIZE of each service process
//   BENCH_CONNECTIONS=50, BENCH_BURST_SHARE=0.04, BENCH_SAMPLE_MS=50
//   BENCH_LIMITER=false                      skips the limiter latency at the end

import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { RedisRateLimiter } from "../src/auth/redis-rate-limiter.js";
import {
  auditSealed,
  CONNECTIONS,
  closeReaders,
  DIST,
  drive,
  driveRun,
  figuresOf,
  type Load,
  type Run,
  row,
  SECONDS,
  type Server,
  start,
  stop,
  WARMUP_SECONDS,
} from "./lib.js";
import { benchEnv, demandJobs, matchedOrderLoad, type Placed, prepareStore, Releaser } from "./workload.js";

const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const POOL_SIZE = process.env.BENCH_POOL_SIZE ?? "10";
const ENGINES = (process.env.BENCH_ENGINES ?? "sqlite,pg1,pg2,pg4").split(",").map((e) => e.trim());
const BURST_SHARE = Number(process.env.BENCH_BURST_SHARE ?? 0.04);
const SAMPLE_MS = Number(process.env.BENCH_SAMPLE_MS ?? 50);
const MIN_MATCHED = 0.95;
const CORES = availableParallelism();
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const HZ = 100;
/** The service's PostgreSQL connections are named `field-dispatch`, `field-dispatch events`, ...
 * (storage/postgres.ts, day-reader.ts). */
const SERVICE_APP = "field-dispatch";
const BENCH_APP = "fd-bench stores";
const run = Date.now().toString(36);

// The bench chooses each engine itself: no store or limiter from the environment reaches a server.
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
delete process.env.WORKERS;

// ---------------------------------------------------------------------------------------------------------
// CPU of every process on the machine, from /proc

interface ProcStat {
  ppid: number;
  comm: string;
  /** Start time since boot, ticks: a pid seen again with another start time is another process. */
  started: number;
  /** utime + stime of all its threads, ticks. */
  own: number;
  /** cutime + cstime: the CPU of its children that exited and were waited for, ticks. */
  reaped: number;
}

interface Snapshot {
  at: number;
  procs: Map<number, ProcStat>;
  /** The machine's busy ticks (all CPUs) from /proc/stat. */
  machineBusy: number;
}

function readStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const f = text.slice(close + 2).split(" ");
    return {
      ppid: Number(f[1]),
      comm: text.slice(text.indexOf("(") + 1, close),
      started: Number(f[19]),
      own: Number(f[11]) + Number(f[12]),
      reaped: Number(f[13]) + Number(f[14]),
    };
  } catch {
    return null; // gone meanwhile
  }
}

function machineBusy(): number {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]?.split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal: all but idle and iowait
  return cpu.slice(0, 8).reduce((sum, v, i) => (i === 3 || i === 4 ? sum : sum + v), 0);
}

function snapshot(): Snapshot {
  const procs = new Map<number, ProcStat>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) procs.set(Number(name), stat);
  }
  return { at: performance.now(), procs, machineBusy: machineBusy() };
}

/** `root` and every process under it in `procs`. */
function treeOf(procs: Map<number, ProcStat>, root: number): Set<number> {
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, p] of procs)
      if (!tree.has(pid) && tree.has(p.ppid)) {
        tree.add(pid);
        grew = true;
      }
  }
  return tree;
}

const PARTS = ["workers", "postgres", "redis", "load generator", "other"] as const;
type Part = (typeof PARTS)[number];
type Ticks = Record<Part, number>;
const noTicks = (): Ticks => ({ workers: 0, postgres: 0, redis: 0, "load generator": 0, other: 0 });

/** Who a process works for: the service, PostgreSQL, Redis, the load generator, or nobody here. */
function classifier(procs: Map<number, ProcStat>, servicePid: number, benchBackends: Set<number>) {
  const service = treeOf(procs, servicePid);
  return (pid: number): Part => {
    const p = procs.get(pid);
    if (service.has(pid)) return "workers";
    if (pid === process.pid || benchBackends.has(pid)) return "load generator";
    if (p?.comm === "postgres") return "postgres";
    if (p?.comm.startsWith("redis-server")) return "redis";
    return "other";
  };
}

/**
 * Each group's CPU between two snapshots. A process present in both counts its own and its reaped
 * children's growth; one born since counts all of it; one that exited is counted through its parent's
 * cutime, or its nearest surviving ancestor's (its whole life: what it had used before the window is
 * taken off that ancestor's group).
 */
function cpuBetween(a: Snapshot, b: Snapshot, servicePid: number, benchBackends: Set<number>): Ticks {
  const ticks = noTicks();
  const inB = classifier(b.procs, servicePid, benchBackends);
  const inA = classifier(a.procs, servicePid, benchBackends);
  for (const [pid, p] of b.procs) {
    const before = a.procs.get(pid);
    const was = before && before.started === p.started ? before.own + before.reaped : 0;
    ticks[inB(pid)] += Math.max(0, p.own + p.reaped - was);
  }
  const survives = (pid: number) => {
    const p = a.procs.get(pid);
    return p !== undefined && b.procs.get(pid)?.started === p.started;
  };
  for (const [pid, p] of a.procs) {
    if (survives(pid)) continue;
    // Reaped by its parent, or with its parent by the nearest ancestor still there.
    let reaper = p.ppid;
    for (let hops = 0; reaper > 1 && !survives(reaper) && hops < 64; hops++)
      reaper = a.procs.get(reaper)?.ppid ?? 0;
    if (!survives(reaper)) continue;
    const part = inA(reaper);
    ticks[part] = Math.max(0, ticks[part] - (p.own + p.reaped));
  }
  return ticks;
}

/** The growth of `pids`' own CPU between two snapshots (the service's PostgreSQL backends). */
function ownBetween(a: Snapshot, b: Snapshot, pids: Set<number>): number {
  let sum = 0;
  for (const pid of pids) {
    const after = b.procs.get(pid);
    const before = a.procs.get(pid);
    if (after) sum += Math.max(0, after.own - (before?.started === after.started ? before.own : 0));
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------------------
// The service's PostgreSQL connections and their wait events

/** Local ports of `pids`' TCP connections to `pgPort`: the client_port of their backends. */
function clientPorts(pids: Iterable<number>, pgPort: number): Set<number> {
  const inodes = new Set<string>();
  let any = 0;
  for (const pid of pids) {
    any ||= pid;
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
          if (m?.[1]) inodes.add(m[1]);
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // gone
    }
  }
  const ports = new Set<number>();
  for (const file of ["tcp", "tcp6"]) {
    let text = "";
    try {
      text = readFileSync(`/proc/${any}/net/${file}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const remotePort = Number.parseInt(cols[2]?.split(":")[1] ?? "", 16);
      if (remotePort === pgPort && inodes.has(cols[9] ?? "")) {
        ports.add(Number.parseInt(cols[1]?.split(":")[1] ?? "", 16));
      }
    }
  }
  return ports;
}

interface ActivityRow {
  pid: number;
  application_name: string;
  state: string | null;
  wait_event_type: string | null;
  wait_event: string | null;
  client_port: number | null;
  query: string;
}

const ACTIVITY = `select pid, application_name, state, wait_event_type, wait_event, client_port,
    left(query, 200) as query
  from pg_stat_activity
  where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`;

/** Which advisory lock a statement waits for (storage/order-event-store.ts, audit-store.ts, 0027). */
function advisoryOf(query: string): string {
  if (query.includes("hashtext(current_schema()")) return "write turn";
  if (query.includes("fsd_evals_compact")) return "evals fold";
  if (/pg_advisory_xact_lock\(\$1\)/.test(query)) return "audit sequencer";
  return query.replace(/\s+/g, " ").slice(0, 40);
}

interface WaitTally {
  samples: number;
  /** Active backends summed over samples, and the most in one sample. */
  active: number;
  maxActive: number;
  backends: Set<number>;
  activeBackends: Set<number>;
  waits: Map<string, number>;
  advisory: Map<string, number>;
  idleInTransaction: number;
  /** Active backends of other clients of the database (not this run's service, not the bench). */
  othersActive: number;
  byPort: boolean;
}

const newWaitTally = (): WaitTally => ({
  samples: 0,
  active: 0,
  maxActive: 0,
  backends: new Set(),
  activeBackends: new Set(),
  waits: new Map(),
  advisory: new Map(),
  idleInTransaction: 0,
  othersActive: 0,
  byPort: true,
});

const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

/**
 * Samples pg_stat_activity every SAMPLE_MS on a connection of its own, while `phase` is set (the driven
 * part of a measured window), into that phase's tally.
 */
class WaitSampler {
  phase: string | null = null;
  readonly tallies = new Map<string, WaitTally>();
  private stopped = false;
  private loop: Promise<void> | null = null;
  private ports = new Set<number>();
  private portsAt = 0;

  constructor(
    private readonly client: pg.Client,
    private readonly servicePid: number,
    private readonly pgPort: number,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /** The service's backends now (by client port, or by application name if no port was found). */
  async backends(): Promise<Set<number>> {
    this.refreshPorts(true);
    const { rows } = await this.client.query<ActivityRow>(ACTIVITY);
    return new Set(rows.filter((r) => this.ours(r)).map((r) => r.pid));
  }

  private refreshPorts(now = false): void {
    if (!now && performance.now() - this.portsAt < 1000) return;
    const service = treeOf(snapshot().procs, this.servicePid);
    this.ports = clientPorts(service, this.pgPort);
    this.portsAt = performance.now();
  }

  private ours(r: ActivityRow): boolean {
    if (!r.application_name.startsWith(SERVICE_APP)) return false;
    return this.ports.size === 0 || (r.client_port !== null && this.ports.has(r.client_port));
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const phase = this.phase;
      if (phase !== null) {
        this.refreshPorts();
        const { rows } = await this.client.query<ActivityRow>(ACTIVITY);
        const tally = this.tallies.get(phase) ?? newWaitTally();
        this.tallies.set(phase, tally);
        tally.samples++;
        if (this.ports.size === 0) tally.byPort = false;
        let active = 0;
        for (const r of rows) {
          if (!this.ours(r)) {
            if (r.state === "active" && r.application_name !== BENCH_APP) tally.othersActive++;
            continue;
          }
          tally.backends.add(r.pid);
          if (r.state === "idle in transaction") tally.idleInTransaction++;
          if (r.state !== "active") continue;
          active++;
          tally.activeBackends.add(r.pid);
          const wait = r.wait_event_type ? `${r.wait_event_type}:${r.wait_event}` : "CPU (no wait event)";
          bump(tally.waits, wait);
          if (wait === "Lock:advisory") bump(tally.advisory, advisoryOf(r.query));
        }
        tally.active += active;
        tally.maxActive = Math.max(tally.maxActive, active);
      }
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
  }
}

function formatWaits(t: WaitTally): string {
  const waits = [...t.waits].sort((a, b) => b[1] - a[1]);
  const listed = waits
    .map(([w, n]) => {
      if (w !== "Lock:advisory") return `${w} ${n}`;
      const by = [...t.advisory].sort((a, b) => b[1] - a[1]).map(([k, m]) => `${k} ${m}`);
      return `${w} ${n} (${by.join(", ")})`;
    })
    .join(", ");
  const mean = t.samples ? (t.active / t.samples).toFixed(1) : "0";
  return (
    `${t.samples} samples, ${t.backends.size} service backends seen, ${t.activeBackends.size} of them active; ` +
    `active per sample mean ${mean}, max ${t.maxActive}\n      waits of active backends: ${listed || "none"}\n` +
    `      idle in transaction (a transaction waiting for the worker's next statement): ${t.idleInTransaction}` +
    (t.othersActive ? `; other clients' active backends: ${t.othersActive} (not this run's)` : "") +
    (t.byPort ? "" : "; some samples matched by application_name only (no client port found)")
  );
}

// ---------------------------------------------------------------------------------------------------------
// Measuring one engine

interface Window {
  run: Run;
  /** Wall time of the driven part (before the audit settle), seconds. */
  wall: number;
  /** Each group's CPU over the driven part, and over the whole window (settle included), ticks. */
  driven: Ticks;
  whole: Ticks;
  machine: number;
  /** The service's own PostgreSQL backends' CPU over the whole window, ticks. */
  backends: number;
}

interface Measured {
  windows: Window[];
  /** Orders offered at creation / orders answered (order load), quotes with a contractor available. */
  good: number;
  total: number;
}

interface Engine {
  label: string;
  workers: number;
  postgres: boolean;
  order: Measured;
  quote: Measured;
  waits: Map<string, WaitTally>;
}

interface Context {
  service: Server;
  /** Waits until the audit sequencer has sealed every record so far. */
  sealed: () => Promise<void>;
  sampler: WaitSampler | null;
  benchBackends: Set<number>;
}

async function measureWindow(ctx: Context, load: Load, seconds: number): Promise<Window> {
  const backendsBefore = ctx.sampler ? await ctx.sampler.backends() : new Set<number>();
  const a = snapshot();
  if (ctx.sampler) ctx.sampler.phase = load.name;
  const run = await driveRun(ctx.service, load, seconds);
  if (ctx.sampler) ctx.sampler.phase = null;
  const b = snapshot();
  await ctx.sealed();
  const backends = ctx.sampler ? await ctx.sampler.backends() : new Set<number>();
  const c = snapshot();
  const pid = ctx.service.proc.pid as number;
  for (const p of backendsBefore) backends.add(p);
  return {
    run,
    wall: (b.at - a.at) / 1000,
    driven: cpuBetween(a, b, pid, ctx.benchBackends),
    whole: cpuBetween(a, c, pid, ctx.benchBackends),
    machine: b.machineBusy - a.machineBusy,
    backends: ownBetween(a, c, backends),
  };
}

async function measureEngine(
  label: string,
  workers: number,
  env: Record<string, string>,
  pgUrl: string | null,
): Promise<Engine> {
  const prepared = await prepareStore(env);
  const jobs = demandJobs(prepared.byBucket, 20_000);
  const burst = Math.max(1, Math.floor(prepared.capacity * BURST_SHARE));
  const auth = { "x-api-key": prepared.callerKey };
  const clients: pg.Client[] = [];
  const connect = async () => {
    const client = new pg.Client({ connectionString: pgUrl as string, application_name: BENCH_APP });
    await client.connect();
    clients.push(client);
    return client;
  };
  let sampler: WaitSampler | null = null;
  const benchBackends = new Set<number>();
  let sealed: () => Promise<void>;
  if (pgUrl) {
    const poll = await connect();
    // The previous run's dirty pages written now, not in this run's windows.
    await poll.query("checkpoint").catch(() => {});
    sealed = () => pgSealed(poll);
  } else {
    const file = join(env.DATA_DIR as string, "field-dispatch.sqlite");
    sealed = () => auditSealed(file);
  }
  const args = pgUrl ? ["--workers", String(workers)] : [];
  const service = await startService(env, args);
  const releaser = new Releaser(service.url, prepared.contractorKeys);
  try {
    if (pgUrl) {
      const client = await connect();
      sampler = new WaitSampler(client, service.proc.pid as number, Number(new URL(pgUrl).port || 5432));
      sampler.start();
      for (const c of clients) {
        const { rows } = await c.query<{ pid: number }>("select pg_backend_pid() as pid");
        if (rows[0]) benchBackends.add(rows[0].pid);
      }
    }
    const ctx: Context = { service, sealed, sampler, benchBackends };
    await sealed(); // the keys' own records, before anything is measured

    const order: Measured = { windows: [], good: 0, total: 0 };
    const quote: Measured = { windows: [], good: 0, total: 0 };
    let placed: Placed[] = [];
    let counting = false;
    const orderLoad: Load = matchedOrderLoad({
      name: "order",
      headers: auth,
      jobs,
      burst,
      contractorOfRef: prepared.contractorOfRef,
      onAnswer: ({ placed: result }) => {
        if (result) placed.push(result);
        if (!counting) return;
        order.total++;
        if (result) order.good++;
      },
    });
    const quoteLoad: Load = {
      name: "quote",
      method: "POST",
      path: "/api/dispatch/v1/quote",
      headers: auth,
      bodies: jobs.map((j) => j.quote),
      onResponse: (status, body) => {
        if (!counting) return;
        quote.total++;
        if (status === 200 && body.includes('"availability":"available"')) quote.good++;
      },
    };
    /** Bursts of orders until `seconds` are driven, the offered ones worked to completed after each. */
    const orders = async (seconds: number, measured: boolean) => {
      let spent = 0;
      do {
        const window = measured ? await measureWindow(ctx, orderLoad, seconds - spent) : null;
        const run = window?.run ?? (await driveRun(service, orderLoad, seconds - spent));
        alive(service);
        if (window) order.windows.push(window);
        spent += run.seconds;
        const offered = placed;
        placed = [];
        await releaser.work(offered);
        alive(service);
        if (run.requests === 0) break;
      } while (seconds - spent >= 1);
    };
    await orders(WARMUP_SECONDS, false);
    await drive(service, quoteLoad, WARMUP_SECONDS);
    await sealed();
    counting = true;
    await orders(SECONDS, true);
    quote.windows.push(await measureWindow(ctx, quoteLoad, SECONDS));
    alive(service);
    if (releaser.failures > 0) process.stdout.write(`  (${releaser.failures} release requests refused)\n`);
    return { label, workers, postgres: pgUrl !== null, order, quote, waits: sampler?.tallies ?? new Map() };
  } finally {
    await sampler?.stop();
    await releaser.close();
    stopping.add(service);
    await stop(service);
    for (const c of clients) await c.end();
    closeReaders();
  }
}

/** Services the bench is stopping itself. */
const stopping = new WeakSet<Server>();

/** Throws if the service is gone (it crashed, or something else on the machine stopped it). */
function alive(service: Server): void {
  const { exitCode, signalCode } = service.proc;
  if (exitCode !== null || signalCode !== null)
    throw new Error(`the service exited during the run (code ${exitCode}, signal ${signalCode})`);
}

/**
 * Starts the service; if it exits before it is ready, starts it again (twice at most) and says so. Once a
 * primary with `--workers 2` exited 0 during start, without a word on stderr (its workers log to stdout,
 * which the bench discards), and did not again in the next runs.
 */
async function startService(env: Record<string, string>, args: string[]): Promise<Server> {
  for (let attempt = 1; ; attempt++) {
    try {
      const service = await start(join(DIST, "src/main.js"), env, "/readyz", args);
      // Said at once, with the time: to match it against whatever else happened on the machine then.
      service.proc.once("exit", (code, signal) => {
        if (stopping.has(service)) return;
        const at = new Date().toISOString().slice(11, 19);
        process.stdout.write(
          `  (the service, pid ${service.proc.pid}, exited at ${at} UTC: code ${code}, signal ${signal})\n`,
        );
      });
      return service;
    } catch (err) {
      if (attempt === 3) throw err;
      process.stdout.write(`  (${err instanceof Error ? err.message : String(err)}; starting it again)\n`);
    }
  }
}

/** Waits until every audit record in the schema is under a signed checkpoint (audit-store.ts's count). */
async function pgSealed(client: pg.Client, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: string }>(
      `select (select count(*) from audit_pending)
         + greatest(0, (select coalesce(max(leaf_index) + 1, 0) from audit_leaves)
           - (select coalesce(max(tree_size), 0) from audit_checkpoints)) as n`,
    );
    if (Number(rows[0]?.n) === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`audit records were not sequenced within ${timeoutMs / 1000} s`);
}

async function withSchema<T>(fn: (url: string, schema: string) => Promise<T>): Promise<T> {
  const schema = `fd_bench_${run}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL, application_name: BENCH_APP });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  try {
    const url = new URL(DATABASE_URL);
    url.searchParams.set("options", `-c search_path=${schema}`);
    return await fn(url.toString(), schema);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Reporting

interface Summary {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** us per request of each group (whole windows), of the service's backends, and the total involved. */
  us: Ticks;
  backendsUs: number;
  totalUs: number;
  /** Cores busy over the driven parts: each group, and the machine by /proc/stat. */
  cores: Ticks;
  machineCores: number;
}

function summarize(m: Measured, postgres: boolean): Summary {
  const f = figuresOf(m.windows.map((w) => w.run));
  const requests = m.windows.reduce((s, w) => s + w.run.requests, 0);
  const wall = m.windows.reduce((s, w) => s + w.wall, 0);
  const us = noTicks();
  const cores = noTicks();
  for (const part of PARTS) {
    const whole = m.windows.reduce((s, w) => s + w.whole[part], 0);
    const driven = m.windows.reduce((s, w) => s + w.driven[part], 0);
    us[part] = requests ? ((whole / HZ) * 1e6) / requests : 0;
    cores[part] = wall ? driven / HZ / wall : 0;
  }
  const backends = m.windows.reduce((s, w) => s + w.backends, 0);
  const machine = m.windows.reduce((s, w) => s + w.machine, 0);
  return {
    requests,
    rps: f.rps,
    p50: f.p50,
    p99: f.p99,
    failures: f.non2xx + f.errors,
    us,
    backendsUs: requests ? ((backends / HZ) * 1e6) / requests : 0,
    // SQLite: the one service process; PostgreSQL: the workers, every postgres process and Redis.
    totalUs: postgres ? us.workers + us.postgres + us.redis : us.workers,
    cores,
    machineCores: wall ? machine / HZ / wall : 0,
  };
}

const pct = (good: number, total: number) => (total ? `${((100 * good) / total).toFixed(1)}%` : "n/a");
const n0 = (v: number) => v.toFixed(0);

async function limiterLatency(): Promise<void> {
  const limiter = new RedisRateLimiter(REDIS_URL, { keyPrefix: `fsd:bench:${run}:`, timeoutMs: 1000 });
  while (limiter.client.status !== "ready") await new Promise((r) => setTimeout(r, 20));
  const policy = { name: "per-key", ratePerMinute: 100_000_000, burst: 100_000_000 };
  const times: number[] = [];
  for (let i = -1000; i < 20_000; i++) {
    const t0 = process.hrtime.bigint();
    await limiter.consume(`k${i % 100}`, policy);
    if (i >= 0) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  await limiter.close();
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)] ?? 0;
  process.stdout.write(
    `\nlimiter decision over Redis (one round trip, 20,000 sequential after 1,000 warm-up): p50 ${q(0.5).toFixed(3)} ms, p99 ${q(0.99).toFixed(3)} ms, max ${q(1).toFixed(3)} ms; target p99 <= 0.5 ms: ${q(0.99) <= 0.5 ? "ok" : "MISS"}\n`,
  );
}

function report(engines: Engine[]): void {
  const widths = [9, 7, 8, 8, 8, 18, 9, 10, 11, 8, 9, 10];
  process.stdout.write(
    `\n${row(["engine", "load", "req/s", "p50 ms", "p99 ms", "answers", "workers", "postgres", "(backends)", "redis", "total", "load gen"], widths)}\n`,
  );
  process.stdout.write(
    `${row(["", "", "", "", "", "", "us/req", "us/req", "us/req", "us/req", "us/req", "us/req"], widths)}\n`,
  );
  const summaries = new Map<string, { order: Summary; quote: Summary }>();
  for (const e of engines) {
    const order = summarize(e.order, e.postgres);
    const quote = summarize(e.quote, e.postgres);
    summaries.set(e.label, { order, quote });
    for (const [name, s, m, what] of [
      ["order", order, e.order, "matched"],
      ["quote", quote, e.quote, "available"],
    ] as const) {
      const fail = s.failures ? `, ${s.failures} failed` : "";
      const dash = (v: number) => (e.postgres ? n0(v) : "-");
      process.stdout.write(
        `${row(
          [
            e.label,
            name,
            n0(s.rps),
            s.p50.toFixed(1),
            s.p99.toFixed(1),
            `${pct(m.good, m.total)} ${what}${fail}`,
            n0(s.us.workers),
            dash(s.us.postgres),
            dash(s.backendsUs),
            dash(s.us.redis),
            n0(s.totalUs),
            n0(s.us["load generator"]),
          ],
          widths,
        )}\n`,
      );
    }
  }
  process.stdout.write(
    `\nwhere the cores went (CPU over the wall time of the driven windows, of ${CORES} cores; machine = /proc/stat):\n`,
  );
  for (const e of engines) {
    const s = summaries.get(e.label);
    if (!s) continue;
    for (const [name, x] of [
      ["order", s.order],
      ["quote", s.quote],
    ] as const) {
      const parts = PARTS.map((p) => `${p} ${x.cores[p].toFixed(2)}`).join(", ");
      const sum = PARTS.reduce((t, p) => t + x.cores[p], 0);
      process.stdout.write(
        `  ${`${e.label} ${name}`.padEnd(12)} ${parts}; sum ${sum.toFixed(2)}, machine ${x.machineCores.toFixed(2)} of ${CORES}\n`,
      );
    }
  }
  const sampled = engines.filter((e) => e.postgres);
  if (sampled.length) {
    process.stdout.write(
      `\nPostgreSQL waits: pg_stat_activity every ${SAMPLE_MS} ms during the driven windows, the service's backends ` +
        `(application_name ${SERVICE_APP}*, this run's connections) in state 'active':\n`,
    );
    for (const e of sampled)
      for (const load of ["order", "quote"]) {
        const t = e.waits.get(load);
        if (t) process.stdout.write(`  ${e.label} ${load}: ${formatWaits(t)}\n`);
      }
  }
  verdicts(engines, summaries);
}

function verdicts(engines: Engine[], summaries: Map<string, { order: Summary; quote: Summary }>): void {
  const order = (label: string) => summaries.get(label)?.order;
  const lines: string[] = [];
  const verdict = (ok: boolean | null) => (ok === null ? "n/a" : ok ? "ok" : "MISS");
  const sqlite = order("sqlite");
  const [x1, x2, x4] = [order("pg x1"), order("pg x2"), order("pg x4")];
  const cpu = sqlite && x2 && sqlite.totalUs ? x2.totalUs / sqlite.totalUs : null;
  lines.push(
    `PostgreSQL x2 CPU per order (all processes) / SQLite's: ` +
      (cpu === null || !sqlite || !x2
        ? "n/a"
        : `${n0(x2.totalUs)} / ${n0(sqlite.totalUs)} us = ${cpu.toFixed(2)}x`) +
      `; target <= 2x: ${verdict(cpu === null ? null : cpu <= 2)}`,
  );
  for (const [label, s, target] of [
    ["x2", x2, 1.5],
    ["x4", x4, 2],
  ] as const) {
    const ratio = s && x1?.rps ? s.rps / x1.rps : null;
    lines.push(
      `order throughput ${label} / x1: ` +
        (ratio === null || !s || !x1 ? "n/a" : `${n0(s.rps)} / ${n0(x1.rps)} req/s = ${ratio.toFixed(2)}x`) +
        `; target >= ${target}x: ${verdict(ratio === null ? null : ratio >= target)}`,
    );
  }
  const advisory = engines
    .filter((e) => e.postgres)
    .map((e) => {
      const t = e.waits.get("order");
      const all = t?.waits.get("Lock:advisory") ?? 0;
      const sequencer = t?.advisory.get("audit sequencer") ?? 0;
      return { label: e.label, all, onPath: all - sequencer, sequencer, sampled: t !== undefined };
    });
  const onPath = advisory.reduce((s, a) => s + a.onPath, 0);
  lines.push(
    `Lock:advisory among the order path's sampled waits: ` +
      (advisory.length
        ? advisory
            .map((a) => `${a.label} ${a.onPath}${a.sequencer ? ` (+${a.sequencer} audit sequencer)` : ""}`)
            .join(", ")
        : "n/a") +
      `; target none: ${verdict(advisory.length ? onPath === 0 : null)}`,
  );
  const shares = engines.map((e) => ({
    label: e.label,
    share: e.order.total ? e.order.good / e.order.total : 0,
  }));
  lines.push(
    `matched share: ${shares.map((s) => `${s.label} ${(100 * s.share).toFixed(1)}%`).join(", ")}; ` +
      `target >= ${MIN_MATCHED * 100}%: ${verdict(shares.every((s) => s.share >= MIN_MATCHED))}`,
  );
  process.stdout.write(`\ntargets (issue 29):\n${lines.map((l) => `  ${l}\n`).join("")}`);
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const began = Date.now();
  process.stdout.write(
    `node ${process.version}, ${CORES} cores, ${CONNECTIONS} connections, ${SECONDS} s of each load per engine ` +
      `after ${WARMUP_SECONDS} s warm-up; orders in bursts of ${BURST_SHARE * 100}% of the pool's capacity, ` +
      "offered ones worked to completed between windows; PostgreSQL services with " +
      `DATABASE_POOL_SIZE=${POOL_SIZE} per process, each run in a fresh schema; METRICS_PORT=off\n` +
      "us/req: CPU (utime+stime from /proc, all threads) per request over the measured windows, the audit\n" +
      "sequencer's sealing of the window's records included. workers: the service's primary and all its\n" +
      "processes; postgres: every process whose command is postgres (backends, postmaster, checkpointer,\n" +
      "background writer, walwriter, autovacuum), (backends): the service's own backends among them;\n" +
      "redis: redis-server; total: workers + postgres + redis (SQLite: the one service process);\n" +
      "load gen: this process (autocannon in-process) and its own PostgreSQL connections.\n",
  );
  const engines: Engine[] = [];
  const failed: string[] = [];
  for (const engine of ENGINES) {
    const dir = mkdtempSync(join(tmpdir(), "fd-bench-"));
    try {
      const base = { ...benchEnv(dir), METRICS_PORT: "off" };
      if (engine === "sqlite") {
        process.stdout.write("sqlite ...\n");
        engines.push(await measureEngine("sqlite", 1, base, null));
        continue;
      }
      const workers = Number(/^pg(\d+)$/.exec(engine)?.[1]);
      if (!Number.isInteger(workers) || workers < 1)
        throw new Error(`BENCH_ENGINES: unknown engine ${engine}`);
      process.stdout.write(`pg x${workers} ...\n`);
      engines.push(
        await withSchema((url, schema) =>
          measureEngine(
            `pg x${workers}`,
            workers,
            {
              ...base,
              DATABASE_URL: url,
              REDIS_URL,
              REDIS_KEY_PREFIX: `fsd:bench:${schema}:`,
              DATABASE_POOL_SIZE: POOL_SIZE,
            },
            url,
          ),
        ),
      );
    } catch (err) {
      // One engine's failure leaves the others' figures standing; the run still exits 1.
      const message = err instanceof Error ? err.message : String(err);
      failed.push(`${engine}: ${message}`);
      process.stdout.write(`  ${engine} FAILED: ${message}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  report(engines);
  if (process.env.BENCH_LIMITER !== "false") await limiterLatency();
  process.stdout.write(`total ${((Date.now() - began) / 1000).toFixed(0)} s\n`);
  if (failed.length) {
    process.stdout.write(`\nFAILED engines, no figures: ${failed.join("; ")}\n`);
    process.exitCode = 1;
  }
}

await main();
