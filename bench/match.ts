// Matching micro-benchmark: 100,000 contractors (all states, weighted by population, every trade), 20,000
// matches of random jobs; prints per-match latency percentiles against the p99 <= 1 ms target.
// Contractors have calendars like the sandbox's (80 % working hours in their own zone, the rest any time)
// and every job states its time (a window or arrive_by), so the calendar filter runs as in service;
// MATCH_CALENDARS=0 measures without them.
//
//   node dist/bench/match.js       (MATCH_POOL=100000 MATCH_RUNS=20000 MATCH_CALENDARS=1)

import { dayOfDate } from "../src/domain/compliance.js";
import type { Contractor } from "../src/domain/contractor.js";
import { contractorCalendar } from "../src/domain/contractor-calendar.js";
import { ContractorIndex } from "../src/domain/contractor-index.js";
import { zipsOfState } from "../src/domain/geo.js";
import { type MatchTime, match } from "../src/domain/matching.js";
import { modelJobPrice, regionalHourlyRateCents, URGENCIES } from "../src/domain/pricing.js";
import { SANDBOX_HOURS } from "../src/domain/sandbox-pool.js";
import { servicePromise } from "../src/domain/time/service-window.js";
import { timeZoneOf } from "../src/domain/time/zones.js";
import { TRADE_CODES, TRADES } from "../src/domain/trades.js";
import { REGIONS, STATE_CODES, type StateCode } from "../src/domain/us-regions.js";

const POOL = Number(process.env.MATCH_POOL ?? 100_000);
const RUNS = Number(process.env.MATCH_RUNS ?? 20_000);
const CALENDARS = process.env.MATCH_CALENDARS !== "0";
/** The bench's clock: Tuesday 2026-06-02 15:00 UTC (working hours on both coasts). */
const NOW = new Date("2026-06-02T15:00:00Z");

let seed = 42;
const rand = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;

const total = STATE_CODES.reduce((s, c) => s + REGIONS[c].population2020, 0);
const cumulative: Array<[StateCode, number]> = [];
let acc = 0;
for (const s of STATE_CODES) {
  acc += REGIONS[s].population2020 / total;
  cumulative.push([s, acc]);
}
const weightedState = (): StateCode => {
  const r = rand();
  return (cumulative.find(([, c]) => r <= c) ?? cumulative[cumulative.length - 1])?.[0] as StateCode;
};
const zips = new Map(STATE_CODES.map((s) => [s, zipsOfState(s)]));

/** The bench's job day: 2026-06-01. */
const BENCH_DAY = dayOfDate("2026-06-01");
const contractors: Contractor[] = [];
for (let i = 0; i < POOL; i++) {
  const state = weightedState();
  const trade = pick(TRADE_CODES);
  const home = pick(zips.get(state) ?? []);
  contractors.push({
    id: `ctr_${i.toString(36).padStart(8, "0")}`,
    pool: "live",
    trades: rand() < 0.2 ? [trade, pick(TRADE_CODES)] : [trade],
    states: [state],
    lat: home?.lat ?? null,
    lon: home?.lon ?? null,
    serviceRadiusMiles: rand() < 0.1 ? null : 20 + rand() * 60,
    hourlyRateCents: Math.round(regionalHourlyRateCents(trade, state) * (0.85 + rand() * 0.4)),
    emergencyCapable: rand() < 0.4,
    maxActiveJobs: 3 + Math.floor(rand() * 10),
    rating: 3.5 + rand() * 1.5,
    responseMinutes: 20 + Math.floor(rand() * 1400),
    active: rand() < 0.95,
    excluded: rand() < 0.01,
    // Verified for a year from the bench's day, a few lapsed: the compliance filter runs on every one.
    insuranceVerifiedUntil: rand() < 0.03 ? "2025-01-01" : "2027-06-30",
    licenseVerifiedUntil: "2027-06-30",
    ...(CALENDARS && rand() < 0.8
      ? {
          calendar: contractorCalendar(pick(SANDBOX_HOURS)[0], home?.zip ?? null, [state], []),
        }
      : {}),
  });
}
const index = new ContractorIndex();
index.replace(
  contractors,
  contractors.map((c) => [c.id, Math.floor(rand() * 4)]),
);

/** The job's time as the service states it: a window for scheduled work (the earliest), arrive_by else. */
function timeOf(
  trade: (typeof TRADE_CODES)[number],
  state: StateCode,
  urgency: (typeof URGENCIES)[number],
  zip: string | null,
): MatchTime {
  const p = servicePromise({ urgency, trade, timeZone: timeZoneOf(state, zip), window: null }, NOW);
  return {
    now: NOW.getTime(),
    window: p.arrivalWindow
      ? { start: p.arrivalWindow.start.getTime(), end: p.arrivalWindow.end.getTime() }
      : null,
    arriveBy: p.arriveBy?.getTime() ?? null,
    durationMinutes: Math.round(TRADES[trade].typicalJobHours * 60),
  };
}

const WARMUP = 2_000;
const times: number[] = [];
let matched = 0;
let scanned = 0;
for (let i = -WARMUP; i < RUNS; i++) {
  const state = weightedState();
  const trade = pick(TRADE_CODES);
  const urgency = pick(URGENCIES);
  const home = pick(zips.get(state) ?? []);
  const req = {
    trade,
    state,
    point: home ? { lat: home.lat, lon: home.lon } : null,
    urgency,
    nteCents: rand() < 0.5 ? Math.round(20_000 + rand() * 80_000) : null,
    laborHours: TRADES[trade].typicalJobHours,
    modelPrice: modelJobPrice(trade, state, urgency),
    today: BENCH_DAY,
    ...(CALENDARS ? { time: timeOf(trade, state, urgency, home?.zip ?? null) } : {}),
  };
  const t0 = process.hrtime.bigint();
  const candidates = index.candidates("live", trade, state);
  const result = match(req, candidates, index.jobs);
  if (i < 0) continue; // warm-up: let the JIT settle before measuring
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  scanned += candidates.length;
  if (result.chosen) matched++;
}
times.sort((a, b) => a - b);
const q = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)] ?? 0;
const largest = Math.max(
  ...STATE_CODES.flatMap((s) => TRADE_CODES.map((t) => index.candidates("live", t, s).length)),
);
process.stdout.write(
  [
    `pool ${POOL} contractors${CALENDARS ? " with calendars" : ""}, ${RUNS} matches after ${WARMUP} warm-up, largest (trade, state) bucket ${largest}, mean scanned ${(scanned / RUNS).toFixed(0)}`,
    `matched ${((matched / RUNS) * 100).toFixed(1)}%`,
    `latency ms: p50 ${q(0.5).toFixed(4)}  p99 ${q(0.99).toFixed(4)}  max ${q(1).toFixed(4)}`,
    `target p99 <= 1 ms: ${q(0.99) <= 1 ? "ok" : "MISS"}`,
    "",
  ].join("\n"),
);
