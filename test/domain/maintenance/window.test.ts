// A maintenance plan's preferred window: its checks, one occurrence's instants across daylight-saving
// changes (New York, Chicago, Phoenix without DST), moves to a preferred day, and the fit with a site's
// opening hours. Every instant is written out in UTC so that an error of one hour fails.

import { describe, expect, it } from "vitest";
import {
  occurrenceWindow,
  type PreferredWindow,
  parseWindow,
  WINDOW_DAYS,
  wallInstant,
  windowFitsHours,
} from "../../../src/domain/maintenance/window.js";
import { parseHours } from "../../../src/domain/time/calendar.js";
import { zonedInstant } from "../../../src/domain/time/local-time.js";
import type { FieldError } from "../../../src/errors.js";

const NY = "America/New_York";
const CHICAGO = "America/Chicago";
const PHOENIX = "America/Phoenix";
const EVERY_DAY = [...WINDOW_DAYS];

function window(start: string, end: string, days = EVERY_DAY, duration = 1): PreferredWindow {
  const w = parseWindow({ days, start, end }, duration);
  if (Array.isArray(w)) throw new Error(JSON.stringify(w));
  return w;
}

/** The window's instants on `date` in `zone`, as ISO strings. */
function instants(date: string, start: string, end: string, zone: string): [string, string] {
  const w = occurrenceWindow(date, window(start, end), zone);
  return [w.start.toISOString(), w.end.toISOString()];
}

function hours(text: string) {
  const parsed = parseHours(text);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.hours;
}

describe("parseWindow", () => {
  it("keeps each day once, in the week's order", () => {
    expect(parseWindow({ days: ["sun", ...WINDOW_DAYS], start: "08:00", end: "12:00" }, 60)).toMatchObject({
      days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
    });
    expect(parseWindow({ days: ["FRI", "mon", "mon", " wed "], start: "08:00", end: "12:00" }, 120)).toEqual({
      days: ["mon", "wed", "fri"],
      start: "08:00",
      end: "12:00",
    });
    expect(parseWindow({ days: ["sun"], start: "20:00", end: "24:00" }, 240)).toMatchObject({ end: "24:00" });
  });

  it.each([
    [{ days: [], start: "08:00", end: "12:00" }, 60, "window.days", "at least one day"],
    [{ days: ["mon", "funday"], start: "08:00", end: "12:00" }, 60, "window.days", '"funday" is not a day'],
    [{ days: ["mon"], start: "8:00", end: "12:00" }, 60, "window.start", "HH:MM"],
    [{ days: ["mon"], start: "24:00", end: "24:00" }, 60, "window.start", "HH:MM"],
    [{ days: ["mon"], start: "08:00", end: "12:60" }, 60, "window.end", "HH:MM"],
    [{ days: ["mon"], start: "12:00", end: "08:00" }, 60, "window.end", "after the start"],
    [{ days: ["mon"], start: "08:00", end: "08:00" }, 0, "window.end", "after the start"],
  ])("refuses %j (duration %i) on %s", (input, duration, field, message) => {
    const faults = parseWindow(input, duration) as FieldError[];
    expect(faults).toHaveLength(1);
    expect(faults[0]).toMatchObject({ field });
    expect(faults[0]?.message).toContain(message);
  });

  it("refuses a window shorter than the plan's duration, with its code", () => {
    expect(parseWindow({ days: ["mon"], start: "08:00", end: "09:30" }, 120)).toEqual([
      {
        field: "window.end",
        code: "window_too_short",
        message: "the window is 90 minutes, shorter than the plan's 120-minute duration",
      },
    ]);
    expect(Array.isArray(parseWindow({ days: ["mon"], start: "08:00", end: "10:00" }, 120))).toBe(false);
  });
});

