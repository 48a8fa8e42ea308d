// Capacity as time (domain/commitments.ts and the matcher): a job fits between the jobs a contractor
// holds with the drive from the one before and on to the one after, inside its calendar in its own zone.

import { describe, expect, it } from "vitest";
import { type Commitment, type FitRequest, fitAmong } from "../../src/domain/commitments.js";
import type { Contractor } from "../../src/domain/contractor.js";
import { distanceMiles } from "../../src/domain/geo.js";
import { arrivalOf, hardFilter, type MatchRequest } from "../../src/domain/matching.js";
import { modelJobPrice } from "../../src/domain/pricing.js";
import { ALWAYS, parseHours, ZoneOffsets } from "../../src/domain/time/calendar.js";
import { greatCircleMinutes, greatCircleTravel } from "../../src/domain/travel-time.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
/** Tuesday 2026-06-02 08:00 CDT. */
const T8 = Date.parse("2026-06-02T13:00:00Z");
const AUSTIN = { lat: 30.27, lon: -97.74 };
const ROUND_ROCK = { lat: 30.51, lon: -97.68 }; // ~17 miles north
const zones = new ZoneOffsets(T8 - 3 * 86_400_000, T8 + 10 * 86_400_000);

function weekly(text: string) {
  const parsed = parseHours(text);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.hours;
}

const block = (orderId: string, start: number, hours: number, point = AUSTIN): Commitment => ({
  orderId,
  start,
  end: start + hours * HOUR,
  point,
});

/** A two-hour job in Austin, windowed 08:00-12:00 CDT, asked the day before. */
function windowed(overrides: Partial<FitRequest> = {}): FitRequest {
  return {
    now: T8 - 86_400_000,
    notBefore: T8,
    leadMinutes: 0,
    fromBaseMinutes: 0,
    latestStart: T8 + 2 * HOUR,
    durationMs: 2 * HOUR,
    point: AUSTIN,
    anyHours: false,
    ...overrides,
  };
}

const fitJob = (req: FitRequest, held: Commitment[], cal = ALWAYS) =>
  fitAmong(cal, req, held, greatCircleTravel, zones);

describe("fitting a job between held jobs", () => {
  it("starts at the window's start when nothing is held", () => {
    expect(fitJob(windowed(), [])).toBe(T8);
  });

  it("starts after the previous job plus the drive from its site", () => {
    // A job in Round Rock 07:00-08:30: the drive to Austin comes after it.
    const drive = greatCircleMinutes(distanceMiles(ROUND_ROCK, AUSTIN));
    expect(drive).toBeGreaterThan(30);
    const at = fitJob(windowed(), [block("ord_prev", T8 - HOUR, 1.5, ROUND_ROCK)]);
    expect(at).toBe(Math.ceil(T8 + 30 * MIN + drive * MIN));
    // The same job in Austin itself: no drive.
    expect(fitJob(windowed(), [block("ord_prev", T8 - HOUR, 1.5)])).toBe(T8 + 30 * MIN);
  });

  it("ends early enough to drive to the next job", () => {
    // The next job, in Round Rock at 10:30: 08:00-10:00 here leaves too little to drive there.
    const next = block("ord_next", T8 + 2.5 * HOUR, 2, ROUND_ROCK);
    expect(fitJob(windowed(), [next])).toBeNull();
    // In Austin, the half hour is enough.
    expect(fitJob(windowed(), [block("ord_next", T8 + 2.5 * HOUR, 2)])).toBe(T8);
    // A wider window: after the next job and the drive back.
    const drive = greatCircleMinutes(distanceMiles(ROUND_ROCK, AUSTIN));
    expect(fitJob(windowed({ latestStart: T8 + 8 * HOUR }), [next])).toBe(
      Math.ceil(T8 + 4.5 * HOUR + drive * MIN),
    );
  });

  it("finds the gap between two held jobs, or none when the drives do not fit it", () => {
    const before = block("ord_a", T8 - 2 * HOUR, 2); // 06:00-08:00
    const after = block("ord_b", T8 + 2 * HOUR, 2); // 10:00-12:00
    expect(fitJob(windowed(), [after, before])).toBe(T8);
    const farAfter = block("ord_b", T8 + 2 * HOUR, 2, ROUND_ROCK);
    expect(fitJob(windowed(), [before, farAfter])).toBeNull();
  });

  it("leaves the drive from base to the first job of the day to the caller (fromBaseMinutes)", () => {
    // Asked at 07:30 with a 45-minute drive from base: not before 08:15.
    expect(fitJob(windowed({ now: T8 - 30 * MIN, fromBaseMinutes: 45 }), [])).toBe(T8 + 15 * MIN);
  });

  it("reads the hours of a contractor in another zone in its own zone", () => {
    // Hours 08:00-17:00 in Denver are 09:00-18:00 in Austin: the job waits for 09:00 CDT.
    const denver = {
      timeZone: "America/Denver",
      weekly: weekly("mon-fri 08:00-17:00"),
      timeOff: new Float64Array(),
    };
    expect(fitJob(windowed(), [], denver)).toBe(T8 + HOUR);
    // With a job held 09:00-10:00 CDT there, the next start is 10:00 CDT (same place), inside the window.
    expect(fitJob(windowed(), [block("ord_x", T8 + HOUR, 1)], denver)).toBe(T8 + 2 * HOUR);
    // Held until 10:30: nothing starts by 10:00 (the window's latest start).
    expect(fitJob(windowed(), [block("ord_x", T8 + HOUR, 1.5)], denver)).toBeNull();
  });
});

