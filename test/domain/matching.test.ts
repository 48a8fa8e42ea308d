import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { candidateSet, jobsOfList } from "../../src/domain/candidate-set.js";
import { complianceIssues, dayOfDate } from "../../src/domain/compliance.js";
import type { Contractor } from "../../src/domain/contractor.js";
import { ContractorIndex } from "../../src/domain/contractor-index.js";
import { distanceMiles } from "../../src/domain/geo.js";
import {
  compareCandidates,
  etaTier,
  hardFilter,
  type MatchRequest,
  match,
  type RankedCandidate,
  scoreCandidate,
} from "../../src/domain/matching.js";
import { modelJobPrice, URGENCIES, type Urgency } from "../../src/domain/pricing.js";
import { generateSandboxPool, SANDBOX_HOURS } from "../../src/domain/sandbox-pool.js";
import { type Calendar, parseHours } from "../../src/domain/time/calendar.js";
import { TRADE_CODES, TRADES, type TradeCode } from "../../src/domain/trades.js";
import { STATE_CODES, type StateCode } from "../../src/domain/us-regions.js";

const AUSTIN = { lat: 30.27, lon: -97.74 };
/** The job's day in these tests. */
const TODAY = dayOfDate("2026-06-01");

function contractor(overrides: Partial<Contractor> = {}): Contractor {
  return {
    id: "ctr_a",
    pool: "live",
    trades: ["plumbing"],
    states: ["TX"],
    lat: AUSTIN.lat,
    lon: AUSTIN.lon,
    serviceRadiusMiles: 50,
    hourlyRateCents: 9000,
    emergencyCapable: true,
    maxActiveJobs: 5,
    rating: 4.5,
    responseMinutes: 60,
    active: true,
    excluded: false,
    insuranceVerifiedUntil: "2027-01-01",
    licenseVerifiedUntil: "2027-01-01",
    ...overrides,
  };
}

function request(overrides: Partial<MatchRequest> = {}): MatchRequest {
  const trade = overrides.trade ?? "plumbing";
  const state = overrides.state ?? "TX";
  const urgency = overrides.urgency ?? "routine";
  return {
    trade,
    state,
    point: AUSTIN,
    urgency,
    nteCents: null,
    laborHours: TRADES[trade].typicalJobHours,
    modelPrice: modelJobPrice(trade, state, urgency),
    today: TODAY,
    ...overrides,
  };
}

const none = () => 0;

/** Matches against a plain list, the way the index matches against a bucket. */
function run(req: MatchRequest, list: readonly Contractor[], load: (id: string) => number = none) {
  return match(req, candidateSet(list), jobsOfList(list, load));
}

/** The reference: filter each contractor with hardFilter, score with scoreCandidate, sort, keep 5. */
function reference(
  req: MatchRequest,
  list: readonly Contractor[],
  load: (id: string) => number,
): RankedCandidate[] {
  const out: RankedCandidate[] = [];
  for (const c of list) {
    const { reason, distance } = hardFilter(c, req, load(c.id));
    if (reason === null) out.push(scoreCandidate(c, req, load(c.id), distance));
  }
  return out.sort(compareCandidates).slice(0, 5);
}

