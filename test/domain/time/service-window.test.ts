import { describe, expect, it } from "vitest";
import { localDateTime, offsetMinutes, zonedInstant } from "../../../src/domain/time/local-time.js";
import { SERVICE_LEVELS } from "../../../src/domain/time/service-levels.js";
import {
  earliestWindow,
  servicePromise,
  type TimeWindow,
  windowIssues,
} from "../../../src/domain/time/service-window.js";

const NY = "America/New_York";
const window = (start: string, end: string): TimeWindow => ({ start: new Date(start), end: new Date(end) });
const codes = (
  w: TimeWindow,
  now: string,
  urgency: "routine" | "scheduled" | "urgent" | "emergency" = "scheduled",
) => windowIssues(w, { urgency, trade: "plumbing", now: new Date(now) }).map((i) => `${i.field}:${i.code}`);

describe("local time", () => {
  it("reads the wall clock on both sides of a daylight-saving change", () => {
    expect(offsetMinutes(new Date("2026-11-01T05:59:00Z"), NY)).toBe(-240);
    expect(offsetMinutes(new Date("2026-11-01T06:00:00Z"), NY)).toBe(-300);
    expect(localDateTime(new Date("2026-11-01T06:30:00Z"), NY)).toMatchObject({
      day: 1,
      hour: 1,
      minute: 30,
    });
  });

  it("turns a local time into an instant: the first of a repeated hour, a skipped hour read forward", () => {
    const day = { year: 2026, month: 11, day: 1 };
    expect(zonedInstant(NY, { ...day, hour: 1, minute: 30 }).toISOString()).toBe("2026-11-01T05:30:00.000Z");
    expect(zonedInstant(NY, { ...day, hour: 8, minute: 0 }).toISOString()).toBe("2026-11-01T13:00:00.000Z");
    const spring = { year: 2026, month: 3, day: 8 };
    expect(zonedInstant(NY, { ...spring, hour: 2, minute: 30 }).toISOString()).toBe(
      "2026-03-08T07:30:00.000Z",
    );
    expect(zonedInstant(NY, { ...spring, hour: 8, minute: 0 }).toISOString()).toBe(
      "2026-03-08T12:00:00.000Z",
    );
  });
});

describe("windowIssues", () => {
  const now = "2026-10-30T15:00:00Z";

  it("accepts a window across the fall-back change by its real length, not its wall-clock one", () => {
    // 00:30 EDT to 01:30 EST on 2026-11-01 is one hour on the clock face but two real hours: long enough
    // for a 2-hour plumbing job.
    expect(codes(window("2026-11-01T00:30:00-04:00", "2026-11-01T01:30:00-05:00"), now)).toEqual([]);
    // 01:00 EDT to 01:59 EST is just under two hours: too short.
    expect(codes(window("2026-11-01T01:00:00-04:00", "2026-11-01T01:59:00-05:00"), now)).toEqual([
      "service_window.end:window_too_short",
    ]);
  });

  it("names each rule a window breaks", () => {
    expect(codes(window("2026-10-31T12:00:00Z", "2026-10-31T10:00:00Z"), now)).toEqual([
      "service_window.end:window_not_ordered",
    ]);
    expect(codes(window("2026-10-30T14:59:00Z", "2026-10-30T18:00:00Z"), now)).toEqual([
      "service_window.start:window_in_past",
    ]);
    expect(codes(window("2026-10-31T09:00:00Z", "2026-10-31T10:00:00Z"), now)).toEqual([
      "service_window.end:window_too_short",
    ]);
    // 90 days after now is 2027-01-28T15:00Z.
    expect(codes(window("2027-01-28T15:00:01Z", "2027-01-28T20:00:00Z"), now)).toEqual([
      "service_window.start:window_too_far_ahead",
    ]);
    expect(codes(window("2027-01-28T12:00:00Z", "2027-01-28T16:00:00Z"), now)).toEqual([
      "service_window.end:window_too_far_ahead",
    ]);
    expect(codes(window("2027-01-28T11:00:00Z", "2027-01-28T15:00:00Z"), now)).toEqual([]);
    // A window starting exactly now may be booked.
    expect(codes(window(now, "2026-10-30T17:00:00Z"), now)).toEqual([]);
  });

  it("refuses any window for as-soon-as-possible urgencies, and allows one for routine work", () => {
    const ok = window("2026-11-02T14:00:00Z", "2026-11-02T18:00:00Z");
    expect(codes(ok, now, "emergency")).toEqual(["service_window:window_not_allowed"]);
    expect(codes(ok, now, "urgent")).toEqual(["service_window:window_not_allowed"]);
    expect(codes(ok, now, "routine")).toEqual([]);
  });

  it("judges the length against the trade's typical hours", () => {
    const three = window("2026-11-02T14:00:00Z", "2026-11-02T17:00:00Z");
    const at = { now: new Date(now), urgency: "scheduled" as const };
    expect(windowIssues(three, { ...at, trade: "plumbing" })).toEqual([]);
    expect(windowIssues(three, { ...at, trade: "roofing" }).map((i) => i.code)).toEqual(["window_too_short"]);
  });
});

