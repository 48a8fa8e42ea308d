// HTTP benchmark: starts the service on the embedded store and, in the same run, a bare Fastify app with
// one JSON route as the baseline; drives both with autocannon (50 connections) and prints req/s, p50, p99
// and each endpoint's ratio to the baseline, against the targets of the dispatch-core issue.
//
//   npm run bench                 (BENCH_SECONDS=10 by default; BENCH_CONNECTIONS=50)

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CONNECTIONS,
  compare,
  DIST,
  drive,
  type Load,
  row,
  SECONDS,
  start,
  stop,
  us,
  WARMUP_SECONDS,
} from "./lib.js";

async function auditDrained(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${url}/metrics`)).text();
    if (/^fsd_audit_pending_records 0$/m.test(text)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("audit records were not sequenced within 2 minutes");
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "fd-bench-"));
  const cli = join(DIST, "src/cli/index.js");
  const env = {
    DATA_DIR: dataDir,
    PUBLIC_RATE_LIMIT_PER_MINUTE: "100000000",
    PUBLIC_RATE_LIMIT_BURST: "100000000",
    // The benchmark key is a test key: without this, simulated contractors would play tens of thousands
    // of sandbox orders in the background of every later measurement.
    SANDBOX_SIMULATION: "false",
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
  // A sealed quote to verify: the verify load reads and proves a real record.
  const sealed = (await (
    await fetch(`${service.url}/api/dispatch/v1/quote`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body: JSON.stringify(job),
    })
  ).json()) as { seal: string };
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
    {
      name: "verify",
      method: "GET",
      path: `/api/attest/verify/${sealed.seal}`,
      target: { ratio: 0.5 },
    },
  ];

  try {
    process.stdout.write(
      `node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up, service LOG_LEVEL=${env.LOG_LEVEL ?? "info (default)"} LOG_REQUESTS=${env.LOG_REQUESTS ?? "false (default)"}\n` +
        "This machine's throughput drifts between runs, so the baseline is measured right before and right after\n" +
        "each endpoint and the ratio taken against their mean. cpu us/req is the server process's CPU time per\n" +
        "request (from /proc): a steadier measure of its own cost.\n\n",
    );
    await drive(baseline, { name: "baseline", method: "GET", path: "/json" }, WARMUP_SECONDS);
    process.stdout.write(
      `${row(["endpoint", "req/s", "p50 ms", "p99 ms", "cpu us/req", "base req/s", "base cpu", "ratio", "target", "verdict"])}\n`,
    );
    let failed = 0;
    const only = process.env.BENCH_ONLY?.split(",");
    for (const load of loads.filter((l) => !only || only.includes(l.name.split(" ")[0] as string))) {
      // Verify is measured in steady state: once the sequencer has caught up with the records the
      // quote and order runs wrote (its own throughput is in bench:audit).
      if (load.name === "verify") await auditDrained(service.url);
      const { f, baseRps, baseCpu, ratio } = await compare(baseline, service, load);
      const target = load.target;
      const ok =
        f.non2xx === 0 &&
        f.errors === 0 &&
        (!target || (ratio >= target.ratio && (target.p99Ms === undefined || f.p99 <= target.p99Ms)));
      if (!ok) failed++;
      const targetText = target ? `>=${target.ratio}${target.p99Ms ? `,p99<=${target.p99Ms}` : ""}` : "";
      const notes = f.non2xx || f.errors ? ` (non-2xx ${f.non2xx}, errors ${f.errors})` : "";
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
