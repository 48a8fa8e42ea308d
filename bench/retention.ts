// Retention under load (issue 30): the order load while the service purges a backlog of old order events,
// against the same load on the same store without one, in one run.
//
//   npm run bench:retention   (BENCH_BACKLOG rows, default 1,500,000; BENCH_SECONDS of orders per phase,
//                              default 10; about 4 minutes in all)
//
// 1. A store with the simulator's live pool and the load's keys (bench/workload.ts).
// 2. No backlog: the service is started, the order load runs (bursts of orders, the offered ones worked to
//    completed between bursts, as in bench/run.ts), and the service is stopped.
// 3. BENCH_BACKLOG order events from 40 to 100 days ago (older than WEBHOOK_RETENTION_DAYS, 30) are
//    written straight into the SQLite file, in one transaction.
// 4. With the backlog: the service is started on the store again (its webhook tick starts a purge pass at
//    once), and the same load runs while it drains.
//
// Reported for each phase: orders/s, p50 and p99, the server's CPU per order (all threads, from /proc),
// and the server's event-loop delay during the load (monitorEventLoopDelay, max and p99, by
// bench/loop-delay.ts in the server process); for the backlog, rows purged per second over the load
// (counted from this process on a read-only connection, which costs the server nothing), and how long
// the server took to exit on SIGTERM in the middle of the backlog.

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { writeBacklog } from "./history-store.js";
import {
  CONNECTIONS,
  DIST,
  type Figures,
  figuresOf,
  type Load,
  loopDelay,
  row,
  SERVICE_NODE_FLAGS,
  type Server,
  start,
  stop,
  us,
  WARMUP_SECONDS,
} from "./lib.js";
import {
  benchEnv,
  demandJobs,
  driveWorked,
  type Placed,
  placedOf,
  prepareStore,
  Releaser,
} from "./workload.js";

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 1_500_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BURST_SHARE = 0.04; // as bench/run.ts: bursts the pool matches
const DAY = 86_400_000;

interface Phase {
  figures: Figures;
  loop: { maxMs: number; p99Ms: number };
}

/** Order events older than the service's cutoff, counted on a read-only connection. */
function oldRows(file: string): number {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const cutoff = new Date(Date.now() - 30 * DAY).toISOString();
    return (
      db.prepare("select count(*) as n from order_events where created_at < ?").get(cutoff) as { n: number }
    ).n;
  } finally {
    db.close();
  }
}

