// Availability against the matcher: a window it offers is a window an order placed right after can book,
// however the calendars, time off and capacity fall, and whatever orders came before.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bookableWindows, slotsOf } from "../../src/domain/availability.js";
import { candidateSet } from "../../src/domain/candidate-set.js";
import type { Commitment } from "../../src/domain/commitments.js";
import { dayOf } from "../../src/domain/compliance.js";
import type { Contractor } from "../../src/domain/contractor.js";
import type { Point } from "../../src/domain/geo.js";
import {
  arrivalOf,
  baseTravelMinutes,
  type MatchRequest,
  match,
  zoneOffsetsFor,
} from "../../src/domain/matching.js";
import { modelJobPrice } from "../../src/domain/pricing.js";
import { SANDBOX_HOURS } from "../../src/domain/sandbox-pool.js";
import { parseHours } from "../../src/domain/time/calendar.js";
import { TRADES } from "../../src/domain/trades.js";
import { greatCircleTravel } from "../../src/domain/travel-time.js";

const HOUR_MS = 3_600_000;
const AUSTIN = { lat: 30.27, lon: -97.74 };
/** Sunday 2026-03-01 06:00 UTC; the week after crosses the spring daylight-saving change (March 8). */
const BASE = Date.parse("2026-03-01T06:00:00Z");

function weekly(text: string) {
  const parsed = parseHours(text);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.hours;
}

const HOURS = [...SANDBOX_HOURS.map(([h]) => weekly(h)), null, weekly("sat 08:00-12:00")];

const contractorArb = (i: number): fc.Arbitrary<Contractor> =>
  fc
    .record({
      hours: fc.constantFrom(...HOURS),
      zone: fc.constantFrom("America/Chicago", "America/Denver", "America/New_York"),
      off: fc.array(fc.tuple(fc.integer({ min: 0, max: 24 * 10 }), fc.integer({ min: 1, max: 48 })), {
        maxLength: 2,
      }),
      maxActiveJobs: fc.integer({ min: 1, max: 2 }),
      responseMinutes: fc.integer({ min: 10, max: 600 }),
      // Insurance verified until a day within the slots' fortnight, or long after it.
      insuredDays: fc.option(fc.integer({ min: 0, max: 14 }), { nil: null }),
    })
    .map(({ hours, zone, off, maxActiveJobs, responseMinutes, insuredDays }) => {
      const periods = off
        .map(([s, len]) => [BASE + s * HOUR_MS, BASE + (s + len) * HOUR_MS] as const)
        .sort((a, b) => a[0] - b[0]);
      const merged: number[] = [];
      for (const [s, e] of periods) {
        const n = merged.length;
        if (n > 0 && s <= (merged[n - 1] as number)) merged[n - 1] = Math.max(merged[n - 1] as number, e);
        else merged.push(s, e);
      }
      return {
        id: `ctr_${String(i).padStart(3, "0")}`,
        pool: "live" as const,
        trades: ["plumbing" as const],
        states: ["TX" as const],
        lat: AUSTIN.lat,
        lon: AUSTIN.lon,
        serviceRadiusMiles: 50,
        hourlyRateCents: 9000,
        emergencyCapable: false,
        maxActiveJobs,
        rating: 4.5,
        responseMinutes,
        active: true,
        excluded: false,
        insuranceVerifiedUntil:
          insuredDays === null
            ? "2099-01-01"
            : new Date(BASE + insuredDays * 24 * HOUR_MS).toISOString().slice(0, 10),
        licenseVerifiedUntil: "2099-01-01",
        calendar: { timeZone: zone, weekly: hours, timeOff: Float64Array.from(merged) },
      };
    });

const poolArb = fc
  .integer({ min: 1, max: 6 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => contractorArb(i))));

