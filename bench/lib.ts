// Shared pieces of the HTTP benchmarks: start and stop server processes, drive them with autocannon,
// measure the server's CPU per request, and compare against a baseline measured around each run.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

export const DIST = fileURLToPath(new URL("..", import.meta.url)); // dist/
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const WARMUP_SECONDS = 2;

export interface Server {
  proc: ChildProcess;
  url: string;
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

/** Starts a server process with its output discarded (so reading its logs costs the load generator nothing). */
export async function start(
  script: string,
  env: Record<string, string>,
  readyPath: string,
  args: string[] = [],
): Promise<Server> {
  const port = await freePort();
  const proc = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${script} exited with ${proc.exitCode}`);
    try {
      const res = await fetch(url + readyPath);
      await res.arrayBuffer();
      if (res.ok) return { proc, url };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${script} did not become ready`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function stop(server: Server): Promise<void> {
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

export async function drive(server: Server, load: Load, seconds: number): Promise<Figures> {
  const before = cpuTicks(server.proc.pid);
  const result = await autocannon({
    url: server.url + load.path,
    method: load.method,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { "content-type": "application/json", ...(load.headers ?? {}) },
    body: load.body === undefined ? undefined : JSON.stringify(load.body),
  });
  const after = cpuTicks(server.proc.pid);
  const total = result.requests.total;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuUsPerRequest:
      before === null || after === null || total === 0
        ? null
        : ((after - before) / TICKS_PER_SECOND / total) * 1e6,
  };
}

export function row(cells: Array<string | number>): string {
  return cells.map((c, i) => String(c).padEnd(i === 0 ? 17 : 11)).join("");
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
