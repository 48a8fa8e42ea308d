// A maintenance plan's recurrence read strictly: the examples and the dates they fall on over a
// simulated year (checked against plain calendar arithmetic, not against rrule), exceptions, month ends
// in a leap year, and every refusal with its field, code and reason.

import { describe, expect, it } from "vitest";
import { addDays, isLocalDate, weekdayOf } from "../../../src/domain/maintenance/local-date.js";
import {
  describeRecurrence,
  MAX_EXCEPTIONS,
  MAX_RULE_CHARS,
  NEVER_YEARS,
  parseRecurrence,
  type Recurrence,
  ruleDates,
  splitAt,
} from "../../../src/domain/maintenance/recurrence.js";
import type { FieldError } from "../../../src/errors.js";

function rule(text: string, start = "2026-01-01", exceptions: string[] = [], end: string | null = null) {
  const r = parseRecurrence(text, { start, exceptions, end });
  if (Array.isArray(r)) throw new Error(JSON.stringify(r));
  return r;
}

function faults(text: string, opts: { start?: string; exceptions?: string[]; end?: string | null } = {}) {
  const r = parseRecurrence(text, { start: "2026-01-01", ...opts });
  if (!Array.isArray(r)) throw new Error(`accepted: ${r.rule}`);
  return r;
}

/** The dates of `rec` in [from, until). */
function datesIn(rec: Recurrence, from: string, until: string): string[] {
  const out: string[] = [];
  for (const d of ruleDates(rec, from)) {
    if (d >= until) break;
    out.push(d);
  }
  return out;
}

/** Every date of a year, by plain arithmetic: the oracle the rules are checked against. */
function daysOf(year: number): string[] {
  const out: string[] = [];
  for (let d = `${year}-01-01`; d < `${year + 1}-01-01`; d = addDays(d, 1)) out.push(d);
  return out;
}
const dayOfMonth = (d: string) => Number(d.slice(8, 10));
const monthOf = (d: string) => Number(d.slice(5, 7));
const monthLength = (d: string) => new Date(Date.UTC(Number(d.slice(0, 4)), monthOf(d), 0)).getUTCDate();

