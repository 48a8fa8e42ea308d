// A maintenance plan's occurrences over a simulated year on injected dates (no wall clock): their keys
// (stable across horizons, moves and edits), their windows across DST in New York, Chicago and Phoenix,
// month ends in the leap year 2028, the 5th weekday, every 3 months, yearly in April, exceptions, the
// bound of one call, and when an occurrence is overdue.

import { describe, expect, it } from "vitest";
import { addDays, weekdayOf } from "../../../src/domain/maintenance/local-date.js";
import {
  isOverdue,
  MAX_OCCURRENCES,
  nextOccurrences,
  type Occurrence,
  occurrencesWithin,
} from "../../../src/domain/maintenance/occurrences.js";
import { parseRecurrence, type Recurrence, splitAt } from "../../../src/domain/maintenance/recurrence.js";
import { type PreferredWindow, parseWindow } from "../../../src/domain/maintenance/window.js";
import { localDateTime } from "../../../src/domain/time/local-time.js";

const NY = "America/New_York";
const CHICAGO = "America/Chicago";
const PHOENIX = "America/Phoenix";
const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri"];
const EVERY_DAY = [...WEEKDAYS, "sat", "sun"];
const HOUR = 3_600_000;

function rule(text: string, start = "2026-01-01", exceptions: string[] = []): Recurrence {
  const r = parseRecurrence(text, { start, exceptions });
  if (Array.isArray(r)) throw new Error(JSON.stringify(r));
  return r;
}

function window(start: string, end: string, days = EVERY_DAY): PreferredWindow {
  const w = parseWindow({ days, start, end }, 60);
  if (Array.isArray(w)) throw new Error(JSON.stringify(w));
  return w;
}

const at = (iso: string) => new Date(iso);
/** The year 2026 in UTC: every occurrence of a US site's 2026 starts in it. */
const within2026 = (rec: Recurrence, w: PreferredWindow, zone: string) =>
  occurrencesWithin(rec, w, zone, at("2026-01-01T08:00:00Z"), at("2027-01-01T08:00:00Z"));
const keys = (list: Occurrence[]) => list.map((o) => o.occurrence_key);
const localStart = (o: Occurrence, zone: string) => {
  const l = localDateTime(new Date(o.start), zone);
  return `${String(l.hour).padStart(2, "0")}:${String(l.minute).padStart(2, "0")}`;
};