describe("an occurrence's instants across daylight-saving changes", () => {
  it("New York: the same wall-clock window, an hour earlier in UTC once the clocks spring forward", () => {
    expect(instants("2026-03-07", "08:00", "12:00", NY)).toEqual([
      "2026-03-07T13:00:00.000Z",
      "2026-03-07T17:00:00.000Z",
    ]);
    expect(instants("2026-03-08", "08:00", "12:00", NY)).toEqual([
      "2026-03-08T12:00:00.000Z",
      "2026-03-08T16:00:00.000Z",
    ]);
    expect(instants("2026-10-31", "08:00", "12:00", NY)).toEqual([
      "2026-10-31T12:00:00.000Z",
      "2026-10-31T16:00:00.000Z",
    ]);
    expect(instants("2026-11-01", "08:00", "12:00", NY)).toEqual([
      "2026-11-01T13:00:00.000Z",
      "2026-11-01T17:00:00.000Z",
    ]);
  });

  it("spring forward: a bound in the skipped hour is the first instant after the gap", () => {
    // 02:30 does not exist on 2026-03-08: the window starts when the clock jumps to 03:00 EDT (07:00Z),
    // not at 03:30 EDT, where zonedInstant alone reads it.
    expect(instants("2026-03-08", "02:30", "06:00", NY)).toEqual([
      "2026-03-08T07:00:00.000Z",
      "2026-03-08T10:00:00.000Z",
    ]);
    expect(zonedInstant(NY, { year: 2026, month: 3, day: 8, hour: 2, minute: 30 }).toISOString()).toBe(
      "2026-03-08T07:30:00.000Z",
    );
    // An end in the gap: the window runs to the jump, one real hour after 01:00 EST.
    expect(instants("2026-03-08", "01:00", "02:30", NY)).toEqual([
      "2026-03-08T06:00:00.000Z",
      "2026-03-08T07:00:00.000Z",
    ]);
    // A window across the gap is an hour shorter in real time; one wholly inside it is empty.
    expect(instants("2026-03-08", "01:00", "04:00", NY)).toEqual([
      "2026-03-08T06:00:00.000Z",
      "2026-03-08T08:00:00.000Z",
    ]);
    expect(instants("2026-03-08", "02:00", "03:00", NY)).toEqual([
      "2026-03-08T07:00:00.000Z",
      "2026-03-08T07:00:00.000Z",
    ]);
  });

  it("fall back: a bound in the repeated hour is its first pass", () => {
    // 01:30 happens twice on 2026-11-01 (EDT 05:30Z, then EST 06:30Z): the first is taken.
    expect(instants("2026-11-01", "01:30", "04:00", NY)).toEqual([
      "2026-11-01T05:30:00.000Z",
      "2026-11-01T09:00:00.000Z",
    ]);
    expect(instants("2026-11-01", "00:00", "01:30", NY)).toEqual([
      "2026-11-01T04:00:00.000Z",
      "2026-11-01T05:30:00.000Z",
    ]);
    // A window across the repeated hour is an hour longer in real time.
    expect(instants("2026-11-01", "00:00", "03:00", NY)).toEqual([
      "2026-11-01T04:00:00.000Z",
      "2026-11-01T08:00:00.000Z",
    ]);
  });

  it("Chicago: the same changes an hour later in UTC", () => {
    expect(instants("2026-03-07", "09:00", "13:00", CHICAGO)).toEqual([
      "2026-03-07T15:00:00.000Z",
      "2026-03-07T19:00:00.000Z",
    ]);
    expect(instants("2026-03-08", "09:00", "13:00", CHICAGO)).toEqual([
      "2026-03-08T14:00:00.000Z",
      "2026-03-08T18:00:00.000Z",
    ]);
    expect(instants("2026-03-08", "02:30", "05:00", CHICAGO)).toEqual([
      "2026-03-08T08:00:00.000Z",
      "2026-03-08T10:00:00.000Z",
    ]);
    expect(instants("2026-11-01", "01:30", "03:00", CHICAGO)).toEqual([
      "2026-11-01T06:30:00.000Z",
      "2026-11-01T09:00:00.000Z",
    ]);
    expect(instants("2026-11-01", "09:00", "13:00", CHICAGO)).toEqual([
      "2026-11-01T15:00:00.000Z",
      "2026-11-01T19:00:00.000Z",
    ]);
  });

  it("Phoenix keeps UTC-7 all year, on the days the others change too", () => {
    for (const date of ["2026-01-15", "2026-03-08", "2026-07-01", "2026-11-01"]) {
      expect(instants(date, "09:00", "13:00", PHOENIX)).toEqual([
        `${date}T16:00:00.000Z`,
        `${date}T20:00:00.000Z`,
      ]);
    }
    expect(instants("2026-03-08", "02:30", "04:00", PHOENIX)).toEqual([
      "2026-03-08T09:30:00.000Z",
      "2026-03-08T11:00:00.000Z",
    ]);
  });

  it("ends at 24:00 at the next day's midnight, in that day's offset", () => {
    expect(instants("2026-03-07", "20:00", "24:00", NY)).toEqual([
      "2026-03-08T01:00:00.000Z",
      "2026-03-08T05:00:00.000Z",
    ]);
    expect(instants("2026-10-31", "20:00", "24:00", NY)).toEqual([
      "2026-11-01T00:00:00.000Z",
      "2026-11-01T04:00:00.000Z",
    ]);
  });

  it("finds a half-hour jump to the minute (Lord Howe Island)", () => {
    // 2026-10-04 02:00 +10:30 (2026-10-03T15:30Z) the clock jumps to 02:30 +11:00.
    expect(wallInstant("Australia/Lord_Howe", "2026-10-04", 2 * 60 + 10).toISOString()).toBe(
      "2026-10-03T15:30:00.000Z",
    );
    expect(wallInstant("Australia/Lord_Howe", "2026-10-04", 2 * 60 + 30).toISOString()).toBe(
      "2026-10-03T15:30:00.000Z",
    );
    expect(wallInstant("Australia/Lord_Howe", "2026-10-04", 3 * 60).toISOString()).toBe(
      "2026-10-03T16:00:00.000Z",
    );
  });
});

