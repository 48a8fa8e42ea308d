// A job at an exact start (domain/orders/exact-start.ts, the schedule board's drop): the start against the
// order's time (422 on start), and the block against the contractor's hours, time off and held jobs with
// the drive between them (the conflict a 409 window_unavailable names).

import { describe, expect, it } from "vitest";
import type { Commitment } from "../../../src/domain/commitments.js";
import { distanceMiles } from "../../../src/domain/geo.js";
import {
  type ExactPlacement,
  placementConflict,
  startIssues,
  startRefusal,
} from "../../../src/domain/orders/exact-start.js";
import { type Calendar, parseHours, ZoneOffsets } from "../../../src/domain/time/calendar.js";
import { greatCircleMinutes, greatCircleTravel } from "../../../src/domain/travel-time.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
/** Tuesday 2026-06-02 08:00 CDT. */
const T8 = Date.parse("2026-06-02T13:00:00Z");
const AUSTIN = { lat: 30.27, lon: -97.74 };
const ROUND_ROCK = { lat: 30.51, lon: -97.68 };
const zones = new ZoneOffsets(T8 - 3 * 86_400_000, T8 + 10 * 86_400_000);

function calendar(hours: string, off: Array<[number, number]> = []): Calendar {
  const parsed = parseHours(hours);
  if ("error" in parsed) throw new Error(parsed.error);
  return { timeZone: "America/Chicago", weekly: parsed.hours, timeOff: Float64Array.from(off.flat()) };
}

const job = (orderId: string, start: number, point = AUSTIN): Commitment => ({
  orderId,
  start,
  end: start + 2 * HOUR,
  point,
});

const judge = (start: number, more: Partial<ExactPlacement> = {}) =>
  placementConflict({
    contractorId: "ctr_a",
    calendar: calendar("mon-fri 08:00-12:00"),
    block: job("ord_new", start),
    held: [],
    travel: greatCircleTravel,
    zones,
    anyHours: false,
    now: T8 - 86_400_000,
    ...more,
  });

describe("a start against the order's time", () => {
  const now = new Date(T8 - HOUR);
  type Time = Parameters<typeof startIssues>[1];
  const windowed: Time = {
    window_start: new Date(T8).toISOString(),
    window_end: new Date(T8 + 4 * HOUR).toISOString(),
    arrive_by: null,
  };
  const codes = (start: number, order: Time = windowed) =>
    startIssues(new Date(start), order, now).map((i) => [i.field, i.code]);

  it("takes a start from the window's start to before its end", () => {
    expect(codes(T8)).toEqual([]);
    expect(codes(T8 + 4 * HOUR - MIN)).toEqual([]);
    expect(codes(T8 + 4 * HOUR)).toEqual([["start", "start_outside_window"]]);
    expect(codes(T8 - MIN)).toEqual([["start", "start_outside_window"]]);
  });

  it("refuses the past, a start after arrive_by, and an order that states no time", () => {
    expect(codes(T8 - 2 * HOUR)).toEqual([
      ["start", "start_in_past"],
      ["start", "start_outside_window"],
    ]);
    const asap = { window_start: null, window_end: null, arrive_by: new Date(T8 + HOUR).toISOString() };
    expect(codes(T8 + HOUR, asap)).toEqual([]);
    expect(codes(T8 + HOUR + MIN, asap)).toEqual([["start", "start_after_arrive_by"]]);
    expect(codes(T8, { window_start: null, window_end: null, arrive_by: null })).toEqual([
      ["start", "start_not_schedulable"],
    ]);
  });
});

describe("a start against the contractor's time", () => {
  it("fits inside its working hours, and not across their end or before their start", () => {
    expect(judge(T8)).toBeNull();
    expect(judge(T8 + 2 * HOUR)).toBeNull();
    const across = judge(T8 + 3 * HOUR);
    expect(across).toMatchObject({ conflict: "outside_hours" });
    expect(across?.detail).toBe(
      "Contractor ctr_a is not working at Tue 2026-06-02 11:00-13:00 (its hours are mon-fri 08:00-12:00, America/Chicago).",
    );
    expect(judge(T8 - HOUR)).toMatchObject({ conflict: "outside_hours" });
    // An emergency ignores the hours, as the matcher does.
    expect(judge(T8 + 3 * HOUR, { anyHours: true })).toBeNull();
  });

  it("does not fit any part of its time off", () => {
    const cal = calendar("mon-fri 08:00-12:00", [[T8 + HOUR, T8 + 90 * MIN]]);
    expect(judge(T8, { calendar: cal })).toMatchObject({ conflict: "time_off" });
    expect(judge(T8 + 90 * MIN, { calendar: cal })).toBeNull();
    expect(judge(T8 + 90 * MIN, { calendar: cal, anyHours: true })).toBeNull();
    expect(judge(T8 + 30 * MIN, { calendar: cal, anyHours: true })).toMatchObject({ conflict: "time_off" });
  });

  it("does not overlap a held job, counting the drive between the two either way", () => {
    const drive = Math.round(greatCircleMinutes(distanceMiles(ROUND_ROCK, AUSTIN)));
    expect(drive).toBeGreaterThan(30);
    // Round Rock 10:00-12:00.
    const held = [job("ord_rr", T8 + 2 * HOUR, ROUND_ROCK)];
    const cal = calendar("mon-fri 06:00-20:00");
    expect(judge(T8 + 3 * HOUR, { held, calendar: cal })).toMatchObject({
      conflict: "overlap",
      orderId: "ord_rr",
    });
    // After it: its end plus the drive to Austin.
    const tooSoon = judge(T8 + 4 * HOUR + (drive - 1) * MIN, { held, calendar: cal });
    expect(tooSoon).toMatchObject({ conflict: "overlap", orderId: "ord_rr" });
    expect(tooSoon?.detail).toContain(`counting ${drive} minutes' drive`);
    expect(judge(T8 + 4 * HOUR + drive * MIN, { held, calendar: cal })).toBeNull();
    // Before it: this job's end plus the drive to Round Rock.
    expect(judge(T8 - (drive - 1) * MIN, { held, calendar: cal })).toMatchObject({ conflict: "overlap" });
    expect(judge(T8 - drive * MIN, { held, calendar: cal })).toBeNull();
    // The order's own block, and a job over by now, hold nothing back.
    expect(judge(T8, { held: [job("ord_new", T8)] })).toBeNull();
    expect(judge(T8 + 4 * HOUR, { held, calendar: cal, now: T8 + 4 * HOUR })).toBeNull();
  });

  it("refuses with window_unavailable naming the contractor, the conflict and the order it overlaps", () => {
    expect(startRefusal("ctr_a", { conflict: "overlap", orderId: "ord_rr", detail: "Busy." })).toEqual({
      kind: "refused",
      code: "window_unavailable",
      message: "Busy. Pick another start or another contractor.",
      extra: { contractor_id: "ctr_a", conflict: "overlap", order_id: "ord_rr" },
    });
    expect(startRefusal("ctr_a", { conflict: "time_off", detail: "Off." }).extra).toEqual({
      contractor_id: "ctr_a",
      conflict: "time_off",
    });
  });
});