describe("matching hard filters", () => {
  it.each([
    ["inactive", { active: false }],
    ["excluded", { excluded: true }],
    ["trade", { trades: ["hvac"] as TradeCode[] }],
    ["coverage", { states: ["OK"] as StateCode[] }],
    ["coverage", { lat: 32.78, lon: -96.8 }], // Dallas, ~180 miles from Austin, radius 50
  ])("rejects a contractor for %s", (reason, overrides) => {
    expect(hardFilter(contractor(overrides), request(), 0).reason).toBe(reason);
  });

  it("rejects a contractor without capacity", () => {
    expect(hardFilter(contractor({ maxActiveJobs: 2 }), request(), 2).reason).toBe("capacity");
  });

  it("rejects a contractor that cannot take emergencies only for emergency jobs", () => {
    const c = contractor({ emergencyCapable: false });
    expect(hardFilter(c, request({ urgency: "emergency" }), 0).reason).toBe("emergency");
    expect(hardFilter(c, request({ urgency: "urgent" }), 0).reason).toBeNull();
  });

  it("rejects a contractor whose insurance or license expired before the job's day, or was never verified", () => {
    expect(hardFilter(contractor({ insuranceVerifiedUntil: "2026-05-31" }), request(), 0).reason).toBe(
      "compliance",
    );
    expect(hardFilter(contractor({ licenseVerifiedUntil: "2026-05-31" }), request(), 0).reason).toBe(
      "compliance",
    );
    expect(hardFilter(contractor({ licenseVerifiedUntil: null }), request(), 0).reason).toBe("compliance");
    // Valid through its date: on that very day it may still be offered work.
    const lastDay = contractor({ insuranceVerifiedUntil: "2026-06-01", licenseVerifiedUntil: "2026-06-01" });
    expect(hardFilter(lastDay, request(), 0).reason).toBeNull();
    expect(hardFilter(lastDay, request({ today: TODAY + 1 }), 0).reason).toBe("compliance");
  });

  it("never offers an expired contractor, however good, and counts it under compliance", () => {
    const expired = contractor({
      id: "ctr_best",
      rating: 5,
      hourlyRateCents: 5000,
      licenseVerifiedUntil: "2026-05-31",
    });
    const unverified = contractor({ id: "ctr_none", rating: 5, insuranceVerifiedUntil: null });
    const valid = contractor({ id: "ctr_ok", rating: 3.8 });
    const result = run(request(), [expired, unverified, valid]);
    expect(result.ranked.map((r) => r.contractor.id)).toEqual(["ctr_ok"]);
    expect(result.rejected.compliance).toBe(2);
    expect(result.eligible).toBe(1);
  });

  it("statewide contractors (no radius) cover the whole state", () => {
    const c = contractor({ serviceRadiusMiles: null, lat: 32.78, lon: -96.8 });
    expect(hardFilter(c, request(), 0).reason).toBeNull();
  });
});

describe("matching score", () => {
  it("prefers the nearer of two otherwise equal contractors", () => {
    const near = contractor({ id: "ctr_near" });
    const far = contractor({ id: "ctr_far", lat: 30.6, lon: -97.7 });
    expect(run(request(), [far, near], none).chosen?.contractor.id).toBe("ctr_near");
  });

  it("prefers the better-rated of two otherwise equal contractors", () => {
    const good = contractor({ id: "ctr_z", rating: 4.9 });
    const poor = contractor({ id: "ctr_b", rating: 3.1 });
    expect(run(request(), [poor, good], none).chosen?.contractor.id).toBe("ctr_z");
  });

  it("prefers the contractor its accounts rated well, all else equal (the pool ratings equal)", () => {
    const praised = contractor({
      id: "ctr_z",
      ratings: { count: 6, quality: 30, timeliness: 30, communication: 29, value: 28 },
    });
    const panned = contractor({
      id: "ctr_b",
      ratings: { count: 6, quality: 12, timeliness: 10, communication: 12, value: 11 },
    });
    const result = run(request(), [panned, praised], none);
    expect(result.chosen?.contractor.id).toBe("ctr_z");
    // quality = shrunk / 5, the prior (4.5) weighing as 5 ratings: (5 x 4.5 + 29.25) / 11.
    expect(result.chosen?.components.quality).toBeCloseTo((5 * 4.5 + 29.25) / 11 / 5, 9);
  });

  it("ranks one glowing rating below a long record of good ones (shrinkage toward the pool rating)", () => {
    const once = contractor({
      id: "ctr_a",
      rating: 3,
      ratings: { count: 1, quality: 5, timeliness: 5, communication: 5, value: 5 },
    });
    const steady = contractor({
      id: "ctr_b",
      rating: 3,
      ratings: { count: 40, quality: 180, timeliness: 180, communication: 180, value: 180 },
    });
    expect(run(request(), [once, steady], none).chosen?.contractor.id).toBe("ctr_b");
  });

  it("penalises a contractor whose price exceeds the NTE", () => {
    const cheap = contractor({ id: "ctr_y", hourlyRateCents: 8000, rating: 4 });
    const dear = contractor({ id: "ctr_b", hourlyRateCents: 30000, rating: 5 });
    const result = run(request({ nteCents: 20000 }), [dear, cheap], none);
    expect(result.chosen?.contractor.id).toBe("ctr_y");
    expect(result.ranked.find((r) => r.contractor.id === "ctr_b")?.withinNte).toBe(false);
  });

  it("prefers the less loaded contractor", () => {
    const busy = contractor({ id: "ctr_a" });
    const free = contractor({ id: "ctr_b" });
    const load = (id: string) => (id === "ctr_a" ? 4 : 0);
    expect(run(request(), [busy, free], load).chosen?.contractor.id).toBe("ctr_b");
  });

  it("breaks exact ties by contractor id", () => {
    const a = contractor({ id: "ctr_a" });
    const b = contractor({ id: "ctr_b" });
    expect(run(request(), [b, a], none).chosen?.contractor.id).toBe("ctr_a");
  });

  it("returns no match, with reasons, when nobody is eligible", () => {
    const result = run(request(), [contractor({ active: false }), contractor({ trades: ["roofing"] })]);
    expect(result.chosen).toBeNull();
    expect(result.rejected.inactive).toBe(1);
    expect(result.rejected.trade).toBe(1);
  });

  it("maps arrival minutes to ETA tiers", () => {
    expect(etaTier(90, "emergency")).toBe("within_2_hours");
    expect(etaTier(300, "urgent")).toBe("same_day");
    expect(etaTier(1000, "routine")).toBe("next_day");
    expect(etaTier(3000, "routine")).toBe("within_3_days");
    expect(etaTier(10, "scheduled")).toBe("scheduled");
  });
});