/** The profile's lines of the statements that read or delete order events (the purge and its gauge). */
function purgeLines(file: string): string {
  if (!existsSync(file)) return "  (no profile written)";
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => /from "order_events"/.test(line) && !/"id" >/.test(line))
    .map((line) => `  ${line.trim()}`)
    .join("\n");
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "fd-bench-retention-"));
  const delayFile = join(dataDir, "loop-delay.json");
  const env: Record<string, string> = {
    ...benchEnv(dataDir),
    METRICS_PORT: "off",
    LOOP_DELAY_FILE: delayFile,
  };
  const storeFile = join(dataDir, "field-dispatch.sqlite");
  const flags = [...SERVICE_NODE_FLAGS, "--import", join(DIST, "bench/loop-delay.js")];
  try {
    const prepared = await prepareStore(env);
    const jobs = demandJobs(prepared.byBucket, 20_000);
    const burst = Math.floor(prepared.capacity * BURST_SHARE);
    let placed: Placed[] = [];
    const load: Load = {
      name: "order (matched)",
      method: "POST",
      path: "/api/dispatch/v1/order",
      headers: { "x-api-key": prepared.callerKey },
      bodies: jobs.map((j) => j.order),
      maxRequests: burst,
      onResponse: (status, body) => {
        const p = status === 201 || status === 200 ? placedOf(body, prepared.contractorOfRef).placed : null;
        if (p) placed.push(p);
      },
    };
    let seq = 0;
    /** The order load for `seconds`, in bursts, the offered orders worked to completed between them. */
    const phase = async (server: Server, seconds: number): Promise<Phase> => {
      const releaser = new Releaser(server.url, prepared.contractorKeys);
      await loopDelay(server, delayFile, ++seq); // from here on
      const runs = await driveWorked(server, load, seconds, releaser, () => {
        const done = placed;
        placed = [];
        return done;
      });
      const loop = await loopDelay(server, delayFile, ++seq);
      return { figures: figuresOf(runs), loop };
    };
    const warm = async (server: Server) => {
      await phase(server, WARMUP_SECONDS);
    };

    process.stdout.write(
      `node ${process.version}, ${CONNECTIONS} connections, orders in bursts of at most ${burst}, ${SECONDS} s per phase\n`,
    );
    let service = await start(join(DIST, "src/main.js"), env, "/readyz", [], flags);
    await warm(service);
    const fresh = await phase(service, SECONDS);
    await stop(service);

    const before = oldRows(storeFile);
    const wrote = writeBacklog(storeFile, BACKLOG);
    const backlog = oldRows(storeFile);
    process.stdout.write(
      `backlog: ${backlog - before} old order events written in ${wrote.toFixed(1)} s (one transaction)\n`,
    );

    const began = performance.now();
    // The purge's statements timed inside SQLite, written when the store closes (config SQL_PROFILE_FILE).
    const profile = join(dataDir, "sql-profile.txt");
    service = await start(
      join(DIST, "src/main.js"),
      { ...env, SQL_PROFILE_FILE: profile },
      "/readyz",
      [],
      flags,
    );
    seq = 0; // a new server process counts afresh
    await warm(service);
    const t0 = performance.now();
    const left0 = oldRows(storeFile);
    const draining = await phase(service, SECONDS);
    const left1 = oldRows(storeFile);
    const t1 = performance.now();
    const stopAt = performance.now();
    await stop(service);
    const stopMs = performance.now() - stopAt;
    const rate = (left0 - left1) / ((t1 - t0) / 1000);

    const widths = [22, 10, 10, 10, 14, 16, 16];
    process.stdout.write(
      `\n${row(["phase", "orders/s", "p50 ms", "p99 ms", "cpu us/order", "loop max ms", "loop p99 ms"], widths)}\n`,
    );
    const line = (name: string, p: Phase) =>
      process.stdout.write(
        `${row(
          [
            name,
            p.figures.rps.toFixed(0),
            p.figures.p50,
            p.figures.p99,
            us(p.figures.cpuUsPerRequest),
            p.loop.maxMs.toFixed(1),
            p.loop.p99Ms.toFixed(1),
          ],
          widths,
        )}\n`,
      );
    line("no backlog", fresh);
    line("backlog draining", draining);
    const ratio =
      fresh.figures.cpuUsPerRequest && draining.figures.cpuUsPerRequest
        ? (draining.figures.cpuUsPerRequest / fresh.figures.cpuUsPerRequest).toFixed(2)
        : "n/a";
    process.stdout.write(
      `\ncpu per order, backlog / none: ${ratio}; p99 ${(draining.figures.p99 / fresh.figures.p99).toFixed(2)}x\n` +
        `purged under load: ${left0 - left1} rows in ${((t1 - t0) / 1000).toFixed(1)} s, ${rate.toFixed(0)} rows/s ` +
        `(${left1} left, ${(left1 / Math.max(rate, 1) / 60).toFixed(1)} min more at that rate); ` +
        `${((t0 - began) / 1000).toFixed(1)} s from start to the load\n` +
        `SIGTERM to exit with the backlog draining: ${stopMs.toFixed(0)} ms\n` +
        `purge statements (total ms, runs, per run, statement; timed in SQLite by SQL_PROFILE_FILE):\n${purgeLines(profile)}\n` +
        `errors: ${fresh.figures.errors + draining.figures.errors}, non-2xx: ${fresh.figures.non2xx + draining.figures.non2xx}\n`,
    );
  } finally {
    if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