describe("a simulated year across daylight-saving changes", () => {
  it("New York, every Sunday 08:00-12:00: 13:00Z in winter, 12:00Z in summer, switching on the change days", () => {
    const list = within2026(rule("FREQ=WEEKLY;BYDAY=SU"), window("08:00", "12:00", ["sun"]), NY);
    expect(list).toHaveLength(52);
    const byKey = new Map(list.map((o) => [o.occurrence_key, o]));
    expect(byKey.get("2026-03-01")?.start).toBe("2026-03-01T13:00:00.000Z");
    expect(byKey.get("2026-03-08")?.start).toBe("2026-03-08T12:00:00.000Z");
    expect(byKey.get("2026-10-25")?.start).toBe("2026-10-25T12:00:00.000Z");
    expect(byKey.get("2026-11-01")?.start).toBe("2026-11-01T13:00:00.000Z");
    for (const o of list) {
      expect(localStart(o, NY)).toBe("08:00");
      expect(Date.parse(o.end) - Date.parse(o.start)).toBe(4 * HOUR);
      const summer = o.occurrence_key >= "2026-03-08" && o.occurrence_key < "2026-11-01";
      expect(o.start.slice(11, 13)).toBe(summer ? "12" : "13");
    }
  });

  it("Chicago, daily 09:00-13:00: 365 visits, each at 09:00 local, an hour earlier in UTC in summer", () => {
    const list = within2026(rule("FREQ=DAILY"), window("09:00", "13:00"), CHICAGO);
    expect(list).toHaveLength(365);
    expect(keys(list)[0]).toBe("2026-01-01");
    expect(keys(list).at(-1)).toBe("2026-12-31");
    for (const o of list) {
      expect(localStart(o, CHICAGO)).toBe("09:00");
      const summer = o.occurrence_key >= "2026-03-08" && o.occurrence_key < "2026-11-01";
      expect(o.start.slice(11, 13)).toBe(summer ? "14" : "15");
    }
  });

  it("Chicago, the night the clocks change: the skipped hour starts at the jump, the repeated one counts once", () => {
    const night = window("01:30", "04:00");
    const list = occurrencesWithin(
      rule("FREQ=DAILY"),
      night,
      CHICAGO,
      at("2026-03-07T00:00:00Z"),
      at("2026-03-10T00:00:00Z"),
    );
    expect(list.map((o) => [o.start, o.end])).toEqual([
      ["2026-03-07T07:30:00.000Z", "2026-03-07T10:00:00.000Z"],
      ["2026-03-08T07:30:00.000Z", "2026-03-08T09:00:00.000Z"],
      ["2026-03-09T06:30:00.000Z", "2026-03-09T09:00:00.000Z"],
    ]);
    const fall = occurrencesWithin(
      rule("FREQ=DAILY"),
      night,
      CHICAGO,
      at("2026-10-31T00:00:00Z"),
      at("2026-11-03T00:00:00Z"),
    );
    expect(fall.map((o) => [o.start, o.end])).toEqual([
      ["2026-10-31T06:30:00.000Z", "2026-10-31T09:00:00.000Z"],
      ["2026-11-01T06:30:00.000Z", "2026-11-01T10:00:00.000Z"],
      ["2026-11-02T07:30:00.000Z", "2026-11-02T10:00:00.000Z"],
    ]);
  });

  it("Phoenix, no DST: every visit of the year at 16:00Z for 09:00 local", () => {
    const list = within2026(rule("FREQ=WEEKLY;BYDAY=MO,TH"), window("09:00", "12:00", WEEKDAYS), PHOENIX);
    // 2026 starts on a Thursday: 53 Thursdays and 52 Mondays.
    expect(list).toHaveLength(105);
    for (const o of list) expect(o.start.slice(11)).toBe("16:00:00.000Z");
  });
});

describe("the issue's rules as visits", () => {
  const weekdayMornings = window("08:00", "12:00", WEEKDAYS);

  it("every 3 months: four visits a year on the 15th, a weekend one moved to Monday", () => {
    const list = within2026(rule("FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=15", "2026-02-01"), weekdayMornings, NY);
    expect(list.map((o) => [o.occurrence_key, o.date, o.moved_from])).toEqual([
      ["2026-02-15", "2026-02-16", "2026-02-15"],
      ["2026-05-15", "2026-05-15", null],
      ["2026-08-15", "2026-08-17", "2026-08-15"],
      ["2026-11-15", "2026-11-16", "2026-11-15"],
    ]);
    expect(list[1]?.start).toBe("2026-05-15T12:00:00.000Z");
    expect(list[3]?.start).toBe("2026-11-16T13:00:00.000Z");
  });

  it("yearly in April on the first Monday, over three years", () => {
    const list = occurrencesWithin(
      rule("FREQ=YEARLY;BYMONTH=4;BYDAY=1MO"),
      weekdayMornings,
      NY,
      at("2026-01-01T00:00:00Z"),
      at("2029-01-01T00:00:00Z"),
    );
    expect(list.map((o) => o.start)).toEqual([
      "2026-04-06T12:00:00.000Z",
      "2027-04-05T12:00:00.000Z",
      "2028-04-03T12:00:00.000Z",
    ]);
  });

  it("the 5th Friday, with one skipped by an exception", () => {
    const list = within2026(
      rule("FREQ=MONTHLY;BYDAY=5FR", "2026-01-01", ["2026-05-29"]),
      weekdayMornings,
      CHICAGO,
    );
    expect(keys(list)).toEqual(["2026-01-30", "2026-07-31", "2026-10-30"]);
    expect(list.map((o) => o.start)).toEqual([
      "2026-01-30T14:00:00.000Z",
      "2026-07-31T13:00:00.000Z",
      "2026-10-30T13:00:00.000Z",
    ]);
  });

  it("the last day of each month of the leap year 2028: weekend ones moved to Monday, keys unchanged", () => {
    const list = occurrencesWithin(
      rule("FREQ=MONTHLY;BYMONTHDAY=-1", "2028-01-01"),
      weekdayMornings,
      NY,
      at("2028-01-01T00:00:00Z"),
      at("2029-01-01T00:00:00Z"),
    );
    expect(keys(list)).toEqual([
      "2028-01-31",
      "2028-02-29",
      "2028-03-31",
      "2028-04-30",
      "2028-05-31",
      "2028-06-30",
      "2028-07-31",
      "2028-08-31",
      "2028-09-30",
      "2028-10-31",
      "2028-11-30",
    ]);
    // 2028-12-31 is a Sunday: its visit is on Monday 2029-01-01, outside the year asked for.
    const moved = list.filter((o) => o.moved_from !== null).map((o) => [o.occurrence_key, o.date]);
    expect(moved).toEqual([
      ["2028-04-30", "2028-05-01"],
      ["2028-09-30", "2028-10-02"],
    ]);
    for (const o of list)
      expect(WEEKDAYS).toContain(["sun", "mon", "tue", "wed", "thu", "fri", "sat"][weekdayOf(o.date)]);
    const december = nextOccurrences(
      rule("FREQ=MONTHLY;BYMONTHDAY=-1", "2028-01-01"),
      weekdayMornings,
      NY,
      at("2028-12-01T00:00:00Z"),
      1,
    );
    expect(december[0]).toMatchObject({
      occurrence_key: "2028-12-31",
      date: "2029-01-01",
      start: "2029-01-01T13:00:00.000Z",
    });
  });
});