const contractorArb: fc.Arbitrary<Contractor> = fc.record({
  id: fc.string({ minLength: 1, maxLength: 8 }).map((s) => `ctr_${s}`),
  pool: fc.constant("live" as const),
  trades: fc.subarray([...TRADE_CODES], { minLength: 1 }),
  states: fc.subarray(["TX", "OK", "LA", "NM"] as StateCode[], { minLength: 1 }),
  lat: fc.option(fc.double({ min: 25, max: 37, noNaN: true }), { nil: null }),
  lon: fc.option(fc.double({ min: -107, max: -89, noNaN: true }), { nil: null }),
  serviceRadiusMiles: fc.option(fc.integer({ min: 5, max: 300 }), { nil: null }),
  hourlyRateCents: fc.integer({ min: 1000, max: 40000 }),
  emergencyCapable: fc.boolean(),
  maxActiveJobs: fc.integer({ min: 1, max: 10 }),
  rating: fc.double({ min: 0, max: 5, noNaN: true }),
  responseMinutes: fc.integer({ min: 0, max: 5000 }),
  active: fc.boolean(),
  excluded: fc.boolean(),
  // Around the job's day (2026-06-01): expired the day before, valid through it, later, or never verified.
  insuranceVerifiedUntil: fc.constantFrom("2026-05-31", "2026-06-01", "2027-01-01", "2027-01-01", null),
  licenseVerifiedUntil: fc.constantFrom("2026-05-31", "2026-06-01", "2027-01-01", "2027-01-01", null),
  // Accounts' ratings, some of the time: the score (and the bound the scan prunes by) reads them shrunk.
  ratings: fc.option(
    fc.integer({ min: 1, max: 40 }).chain((count) =>
      fc.record({
        count: fc.constant(count),
        quality: fc.integer({ min: count, max: 5 * count }),
        timeliness: fc.integer({ min: count, max: 5 * count }),
        communication: fc.integer({ min: count, max: 5 * count }),
        value: fc.integer({ min: count, max: 5 * count }),
      }),
    ),
    { nil: undefined },
  ),
});

const requestArb = fc
  .record({
    trade: fc.constantFrom(...TRADE_CODES),
    state: fc.constantFrom("TX", "OK", "LA", "NM") as fc.Arbitrary<StateCode>,
    point: fc.option(
      fc.record({
        lat: fc.double({ min: 25, max: 37, noNaN: true }),
        lon: fc.double({ min: -107, max: -89, noNaN: true }),
      }),
      { nil: null },
    ),
    urgency: fc.constantFrom(...URGENCIES) as fc.Arbitrary<Urgency>,
    nteCents: fc.option(fc.integer({ min: 1, max: 200000 }), { nil: null }),
  })
  .map((r) => request(r));