describe("matching with held jobs", () => {
  const contractor = (overrides: Partial<Contractor> = {}): Contractor => ({
    id: "ctr_a",
    pool: "live",
    trades: ["plumbing"],
    states: ["TX"],
    lat: AUSTIN.lat,
    lon: AUSTIN.lon,
    serviceRadiusMiles: 50,
    hourlyRateCents: 9000,
    emergencyCapable: true,
    maxActiveJobs: 10,
    rating: 4.5,
    responseMinutes: 30,
    active: true,
    excluded: false,
    insuranceVerifiedUntil: "2099-01-01",
    licenseVerifiedUntil: "2099-01-01",
    ...overrides,
  });
  const request = (
    time: MatchRequest["time"],
    urgency: MatchRequest["urgency"] = "scheduled",
  ): MatchRequest => ({
    trade: "plumbing",
    state: "TX",
    point: AUSTIN,
    urgency,
    nteCents: null,
    laborHours: 2,
    modelPrice: modelJobPrice("plumbing", "TX", urgency),
    today: Math.floor(T8 / 86_400_000),
    time,
  });
  const held = (list: Commitment[]) => ({ held: list, travel: greatCircleTravel, judgeDeadline: true });
  const window = { start: T8, end: T8 + 4 * HOUR };

  it("rejects a contractor whose held jobs fill the window under capacity, though its count has room", () => {
    const req = request({ now: T8 - 86_400_000, window, arriveBy: null, durationMinutes: 120 });
    const full = [block("ord_1", T8, 2), block("ord_2", T8 + 2 * HOUR, 2)];
    expect(hardFilter(contractor(), req, 2, zones, held(full)).reason).toBe("capacity");
    expect(hardFilter(contractor(), req, 1, zones, held(full.slice(0, 1))).reason).toBeNull();
    // Off for the day: the calendar is the reason, held jobs or not.
    const off = contractor({
      calendar: {
        timeZone: "America/Chicago",
        weekly: null,
        timeOff: Float64Array.from([T8 - HOUR, T8 + 8 * HOUR]),
      },
    });
    expect(hardFilter(off, req, 2, zones, held(full)).reason).toBe("calendar");
  });

  it("reports an ETA after the job it holds, and no ETA past arrive_by", () => {
    // Urgent at 08:00, arrive by 16:00: its job 08:00-11:00 in Round Rock comes first.
    const req = request({ now: T8, window: null, arriveBy: T8 + 8 * HOUR, durationMinutes: 120 }, "urgent");
    const drive = greatCircleMinutes(distanceMiles(ROUND_ROCK, AUSTIN));
    const busy = arrivalOf(undefined, req, 30, 0, zones, held([block("ord_1", T8, 3, ROUND_ROCK)]));
    expect(busy?.eta).toBe(Math.round(180 + drive));
    expect(busy?.at).toBe(Math.ceil(T8 + 3 * HOUR + drive * MIN));
    // Held until after arrive_by: not offered the job.
    expect(arrivalOf(undefined, req, 30, 0, zones, held([block("ord_1", T8, 9)]))).toBeNull();
    // The writer, placing a job chosen already, only looks for room.
    const placed = arrivalOf(undefined, req, 30, 0, zones, {
      ...held([block("ord_1", T8, 9)]),
      judgeDeadline: false,
    });
    expect(placed?.at).toBe(T8 + 9 * HOUR);
  });
});
