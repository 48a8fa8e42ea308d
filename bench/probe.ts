// Readiness-probe benchmark (issue: the probe on an SSRF-safe fetcher): starts the service and fixture
// storefronts on 127.0.0.1, then
//   1. probes five exemplary storefronts one at a time (each a new origin: no cache), end to end over HTTP;
//   2. probes 20 storefronts of different origins at once, each answering after 20 ms (as across a real
//      network, so that requests overlap), and counts at the storefronts how many requests were in
//      flight together (it must stay within PROBE_MAX_CONCURRENT_FETCHES).
// Targets: a probe under 1 s; the 20 concurrent probes all answer 200 with no fetch errors, within the cap.
//
//   npm run bench:probe

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exemplary, type Storefront, slowed, startStorefront, stats } from "../test/helpers/storefronts.js";
import { DIST, start, stop } from "./lib.js";

const CAP = 16;
const SINGLE = 5;
const CONCURRENT = 20;

interface Report {
  grade: string;
  score: number;
  checks: Array<{ status: string; found: { detail: string } }>;
  snapshot: { duration_ms: number; fetches: number; cached: boolean };
}

async function probe(
  serviceUrl: string,
  url: string,
): Promise<{ ms: number; status: number; report: Report }> {
  const started = performance.now();
  const res = await fetch(`${serviceUrl}/api/agentic-commerce/probe`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url }),
  });
  const report = (await res.json()) as Report;
  return { ms: performance.now() - started, status: res.status, report };
}

async function main(): Promise<void> {
  const fronts: Storefront[] = [];
  for (let i = 0; i < SINGLE; i++) fronts.push(await startStorefront(exemplary));
  for (let i = 0; i < CONCURRENT; i++) fronts.push(await startStorefront(slowed(exemplary, 20)));
  const dataDir = mkdtempSync(join(tmpdir(), "fd-bench-probe-"));
  const service = await start(
    join(DIST, "src/main.js"),
    {
      DATA_DIR: dataDir,
      PROBE_ALLOW_PRIVATE_NETWORKS: "true",
      PROBE_ALLOWED_PORTS: fronts.map((f) => f.port).join(","),
      PROBE_MAX_CONCURRENT_FETCHES: String(CAP),
      PROBE_RATE_LIMIT_PER_MINUTE: "100000",
      PROBE_RATE_LIMIT_BURST: "100000",
    },
    "/readyz",
  );
  let failed = 0;
  try {
    process.stdout.write(
      `node ${process.version}; fixture storefronts on 127.0.0.1; PROBE_MAX_CONCURRENT_FETCHES=${CAP}\n\n`,
    );
    // Warm-up on a throwaway origin is not possible without a cache hit later, so the first probe is
    // reported as is (it includes the service's first outbound connection).
    const singles: number[] = [];
    for (const front of fronts.slice(0, SINGLE)) {
      const { ms, status, report } = await probe(service.url, `${front.origin}/`);
      if (status !== 200 || report.grade !== "A" || report.snapshot.cached) failed++;
      singles.push(ms);
      process.stdout.write(
        `single probe  ${ms.toFixed(0).padStart(5)} ms end to end (service: ${report.snapshot.duration_ms} ms, ${report.snapshot.fetches} fetches, grade ${report.grade})\n`,
      );
    }
    const worst = Math.max(...singles);
    const singleOk = worst < 1000;
    if (!singleOk) failed++;
    process.stdout.write(
      `slowest single probe ${worst.toFixed(0)} ms; target < 1000 ms: ${singleOk ? "ok" : "MISS"}\n\n`,
    );

    stats.peakInFlight = 0;
    const started = performance.now();
    const results = await Promise.all(fronts.slice(SINGLE).map((f) => probe(service.url, `${f.origin}/`)));
    const wall = performance.now() - started;
    const non200 = results.filter((r) => r.status !== 200).length;
    const notA = results.filter((r) => r.report.grade !== "A").length;
    const fetchErrors = results
      .flatMap((r) => r.report.checks ?? [])
      .filter((c) => c.status !== "pass").length;
    const latencies = results.map((r) => r.ms).sort((a, b) => a - b);
    const withinCap = stats.peakInFlight <= CAP;
    const concurrentOk = non200 === 0 && notA === 0 && fetchErrors === 0 && withinCap;
    if (!concurrentOk) failed++;
    process.stdout.write(
      `${CONCURRENT} concurrent probes of different origins (storefronts answering in 20 ms): wall ${wall.toFixed(0)} ms, per probe p50 ${latencies[Math.floor(latencies.length / 2)]?.toFixed(0)} ms, max ${latencies[latencies.length - 1]?.toFixed(0)} ms\n` +
        `  non-200 ${non200}, grades other than A ${notA}, checks not passing ${fetchErrors}\n` +
        `  peak requests in flight at the storefronts ${stats.peakInFlight} (cap ${CAP}): ${withinCap ? "ok" : "MISS"}\n`,
    );
    process.stdout.write(`\n${failed === 0 ? "all targets met" : `${failed} target(s) missed`}\n`);
  } finally {
    await stop(service);
    await Promise.all(fronts.map((f) => f.close()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