const HOUR_MS = 3_600_000;
/** Monday 2026-06-01 12:00 UTC (07:00 in Austin). */
const NOW = Date.parse("2026-06-01T12:00:00Z");

function weekly(text: string) {
  const parsed = parseHours(text);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.hours;
}

const calendarArb: fc.Arbitrary<Calendar | undefined> = fc.option(
  fc.record({
    timeZone: fc.constantFrom("America/Chicago", "America/Denver", "America/New_York", "America/Phoenix"),
    weekly: fc.constantFrom(...SANDBOX_HOURS.map(([h]) => weekly(h)), null, weekly("sat-sun 00:00-24:00")),
    timeOff: fc
      .array(fc.tuple(fc.integer({ min: -24, max: 24 * 9 }), fc.integer({ min: 1, max: 72 })), {
        maxLength: 3,
      })
      .map((periods) => {
        const sorted = periods.map(([s, len]) => [NOW + s * HOUR_MS, NOW + (s + len) * HOUR_MS]);
        sorted.sort((a, b) => (a[0] as number) - (b[0] as number));
        const merged: number[] = [];
        for (const [s, e] of sorted as Array<[number, number]>) {
          const n = merged.length;
          if (n > 0 && s <= (merged[n - 1] as number)) merged[n - 1] = Math.max(merged[n - 1] as number, e);
          else merged.push(s, e);
        }
        return Float64Array.from(merged);
      }),
  }),
  { nil: undefined },
);

const timedContractorArb: fc.Arbitrary<Contractor> = fc
  .tuple(contractorArb, calendarArb)
  .map(([c, calendar]) => (calendar ? { ...c, calendar } : c));

/** A request with its time: a window (some hours to days ahead) or as soon as possible by arrive_by. */
const timedRequestArb = fc
  .tuple(requestArb, fc.boolean(), fc.integer({ min: 0, max: 24 * 6 }), fc.integer({ min: 2, max: 30 }))
  .map(([req, windowed, startHours, lengthHours]) => {
    const durationMinutes = Math.round(TRADES[req.trade].typicalJobHours * 60);
    const asap = req.urgency === "emergency" || req.urgency === "urgent" || !windowed;
    const arrive = { emergency: 120, urgent: 480, routine: 2880, scheduled: 2880 }[req.urgency];
    return {
      ...req,
      time: {
        now: NOW,
        window: asap
          ? null
          : { start: NOW + startHours * HOUR_MS, end: NOW + (startHours + lengthHours) * HOUR_MS },
        arriveBy: asap ? NOW + arrive * 60_000 : null,
        durationMinutes,
      },
    } satisfies MatchRequest;
  });

