// The optimised day on a realistic dispatch day: the sandbox world's contractors of one state (the
// simulator's generated pool, trades, bases and reach as they are) and 500 jobs at ZIPs of that state,
// trades drawn from the contractors', each with a 4-hour window between 08:00 and 18:00 local and its
// trade's typical hours on site. It plans the day with domain/schedule/day.ts (what
// POST /api/dispatcher/v1/schedule/optimize runs) for each iteration budget (under a time cap, reported
// when it stops a run) and prints the jobs served, the travel, and the whole call's time (building the
// travel matrix included). The issue's target: a 500-job, 100-contractor day proposed in under 2 s.
//
//   npm run build && node dist/bench/day.js [--state CA] [--jobs 500] [--contractors 100] [--seed 1]
//     [--iterations 250,500,1000,2000] [--cap-ms 2000]

import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { zipsOfState } from "../src/domain/geo.js";
import { rngOf } from "../src/domain/random.js";
import { generateSandboxPool } from "../src/domain/sandbox-pool.js";
import { type DayContractor, type DayJob, planDay } from "../src/domain/schedule/day.js";
import { zonedInstant } from "../src/domain/time/local-time.js";
import { timeZoneOf } from "../src/domain/time/zones.js";
import { TRADES, type TradeCode } from "../src/domain/trades.js";
import type { StateCode } from "../src/domain/us-regions.js";
import { SIMULATED_POOL_SEED } from "../src/sim/simulation.js";

const { values } = parseArgs({
  options: {
    state: { type: "string", default: "CA" },
    jobs: { type: "string", default: "500" },
    contractors: { type: "string", default: "100" },
    seed: { type: "string", default: "1" },
    iterations: { type: "string", default: "250,500,1000,2000" },
    "cap-ms": { type: "string", default: "2000" },
  },
});
const budgets = (values.iterations as string).split(",").map(Number);
const capMs = Number(values["cap-ms"]);
const state = (values.state as string).toUpperCase() as StateCode;
const jobCount = Number(values.jobs);
const contractorCount = Number(values.contractors);
const seed = Number(values.seed);
const rng = rngOf(seed);
const zone = timeZoneOf(state);
const date = { year: 2026, month: 12, day: 1 };
const at = (hour: number) => zonedInstant(zone, { ...date, hour, minute: 0 });

const pool = generateSandboxPool(new Date("2026-11-24T00:00:00Z"), SIMULATED_POOL_SEED).filter(
  (c) => c.states.includes(state) && c.lat !== null && c.lon !== null && c.active && !c.excluded,
);
// The contractors with a reach (the statewide anchors have none), then as many anchors as needed.
pool.sort((a, b) => Number(a.serviceRadiusMiles === null) - Number(b.serviceRadiusMiles === null));
const chosen = pool.slice(0, contractorCount);
const contractors: DayContractor[] = chosen.map((c) => ({
  id: c.id,
  trades: c.trades,
  states: c.states,
  base: { lat: c.lat as number, lon: c.lon as number },
  radiusMiles: c.serviceRadiusMiles,
  shiftStart: at(8),
  shiftEnd: at(18),
  capacity: c.maxActiveJobs,
}));
// Jobs near the contractors: a ZIP of the state within 40 miles of a random contractor's base.
const zips = zipsOfState(state);
const jobs: DayJob[] = [];
for (let i = 0; i < jobCount; i++) {
  const c = chosen[Math.floor(rng() * chosen.length)] as (typeof chosen)[number];
  let zip = zips[Math.floor(rng() * zips.length)] as (typeof zips)[number];
  for (let tries = 0; tries < 50; tries++) {
    const z = zips[Math.floor(rng() * zips.length)] as (typeof zips)[number];
    if (Math.abs(z.lat - (c.lat as number)) < 0.5 && Math.abs(z.lon - (c.lon as number)) < 0.6) {
      zip = z;
      break;
    }
  }
  const trade = c.trades[Math.floor(rng() * c.trades.length)] as TradeCode;
  const start = 8 + Math.floor(rng() * 7); // windows start 08:00-14:00, 4 hours long
  jobs.push({
    orderId: `job_${i}`,
    trade,
    state,
    point: { lat: zip.lat, lon: zip.lon },
    ready: at(start),
    due: at(start + 4),
    serviceMinutes: Math.round(TRADES[trade].typicalJobHours * 60),
    contractorId: null,
    pinned: false,
  });
}

process.stdout.write(
  `${state}: ${jobs.length} jobs, ${contractors.length} contractors (${contractors.filter((c) => c.radiusMiles === null).length} statewide), ` +
    `capacity ${contractors.reduce((n, c) => n + c.capacity, 0)} jobs; seed ${seed}\n`,
);
process.stdout.write("iterations   total s   served   unassigned   travel h   stopped\n");
for (const iterations of budgets) {
  const t0 = performance.now();
  const plan = planDay(jobs, contractors, {
    seed,
    iterations,
    now: () => performance.now(),
    deadline: t0 + capMs,
  });
  const total = (performance.now() - t0) / 1000;
  const served = plan.routes.reduce((n, r) => n + r.stops.length, 0);
  process.stdout.write(
    `${String(iterations).padStart(10)}   ${total.toFixed(2).padStart(7)}   ${String(served).padStart(6)}   ` +
      `${String(plan.unassigned.length).padStart(10)}   ${(plan.travelMinutes / 60).toFixed(1).padStart(8)}   ` +
      `${plan.search.stopped === "budget" ? "budget" : `time cap after ${plan.search.iterations}`}\n`,
  );
}
