// Contractor calendars: the working-hours text, the zone they are read in, and when a job fits.

import { describe, expect, it } from "vitest";
import { contractorCalendar, contractorTimeZone } from "../../../src/domain/contractor-calendar.js";
import {
  type Calendar,
  earliestStart,
  formatHours,
  parseHours,
  weeklyMinutes,
  ZoneOffsets,
} from "../../../src/domain/time/calendar.js";

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function hours(text: string) {
  const parsed = parseHours(text);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.hours;
}

function calendar(text: string, zone: string, off: Array<[string, string]> = []): Calendar {
  return {
    timeZone: zone,
    weekly: hours(text),
    timeOff: Float64Array.from(off.flatMap(([s, e]) => [at(s), at(e)])),
  };
}

const zones = () => new ZoneOffsets(at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z"));

/** The earliest start in [from, latestStart] of a job of `h` hours. */
function startIn(cal: Calendar, from: string, latest: string, h: number, anyHours = false) {
  return iso(earliestStart(cal, at(from), at(latest), h * HOUR, zones(), anyHours));
}

describe("working hours text", () => {
  it("reads days, spans and ranges, and writes them back the same", () => {
    const h = hours("mon-fri 08:00-17:00; sat 09:00-13:00");
    expect(weeklyMinutes(h)).toBe(5 * 540 + 240);
    expect(formatHours(h)).toBe("mon-fri 08:00-17:00; sat 09:00-13:00");
    expect(formatHours(hours("SAT,Sun 10:00-12:00,13:00-15:00"))).toBe("sat-sun 10:00-12:00,13:00-15:00");
    // A span may wrap around the week; 24:00 ends a day.
    expect(formatHours(hours("fri-mon 00:00-24:00"))).toBe("mon 00:00-24:00; fri-sun 00:00-24:00");
    // Overlaps merge.
    expect(formatHours(hours("mon 08:00-12:00; mon 11:00-14:00"))).toBe("mon 08:00-14:00");
  });

  it("reads blank as any time", () => {
    expect(parseHours("  ")).toEqual({ hours: null });
    expect(formatHours(null)).toBe("");
  });

  it.each([
    ["mon-fry 08:00-17:00", '"mon-fry" is not a day'],
    ["08:00-17:00", "is not days and hours"],
    ["mon 17:00-08:00", "ends before it starts"],
    ["mon 08:00-25:00", "is not a range of times"],
    ["mon 8-17", "is not a range of times"],
  ])("refuses %s, saying why", (text, message) => {
    const parsed = parseHours(text);
    expect("error" in parsed && parsed.error).toContain(message);
  });
});

describe("the zone of a contractor's hours", () => {
  it("is its home ZIP's zone, else its first state's", () => {
    expect(contractorTimeZone("79901", ["TX"])).toBe("America/Denver"); // El Paso
    expect(contractorTimeZone("78701", ["TX"])).toBe("America/Chicago");
    expect(contractorTimeZone(null, ["NY", "NJ"])).toBe("America/New_York");
  });

  it("is no calendar at all without hours or time off (any time)", () => {
    expect(contractorCalendar(null, "78701", ["TX"], [])).toBeUndefined();
    expect(contractorCalendar(null, "78701", ["TX"], [{ start: 1, end: 2 }])?.weekly).toBeNull();
  });
});

describe("when a job fits a calendar", () => {
  const chicago = calendar("mon-fri 08:00-17:00", "America/Chicago");

  it("starts at the first working hour at or after the start, for a contractor in another zone than the job", () => {
    // A New York window, Monday 08:00-12:00 EDT (12:00-16:00Z); the contractor starts at 08:00 CDT (13:00Z).
    expect(startIn(chicago, "2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z", 3)).toBe(
      "2026-06-01T13:00:00.000Z",
    );
    // A 2-hour job in New York's 08:00-10:00 does not fit: the contractor is free from 09:00 EDT.
    expect(startIn(chicago, "2026-06-01T12:00:00Z", "2026-06-01T12:00:00Z", 2)).toBeNull();
  });

  it("needs the whole job inside one working stretch, not split over a night", () => {
    // Monday 16:00 CDT: an hour left, so a 2-hour job waits for Tuesday 08:00 CDT.
    expect(startIn(chicago, "2026-06-01T21:00:00Z", "2026-06-05T00:00:00Z", 2)).toBe(
      "2026-06-02T13:00:00.000Z",
    );
    // Saturday: the next start is Monday.
    expect(startIn(chicago, "2026-06-06T15:00:00Z", "2026-06-10T00:00:00Z", 1)).toBe(
      "2026-06-08T13:00:00.000Z",
    );
  });

  it("skips time off, and ignores hours (not time off) on call", () => {
    const off = calendar("mon-fri 08:00-17:00", "America/Chicago", [
      ["2026-06-01T13:00:00Z", "2026-06-01T18:00:00Z"],
    ]);
    expect(startIn(off, "2026-06-01T00:00:00Z", "2026-06-05T00:00:00Z", 2)).toBe("2026-06-01T18:00:00.000Z");
    expect(startIn(off, "2026-06-01T00:00:00Z", "2026-06-05T00:00:00Z", 2, true)).toBe(
      "2026-06-01T00:00:00.000Z",
    );
    expect(startIn(off, "2026-06-01T14:00:00Z", "2026-06-05T00:00:00Z", 2, true)).toBe(
      "2026-06-01T18:00:00.000Z",
    );
  });

  it("counts the hours the clock really shows across daylight-saving changes", () => {
    const night = calendar("sun 00:00-06:00", "America/New_York");
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT, so 00:00-06:00 local is 05:00Z-10:00Z, five hours.
    const window = ["2026-03-07T20:00:00Z", "2026-03-09T00:00:00Z"] as const;
    expect(startIn(night, window[0], window[1], 5)).toBe("2026-03-08T05:00:00.000Z");
    expect(startIn(night, window[0], window[1], 5.5)).toBeNull();
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST, so 00:00-06:00 local is 04:00Z-11:00Z, seven hours.
    expect(startIn(night, "2026-10-31T20:00:00Z", "2026-11-02T00:00:00Z", 7)).toBe(
      "2026-11-01T04:00:00.000Z",
    );
    expect(startIn(night, "2026-10-31T20:00:00Z", "2026-11-02T00:00:00Z", 7.5)).toBeNull();
  });

  it("keeps local hours on both sides of a change within one search", () => {
    // 08:00 local is 13:00Z before the spring change (EST) and 12:00Z after it (EDT).
    const ny = calendar("mon-fri 08:00-17:00", "America/New_York");
    expect(startIn(ny, "2026-03-06T18:00:00Z", "2026-03-12T00:00:00Z", 9)).toBe("2026-03-09T12:00:00.000Z");
    expect(startIn(ny, "2026-03-06T12:00:00Z", "2026-03-12T00:00:00Z", 9)).toBe("2026-03-06T13:00:00.000Z");
  });
});