function job(now: Date): MatchRequest {
  return {
    trade: "plumbing",
    state: "TX",
    point: AUSTIN,
    urgency: "scheduled",
    nteCents: null,
    laborHours: TRADES.plumbing.typicalJobHours,
    modelPrice: modelJobPrice("plumbing", "TX", "scheduled"),
    today: dayOf(now),
  };
}

describe("availability", () => {
  it("never offers a window that a following order cannot book", () => {
    fc.assert(
      fc.property(
        poolArb,
        fc.integer({ min: 0, max: 24 * 7 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        (pool, nowHours, picks) => {
          const now = new Date(BASE + nowHours * HOUR_MS);
          const set = candidateSet(pool);
          const jobs = new Int32Array(pool.length);
          const slots = slotsOf("America/Chicago", { year: 2026, month: 3, day: 2 }, 10, "plumbing", now);
          for (const pick of picks) {
            const offered = bookableWindows(job(now), slots, set, jobs, now);
            if (offered.length === 0) return true;
            const w = offered[pick % offered.length];
            if (!w) return false;
            const req: MatchRequest = {
              ...job(now),
              // An order is judged for compliance on its window's day (operations/matching/job.ts timedJob).
              today: Math.max(dayOf(now), dayOf(w.start)),
              time: {
                now: now.getTime(),
                window: { start: w.start.getTime(), end: w.end.getTime() },
                arriveBy: null,
                durationMinutes: 120,
              },
            };
            const result = match(req, set, jobs);
            // Booked, by as many candidates as were counted.
            if (result.chosen === null || result.eligible !== w.contractorsAvailable) return false;
            const slot = pool.indexOf(result.chosen.contractor);
            jobs[slot] = (jobs[slot] ?? 0) + 1;
          }
          return true;
        },
      ),
      { numRuns: 150 },
    );
  });

  it("with capacity as time, never offers a window that the next order cannot book now", () => {
    // Sites around Austin: the drive between jobs counts. Counts are loose (up to 8): time binds first.
    const SITES: Point[] = [AUSTIN, { lat: 30.51, lon: -97.68 }, { lat: 30.16, lon: -97.79 }];
    const timedPool = poolArb.map((pool) =>
      pool.map(
        (c, i): Contractor => ({ ...c, maxActiveJobs: c.maxActiveJobs * 4, ...(SITES[i % 3] as Point) }),
      ),
    );
    fc.assert(
      fc.property(
        timedPool,
        fc.integer({ min: 0, max: 24 * 7 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 2 })), { minLength: 1, maxLength: 12 }),
        (pool, nowHours, picks) => {
          const now = new Date(BASE + nowHours * HOUR_MS);
          const set = candidateSet(pool);
          const jobs = new Int32Array(pool.length);
          const held: Array<Commitment[] | undefined> = pool.map(() => undefined);
          const booked = { held, travel: greatCircleTravel };
          const slots = slotsOf("America/Chicago", { year: 2026, month: 3, day: 2 }, 4, "plumbing", now);
          for (const [n, [pick, site]] of picks.entries()) {
            const at = SITES[site] as Point;
            const base = { ...job(now), point: at };
            const offered = bookableWindows(base, slots, set, jobs, now, booked);
            if (offered.length === 0) return true;
            const w = offered[pick % offered.length];
            if (!w) return false;
            const req: MatchRequest = {
              ...base,
              today: Math.max(dayOf(now), dayOf(w.start)),
              time: {
                now: now.getTime(),
                window: { start: w.start.getTime(), end: w.end.getTime() },
                arriveBy: null,
                durationMinutes: 120,
              },
            };
            const result = match(req, set, jobs, 5, booked);
            if (result.chosen === null || result.eligible !== w.contractorsAvailable) return false;
            const c = result.chosen.contractor;
            const slot = pool.findIndex((p) => p.id === c.id);
            // The writer, in the order's transaction, finds the same room for it.
            const placed = arrivalOf(
              c.calendar,
              req,
              c.responseMinutes,
              baseTravelMinutes(c, at, greatCircleTravel),
              zoneOffsetsFor(req),
              { held: held[slot] ?? [], travel: greatCircleTravel, judgeDeadline: false },
            );
            const start = result.chosen.startAt;
            if (start === null || placed?.at !== start) return false;
            if (start < w.start.getTime() || start + 120 * 60_000 > w.end.getTime()) return false;
            // No overlap with what it holds: the block and its drives fit between its jobs.
            const block = { orderId: `ord_${n}`, start, end: start + 120 * 60_000, point: at };
            if ((held[slot] ?? []).some((h) => h.start < block.end && block.start < h.end)) return false;
            held[slot] = [...(held[slot] ?? []), block].sort((a, b) => a.start - b.start);
            jobs[slot] = (jobs[slot] ?? 0) + 1;
          }
          return true;
        },
      ),
      { numRuns: 120 },
    );
  });

  it("fills a window's time: a contractor with room for two jobs is offered it twice, not a third time", () => {
    const now = new Date(BASE);
    const pool = fc.sample(contractorArb(0), { numRuns: 1, seed: 3 }).map((c) => ({
      ...c,
      maxActiveJobs: 10,
      calendar: { timeZone: "America/Chicago", weekly: null, timeOff: new Float64Array() },
    }));
    const set = candidateSet(pool);
    const jobs = new Int32Array(1);
    const held: Array<Commitment[] | undefined> = [undefined];
    const booked = { held, travel: greatCircleTravel };
    // Monday 2026-03-02 08:00-12:00 CST: two two-hour jobs at the same place.
    const [monday] = slotsOf("America/Chicago", { year: 2026, month: 3, day: 2 }, 1, "plumbing", now);
    if (!monday) throw new Error("no slot");
    for (const expected of [1, 1, 0]) {
      const offered = bookableWindows(job(now), [monday], set, jobs, now, booked);
      expect(offered.map((w) => w.contractorsAvailable)).toEqual(expected ? [expected] : []);
      if (!expected) break;
      const req = {
        ...job(now),
        time: {
          now: now.getTime(),
          window: { start: monday.start.getTime(), end: monday.end.getTime() },
          arriveBy: null,
          durationMinutes: 120,
        },
      };
      const start = match(req, set, jobs, 5, booked).chosen?.startAt as number;
      held[0] = [
        ...(held[0] ?? []),
        { orderId: `ord_${start}`, start, end: start + 120 * 60_000, point: AUSTIN },
      ];
      jobs[0] = (jobs[0] ?? 0) + 1;
    }
    expect(held[0]?.map((h) => h.start)).toEqual([
      monday.start.getTime(),
      monday.start.getTime() + 2 * HOUR_MS,
    ]);
  });

  it("offers nothing when every contractor is full", () => {
    const now = new Date(BASE);
    const pool = fc.sample(contractorArb(0), { numRuns: 1, seed: 7 });
    const set = candidateSet(pool);
    const full = Int32Array.from(pool, (c) => c.maxActiveJobs);
    const slots = slotsOf("America/Chicago", { year: 2026, month: 3, day: 2 }, 7, "plumbing", now);
    expect(bookableWindows(job(now), slots, set, full, now)).toEqual([]);
  });

  it("shapes the slots by the local clock across a daylight-saving change", () => {
    const now = new Date(BASE);
    const slots = slotsOf("America/Chicago", { year: 2026, month: 3, day: 7 }, 2, "plumbing", now);
    // Saturday 08:00 CST is 14:00Z; Sunday (after the change) 08:00 CDT is 13:00Z.
    expect(slots.map((s) => s.start.toISOString())).toEqual([
      "2026-03-07T14:00:00.000Z",
      "2026-03-07T18:00:00.000Z",
      "2026-03-07T22:00:00.000Z",
      "2026-03-08T13:00:00.000Z",
      "2026-03-08T17:00:00.000Z",
      "2026-03-08T21:00:00.000Z",
    ]);
  });
});
