// HTTP benchmark: the service's quote and order on the path real orders take, against three baselines
// measured in the same run: a bare Fastify app (how fast HTTP is here), the floor (floor-server.ts: the
// least a durable, audited order must do) and the product floor (product-floor-server.ts: the rows a
// correct order of this product must write, issue 29). Rounds alternate the five loads; the figures are
// the rounds' medians, and quote and order are given as multiples of the floor's and the product floor's
// CPU per request. The targets (issue 29): order at most 1.2x the product floor with p99 at most 25 ms,
// quote at most 2x the floor. Every server started has METRICS_PORT=off.
//
// The order load is the simulator's demand (trades, states, urgencies, sites) on the simulator's live
// pool, with a live caller's key. After each order run the contractors offered a job accept it and work
// it to completed over HTTP with their own keys, so the pool never runs dry; that traffic runs between
// measurements, never during one, so an order run's server CPU is the orders' alone. A run in which less
// than 95 % of the orders were matched (offered to a contractor) measured the wrong path: it is reported
// INVALID, without figures, and the process exits 1.
//
//   npm run bench                          3 rounds of 5 s per load (about 3 minutes)
//   BENCH_LONG=true npm run bench          5 rounds of 10 s
//   BENCH_ROUNDS=4 BENCH_SECONDS=8         explicit; BENCH_CONNECTIONS=50 by default
//   BENCH_OTHERS=true                      also index, estimate, audit verify and the unmatched order path,
//                                          each against the bare baseline measured around it

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  auditSealed,
  CONNECTIONS,
  closeReaders,
  compare,
  DIST,
  drive,
  driveRun,
  type Figures,
  figuresOf,
  type Load,
  median,
  type Run,
  row,
  type Server,
  start,
  stop,
  us,
  WARMUP_SECONDS,
} from "./lib.js";
import { benchEnv, demandJobs, matchedOrderLoad, type Placed, prepareStore, Releaser } from "./workload.js";

const LONG = process.env.BENCH_LONG === "true";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (LONG ? 5 : 3));
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? (LONG ? 10 : 5));
/** Below this share of matched orders a run measured the unmatched path: not a result. */
const MIN_MATCHED = 0.95;
/** Issue 29's targets: the quote's CPU per request at most this multiple of the floor's, the order's at
 * most this multiple of the product floor's, order p99 at most 25 ms. */
const TARGET_QUOTE_X_FLOOR = 2;
const TARGET_ORDER_X_PRODUCT_FLOOR = 1.2;
const TARGET_ORDER_P99_MS = 25;
/**
 * Orders are measured in bursts of at most this share of the pool's capacity (its units, the sum of
 * max_active_jobs), the offered ones released after each burst. The simulator's demand puts each site near
 * one contractor, whose neighbours are few; and since capacity is time (each unit holds a block of its
 * contractor's day, migration 0022), a contractor runs out of time long before it runs out of units: at
 * 15 % a burst matched 92-93 % of its orders on this pool (at 50 and at 10 connections alike, while quotes
 * of the same jobs found a contractor 99.8-100 % of the time), at 4 % 98 %. BENCH_BURST_SHARE overrides.
 */
const BURST_SHARE = Number(process.env.BENCH_BURST_SHARE ?? 0.04);
/** work: contractors accept and complete the offered orders after each run; cancel: the caller cancels them. */
const RELEASE = process.env.BENCH_RELEASE === "cancel" ? "cancel" : "work";

type Name = "bare fastify" | "floor" | "product floor" | "quote" | "order (matched)";
const NAMES: Name[] = ["bare fastify", "floor", "product floor", "quote", "order (matched)"];

interface Tally {
  total: number;
  offered: number;
  statuses: Map<string, number>;
  placed: Placed[];
}

const newTally = (): Tally => ({ total: 0, offered: 0, statuses: new Map(), placed: [] });

