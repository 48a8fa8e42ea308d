// HTTP benchmark: starts the service on the embedded store and, in the same run, a bare Fastify app with
// one JSON route as the baseline; drives both with autocannon (50 connections) and prints req/s, p50, p99
// and each endpoint's ratio to the baseline, against the targets of the dispatch-core issue.
//
//   npm run bench                 (BENCH_SECONDS=10 by default; BENCH_CONNECTIONS=50)

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

const DIST = fileURLToPath(new URL("..", import.meta.url)); // dist/
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP_SECONDS = 2;

interface Server {
  proc: ChildProcess;
  url: string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/** Starts a server process with its output discarded (so reading its logs costs the load generator nothing). */
async function start(script: string, env: Record<string, string>, readyPath: string): Promise<Server> {
  const port = await freePort();
  const proc = spawn(process.execPath, [script], {
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

async function stop(server: Server): Promise<void> {
  const exited = once(server.proc, "exit");
  server.proc.kill("SIGTERM");
  await exited;
}

interface Load {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  target?: { ratio: number; p99Ms?: number };
}

interface Figures {
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

async function drive(server: Server, load: Load, seconds: number): Promise<Figures> {
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

function row(cells: Array<string | number>): string {
  return cells.map((c, i) => String(c).padEnd(i === 0 ? 17 : 11)).join("");
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "fd-bench-"));
  const cli = join(DIST, "src/cli/index.js");
  const env = {
    DATA_DIR: dataDir,
    PUBLIC_RATE_LIMIT_PER_MINUTE: "100000000",
    PUBLIC_RATE_LIMIT_BURST: "100000000",
    // BENCH_LOG_LEVEL: measure the cost of per-request logging (the service default is info).
    ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
    // BENCH_LOG_REQUESTS=true: measure with the per-request access log on (off by default).
    ...(process.env.BENCH_LOG_REQUESTS ? { LOG_REQUESTS: process.env.BENCH_LOG_REQUESTS } : {}),
  };
  // A benchmark key with a per-key limit override, as the operator CLI issues it for large accounts.
  const key = execFileSync(
    process.execPath,
    [
      cli,
      "keys",
      "create",
      "--account",
      "bench",
      "--mode",
      "test",
      "--rate-limit-per-minute",
      "100000000",
      "--rate-limit-burst",
      "100000000",
    ],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] },
  )
    .toString()
    .trim()
    .split("\n")
    .pop() as string;

  const baseline = await start(join(DIST, "bench/baseline-server.js"), {}, "/json");
  const service = await start(join(DIST, "src/main.js"), env, "/readyz");
  const auth = { "x-api-key": key };
  const job = { trade: "plumbing", location: { state: "TX", zip: "78701" }, urgency: "urgent" };
  const loads: Load[] = [
    { name: "index", method: "GET", path: "/api/dispatch/index", target: { ratio: 0.7 } },
    {
      name: "estimate",
      method: "POST",
      path: "/api/dispatch/v1/estimate",
      body: job,
      target: { ratio: 0.5 },
    },
    {
      name: "quote",
      method: "POST",
      path: "/api/dispatch/v1/quote",
      body: job,
      headers: auth,
      target: { ratio: 0.3 },
    },
    {
      name: "order (durable)",
      method: "POST",
      path: "/api/dispatch/v1/order",
      body: { ...job, description: "Kitchen sink leaking under the cabinet" },
      headers: auth,
      target: { ratio: 0.15, p99Ms: 25 },
    },
  ];

  try {
    process.stdout.write(
      `node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up, service LOG_LEVEL=${env.LOG_LEVEL ?? "info (default)"} LOG_REQUESTS=${env.LOG_REQUESTS ?? "false (default)"}\n` +
        "This machine's throughput drifts between runs, so the baseline is measured right before and right after\n" +
        "each endpoint and the ratio taken against their mean. cpu us/req is the server process's CPU time per\n" +
        "request (from /proc): a steadier measure of its own cost.\n\n",
    );
    const baseLoad: Load = { name: "baseline", method: "GET", path: "/json" };
    await drive(baseline, baseLoad, WARMUP_SECONDS);
    process.stdout.write(
      `${row(["endpoint", "req/s", "p50 ms", "p99 ms", "cpu us/req", "base req/s", "base cpu", "ratio", "target", "verdict"])}\n`,
    );
    let failed = 0;
    for (const load of loads) {
      await drive(service, load, WARMUP_SECONDS);
      const before = await drive(baseline, baseLoad, SECONDS);
      const f = await drive(service, load, SECONDS);
      const after = await drive(baseline, baseLoad, SECONDS);
      const baseRps = (before.rps + after.rps) / 2;
      const baseCpu =
        before.cpuUsPerRequest !== null && after.cpuUsPerRequest !== null
          ? (before.cpuUsPerRequest + after.cpuUsPerRequest) / 2
          : null;
      const ratio = f.rps / baseRps;
      const target = load.target;
      const ok =
        f.non2xx === 0 &&
        f.errors === 0 &&
        (!target || (ratio >= target.ratio && (target.p99Ms === undefined || f.p99 <= target.p99Ms)));
      if (!ok) failed++;
      const targetText = target ? `>=${target.ratio}${target.p99Ms ? `,p99<=${target.p99Ms}` : ""}` : "";
      const notes = f.non2xx || f.errors ? ` (non-2xx ${f.non2xx}, errors ${f.errors})` : "";
      const us = (v: number | null) => (v === null ? "n/a" : v.toFixed(1));
      process.stdout.write(
        `${row([load.name, f.rps.toFixed(0), f.p50, f.p99, us(f.cpuUsPerRequest), baseRps.toFixed(0), us(baseCpu), ratio.toFixed(2), targetText, (ok ? "ok" : "MISS") + notes])}\n`,
      );
    }
    process.stdout.write(`\n${failed === 0 ? "all targets met" : `${failed} target(s) missed`}\n`);
  } finally {
    await stop(service);
    await stop(baseline);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
