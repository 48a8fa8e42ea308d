// Shared pieces of the HTTP benchmarks: start and stop server processes, drive them with autocannon,
// measure the server's CPU per request, and compare against a baseline measured around each run.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { appendFileSync, existsSync, openSync, readFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import SQLite from "better-sqlite3";
import { random } from "./order-rows.js";

export const DIST = fileURLToPath(new URL("..", import.meta.url)); // dist/
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const WARMUP_SECONDS = 2;

/**
 * The Node flags `npm start` runs the service with (package.json's start script, `node <flags> <script>`),
 * so that every benchmark's server runs as production does.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = (() => {
  // The checkout's package.json: above dist/, or above a copy of it kept inside the checkout (data/...).
  for (let dir = dirname(DIST); ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const start = String(JSON.parse(readFileSync(file, "utf8")).scripts?.start ?? "");
      return start.split(/\s+/).filter((word) => word.startsWith("--"));
    }
    if (dirname(dir) === dir) throw new Error(`no package.json above ${DIST}`);
  }
})();

export interface Server {
  proc: ChildProcess;
  url: string;
  /** The server's metrics listener (on a port of its own). */
  metricsUrl: string;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/**
 * Starts a server process with its output discarded (so reading its logs costs the load generator nothing),
 * or, with BENCH_SERVER_STDOUT set to a file, appended to that file (to find why a server stopped).
 */
export async function start(
  script: string,
  env: Record<string, string>,
  readyPath: string,
  args: string[] = [],
  nodeFlags: readonly string[] = SERVICE_NODE_FLAGS,
): Promise<Server> {
  const port = await freePort();
  const metricsPort = await freePort();
  // BENCH_SERVER_NODE_ARGS: more Node flags for the server only (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p").
  const nodeArgs = [...nodeFlags, ...(process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean)];
  const proc = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: {
      ...process.env,
      ENV_FILE: "", // the benchmark's settings only, never a .env in the working directory
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: String(metricsPort),
      ...env,
    },
    stdio: [
      "ignore",
      process.env.BENCH_SERVER_STDOUT ? openSync(process.env.BENCH_SERVER_STDOUT, "a") : "ignore",
      "inherit",
    ],
  });
  const url = `http://127.0.0.1:${port}`;
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${script} exited with ${proc.exitCode}`);
    try {
      const res = await fetch(url + readyPath);
      await res.arrayBuffer();
      if (res.ok) return { proc, url, metricsUrl };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${script} did not become ready`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function stop(server: Server): Promise<void> {
  // Already gone (it crashed, or something else stopped it): there is no exit left to wait for.
  if (server.proc.exitCode !== null || server.proc.signalCode !== null) return;
  const exited = once(server.proc, "exit");
  server.proc.kill("SIGTERM");
  await exited;
}

export interface Load {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Bodies sent in turn, one per request (already JSON); `body` is sent with every request otherwise. */
  bodies?: readonly string[];
  /** Paths requested in turn, one per request (`path` is the first request's until then). */
  paths?: readonly string[];
  /** Sees every response (status and body); set only where the answers are read, since it costs the client. */
  onResponse?: (status: number, body: string) => void;
  /** Stops the run after this many requests, if its time is not up before (a pool's capacity, say). */
  maxRequests?: number;
  /** Awaited after the run, before the server's CPU is read: the work the requests left behind (audit). */
  settle?: () => Promise<void>;
  target?: { ratio: number; p99Ms?: number };
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Server CPU time (user + system) per request, microseconds; null where /proc is unavailable. */
  cpuUsPerRequest: number | null;
}

/** CPU ticks (user + system) a process has used so far, from /proc (Linux). */
function cpuTicks(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

const TICKS_PER_SECOND = 100;

/** One run's raw figures, so that the runs of one measurement (bursts, say) can be merged. */
export interface Run {
  requests: number;
  /** From the first request to the last answer, seconds. */
  seconds: number;
  /** Server CPU (user + system, all threads) over the run and its settle step; null without /proc. */
  cpuSeconds: number | null;
  /** Every answer's latency, milliseconds, as autocannon timed it. */
  latencies: number[];
  non2xx: number;
  errors: number;
}

/**
 * With BENCH_WINDOWS set (bench/ab.ts sets it beside its CPU profiles): each measured run appends a line
 * "<server pid> <load> <start> <end>" in microseconds of the monotonic clock, the clock V8's CPU profiles
 * stamp their samples with, so that bench/profile-windows.ts can keep the samples of the measured load.
 */
function noteWindow(server: Server, load: Load, start: bigint): void {
  const file = process.env.BENCH_WINDOWS;
  if (!file) return;
  const end = process.hrtime.bigint() / 1000n;
  appendFileSync(file, `${server.proc.pid} ${load.name} ${start} ${end}\n`);
}

export async function driveRun(server: Server, load: Load, seconds: number): Promise<Run> {
  const before = cpuTicks(server.proc.pid);
  const windowStart = process.hrtime.bigint() / 1000n;
  const headers = { "content-type": "application/json", ...(load.headers ?? {}) };
  const bodies = load.bodies;
  const paths = load.paths;
  let next = 0;
  let nextPath = 0;
  const latencies: number[] = [];
  const began = performance.now();
  let last = began;
  const options: autocannon.Options = {
    url: server.url + load.path,
    method: load.method,
    connections: CONNECTIONS,
    duration: seconds,
    ...(load.maxRequests ? { maxOverallRequests: load.maxRequests } : {}),
    headers,
    body: load.body === undefined ? undefined : JSON.stringify(load.body),
    ...(bodies || paths || load.onResponse
      ? {
          requests: [
            {
              method: load.method,
              path: load.path,
              headers,
              ...(bodies || paths
                ? {
                    setupRequest: (req: autocannon.Request) => ({
                      ...req,
                      ...(bodies ? { body: bodies[next++ % bodies.length] as string } : {}),
                      ...(paths ? { path: paths[nextPath++ % paths.length] as string } : {}),
                    }),
                  }
                : {}),
              ...(load.onResponse ? { onResponse: load.onResponse } : {}),
            },
          ],
        }
      : {}),
  };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error, res) => (error ? reject(error) : resolve(res)));
    instance.on("response", (_client, _status, _bytes, responseTime) => {
      last = performance.now();
      latencies.push(responseTime);
    });
  });
  await load.settle?.();
  const after = cpuTicks(server.proc.pid);
  noteWindow(server, load, windowStart);
  return {
    requests: result.requests.total,
    // To the last answer: a run that stops at maxRequests ends before autocannon's next sample.
    seconds: (last - began) / 1000,
    cpuSeconds: before === null || after === null ? null : (after - before) / TICKS_PER_SECOND,
    latencies,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number);
}