describe("keys and idempotent generation", () => {
  const rec = rule("FREQ=WEEKLY;BYDAY=SA,TU", "2026-01-01", ["2026-06-13"]);
  const w = window("08:00", "12:00", WEEKDAYS);

  it("sliding 30-day horizons, a day at a time, name each occurrence with one key and one window", () => {
    const seen = new Map<string, Occurrence>();
    for (let day = "2026-01-01"; day < "2027-01-01"; day = addDays(day, 1)) {
      const now = at(`${day}T15:00:00Z`);
      for (const o of occurrencesWithin(rec, w, NY, now, new Date(now.getTime() + 30 * 24 * HOUR))) {
        const earlier = seen.get(o.occurrence_key);
        if (earlier) expect(o).toEqual(earlier);
        else seen.set(o.occurrence_key, o);
      }
    }
    const whole = occurrencesWithin(rec, w, NY, at("2026-01-01T15:00:00Z"), at("2027-01-31T15:00:00Z"));
    expect([...seen.values()]).toEqual(whole);
  });

  it("a Saturday moves to Monday, never past Tuesday's occurrence; its key stays the Saturday", () => {
    const list = occurrencesWithin(
      rec,
      window("08:00", "12:00", ["mon", "wed"]),
      NY,
      at("2026-03-01T00:00:00Z"),
      at("2026-03-15T00:00:00Z"),
    );
    expect(list.map((o) => [o.occurrence_key, o.date, o.moved_from, o.on_preferred_day])).toEqual([
      ["2026-02-28", "2026-03-02", "2026-02-28", true],
      ["2026-03-03", "2026-03-04", "2026-03-03", true],
      ["2026-03-07", "2026-03-09", "2026-03-07", true],
      ["2026-03-10", "2026-03-11", "2026-03-10", true],
    ]);
    // With Wednesday the only preferred day, Saturday cannot pass Tuesday: it stays, flagged (and
    // Saturday 02-28 stays before the horizon).
    const wed = occurrencesWithin(
      rec,
      window("08:00", "12:00", ["wed"]),
      NY,
      at("2026-03-01T00:00:00Z"),
      at("2026-03-15T00:00:00Z"),
    );
    expect(wed.map((o) => [o.occurrence_key, o.date, o.moved_from, o.on_preferred_day])).toEqual([
      ["2026-03-03", "2026-03-04", "2026-03-03", true],
      ["2026-03-07", "2026-03-07", null, false],
      ["2026-03-10", "2026-03-11", "2026-03-10", true],
      ["2026-03-14", "2026-03-14", null, false],
    ]);
  });

  it("an excluded next date does not hold a move back", () => {
    // Saturdays and Mondays, Tuesdays preferred: Saturday 03-07 cannot pass Monday 03-09, unless Monday
    // 03-09 is an exception; then it moves to Tuesday 03-10.
    const w = window("08:00", "12:00", ["tue"]);
    const from = at("2026-03-06T00:00:00Z");
    const until = at("2026-03-12T00:00:00Z");
    const plain = occurrencesWithin(rule("FREQ=WEEKLY;BYDAY=SA,MO", "2026-03-01"), w, NY, from, until);
    expect(plain.map((o) => [o.occurrence_key, o.date])).toEqual([
      ["2026-03-07", "2026-03-07"],
      ["2026-03-09", "2026-03-10"],
    ]);
    const skipped = rule("FREQ=WEEKLY;BYDAY=SA,MO", "2026-03-01", ["2026-03-09"]);
    expect(occurrencesWithin(skipped, w, NY, from, until).map((o) => [o.occurrence_key, o.date])).toEqual([
      ["2026-03-07", "2026-03-10"],
    ]);
  });

  it("includes a visit moved into the horizon from a date before it, under its original key", () => {
    const monthEnds = rule("FREQ=MONTHLY;BYMONTHDAY=-1");
    const list = occurrencesWithin(monthEnds, w, NY, at("2026-02-01T05:00:00Z"), at("2026-02-10T05:00:00Z"));
    expect(list).toEqual([
      {
        occurrence_key: "2026-01-31",
        date: "2026-02-02",
        start: "2026-02-02T13:00:00.000Z",
        end: "2026-02-02T17:00:00.000Z",
        moved_from: "2026-01-31",
        on_preferred_day: true,
      },
    ]);
  });

  it("counts a window by its start: [from, until)", () => {
    const daily = rule("FREQ=DAILY");
    const list = occurrencesWithin(
      daily,
      window("08:00", "12:00"),
      NY,
      at("2026-01-05T13:00:00Z"),
      at("2026-01-07T13:00:00Z"),
    );
    expect(keys(list)).toEqual(["2026-01-05", "2026-01-06"]);
    expect(occurrencesWithin(daily, w, NY, at("2026-01-05T13:00:01Z"), at("2026-01-05T20:00:00Z"))).toEqual(
      [],
    );
    expect(occurrencesWithin(daily, w, NY, at("2026-01-07T00:00:00Z"), at("2026-01-06T00:00:00Z"))).toEqual(
      [],
    );
  });

  it("returns at most MAX_OCCURRENCES in order; asking again from the last start goes on without a gap", () => {
    const daily = rule("FREQ=DAILY");
    const from = at("2026-01-01T00:00:00Z");
    const until = at("2028-01-01T00:00:00Z");
    const first = occurrencesWithin(daily, w, NY, from, until);
    expect(first).toHaveLength(MAX_OCCURRENCES);
    const last = first.at(-1) as Occurrence;
    const rest = occurrencesWithin(daily, w, NY, new Date(Date.parse(last.start) + 1), until);
    const all = [...first, ...rest];
    expect(all).toHaveLength(730);
    expect(new Set(keys(all)).size).toBe(730);
    for (let i = 1; i < all.length; i++) {
      expect((all[i] as Occurrence).start > (all[i - 1] as Occurrence).start).toBe(true);
      expect((all[i] as Occurrence).occurrence_key > (all[i - 1] as Occurrence).occurrence_key).toBe(true);
    }
    expect(occurrencesWithin(daily, w, NY, from, until, 5)).toEqual(first.slice(0, 5));
  });
});