describe("the issue's rules over a simulated year", () => {
  it("weekly on Tuesday: every Tuesday of 2026, from the first after the start", () => {
    const dates = datesIn(rule("FREQ=WEEKLY;BYDAY=TU"), "2026-01-01", "2027-01-01");
    expect(dates).toEqual(daysOf(2026).filter((d) => weekdayOf(d) === 2));
    expect(dates).toHaveLength(52);
    expect(dates[0]).toBe("2026-01-06");
  });

  it("weekly without BYDAY falls on the start's weekday", () => {
    expect(datesIn(rule("FREQ=WEEKLY", "2026-03-04"), "2026-03-01", "2026-04-01")).toEqual([
      "2026-03-04",
      "2026-03-11",
      "2026-03-18",
      "2026-03-25",
    ]);
  });

  it("monthly on the 2nd Tuesday: the Tuesday between the 8th and the 14th of each month", () => {
    const dates = datesIn(rule("FREQ=MONTHLY;BYDAY=2TU"), "2026-01-01", "2027-01-01");
    expect(dates).toEqual(
      daysOf(2026).filter((d) => weekdayOf(d) === 2 && dayOfMonth(d) >= 8 && dayOfMonth(d) <= 14),
    );
    expect(dates.slice(0, 3)).toEqual(["2026-01-13", "2026-02-10", "2026-03-10"]);
  });

  it("every 3 months counts from the start, on the start's day of the month", () => {
    expect(datesIn(rule("FREQ=MONTHLY;INTERVAL=3", "2026-01-15"), "2026-01-01", "2027-04-01")).toEqual([
      "2026-01-15",
      "2026-04-15",
      "2026-07-15",
      "2026-10-15",
      "2027-01-15",
    ]);
    // The quarter's phase is the start's: from February, the visits are in Feb, May, Aug, Nov.
    expect(
      datesIn(rule("FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=1", "2026-02-01"), "2026-01-01", "2027-01-01"),
    ).toEqual(["2026-02-01", "2026-05-01", "2026-08-01", "2026-11-01"]);
  });

  it("yearly in April, on the 15th or on the first Monday", () => {
    expect(datesIn(rule("FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=15"), "2026-01-01", "2029-01-01")).toEqual([
      "2026-04-15",
      "2027-04-15",
      "2028-04-15",
    ]);
    const mondays = datesIn(rule("FREQ=YEARLY;BYMONTH=4;BYDAY=1MO"), "2026-01-01", "2029-01-01");
    expect(mondays).toEqual(["2026-04-06", "2027-04-05", "2028-04-03"]);
    for (const d of mondays) expect(weekdayOf(d)).toBe(1);
  });

  it("the 5th Friday of a month: months without one are skipped", () => {
    const dates = datesIn(rule("FREQ=MONTHLY;BYDAY=5FR"), "2026-01-01", "2027-01-01");
    expect(dates).toEqual(daysOf(2026).filter((d) => weekdayOf(d) === 5 && dayOfMonth(d) > 28));
    expect(dates).toEqual(["2026-01-30", "2026-05-29", "2026-07-31", "2026-10-30"]);
  });

  it("the last day of the month, Feb 29 in the leap year 2028 and Feb 28 in 2027", () => {
    const rec = rule("FREQ=MONTHLY;BYMONTHDAY=-1", "2027-01-01");
    const dates = datesIn(rec, "2027-01-01", "2029-01-01");
    expect(dates).toHaveLength(24);
    for (const d of dates) expect(dayOfMonth(d)).toBe(monthLength(d));
    expect(dates).toContain("2027-02-28");
    expect(dates).toContain("2028-02-29");
    expect(dates).not.toContain("2028-02-28");
  });

  it("the 31st skips the months without one; the last weekday of a month by BYSETPOS", () => {
    const dates = datesIn(rule("FREQ=MONTHLY;BYMONTHDAY=31"), "2026-01-01", "2027-01-01");
    expect(dates.map(monthOf)).toEqual([1, 3, 5, 7, 8, 10, 12]);
    const lastWeekdays = datesIn(
      rule("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"),
      "2026-01-01",
      "2027-01-01",
    );
    const oracle = daysOf(2026).filter((d) => {
      const weekday = (x: string) => weekdayOf(x) >= 1 && weekdayOf(x) <= 5;
      let next = addDays(d, 1);
      while (!weekday(next)) next = addDays(next, 1);
      return weekday(d) && monthOf(next) !== monthOf(d);
    });
    expect(lastWeekdays).toEqual(oracle);
    expect(lastWeekdays).toContain("2026-01-30"); // Jan 31 is a Saturday
  });

  it("a numbered weekday on given days of the month: the 5th Sunday of February is Feb 29, some years", () => {
    expect(
      datesIn(rule("FREQ=MONTHLY;BYMONTH=2;BYDAY=5SU;BYMONTHDAY=-1"), "2026-01-01", "2050-01-01"),
    ).toEqual(["2032-02-29"]);
    // The Monday from the 8th to the 14th that is also the 10th.
    expect(datesIn(rule("FREQ=MONTHLY;BYDAY=2MO;BYMONTHDAY=10"), "2026-01-01", "2027-01-01")).toEqual(
      daysOf(2026).filter((d) => weekdayOf(d) === 1 && dayOfMonth(d) === 10),
    );
  });

  it("Feb 29 every year falls on leap years only", () => {
    expect(datesIn(rule("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"), "2026-01-01", "2037-01-01")).toEqual([
      "2028-02-29",
      "2032-02-29",
      "2036-02-29",
    ]);
  });

  it("skips its exceptions; COUNT counts them, as RFC 5545 does", () => {
    const rec = rule("FREQ=WEEKLY;BYDAY=TU", "2026-01-01", [
      "2026-01-13",
      "2026-12-29",
      "2026-01-13",
      "2026-07-04",
    ]);
    expect(rec.exceptions).toEqual(["2026-01-13", "2026-07-04", "2026-12-29"]);
    const dates = datesIn(rec, "2026-01-01", "2027-01-01");
    expect(dates).toHaveLength(50);
    expect(dates).not.toContain("2026-01-13");
    expect(dates.slice(0, 2)).toEqual(["2026-01-06", "2026-01-20"]);
    // 2026-07-04 is a Saturday: not an occurrence, no effect.
    const counted = rule("FREQ=WEEKLY;BYDAY=TU;COUNT=3", "2026-01-01", ["2026-01-13"]);
    expect(datesIn(counted, "2026-01-01", "2027-01-01")).toEqual(["2026-01-06", "2026-01-20"]);
  });

  it("stops at UNTIL (inclusive, a date) and at its end (exclusive)", () => {
    expect(datesIn(rule("FREQ=WEEKLY;BYDAY=TU;UNTIL=20260120T235959Z"), "2026-01-01", "2027-01-01")).toEqual([
      "2026-01-06",
      "2026-01-13",
      "2026-01-20",
    ]);
    expect(
      datesIn(rule("FREQ=WEEKLY;BYDAY=TU", "2026-01-01", [], "2026-01-20"), "2026-01-01", "2027-01-01"),
    ).toEqual(["2026-01-06", "2026-01-13"]);
  });

  it("lists dates from a later day without listing the earlier ones, and none before its start", () => {
    const rec = rule("FREQ=DAILY", "2026-06-10");
    expect(datesIn(rec, "2026-01-01", "2026-06-13")).toEqual(["2026-06-10", "2026-06-11", "2026-06-12"]);
    expect(datesIn(rec, "2031-12-30", "2032-01-02")).toEqual(["2031-12-30", "2031-12-31", "2032-01-01"]);
    // Past a batch of rrule's answers the dates run on without a gap or a repeat.
    const year = datesIn(rec, "2026-06-10", "2027-06-10");
    expect(year).toHaveLength(365);
    expect(new Set(year).size).toBe(365);
  });
});