const pct = (part: number, whole: number) => (whole === 0 ? "n/a" : `${((100 * part) / whole).toFixed(1)}%`);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "fd-bench-"));
  const env: Record<string, string> = {
    ...benchEnv(dataDir),
    // BENCH_LOG_LEVEL: measure the cost of per-request logging (the service default is info).
    ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
    // BENCH_LOG_REQUESTS=true: measure with the per-request access log on (off by default).
    ...(process.env.BENCH_LOG_REQUESTS ? { LOG_REQUESTS: process.env.BENCH_LOG_REQUESTS } : {}),
    METRICS_PORT: "off",
  };
  /** No metrics listener in any server started (the service reads METRICS_PORT; the others ignore it). */
  const noMetrics = { METRICS_PORT: "off" };
  const began = Date.now();
  const prepared = await prepareStore(env);
  const jobs = demandJobs(prepared.byBucket, 20_000);
  const servers: Server[] = [];
  let releaser: Releaser | undefined;
  try {
    const baseline = await start(join(DIST, "bench/baseline-server.js"), noMetrics, "/json");
    servers.push(baseline);
    const floor = await start(
      join(DIST, "bench/floor-server.js"),
      { ...noMetrics, FLOOR_DB: join(dataDir, "floor/floor.sqlite") },
      "/healthz",
    );
    servers.push(floor);
    const productFloor = await start(
      join(DIST, "bench/product-floor-server.js"),
      { ...noMetrics, PRODUCT_FLOOR_DB: join(dataDir, "product-floor/product-floor.sqlite") },
      "/healthz",
    );
    servers.push(productFloor);
    const service = await start(join(DIST, "src/main.js"), env, "/readyz");
    servers.push(service);
    const storeFile = join(dataDir, "field-dispatch.sqlite");
    releaser = new Releaser(service.url, prepared.contractorKeys);
    const burst = Math.floor(prepared.capacity * BURST_SHARE);
    const auth = { "x-api-key": prepared.callerKey };
    // The keys' own audit records are sequenced before anything is measured.
    await auditSealed(storeFile);

    let tally = newTally();
    let quotes = { total: 0, available: 0 };
    const loads: Record<Name, { server: Server; load: Load }> = {
      "bare fastify": { server: baseline, load: { name: "bare fastify", method: "GET", path: "/json" } },
      floor: {
        server: floor,
        load: { name: "floor", method: "POST", path: "/order", bodies: jobs.map((j) => j.order) },
      },
      "product floor": {
        server: productFloor,
        load: { name: "product floor", method: "POST", path: "/order", bodies: jobs.map((j) => j.order) },
      },
      quote: {
        server: service,
        load: {
          name: "quote",
          method: "POST",
          path: "/api/dispatch/v1/quote",
          headers: auth,
          bodies: jobs.map((j) => j.quote),
          onResponse: (status, body) => {
            quotes.total++;
            if (status === 200 && body.includes('"availability":"available"')) quotes.available++;
          },
          // The CPU of a quote includes sequencing its sealed record into the audit tree.
          settle: () => auditSealed(storeFile),
        },
      },
      "order (matched)": {
        server: service,
        load: matchedOrderLoad({
          name: "order (matched)",
          headers: auth,
          jobs,
          burst,
          contractorOfRef: prepared.contractorOfRef,
          onAnswer: ({ status: orderStatus, placed }) => {
            tally.total++;
            tally.statuses.set(orderStatus, (tally.statuses.get(orderStatus) ?? 0) + 1);
            if (placed) {
              tally.offered++;
              tally.placed.push(placed);
            }
          },
          settle: () => auditSealed(storeFile),
        }),
      },
    };

    /** Releases the offered orders measured so far; returns how many, and what it took. */
    const release = async () => {
      const t0 = Date.now();
      const before = releaser?.requests ?? 0;
      const placed = tally.placed;
      tally.placed = [];
      if (RELEASE === "cancel") await releaser?.cancel(placed, prepared.callerKey);
      else await releaser?.work(placed);
      await auditSealed(storeFile);
      return { orders: placed.length, requests: (releaser?.requests ?? 0) - before, ms: Date.now() - t0 };
    };
    const released = { bursts: 0, orders: 0, requests: 0, ms: 0 };

    process.stdout.write(
      `node ${process.version}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${ROUND_SECONDS} s per load after ` +
        `${WARMUP_SECONDS} s warm-up; ${prepared.contractorKeys.size} live contractors in ${prepared.byBucket.size} ` +
        `(trade, state) buckets holding ${prepared.capacity} jobs at once; orders in bursts of at most ${burst} ` +
        `(${BURST_SHARE * 100}% of that), released after each; ${jobs.length} distinct jobs from the demand ` +
        "model; service LOG_LEVEL=" +
        `${env.LOG_LEVEL ?? "info (default)"} LOG_REQUESTS=${env.LOG_REQUESTS ?? "false (default)"}\n` +
        "cpu us/req: the server process's CPU time (all threads, from /proc) per request; for quote and order\n" +
        "it runs until the audit sequencer has sealed the run's records, so their deferred work is counted.\n\n",
    );
    /** An order run: bursts until `seconds` of orders are measured, the offered ones released after each. */
    const orderRun = async (seconds: number): Promise<Figures> => {
      const runs: Run[] = [];
      let spent = 0;
      do {
        const run = await driveRun(service, loads["order (matched)"].load, seconds - spent);
        runs.push(run);
        spent += run.seconds;
        const r = await release();
        released.bursts++;
        released.orders += r.orders;
        released.requests += r.requests;
        released.ms += r.ms;
        // A burst with no answer (the server gone) measures nothing more: stop rather than loop.
        if (run.requests === 0) break;
      } while (seconds - spent >= 1);
      return figuresOf(runs);
    };
    /** Says what the releases since the last call took, and starts counting again. */
    const releasedNote = () => {
      const how =
        RELEASE === "cancel" ? "cancelled by the caller" : "accepted and completed by their contractors";
      const note =
        `${released.bursts} burst(s); after each, the offered orders ${how}: ${released.orders} orders, ` +
        `${released.requests} requests, ${(released.ms / 1000).toFixed(1)} s, not measured; ` +
        `${releaser?.failures ?? 0} refused so far`;
      Object.assign(released, { bursts: 0, orders: 0, requests: 0, ms: 0 });
      return note;
    };
    for (const name of NAMES) {
      if (name === "order (matched)") {
        await orderRun(WARMUP_SECONDS);
        process.stdout.write(`warm-up: ${releasedNote()}\n`);
      } else await drive(loads[name].server, loads[name].load, WARMUP_SECONDS);
    }
    tally = newTally();
    quotes = { total: 0, available: 0 };

    const figures = new Map<Name, Figures[]>(NAMES.map((n) => [n, []]));
    const header = ["round", "load", "req/s", "p50 ms", "p99 ms", "cpu us/req", "answers"];
    const roundWidths = [7, 17, 9, 8, 8, 12];
    process.stdout.write(`${row(header, roundWidths)}\n`);
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts one load later, so no load always follows the same one.
      const order = NAMES.map((_, i) => NAMES[(i + round) % NAMES.length] as Name);
      for (const name of order) {
        const counted = {
          total: tally.total,
          offered: tally.offered,
          quotes: quotes.total,
          avail: quotes.available,
        };
        const f =
          name === "order (matched)"
            ? await orderRun(ROUND_SECONDS)
            : await drive(loads[name].server, loads[name].load, ROUND_SECONDS);
        figures.get(name)?.push(f);
        const answers =
          name === "order (matched)"
            ? `${pct(tally.offered - counted.offered, tally.total - counted.total)} offered`
            : name === "quote"
              ? `${pct(quotes.available - counted.avail, quotes.total - counted.quotes)} available`
              : "";
        const errors = f.non2xx || f.errors ? ` non-2xx ${f.non2xx}, errors ${f.errors}` : "";
        const offered = tally.offered - counted.offered;
        const unmatched = name === "order (matched)" && offered < MIN_MATCHED * (tally.total - counted.total);
        // A round that measured mostly unmatched orders shows no figure, as the run's medians would not.
        const cells = unmatched
          ? [round + 1, name, "INVALID", "", "", "", answers + errors]
          : [
              round + 1,
              name,
              f.rps.toFixed(0),
              f.p50.toFixed(1),
              f.p99.toFixed(1),
              us(f.cpuUsPerRequest),
              answers + errors,
            ];
        process.stdout.write(`${row(cells, roundWidths)}\n`);
        if (name === "order (matched)") process.stdout.write(`${" ".repeat(7)}${releasedNote()}\n`);
      }
    }

    const med = (name: Name, pick: (f: Figures) => number | null) => {
      const values = (figures.get(name) ?? []).map(pick).filter((v): v is number => v !== null);
      return values.length ? median(values) : null;
    };
    const floorCpu = med("floor", (f) => f.cpuUsPerRequest);
    const productFloorCpu = med("product floor", (f) => f.cpuUsPerRequest);
    const floorRps = med("floor", (f) => f.rps) ?? 0;
    const failures = (name: Name) =>
      (figures.get(name) ?? []).reduce((sum, f) => sum + f.non2xx + f.errors, 0);
    const matched = tally.total === 0 ? 0 : tally.offered / tally.total;
    const invalid: string[] = [];
    if (matched < MIN_MATCHED)
      invalid.push(
        `only ${pct(tally.offered, tally.total)} of ${tally.total} orders were matched (at least ${MIN_MATCHED * 100}% needed)`,
      );
    if (failures("order (matched)") > 0) invalid.push(`${failures("order (matched)")} orders failed`);
    if (failures("quote") > 0) invalid.push(`${failures("quote")} quotes failed`);
    if (failures("floor") > 0) invalid.push(`${failures("floor")} floor orders failed`);
    if (failures("product floor") > 0)
      invalid.push(`${failures("product floor")} product floor orders failed`);

    const medianWidths = [17, 9, 8, 8, 12, 11, 11, 20, 22];
    process.stdout.write(`\nmedians of ${ROUNDS} rounds:\n`);
    process.stdout.write(
      `${row(["load", "req/s", "p50 ms", "p99 ms", "cpu us/req", "cpu/floor", "rps/floor", "cpu/product floor", "target", "verdict"], medianWidths)}\n`,
    );
    let missed = 0;
    for (const name of NAMES) {
      const service = name === "quote" || name === "order (matched)";
      if (service && invalid.length > 0) {
        process.stdout.write(`${row([name, "INVALID"])}\n`);
        continue;
      }
      const cpu = med(name, (f) => f.cpuUsPerRequest);
      const rps = med(name, (f) => f.rps) ?? 0;
      const p99 = med(name, (f) => f.p99) ?? 0;
      const xFloor = cpu !== null && floorCpu ? cpu / floorCpu : null;
      const xProductFloor = cpu !== null && productFloorCpu ? cpu / productFloorCpu : null;
      const cells: Array<string | number> = [
        name,
        rps.toFixed(0),
        (med(name, (f) => f.p50) ?? 0).toFixed(1),
        p99.toFixed(1),
        us(cpu),
        xFloor === null ? "" : `${xFloor.toFixed(2)}x`,
        name === "floor" || floorRps === 0 ? "" : `${(rps / floorRps).toFixed(2)}x`,
        name === "product floor" || name === "bare fastify" || name === "floor" || xProductFloor === null
          ? ""
          : `${xProductFloor.toFixed(2)}x`,
      ];
      if (service) {
        const isOrder = name === "order (matched)";
        // The order against the product floor (the cost of its own writes), the quote against the floor.
        const ok = isOrder
          ? xProductFloor !== null &&
            xProductFloor <= TARGET_ORDER_X_PRODUCT_FLOOR &&
            p99 <= TARGET_ORDER_P99_MS
          : xFloor !== null && xFloor <= TARGET_QUOTE_X_FLOOR;
        if (!ok) missed++;
        cells.push(
          isOrder
            ? `<=${TARGET_ORDER_X_PRODUCT_FLOOR}x pf,p99<=${TARGET_ORDER_P99_MS}`
            : `<=${TARGET_QUOTE_X_FLOOR}x floor`,
          ok ? "ok" : "MISS",
        );
      }
      process.stdout.write(`${row(cells, medianWidths)}\n`);
    }
    const statuses = [...tally.statuses].map(([s, n]) => `${s} ${n}`).join(", ");
    process.stdout.write(
      `\nmatched: ${pct(tally.offered, tally.total)} of ${tally.total} measured orders offered to a contractor at ` +
        `creation (${statuses}); quotes with a contractor available: ${pct(quotes.available, quotes.total)}\n`,
    );

    if (process.env.BENCH_OTHERS === "true") await others(baseline, service, env, auth, storeFile);

    process.stdout.write(`total ${((Date.now() - began) / 1000).toFixed(0)} s\n`);
    if (invalid.length > 0) {
      process.stdout.write(`\nINVALID run, no quote or order figure: ${invalid.join("; ")}\n`);
      process.exitCode = 1;
    } else {
      process.stdout.write(`\n${missed === 0 ? "all targets met" : `${missed} target(s) missed`}\n`);
    }
  } finally {
    await releaser?.close();
    closeReaders();
    for (const server of servers.reverse()) await stop(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The other endpoints, each against the bare baseline measured right before and after it. */
async function others(
  baseline: Server,
  service: Server,
  env: Record<string, string>,
  auth: Record<string, string>,
  storeFile: string,
): Promise<void> {
  // A test key on the sandbox pool with the sandbox's simulated contractors off: after its first few
  // orders its one (trade, state) has no capacity left, so this is the unmatched path (needs_dispatcher).
  const testKey = execFileSync(
    process.execPath,
    [
      join(DIST, "src/cli/index.js"),
      "keys",
      "create",
      "--account",
      "bench-sandbox",
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
  const job = { trade: "plumbing", location: { state: "TX", zip: "78701" }, urgency: "urgent" };
  const sealed = (await (
    await fetch(`${service.url}/api/dispatch/v1/quote`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body: JSON.stringify(job),
    })
  ).json()) as { seal: string };
  const loads: Load[] = [
    { name: "index", method: "GET", path: "/api/dispatch/index" },
    { name: "estimate", method: "POST", path: "/api/dispatch/v1/estimate", body: job },
    {
      name: "order, unmatched",
      method: "POST",
      path: "/api/dispatch/v1/order",
      body: { ...job, description: "Kitchen sink leaking under the cabinet" },
      headers: { "x-api-key": testKey },
    },
    { name: "verify", method: "GET", path: `/api/attest/verify/${sealed.seal}` },
  ];
  process.stdout.write(
    "\nother endpoints against the bare baseline (the unmatched order path: no offer, a short record)\n",
  );
  process.stdout.write(
    `${row(["endpoint", "req/s", "p50 ms", "p99 ms", "cpu us/req", "base req/s", "ratio"])}\n`,
  );
  for (const load of loads) {
    // Read from the store, as every other wait here: the service has no metrics listener (METRICS_PORT=off).
    if (load.name === "verify") await auditSealed(storeFile);
    const { f, baseRps, ratio } = await compare(baseline, service, load);
    const notes = f.non2xx || f.errors ? ` (non-2xx ${f.non2xx}, errors ${f.errors})` : "";
    process.stdout.write(
      `${row([load.name, f.rps.toFixed(0), f.p50, f.p99, us(f.cpuUsPerRequest), baseRps.toFixed(0), ratio.toFixed(2) + notes])}\n`,
    );
  }
}

await main();