describe("matching against calendars", () => {
  const austin = (hours: string, off: Array<[string, string]> = []) =>
    contractor({
      calendar: {
        timeZone: "America/Chicago",
        weekly: weekly(hours),
        timeOff: Float64Array.from(off.flatMap(([s, e]) => [Date.parse(s), Date.parse(e)])),
      },
    });
  const windowed = (start: string, end: string) =>
    request({
      urgency: "scheduled",
      time: {
        now: NOW,
        window: { start: Date.parse(start), end: Date.parse(end) },
        arriveBy: null,
        durationMinutes: 120,
      },
    });

  it("rejects a contractor whose hours miss the window, for the reason calendar", () => {
    // Saturday 2026-06-06 09:00-13:00 CDT.
    const req = windowed("2026-06-06T14:00:00Z", "2026-06-06T18:00:00Z");
    expect(hardFilter(austin("mon-fri 08:00-17:00"), req, 0).reason).toBe("calendar");
    expect(hardFilter(austin("mon-fri 08:00-17:00; sat 09:00-13:00"), req, 0).reason).toBeNull();
    const result = run(req, [austin("mon-fri 08:00-17:00")]);
    expect(result.rejected.calendar).toBe(1);
    expect(result.chosen).toBeNull();
  });

  it("rejects a contractor off for the whole window", () => {
    const req = windowed("2026-06-02T13:00:00Z", "2026-06-02T17:00:00Z");
    const off = austin("mon-fri 08:00-17:00", [["2026-06-02T00:00:00Z", "2026-06-03T00:00:00Z"]]);
    expect(hardFilter(off, req, 0).reason).toBe("calendar");
  });

  it("reports the ETA the calendar allows: the earliest start it can make, not a constant", () => {
    // Urgent at Monday 07:00 CDT, arrive by 15:00 CDT; the contractor starts at 10:00.
    const req = request({
      urgency: "urgent",
      point: AUSTIN,
      time: { now: NOW, window: null, arriveBy: NOW + 480 * 60_000, durationMinutes: 120 },
    });
    const late = run(req, [austin("mon-fri 10:00-17:00")]).chosen;
    expect(late?.etaMinutes).toBe(180);
    expect(late?.etaTier).toBe("same_day");
    // Working already: its response time plus travel (60 + 0).
    expect(run(req, [austin("mon-fri 06:00-17:00")]).chosen?.etaMinutes).toBe(60);
    // Starts only after arrive_by (17:00 CDT): not eligible.
    expect(hardFilter(austin("mon-fri 17:00-23:00"), req, 0).reason).toBe("calendar");
  });

  it("takes emergencies around the clock from contractors on call, but not during time off", () => {
    const req = request({
      urgency: "emergency",
      time: { now: NOW, window: null, arriveBy: NOW + 120 * 60_000, durationMinutes: 120 },
    });
    expect(hardFilter(austin("sat 08:00-12:00"), req, 0).reason).toBeNull();
    const away = austin("sat 08:00-12:00", [["2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"]]);
    expect(hardFilter(away, req, 0).reason).toBe("calendar");
  });
});