describe("the canonical rule", () => {
  it("takes the RRULE: prefix, any case, and writes the parts in one order", () => {
    expect(rule("rrule:byday=2tu;freq=monthly").rule).toBe("FREQ=MONTHLY;BYDAY=2TU");
    expect(rule(" RRULE:FREQ=WEEKLY;WKST=SU;BYDAY=MO,TH;INTERVAL=2 ").rule).toBe(
      "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;WKST=SU",
    );
    expect(rule("FREQ=DAILY;UNTIL=20261231T120000Z").rule).toBe("FREQ=DAILY;UNTIL=20261231");
    // The canonical text reads back to the same recurrence.
    const rec = rule("FREQ=YEARLY;BYDAY=1MO;BYMONTH=4");
    expect(rule(rec.rule, rec.start)).toEqual(rec);
  });

  it("describes itself in words", () => {
    expect(describeRecurrence(rule("FREQ=MONTHLY;BYDAY=2TU"))).toBe("every month on the 2nd Tuesday");
    expect(describeRecurrence(rule("FREQ=MONTHLY;INTERVAL=3", "2026-01-01", ["2026-04-01"]))).toBe(
      "every 3 months, except 1 date",
    );
  });
});

describe("refusals, each naming its field and its reason", () => {
  it.each([
    ["FREQ=HOURLY", "more_than_daily", "a trade visit is at most daily"],
    ["FREQ=MINUTELY;INTERVAL=30", "more_than_daily", "more than daily"],
    ["FREQ=SECONDLY", "more_than_daily", "more than daily"],
    ["FREQ=DAILY;BYHOUR=9", "time_of_day_in_rule", "BYHOUR"],
    ["FREQ=WEEKLY;BYMINUTE=30", "time_of_day_in_rule", "preferred window"],
    ["FREQ=WEEKLY;BYSECOND=0", "time_of_day_in_rule", "BYSECOND"],
    ["FREQ=DAILY;DTSTART=20260101T000000", "start_or_zone_in_rule", "the plan gives the start date"],
    ["FREQ=DAILY;TZID=America/New_York", "start_or_zone_in_rule", "the site gives the time zone"],
    ["DTSTART:20260101T000000Z\nRRULE:FREQ=DAILY", "start_or_zone_in_rule", "DTSTART"],
    ["RRULE:FREQ=DAILY\nEXDATE:20260105", "invalid_rule", "exceptions"],
    ["RRULE:FREQ=DAILY\nRRULE:FREQ=WEEKLY", "invalid_rule", "one RRULE line only"],
    ["garbage", "invalid_rule", "Unknown RRULE property 'garbage'"],
    ["FREQ=DAILY;X-NAME=1", "invalid_rule", "Unknown RRULE property 'X-NAME'"],
    ["FREQ=DAILY;BYEASTER=0", "invalid_rule", "BYEASTER is not a recurrence rule part"],
    ["", "invalid_rule", "is required"],
    ["INTERVAL=2", "invalid_rule", "FREQ is required"],
    ["FREQ=FORTNIGHTLY", "invalid_rule", "FREQ=FORTNIGHTLY is not DAILY, WEEKLY, MONTHLY or YEARLY"],
    ["FREQ=DAILY;FREQ=WEEKLY", "invalid_rule", "FREQ is given twice"],
    ["FREQ=DAILY;INTERVAL", "invalid_rule", "INTERVAL has no value"],
    ["FREQ=DAILY;INTERVAL=0", "invalid_rule", "INTERVAL=0 is not a whole number"],
    ["FREQ=DAILY;INTERVAL=1.5", "invalid_rule", "INTERVAL=1.5"],
    ["FREQ=YEARLY;INTERVAL=11", "invalid_rule", "more than ten years between visits"],
    ["FREQ=DAILY;COUNT=0", "invalid_rule", "COUNT=0"],
    ["FREQ=DAILY;COUNT=2;UNTIL=20270101", "invalid_rule", "COUNT and UNTIL cannot both be given"],
    ["FREQ=DAILY;UNTIL=20260231", "invalid_rule", "UNTIL=20260231 is not a date"],
    ["FREQ=WEEKLY;BYDAY=XX", "invalid_rule", '"XX" is not a weekday'],
    ["FREQ=WEEKLY;BYDAY=2TU", "invalid_rule", "needs FREQ=MONTHLY or YEARLY"],
    ["FREQ=MONTHLY;BYDAY=6FR", "invalid_rule", '"6FR" is not the 1st to 5th or last'],
    ["FREQ=MONTHLY;BYMONTHDAY=0", "invalid_rule", '"0" is not -31 to -1 or 1 to 31'],
    ["FREQ=MONTHLY;BYMONTHDAY=32", "invalid_rule", "BYMONTHDAY=32"],
    ["FREQ=WEEKLY;BYMONTHDAY=1", "invalid_rule", "BYMONTHDAY cannot go with FREQ=WEEKLY"],
    ["FREQ=YEARLY;BYMONTH=13", "invalid_rule", '"13" is not 1 to 12'],
    ["FREQ=MONTHLY;BYYEARDAY=100", "invalid_rule", "BYYEARDAY needs FREQ=YEARLY"],
    ["FREQ=MONTHLY;BYWEEKNO=10", "invalid_rule", "BYWEEKNO needs FREQ=YEARLY"],
    ["FREQ=MONTHLY;BYSETPOS=1", "invalid_rule", "BYSETPOS needs another BY part"],
    ["FREQ=WEEKLY;WKST=XX", "invalid_rule", "WKST=XX"],
    [
      "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=31",
      "never_occurs",
      "no date in the 25 years from its start 2026-01-01 matches it",
    ],
    ["FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31", "never_occurs", "never occurs"],
    ["FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "never_occurs", "never occurs"],
    ["FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31", "never_occurs", "never occurs"],
    // Every 7 days from a Thursday is never a Monday; every other year from 2027 is never a leap year.
    ["FREQ=DAILY;INTERVAL=7;BYDAY=MO", "never_occurs", "never occurs"],
    ["FREQ=YEARLY;INTERVAL=2;BYMONTH=2;BYMONTHDAY=29", "never_occurs", "never occurs"],
    ["FREQ=MONTHLY;INTERVAL=12;BYMONTH=5", "never_occurs", "never occurs"],
    ["FREQ=MONTHLY;BYDAY=5MO;BYMONTHDAY=1", "never_occurs", "never occurs"],
    ["FREQ=MONTHLY;BYDAY=-1MO;BYMONTHDAY=1,2,3", "never_occurs", "never occurs"],
    ["FREQ=MONTHLY;BYMONTH=2;BYDAY=5SU;BYMONTHDAY=1,28", "never_occurs", "never occurs"],
    ["FREQ=WEEKLY;BYDAY=MO;BYSETPOS=2", "never_occurs", "BYSETPOS=2 picks beyond the 1 date a week holds"],
    ["FREQ=MONTHLY;BYMONTHDAY=1,15;BYSETPOS=3", "never_occurs", "beyond the 2 dates a month holds"],
    ["FREQ=WEEKLY;UNTIL=20251231", "never_occurs", "it ends (UNTIL 2025-12-31) before its start 2026-01-01"],
  ])("%j: %s", (text, code, message) => {
    const start = text.includes("INTERVAL=2;BYMONTH=2") ? "2027-01-01" : "2026-01-01";
    const [fault, ...rest] = faults(text, { start });
    expect(rest).toEqual([]);
    expect(fault).toMatchObject({ field: "recurrence", code });
    expect(fault?.message).toContain(message);
  });

  it("names the horizon searched for a daily rule that never matches, and accepts one that rarely does", () => {
    expect(faults("FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31")[0]?.message).toContain(`${NEVER_YEARS} years`);
    // The last day of a month when it is a Friday: a daily rule with filters, read by the daily check and
    // by rrule alike.
    const dates = datesIn(rule("FREQ=DAILY;BYMONTHDAY=-1;BYDAY=FR"), "2026-01-01", "2028-01-01");
    expect(dates).toEqual(
      [...daysOf(2026), ...daysOf(2027)].filter(
        (d) => weekdayOf(d) === 5 && dayOfMonth(d) === monthLength(d),
      ),
    );
    expect(dates).toEqual(["2026-07-31", "2027-04-30", "2027-12-31"]);
    expect(
      datesIn(rule("FREQ=DAILY;INTERVAL=7;BYDAY=MO", "2026-01-05"), "2026-01-01", "2026-02-01"),
    ).toHaveLength(4);
  });

  it("refuses a rule whose every occurrence is an exception, not one with an occurrence left", () => {
    const [fault] = faults("FREQ=WEEKLY;BYDAY=TU;COUNT=2", { exceptions: ["2026-01-06", "2026-01-13"] });
    expect(fault).toMatchObject({ field: "recurrence", code: "never_occurs" });
    expect(fault?.message).toContain("every occurrence is an exception");
    expect(
      parseRecurrence("FREQ=WEEKLY;BYDAY=TU;COUNT=3", {
        start: "2026-01-01",
        exceptions: ["2026-01-06", "2026-01-13"],
      }),
    ).toMatchObject({ rule: "FREQ=WEEKLY;COUNT=3;BYDAY=TU" });
  });

  it("refuses a rule with no date before its end", () => {
    const [fault] = faults("FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=15", { start: "2026-05-01", end: "2027-03-01" });
    expect(fault).toMatchObject({ field: "recurrence", code: "never_occurs" });
    expect(fault?.message).toBe(
      "never occurs: no date from its start 2026-05-01 to its end 2027-03-01 matches it",
    );
    expect(faults("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;UNTIL=20270101")[0]?.message).toBe(
      "never occurs: no date from its start 2026-01-01 to its UNTIL matches it",
    );
  });

  it("bounds the text", () => {
    const long = `FREQ=YEARLY;BYMONTHDAY=${Array.from({ length: 150 }, (_, i) => (i % 31) + 1).join(",")}`;
    expect(long.length).toBeGreaterThan(MAX_RULE_CHARS);
    expect(faults(long)).toEqual([
      { field: "recurrence", code: "too_long", message: `must be at most ${MAX_RULE_CHARS} characters` },
    ]);
  });

  it("names the start, the end and each bad exception", () => {
    const r = faults("FREQ=WEEKLY", {
      start: "2026-02-30",
      exceptions: ["2026-03-01", "03/08/2026"],
      end: "soon",
    });
    expect(r.map((f: FieldError) => f.field)).toEqual(["start", "end", "exceptions.1"]);
    expect(faults("FREQ=WEEKLY", { end: "2026-01-01" })).toEqual([
      { field: "end", message: "must be after the start 2026-01-01" },
    ]);
    const many = Array.from({ length: MAX_EXCEPTIONS + 1 }, (_, i) => addDays("2026-01-01", i));
    expect(faults("FREQ=DAILY", { exceptions: many })).toEqual([
      { field: "exceptions", message: `must have at most ${MAX_EXCEPTIONS} dates` },
    ]);
  });

  it("reports the rule's fault and the dates' faults together", () => {
    expect(faults("FREQ=HOURLY", { start: "x" }).map((f) => f.field)).toEqual(["recurrence", "start"]);
  });
});

describe("local dates", () => {
  it("are real dates YYYY-MM-DD", () => {
    expect(isLocalDate("2028-02-29")).toBe(true);
    expect(isLocalDate("2027-02-29")).toBe(false);
    expect(isLocalDate("2026-1-05")).toBe(false);
    expect(isLocalDate("1969-12-31")).toBe(false);
    expect(addDays("2028-02-28", 1)).toBe("2028-02-29");
    expect(addDays("2026-03-01", -1)).toBe("2026-02-28");
  });
});

describe("editing a plan: splitAt", () => {
  const old = rule("FREQ=MONTHLY;BYDAY=2TU", "2026-01-01", ["2026-03-10", "2026-09-08"]);

  it("ends the old rule before the edit: its earlier dates unchanged, none from the edit on", () => {
    const before = splitAt(old, "2026-06-01");
    // The exceptions stay whole: a move's limit is read past the end (occurrences.ts).
    expect(before).toEqual({ ...old, end: "2026-06-01" });
    const dates = datesIn(before as Recurrence, "2026-01-01", "2030-01-01");
    expect(dates).toEqual(datesIn(old, "2026-01-01", "2026-06-01"));
    expect(dates).toEqual(["2026-01-13", "2026-02-10", "2026-04-14", "2026-05-12"]);
  });

  it("gives a new rule read from the edit that shares no date (so no key) with the old one", () => {
    const before = splitAt(old, "2026-05-12") as Recurrence;
    const after = rule("FREQ=WEEKLY;BYDAY=TU", "2026-05-12");
    const oldDates = datesIn(before, "2026-01-01", "2027-01-01");
    const newDates = datesIn(after, "2026-01-01", "2027-01-01");
    expect(oldDates.at(-1)).toBe("2026-04-14");
    expect(newDates[0]).toBe("2026-05-12");
    expect(oldDates.filter((d) => newDates.includes(d))).toEqual([]);
    // The stored past version reads back as it was.
    expect(rule(before.rule, before.start, [...before.exceptions], before.end)).toEqual(before);
  });

  it("keeps an earlier end, and has nothing to keep when no occurrence precedes the edit", () => {
    const ended = rule("FREQ=WEEKLY;BYDAY=TU", "2026-01-01", [], "2026-02-01");
    expect(splitAt(ended, "2026-06-01")?.end).toBe("2026-02-01");
    expect(splitAt(old, "2026-01-01")).toBeNull();
    expect(splitAt(old, "2026-01-13")).toBeNull();
    expect(splitAt(old, "2026-01-14")?.end).toBe("2026-01-14");
  });
});
