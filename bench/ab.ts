// A/B benchmark of one load between two builds of the service, alternating in one run, for a change on a
// hot path: "before" is a copy of `dist/` taken before the change (`cp -r dist /tmp/dist-before`), "after"
// is this build. Each build serves its own store, prepared alike (the benchmark's live pool, keys and
// demand) by its own CLI and key service, so "before" may be an older release (its dist built with
// `npx tsc -b tsconfig.build.json` in a worktree of it).
//
//   npm run build && node dist/bench/ab.js /tmp/dist-before            quote, 6 rounds of 5 s
//   BENCH_AB_LOAD=estimate BENCH_ROUNDS=8 node dist/bench/ab.js DIR     estimate; more rounds
//   BENCH_AB_LOAD=verify node dist/bench/ab.js DIR                      GET /api/attest/verify/{seal} of a quote
//   BENCH_AB_LOAD=order node dist/bench/ab.js DIR                       the matched order, in bursts of 4 % of
//                                                                         the pool's capacity, each released by
//                                                                         the caller's cancel, not measured
//   BENCH_AB_NODE_ARGS_BEFORE="" node dist/bench/ab.js dist            a Node flag of `npm start` against none,
//                                                                         on one build (also _AFTER; each build
//                                                                         runs with `npm start`'s otherwise)
//   BENCH_AB_PROFILE=/tmp/prof node dist/bench/ab.js DIR                also a CPU profile of each server, and
//                                                                         the measured runs' times, for
//   node dist/bench/profile-windows.js /tmp/prof                         where each build's CPU goes while
//                                                                         the load is measured (warm-up and
//                                                                         the orders' release left out)
//
// It prints each round's server CPU per request and the medians, with after / before.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  auditSealed,
  closeReaders,
  DIST,
  drive,
  driveRun,
  type Figures,
  figuresOf,
  type Load,
  median,
  type Run,
  row,
  SERVICE_NODE_FLAGS,
  type Server,
  start,
  stop,
  us,
  WARMUP_SECONDS,
} from "./lib.js";
import { benchEnv, demandJobs, type Placed, placedOf, prepareStore, Releaser } from "./workload.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LOAD = process.env.BENCH_AB_LOAD ?? "quote";
const PROFILE_DIR = process.env.BENCH_AB_PROFILE;
/** As bench/run.ts: bursts small enough that the orders stay on the matched path. */
const BURST_SHARE = Number(process.env.BENCH_BURST_SHARE ?? 0.04);