describe("nextOccurrences", () => {
  it("lists the next visits for a calendar, from an instant, at most MAX_OCCURRENCES", () => {
    const rec = rule("FREQ=MONTHLY;BYDAY=2TU");
    const w = window("08:00", "12:00", WEEKDAYS);
    // On 2026-03-10 at 13:00Z the morning's window has started: the next is April's.
    expect(keys(nextOccurrences(rec, w, NY, at("2026-03-10T13:00:00Z"), 3))).toEqual([
      "2026-04-14",
      "2026-05-12",
      "2026-06-09",
    ]);
    expect(keys(nextOccurrences(rec, w, NY, at("2026-03-10T12:00:00Z"), 1))).toEqual(["2026-03-10"]);
    expect(nextOccurrences(rule("FREQ=DAILY"), w, NY, at("2026-01-01T00:00:00Z"), 10_000)).toHaveLength(
      MAX_OCCURRENCES,
    );
    expect(nextOccurrences(rec, w, NY, at("2026-01-01T00:00:00Z"), 0)).toEqual([]);
  });

  it("ends with a rule that ends", () => {
    const rec = rule("FREQ=WEEKLY;BYDAY=TU;COUNT=3");
    expect(keys(nextOccurrences(rec, window("08:00", "12:00"), NY, at("2026-01-01T00:00:00Z"), 10))).toEqual([
      "2026-01-06",
      "2026-01-13",
      "2026-01-20",
    ]);
  });
});

