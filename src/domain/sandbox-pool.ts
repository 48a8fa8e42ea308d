// The sandbox contractor pool: generated deterministically (same seed, same pool) and realistically: every
// state, DC and territory, weighted by 2020 census population, every trade present everywhere, rates
// around the regional model rate. Test keys match only this pool.
//
// Verification dates are realistic and relative to the day the pool is generated (`now`, the seeding
// time): most contractors are verified for months to two years ahead, some expire within the 45-day
// warning window, and a deterministic ~5% have one document already expired, so the sandbox shows the
// compliance rule at work. The anchor of each (state, trade) is verified ten years ahead, so a sandbox
// seeded today keeps matching every request for years.
//
// Working hours (time/calendar.ts) are realistic and varied: weekday days of different lengths, some
// with Saturday mornings or whole weekends, a few long seven-day schedules, drawn from a stream of their
// own (deterministic from the seed). The anchor of each (state, trade) keeps no hours (on call any time),
// for the same reason it works statewide.

import { createHash } from "node:crypto";
import { dateOfDay, dayOf } from "./compliance.js";
import type { Contractor } from "./contractor.js";
import { zipsOfState } from "./geo.js";
import { regionalHourlyRateCents } from "./pricing.js";
import { rngOf, seedOf } from "./random.js";
import { TRADE_CODES, TRADES } from "./trades.js";
import { REGIONS, STATE_CODES } from "./us-regions.js";

const SANDBOX_SEED = "field-dispatch-sandbox-v1";
/** Contractors spread by population on top of the per-(state, trade) minimum. */
const SANDBOX_POPULATION_WEIGHTED = 2400;
/** Every (state, trade) pair has at least this many sandbox contractors. */
const SANDBOX_MIN_PER_TRADE = 2;
/** Share of the non-anchor sandbox contractors with an expired insurance or license when generated. */
const SANDBOX_EXPIRED_SHARE = 0.05;
/** Share of them whose verification runs out within the 45-day warning window (still valid). */
const SANDBOX_EXPIRING_SHARE = 0.06;

/** The working-hours templates sandbox contractors are drawn from, with their weights. */
export const SANDBOX_HOURS: ReadonlyArray<readonly [string, number]> = [
  ["mon-fri 08:00-17:00", 30],
  ["mon-fri 07:00-16:00", 15],
  ["mon-fri 08:00-17:00; sat 09:00-13:00", 15],
  ["mon-thu 07:00-17:30", 8],
  ["tue-sat 08:00-17:00", 8],
  ["mon-sat 07:00-18:00", 10],
  ["mon-fri 09:00-18:00; sat-sun 10:00-15:00", 7],
  ["mon-sun 06:00-22:00", 7],
];

function sandboxHours(rand: () => number): string {
  const total = SANDBOX_HOURS.reduce((sum, [, w]) => sum + w, 0);
  let u = rand() * total;
  for (const [hours, w] of SANDBOX_HOURS) {
    u -= w;
    if (u < 0) return hours;
  }
  return SANDBOX_HOURS[0]?.[0] ?? "";
}

export interface SandboxContractor extends Contractor {
  /** Working hours, canonical text; "" for the anchors (any time). */
  readonly hours: string;
  readonly name: string;
  readonly email: string;
  readonly phone: string;
  readonly homeZip: string | null;
}

function idOf(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

/** Insurance and license dates of one generated contractor, `today` being the generation day. */
function verificationDates(
  rand: () => number,
  anchor: boolean,
  today: number,
): { insuranceVerifiedUntil: string; licenseVerifiedUntil: string } {
  if (anchor) {
    return { insuranceVerifiedUntil: dateOfDay(today + 3650), licenseVerifiedUntil: dateOfDay(today + 3652) };
  }
  const u = rand();
  const healthy = () => dateOfDay(today + 46 + Math.floor(rand() * 685));
  let insurance = healthy();
  let license = healthy();
  if (u < SANDBOX_EXPIRED_SHARE) {
    const lapsed = dateOfDay(today - 1 - Math.floor(rand() * 180));
    if (rand() < 0.5) insurance = lapsed;
    else license = lapsed;
  } else if (u < SANDBOX_EXPIRED_SHARE + SANDBOX_EXPIRING_SHARE) {
    const soon = dateOfDay(today + Math.floor(rand() * 46));
    if (rand() < 0.5) insurance = soon;
    else license = soon;
  }
  return { insuranceVerifiedUntil: insurance, licenseVerifiedUntil: license };
}

/** The sandbox pool, its verification dates relative to `now` (the day it is seeded). */
export function generateSandboxPool(now: Date, seed = SANDBOX_SEED): SandboxContractor[] {
  const today = dayOf(now);
  const totalPopulation = STATE_CODES.reduce((sum, s) => sum + REGIONS[s].population2020, 0);
  const out: SandboxContractor[] = [];
  for (const state of STATE_CODES) {
    const zips = zipsOfState(state);
    const share = REGIONS[state].population2020 / totalPopulation;
    for (const trade of TRADE_CODES) {
      const rand = rngOf(seedOf(seed, state, trade));
      // A stream of its own, so the dates leave every other generated field as it was before them.
      const verificationRand = rngOf(seedOf(seed, state, trade, "verification"));
      const hoursRand = rngOf(seedOf(seed, state, trade, "hours"));
      const count =
        SANDBOX_MIN_PER_TRADE + Math.round((SANDBOX_POPULATION_WEIGHTED * share) / TRADE_CODES.length);
      const modelRate = regionalHourlyRateCents(trade, state);
      for (let i = 0; i < count; i++) {
        // The first contractor of each (state, trade) works statewide and takes emergencies, so every
        // sandbox request can be matched; the rest are local with realistic variety.
        const anchor = i === 0;
        const home = zips.length > 0 ? zips[Math.floor(rand() * zips.length)] : undefined;
        const emergencyCapable = anchor || rand() < TRADES[trade].emergencyShare;
        const id = idOf(`${seed}|${state}|${trade}|${i}`);
        const n = out.length + 1;
        out.push({
          id: `ctr_${id}`,
          pool: "sandbox",
          name: `Sandbox ${TRADES[trade].name} ${state}-${i + 1}`,
          email: `sandbox+${id}@example.com`,
          phone: `+1-555-01${String(n % 100).padStart(2, "0")}`,
          homeZip: home?.zip ?? null,
          trades: [trade],
          states: [state],
          lat: home?.lat ?? null,
          lon: home?.lon ?? null,
          serviceRadiusMiles: anchor ? null : Math.round(20 + rand() * 60),
          hourlyRateCents: Math.round(modelRate * (0.85 + rand() * 0.4)),
          emergencyCapable,
          maxActiveJobs: 3 + Math.floor(rand() * 10),
          rating: Math.round((3.6 + rand() * 1.4) * 10) / 10,
          responseMinutes: emergencyCapable ? 20 + Math.floor(rand() * 70) : 120 + Math.floor(rand() * 1320),
          active: true,
          excluded: false,
          ...verificationDates(verificationRand, anchor, today),
          hours: anchor ? "" : sandboxHours(hoursRand),
        });
      }
    }
  }
  return out;
}