describe("moving to a preferred day", () => {
  const weekdays = window("08:00", "12:00", ["mon", "tue", "wed", "thu", "fri"]);

  it("moves a Sunday to Monday, in Monday's offset, and says where from", () => {
    expect(occurrenceWindow("2026-03-08", weekdays, NY)).toEqual({
      date: "2026-03-09",
      start: new Date("2026-03-09T12:00:00.000Z"),
      end: new Date("2026-03-09T16:00:00.000Z"),
      moved_from: "2026-03-08",
      on_preferred_day: true,
    });
    // Friday 2026-10-30 stays: a preferred day.
    expect(occurrenceWindow("2026-10-30", weekdays, NY)).toMatchObject({
      date: "2026-10-30",
      moved_from: null,
    });
    // Saturday 2026-10-31 (EDT) moves to Monday 2026-11-02 (EST): 13:00Z, not 12:00Z.
    expect(occurrenceWindow("2026-10-31", weekdays, NY)).toMatchObject({
      date: "2026-11-02",
      start: new Date("2026-11-02T13:00:00.000Z"),
      moved_from: "2026-10-31",
    });
  });

  it("moves as far as the next preferred day, never onto or past the limit", () => {
    const wednesdays = window("08:00", "12:00", ["wed"]);
    expect(occurrenceWindow("2026-03-07", wednesdays, NY, "2026-03-12")).toMatchObject({
      date: "2026-03-11",
      moved_from: "2026-03-07",
      on_preferred_day: true,
    });
    expect(occurrenceWindow("2026-03-07", wednesdays, NY, "2026-03-11")).toEqual({
      date: "2026-03-07",
      start: new Date("2026-03-07T13:00:00.000Z"),
      end: new Date("2026-03-07T17:00:00.000Z"),
      moved_from: null,
      on_preferred_day: false,
    });
  });
});

describe("windowFitsHours", () => {
  const store = hours("mon-fri 07:00-21:00; sat 09:00-17:00");

  it("fits when one preferred day overlaps the opening hours for the whole duration", () => {
    expect(windowFitsHours(window("08:00", "12:00", ["sat"]), store, 180)).toBe(true);
    expect(windowFitsHours(window("08:00", "12:00", ["sat"]), store, 181)).toBe(false);
    expect(windowFitsHours(window("06:00", "08:00", ["mon"]), store, 60)).toBe(true);
    expect(windowFitsHours(window("06:00", "08:00", ["mon"]), store, 61)).toBe(false);
    // Sunday closed, Saturday too short: the Saturday-Sunday window fits only the short job.
    expect(windowFitsHours(window("15:00", "20:00", ["sat", "sun"]), store, 120)).toBe(true);
    expect(windowFitsHours(window("15:00", "20:00", ["sat", "sun"]), store, 150)).toBe(false);
  });

  it("does not fit a day the site is closed or hours outside its opening", () => {
    expect(windowFitsHours(window("08:00", "12:00", ["sun"]), store, 60)).toBe(false);
    expect(windowFitsHours(window("21:00", "24:00", EVERY_DAY), store, 30)).toBe(false);
    expect(windowFitsHours(window("05:00", "07:00", ["mon"]), store, 1)).toBe(false);
  });

  it("reads opening hours across midnight as one stretch", () => {
    const late = hours("fri 18:00-24:00; sat 00:00-04:00");
    expect(windowFitsHours(window("00:00", "03:00", ["sat"]), late, 180)).toBe(true);
    expect(windowFitsHours(window("00:00", "03:00", ["fri"]), late, 60)).toBe(false);
  });

  it("fits any window at least the duration long when the site is always open", () => {
    expect(windowFitsHours(window("02:00", "04:00", ["sun"]), null, 120)).toBe(true);
    expect(windowFitsHours(window("02:00", "04:00", ["sun"]), null, 121)).toBe(false);
  });
});