async function main(): Promise<void> {
  const beforeDist = process.argv[2];
  if (!beforeDist) {
    process.stderr.write("usage: node dist/bench/ab.js <dist directory of the build to compare with>\n");
    process.exitCode = 2;
    return;
  }
  if (LOAD !== "quote" && LOAD !== "estimate" && LOAD !== "verify" && LOAD !== "order")
    throw new Error(`BENCH_AB_LOAD: quote, estimate, verify or order, not ${LOAD}`);
  const builds = [
    { name: "before", dist: resolve(beforeDist) },
    { name: "after", dist: DIST },
  ];
  const dirs: string[] = [];
  if (PROFILE_DIR) {
    mkdirSync(PROFILE_DIR, { recursive: true });
    // Emptied after the warm-up (below), so that it holds the measured rounds' runs only.
    process.env.BENCH_WINDOWS = join(PROFILE_DIR, "windows.txt");
  }
  const servers: Array<{
    name: string;
    server: Server;
    load: Load;
    storeFile: string;
    /** For orders: gives back the capacity the last burst took, and says how many were matched. */
    release?: () => Promise<{ orders: number; offered: number }>;
    burst?: number;
  }> = [];
  try {
    for (const build of builds) {
      const dataDir = mkdtempSync(join(tmpdir(), `fd-ab-${build.name}-`));
      dirs.push(dataDir);
      const env = benchEnv(dataDir);
      const prepared = await prepareStore(env, build.dist);
      const jobs = demandJobs(prepared.byBucket, 20_000);
      // BENCH_AB_NODE_ARGS_BEFORE / _AFTER: one build's Node flags, instead of those of `npm start` (a
      // runtime flag A/B'd on one build: the same dist twice, the flag on one side only; "" for none).
      const own = process.env[`BENCH_AB_NODE_ARGS_${build.name.toUpperCase()}`];
      const flags = own === undefined ? [...SERVICE_NODE_FLAGS] : own.split(" ").filter(Boolean);
      if (PROFILE_DIR) flags.push("--cpu-prof", `--cpu-prof-dir=${join(PROFILE_DIR, build.name)}`);
      // No metrics listener: two servers would race for its port, and nothing here reads it.
      const server = await start(
        join(build.dist, "src/main.js"),
        { ...env, METRICS_PORT: "off" },
        "/readyz",
        [],
        flags,
      );
      const storeFile = join(dataDir, "field-dispatch.sqlite");
      const quoteLoad: Load = {
        name: "quote",
        method: "POST",
        path: "/api/dispatch/v1/quote",
        headers: { "x-api-key": prepared.callerKey },
        bodies: jobs.map((j) => j.quote),
        settle: () => auditSealed(storeFile),
      };
      let load: Load = quoteLoad;
      if (LOAD === "estimate")
        load = { ...quoteLoad, name: "estimate", path: "/api/dispatch/v1/estimate", headers: {} };
      if (LOAD === "verify") {
        // The proof of a real quote's record, once the sequencer has placed it in the tree.
        const res = await fetch(`${server.url}/api/dispatch/v1/quote`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": prepared.callerKey },
          body: jobs[0]?.quote,
        });
        const { seal } = (await res.json()) as { seal: string };
        await auditSealed(storeFile);
        load = { name: "verify", method: "GET", path: `/api/attest/verify/${seal}` };
      }
      if (LOAD === "order") {
        const releaser = new Releaser(server.url, prepared.contractorKeys);
        let placed: Placed[] = [];
        let orders = 0;
        load = {
          ...quoteLoad,
          name: "order",
          path: "/api/dispatch/v1/order",
          bodies: jobs.map((j) => j.order),
          onResponse: (status, body) => {
            orders++;
            const p =
              status === 200 || status === 201 ? placedOf(body, prepared.contractorOfRef).placed : null;
            if (p) placed.push(p);
          },
        };
        const release = async () => {
          const done = { orders, offered: placed.length };
          const taken = placed;
          placed = [];
          orders = 0;
          await releaser.cancel(taken, prepared.callerKey);
          await auditSealed(storeFile);
          return done;
        };
        servers.push({
          name: build.name,
          server,
          storeFile,
          load,
          release,
          burst: Math.floor(prepared.capacity * BURST_SHARE),
        });
        continue;
      }
      servers.push({ name: build.name, server, storeFile, load });
    }
    const matched = new Map<string, { orders: number; offered: number }>();
    /** One measurement: for orders, bursts until `seconds` are measured, each released unmeasured. */
    const measure = async (s: (typeof servers)[number], seconds: number): Promise<Figures> => {
      if (!s.release) return drive(s.server, s.load, seconds);
      const runs: Run[] = [];
      let spent = 0;
      do {
        const run = await driveRun(s.server, { ...s.load, maxRequests: s.burst ?? 100 }, seconds - spent);
        runs.push(run);
        spent += run.seconds;
        const r = await s.release();
        const m = matched.get(s.name) ?? { orders: 0, offered: 0 };
        matched.set(s.name, { orders: m.orders + r.orders, offered: m.offered + r.offered });
        if (run.requests === 0) break;
      } while (seconds - spent >= 1);
      return figuresOf(runs);
    };
    for (const s of servers) await measure(s, WARMUP_SECONDS);
    // The profiles' windows are the measured rounds' only.
    if (process.env.BENCH_WINDOWS) rmSync(process.env.BENCH_WINDOWS, { force: true });
    matched.clear();
    const figures = new Map<string, Figures[]>(servers.map((s) => [s.name, []]));
    const widths = [7, 8, 9, 8, 8, 12];
    process.stdout.write(
      `${LOAD}: ${ROUNDS} rounds of ${ROUND_SECONDS} s per build, alternating (the first build of each round ` +
        "alternates too)\n",
    );
    process.stdout.write(`${row(["round", "build", "req/s", "p50 ms", "p99 ms", "cpu us/req"], widths)}\n`);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        const f = await measure(s, ROUND_SECONDS);
        figures.get(s.name)?.push(f);
        const errors = f.non2xx || f.errors ? ` non-2xx ${f.non2xx}, errors ${f.errors}` : "";
        process.stdout.write(
          `${row([round + 1, s.name, f.rps.toFixed(0), f.p50.toFixed(1), f.p99.toFixed(1), us(f.cpuUsPerRequest) + errors], widths)}\n`,
        );
      }
    }
    for (const [name, m] of matched)
      process.stdout.write(
        `${name}: ${m.offered} of ${m.orders} orders offered to a contractor (${((100 * m.offered) / Math.max(1, m.orders)).toFixed(1)} %)\n`,
      );
    const cpu = (name: string) =>
      median((figures.get(name) ?? []).map((f) => f.cpuUsPerRequest ?? Number.NaN));
    const rps = (name: string) => median((figures.get(name) ?? []).map((f) => f.rps));
    process.stdout.write(
      `\nmedians: before ${us(cpu("before"))} us/req (${rps("before").toFixed(0)} req/s), after ` +
        `${us(cpu("after"))} us/req (${rps("after").toFixed(0)} req/s); after / before: ` +
        `${(cpu("after") / cpu("before")).toFixed(3)} in CPU per request\n`,
    );
  } finally {
    for (const s of servers) await stop(s.server);
    closeReaders();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