describe("an edit changes future occurrences only", () => {
  it("keeps the keys and windows before the edit, generates the new rule's from the edit on", () => {
    const w = window("08:00", "12:00", WEEKDAYS);
    const old = rule("FREQ=MONTHLY;BYMONTHDAY=-1");
    const year = (rec: Recurrence) => within2026(rec, w, NY);
    const before = splitAt(old, "2026-06-01") as Recurrence;
    const edited = rule("FREQ=MONTHLY;BYDAY=2TU", "2026-06-01");
    const oldList = year(before);
    const newList = year(edited);
    expect(oldList).toEqual(year(old).filter((o) => o.occurrence_key < "2026-06-01"));
    expect(keys(oldList)).toEqual(["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31"]);
    expect(keys(newList)[0]).toBe("2026-06-09");
    expect(keys(oldList).filter((k) => keys(newList).includes(k))).toEqual([]);
  });

  it("keeps an old occurrence's move past the edit's date, as it was before the edit", () => {
    // 2026-01-31 is a Saturday: its visit was on Monday 02-02, and stays there after an edit effective
    // 2026-02-01, under its key; the edited rule starts on 02-01.
    const old = rule("FREQ=MONTHLY;BYMONTHDAY=-1");
    const w = window("08:00", "12:00", WEEKDAYS);
    const before = splitAt(old, "2026-02-01") as Recurrence;
    const list = within2026(before, w, NY);
    expect(list).toEqual([
      {
        occurrence_key: "2026-01-31",
        date: "2026-02-02",
        start: "2026-02-02T13:00:00.000Z",
        end: "2026-02-02T17:00:00.000Z",
        moved_from: "2026-01-31",
        on_preferred_day: true,
      },
    ]);
    expect(list[0]).toEqual(within2026(old, w, NY)[0]);
  });

  it("keeps a move held back by a next date that falls after the edit", () => {
    // Saturdays and Mondays, Tuesdays preferred: Saturday 03-07 stays (Monday 03-09 is the next date),
    // also once the rule ends on 03-08.
    const old = rule("FREQ=WEEKLY;BYDAY=SA,MO", "2026-03-01");
    const w = window("08:00", "12:00", ["tue"]);
    const before = splitAt(old, "2026-03-08") as Recurrence;
    expect(within2026(before, w, NY)).toEqual([
      {
        occurrence_key: "2026-03-02",
        date: "2026-03-03",
        start: "2026-03-03T13:00:00.000Z",
        end: "2026-03-03T17:00:00.000Z",
        moved_from: "2026-03-02",
        on_preferred_day: true,
      },
      {
        occurrence_key: "2026-03-07",
        date: "2026-03-07",
        start: "2026-03-07T13:00:00.000Z",
        end: "2026-03-07T17:00:00.000Z",
        moved_from: null,
        on_preferred_day: false,
      },
    ]);
  });
});

describe("isOverdue", () => {
  const end = "2026-03-10T16:00:00.000Z";

  it("from the window's end, until the occurrence is completed or skipped", () => {
    expect(isOverdue(end, at("2026-03-10T15:59:59.999Z"), false)).toBe(false);
    expect(isOverdue(end, at(end), false)).toBe(true);
    expect(isOverdue(new Date(end), at("2026-04-01T00:00:00Z"), false)).toBe(true);
    expect(isOverdue(end, at("2026-04-01T00:00:00Z"), true)).toBe(false);
  });
});