describe("earliestWindow", () => {
  it("is the next working day 08:00-12:00 local, in the standard time a DST change brings", () => {
    // Friday 2026-10-30, 11:00 EDT: the next working day is Monday 2026-11-02, after the change to EST.
    const w = earliestWindow(new Date("2026-10-30T15:00:00Z"), NY, "plumbing");
    expect(w.start.toISOString()).toBe("2026-11-02T13:00:00.000Z");
    expect(w.end.toISOString()).toBe("2026-11-02T17:00:00.000Z");
    // The same moment a week earlier gives 12:00Z: 08:00 EDT.
    const before = earliestWindow(new Date("2026-10-23T15:00:00Z"), NY, "plumbing");
    expect(before.start.toISOString()).toBe("2026-10-26T12:00:00.000Z");
  });

  it("counts the day in the job's zone, not in UTC", () => {
    // 2026-11-03T03:00Z is Monday 19:00 in Los Angeles: the next working day there is Tuesday.
    const la = earliestWindow(new Date("2026-11-03T03:00:00Z"), "America/Los_Angeles", "hvac");
    expect(la.start.toISOString()).toBe("2026-11-03T16:00:00.000Z");
    // In New York it is already Monday 22:00, so Tuesday too; in UTC it would have been Wednesday.
    const ny = earliestWindow(new Date("2026-11-03T03:00:00Z"), NY, "hvac");
    expect(ny.start.toISOString()).toBe("2026-11-03T13:00:00.000Z");
  });

  it("skips the weekend and lasts at least the trade's typical hours", () => {
    // Saturday 2026-11-07 in Phoenix (no DST): Monday 08:00 MST.
    const w = earliestWindow(new Date("2026-11-07T18:00:00Z"), "America/Phoenix", "roofing");
    expect(w.start.toISOString()).toBe("2026-11-09T15:00:00.000Z");
    expect((w.end.getTime() - w.start.getTime()) / 3_600_000).toBe(4);
  });
});

describe("servicePromise", () => {
  const now = new Date("2026-10-30T15:00:00Z");

  it("gives as-soon-as-possible work the clocks of its urgency's level", () => {
    for (const urgency of ["emergency", "urgent", "routine"] as const) {
      const p = servicePromise({ urgency, trade: "plumbing", timeZone: NY, window: null }, now);
      const level = SERVICE_LEVELS[urgency];
      expect(p.arrivalWindow).toBeNull();
      expect(p.respondBy?.getTime()).toBe(now.getTime() + (level.respondMinutes ?? 0) * 60_000);
      expect(p.arriveBy?.getTime()).toBe(now.getTime() + (level.arriveMinutes ?? 0) * 60_000);
    }
    const emergency = servicePromise(
      { urgency: "emergency", trade: "plumbing", timeZone: NY, window: null },
      now,
    );
    expect(emergency.respondBy?.toISOString()).toBe("2026-10-30T15:15:00.000Z");
    expect(emergency.arriveBy?.toISOString()).toBe("2026-10-30T17:00:00.000Z");
  });

  it("states the requested window, or for scheduled work without one the earliest", () => {
    const w = window("2026-11-04T14:00:00Z", "2026-11-04T18:00:00Z");
    const requested = servicePromise({ urgency: "routine", trade: "plumbing", timeZone: NY, window: w }, now);
    expect(requested).toMatchObject({
      timeZone: NY,
      arrivalWindow: { ...w, source: "requested" },
      respondBy: null,
    });
    const earliest = servicePromise(
      { urgency: "scheduled", trade: "plumbing", timeZone: NY, window: null },
      now,
    );
    expect(earliest.arrivalWindow).toEqual({ ...earliestWindow(now, NY, "plumbing"), source: "earliest" });
    expect(earliest.arriveBy).toBeNull();
  });
});