/** The figures of one or more runs of the same load, taken together. */
export function figuresOf(runs: readonly Run[]): Figures {
  const requests = runs.reduce((sum, r) => sum + r.requests, 0);
  const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
  const cpu = runs.some((r) => r.cpuSeconds === null)
    ? null
    : runs.reduce((sum, r) => sum + (r.cpuSeconds ?? 0), 0);
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return {
    rps: seconds > 0 ? requests / seconds : 0,
    p50: Math.round(percentile(latencies, 0.5) * 100) / 100,
    p99: Math.round(percentile(latencies, 0.99) * 100) / 100,
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    cpuUsPerRequest: cpu === null || requests === 0 ? null : (cpu / requests) * 1e6,
  };
}

export async function drive(server: Server, load: Load, seconds: number): Promise<Figures> {
  return figuresOf([await driveRun(server, load, seconds)]);
}

export function row(cells: Array<string | number>, widths: readonly number[] = [17]): string {
  return cells.map((c, i) => String(c).padEnd(widths[i] ?? 11)).join("");
}

/** Drives `load` on `service` between two baseline runs; returns the figures and the ratio to the baseline mean. */
export async function compare(
  baseline: Server,
  service: Server,
  load: Load,
): Promise<{ f: Figures; baseRps: number; baseCpu: number | null; ratio: number }> {
  const baseLoad: Load = { name: "baseline", method: "GET", path: "/json" };
  await drive(service, load, WARMUP_SECONDS);
  const before = await drive(baseline, baseLoad, SECONDS);
  const f = await drive(service, load, SECONDS);
  const after = await drive(baseline, baseLoad, SECONDS);
  const baseRps = (before.rps + after.rps) / 2;
  const baseCpu =
    before.cpuUsPerRequest !== null && after.cpuUsPerRequest !== null
      ? (before.cpuUsPerRequest + after.cpuUsPerRequest) / 2
      : null;
  return { f, baseRps, baseCpu, ratio: f.rps / baseRps };
}

export const us = (v: number | null) => (v === null ? "n/a" : v.toFixed(1));

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const readers = new Map<string, SQLite.Database>();

/**
 * Waits until the service's sequencer has brought every audit record in the SQLite store `file` under a
 * signed checkpoint: the query behind /metrics' fsd_audit_pending_records, read from this process so
 * that polling costs the measured server nothing (a WAL reader does not block its writer).
 */
export async function auditSealed(file: string, timeoutMs = 120_000): Promise<void> {
  let db = readers.get(file);
  if (!db) {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
    readers.set(file, db);
  }
  const pending = db.prepare(
    `select (select count(*) from audit_pending)
       + max(0, (select coalesce(max(leaf_index) + 1, 0) from audit_leaves)
         - (select coalesce(max(tree_size), 0) from audit_checkpoints)) as n`,
  );
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((pending.get() as { n: number }).n === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`audit records were not sequenced within ${timeoutMs / 1000} s`);
}

export function closeReaders(): void {
  for (const db of readers.values()) db.close();
  readers.clear();
}

/** Waits until the service's sequencer has brought every audit record under a signed checkpoint. */
export async function auditDrained(url: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${url}/metrics`)).text();
    if (/^fsd_audit_pending_records 0$/m.test(text)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`audit records were not sequenced within ${timeoutMs / 1000} s`);
}

/** Distinct integers: `count` of [from, to), sampled without replacement, the same every run. */
export function sampleIndices(from: number, to: number, count: number, seed: number): number[] {
  const next = random(seed);
  const span = to - from;
  if (count >= span) return Array.from({ length: Math.max(0, span) }, (_, i) => from + i);
  const picked = new Set<number>();
  while (picked.size < count) picked.add(from + Math.floor(next() * span));
  return [...picked];
}

export interface LoopDelay {
  maxMs: number;
  p99Ms: number;
}

/**
 * The server's event-loop delay since the last call: bench/loop-delay.ts, preloaded into the server
 * (node --import), answers SIGWINCH by writing it to LOOP_DELAY_FILE (`file`) with a sequence number.
 */
export async function loopDelay(server: Server, file: string, seq: number): Promise<LoopDelay> {
  server.proc.kill("SIGWINCH");
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      const read = JSON.parse(readFileSync(file, "utf8")) as LoopDelay & { seq: number };
      if (read.seq === seq) return read;
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the server did not report its event-loop delay");
}