describe("matching properties", () => {
  it("with calendars, the scan filters, counts and ranks exactly as the reference", () => {
    fc.assert(
      fc.property(
        timedRequestArb,
        fc.uniqueArray(timedContractorArb, { selector: (c) => c.id, maxLength: 30 }),
        fc.func(fc.integer({ min: 0, max: 12 })),
        (req, pool, loadFn) => {
          const load = (id: string) => loadFn(id);
          const result = run(req, pool, load);
          const slow = reference(req, pool, load);
          const reasons = pool.map((c) => hardFilter(c, req, load(c.id)).reason);
          return (
            result.eligible === reasons.filter((r) => r === null).length &&
            result.rejected.calendar === reasons.filter((r) => r === "calendar").length &&
            result.ranked.length === slow.length &&
            result.ranked.every(
              (r, i) =>
                r.contractor === slow[i]?.contractor &&
                r.score === slow[i]?.score &&
                r.etaMinutes === slow[i]?.etaMinutes &&
                r.etaTier === etaTier(r.etaMinutes, req.urgency),
            )
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a match always satisfies every hard filter", () => {
    fc.assert(
      fc.property(
        requestArb,
        fc.uniqueArray(contractorArb, { selector: (c) => c.id, maxLength: 30 }),
        fc.func(fc.integer({ min: 0, max: 12 })),
        (req, pool, loadFn) => {
          const load = (id: string) => loadFn(id);
          const result = run(req, pool, load);
          for (const r of result.ranked) {
            const c = r.contractor;
            if (!c.active || c.excluded) return false;
            if (!c.trades.includes(req.trade) || !c.states.includes(req.state)) return false;
            if (load(c.id) >= c.maxActiveJobs) return false;
            if (complianceIssues(c, req.today).length > 0) return false;
            if (req.urgency === "emergency" && !c.emergencyCapable) return false;
            if (req.point && c.lat !== null && c.lon !== null && c.serviceRadiusMiles !== null) {
              if (distanceMiles(req.point, { lat: c.lat, lon: c.lon }) > c.serviceRadiusMiles) return false;
            }
          }
          return result.chosen === (result.ranked[0] ?? null);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the scan ranks exactly as the per-contractor reference definition", () => {
    fc.assert(
      fc.property(
        requestArb,
        fc.uniqueArray(contractorArb, { selector: (c) => c.id, maxLength: 40 }),
        fc.func(fc.integer({ min: 0, max: 12 })),
        (req, pool, loadFn) => {
          const load = (id: string) => loadFn(id);
          const fast = run(req, pool, load).ranked;
          const slow = reference(req, pool, load);
          return (
            fast.length === slow.length &&
            fast.every((r, i) => r.contractor === slow[i]?.contractor && r.score === slow[i]?.score)
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("among many eligible rated contractors, the pruned scan keeps the reference's top five", () => {
    // Every one eligible, so the top list fills and the scan prunes by scoreBound: the bound must read
    // the same shrunk rating as the score, or a well-rated contractor is pruned unseen.
    const tally = fc.integer({ min: 1, max: 30 }).chain((count) =>
      fc.record({
        count: fc.constant(count),
        quality: fc.integer({ min: count, max: 5 * count }),
        timeliness: fc.integer({ min: count, max: 5 * count }),
        communication: fc.integer({ min: count, max: 5 * count }),
        value: fc.integer({ min: count, max: 5 * count }),
      }),
    );
    const eligible = fc
      .tuple(
        fc.double({ min: 0, max: 5, noNaN: true }),
        fc.option(tally, { nil: undefined }),
        fc.integer({ min: 6000, max: 12000 }),
        fc.double({ min: -0.2, max: 0.2, noNaN: true }),
      )
      .map(([rating, ratings, hourlyRateCents, shift]) => ({
        rating,
        ratings,
        hourlyRateCents,
        lat: AUSTIN.lat + shift,
      }));
    fc.assert(
      fc.property(fc.array(eligible, { minLength: 6, maxLength: 30 }), (specs) => {
        const pool = specs.map((spec, i) => contractor({ ...spec, id: `ctr_${i}` }));
        const fast = run(request(), pool, none).ranked;
        const slow = reference(request(), pool, none);
        return (
          fast.length === slow.length &&
          fast.every((r, i) => r.contractor === slow[i]?.contractor && r.score === slow[i]?.score)
        );
      }),
      { numRuns: 300 },
    );
  });

  it("the same input gives the same match, whatever the pool order", () => {
    fc.assert(
      fc.property(
        requestArb,
        fc.uniqueArray(contractorArb, { selector: (c) => c.id, maxLength: 30 }),
        (req, pool) => {
          const a = run(req, pool, none);
          const b = run(req, [...pool].reverse(), none);
          return a.chosen?.contractor === b.chosen?.contractor && a.eligible === b.eligible;
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("sandbox pool", () => {
  const pool = generateSandboxPool(new Date("2026-06-01T12:00:00Z"));

  it("is deterministic", () => {
    const again = generateSandboxPool(new Date("2026-06-01T12:00:00Z"));
    expect(again.map((c) => c.id)).toEqual(pool.map((c) => c.id));
    expect(again[100]).toEqual(pool[100]);
  });

  it("covers every trade in every state, DC and territory, weighted by population", () => {
    const index = new ContractorIndex();
    index.replace(pool, []);
    for (const state of STATE_CODES) {
      for (const trade of TRADE_CODES)
        expect(index.candidates("sandbox", trade, state).length).toBeGreaterThan(0);
    }
    expect(index.candidates("sandbox", "plumbing", "CA").length).toBeGreaterThan(
      index.candidates("sandbox", "plumbing", "WY").length * 5,
    );
  });

  it("has realistic verification dates: a few (about 5%) already expired, none unverified", () => {
    const today = dayOfDate("2026-06-01");
    const expired = pool.filter((c) => complianceIssues(c, today).length > 0);
    expect(pool.every((c) => c.insuranceVerifiedUntil !== null && c.licenseVerifiedUntil !== null)).toBe(
      true,
    );
    expect(expired.length / pool.length).toBeGreaterThan(0.02);
    expect(expired.length / pool.length).toBeLessThan(0.08);
    expect(expired.every((c) => complianceIssues(c, today).every((i) => i.state === "expired"))).toBe(true);
  });

  it("can match an emergency anywhere", () => {
    const index = new ContractorIndex();
    index.replace(pool, []);
    for (const state of STATE_CODES) {
      const req = request({ trade: "locksmith", state, point: null, urgency: "emergency" });
      expect(match(req, index.candidates("sandbox", "locksmith", state), index.jobs).chosen).not.toBeNull();
    }
  });
});
