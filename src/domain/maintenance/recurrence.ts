// A maintenance plan's recurrence: an RFC 5545 RRULE read strictly, its start date and its exceptions,
// and the local dates it falls on. Pure: no clock, no zone (window.ts turns a date into instants).
//
// Dates, not instants. rrule runs in floating mode: its dtstart is the plan's start date as a UTC Date at
// 00:00 and every occurrence it yields is a local calendar date of the site. The time of day and the zone
// come from the plan's preferred window and the site, applied per date with the zone's rules of that day,
// so a daylight-saving change never shifts a visit by an hour (an RRULE with a TZID would make rrule
// convert through the host's zone, which it does approximately).
//
// Strict reading, because rrule's own parser is lax (it drops a TZID, takes FREQ=FOO as no FREQ, BYDAY=XX
// as nothing): each part is checked here and rrule only sees a canonical rule. Refused, each naming the
// field and a code:
//   invalid_rule           unparseable text, an unknown part, a bad value, a combination RFC 5545 forbids
//   too_long               more than MAX_RULE_CHARS characters
//   more_than_daily        FREQ=HOURLY, MINUTELY or SECONDLY: a trade visit is at most daily
//   time_of_day_in_rule    BYHOUR, BYMINUTE or BYSECOND: the time of day is the preferred window's
//   start_or_zone_in_rule  DTSTART or TZID: the plan gives the start, the site gives the zone
//   never_occurs           UNTIL before the start, no matching date in NEVER_YEARS years (BYMONTH=2;
//                          BYMONTHDAY=31), or every occurrence an exception
// A rule can yield at most one occurrence per day once those are refused (every occurrence is a date at
// 00:00); the iteration drops a repeated date all the same.
//
// Exceptions (EXDATE) are local dates; one that is not an occurrence has no effect (a list of holidays
// may be given to a weekly plan). COUNT counts the excluded occurrences too, as RFC 5545 does.
//
// Editing a plan changes future occurrences only: splitAt(old, effective) is the old recurrence ended
// the day before `effective` (its occurrences keep their keys and windows), and the edited rule is read
// with `start: effective`, so it yields nothing before the edit. The two never share a rule date, so
// their keys never collide. Occurrences already generated on or after `effective` under the old rule are
// the caller's to keep or cancel (a generator that has run ahead by its horizon has some): an effective
// date after the last generated occurrence keeps them all.

import rrulePackage from "rrule";
import type { FieldError } from "../../errors.js";
import { addDays, floating, fromFloating, isLocalDate, type LocalDate, minDate } from "./local-date.js";

// rrule ships CommonJS without named exports Node can see: its namespace is the default export.
const { RRule } = rrulePackage;
type Rule = InstanceType<typeof RRule>;

/** A recurrence read by parseRecurrence: plain data, stored as is and read back with parseRecurrence. */
export interface Recurrence {
  /** The canonical RRULE, without the `RRULE:` prefix (e.g. `FREQ=MONTHLY;BYDAY=2TU`). */
  readonly rule: string;
  /** The first date the rule may fall on (its phase too: `FREQ=MONTHLY;INTERVAL=3` counts from it). */
  readonly start: LocalDate;
  /** No occurrence on or after this date (splitAt sets it); null: none. */
  readonly end: LocalDate | null;
  /** Dates the rule skips, sorted, without repeats. */
  readonly exceptions: readonly LocalDate[];
}

export const MAX_RULE_CHARS = 300;
export const MAX_EXCEPTIONS = 366;
/** A rule with no occurrence in this many years from its start is refused as never occurring (the
 * longest INTERVAL allowed is ten years). */
export const NEVER_YEARS = 25;
/** The longest span one scan of the dates covers (occurrences.ts stops there). */
const SCAN_DAYS = 366 * 30;
const DAY_MS = 86_400_000;
/** The longest time between two periods of a rule, as the largest INTERVAL per FREQ. */
const MAX_INTERVAL: Readonly<Record<string, number>> = { DAILY: 3660, WEEKLY: 520, MONTHLY: 120, YEARLY: 10 };

const FREQS = ["YEARLY", "MONTHLY", "WEEKLY", "DAILY"];
const SUB_DAILY = ["HOURLY", "MINUTELY", "SECONDLY"];
const WEEKDAY_CODES = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
/** The parts read, in the canonical order. */
const PART_ORDER = [
  "FREQ",
  "INTERVAL",
  "COUNT",
  "UNTIL",
  "BYMONTH",
  "BYWEEKNO",
  "BYYEARDAY",
  "BYMONTHDAY",
  "BYDAY",
  "BYSETPOS",
  "WKST",
] as const;

type Fault = { code: string; message: string };
const invalid = (message: string): Fault => ({ code: "invalid_rule", message });

/** A list of non-zero integers within ±`max` (or 1..max when `signed` is false), or the fault. */
function intList(name: string, value: string, max: number, signed = true): Fault | null {
  for (const item of value.split(",")) {
    const n = /^[+-]?\d{1,3}$/.test(item) ? Number(item) : Number.NaN;
    const ok = Number.isInteger(n) && n !== 0 && Math.abs(n) <= max && (signed || n > 0);
    if (!ok) {
      return invalid(`${name}=${value}: "${item}" is not ${signed ? `-${max} to -1 or ` : ""}1 to ${max}`);
    }
  }
  return null;
}

/** BYDAY: weekday codes, numbered (2TU, -1FR) only in a monthly or yearly rule. */
function byDayFault(value: string, freq: string, hasWeekNo: boolean): Fault | null {
  for (const item of value.split(",")) {
    const m = /^([+-]?\d{1,2})?([A-Z]{2})$/.exec(item);
    if (!m || !WEEKDAY_CODES.includes(m[2] as string)) {
      return invalid(`BYDAY=${value}: "${item}" is not a weekday (MO, TU, WE, TH, FR, SA, SU, or 2TU, -1FR)`);
    }
    if (m[1] === undefined) continue;
    const n = Math.abs(Number(m[1]));
    const max = freq === "MONTHLY" ? 5 : 53;
    if (freq !== "MONTHLY" && freq !== "YEARLY") {
      return invalid(`BYDAY=${value}: a numbered weekday (${item}) needs FREQ=MONTHLY or YEARLY`);
    }
    if (freq === "YEARLY" && hasWeekNo) {
      return invalid(`BYDAY=${value}: a numbered weekday (${item}) cannot go with BYWEEKNO`);
    }
    if (n === 0 || n > max) return invalid(`BYDAY=${value}: "${item}" is not the 1st to ${max}th or last`);
  }
  return null;
}

/** The most dates one period of a daily, weekly or monthly rule can hold (null: not bounded here). */
function periodSize(freq: string, parts: Map<string, string>): number | null {
  const byDay = parts.get("BYDAY")?.split(",");
  if (freq === "DAILY") return 1;
  if (freq === "WEEKLY") return byDay?.length ?? 1;
  if (freq !== "MONTHLY") return null;
  const days = parts.get("BYMONTHDAY")?.split(",").length ?? Number.POSITIVE_INFINITY;
  // A weekday falls up to 5 times a month, a numbered one (2TU) once.
  const weekdays = byDay?.reduce((n, d) => n + (/^[A-Z]/.test(d) ? 5 : 1), 0) ?? Number.POSITIVE_INFINITY;
  const size = Math.min(days, weekdays);
  return Number.isFinite(size) ? size : 1;
}

/** A BYSETPOS beyond every date a period can hold never occurs (rrule would look to the year 9999). */
function setPosBeyondSet(value: string, freq: string, parts: Map<string, string>): Fault | null {
  const size = periodSize(freq, parts);
  if (size === null || value.split(",").some((n) => Math.abs(Number(n)) <= size)) return null;
  const period = freq === "DAILY" ? "day" : freq === "WEEKLY" ? "week" : "month";
  return {
    code: "never_occurs",
    message: `never occurs: BYSETPOS=${value} picks beyond the ${size} date${size === 1 ? "" : "s"} a ${period} holds`,
  };
}

/** The fault of one part's value, given the rule's FREQ and parts. */
function partFault(name: string, value: string, freq: string, parts: Map<string, string>): Fault | null {
  switch (name) {
    case "INTERVAL": {
      const max = MAX_INTERVAL[freq] ?? 1;
      const n = /^\d{1,5}$/.test(value) ? Number(value) : 0;
      if (n < 1) return invalid(`INTERVAL=${value} is not a whole number from 1`);
      return n > max
        ? invalid(`INTERVAL=${value}: more than ten years between visits (${freq} at most ${max})`)
        : null;
    }
    case "COUNT":
      return /^\d{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= 10_000
        ? null
        : invalid(`COUNT=${value} is not a whole number from 1 to 10000`);
    case "UNTIL": {
      const m = /^(\d{4})(\d{2})(\d{2})(T\d{6}Z?)?$/.exec(value);
      return m && isLocalDate(`${m[1]}-${m[2]}-${m[3]}`)
        ? null
        : invalid(`UNTIL=${value} is not a date (YYYYMMDD, e.g. 20271231)`);
    }
    case "BYMONTH":
      return intList(name, value, 12, false);
    case "BYWEEKNO":
      return freq === "YEARLY" ? intList(name, value, 53) : invalid("BYWEEKNO needs FREQ=YEARLY");
    case "BYYEARDAY":
      return freq === "YEARLY" ? intList(name, value, 366) : invalid("BYYEARDAY needs FREQ=YEARLY");
    case "BYMONTHDAY":
      return freq === "WEEKLY" ? invalid("BYMONTHDAY cannot go with FREQ=WEEKLY") : intList(name, value, 31);
    case "BYDAY":
      return byDayFault(value, freq, parts.has("BYWEEKNO"));
    case "BYSETPOS":
      return [...parts.keys()].some((k) => k.startsWith("BY") && k !== "BYSETPOS")
        ? (intList(name, value, 366) ?? setPosBeyondSet(value, freq, parts))
        : invalid("BYSETPOS needs another BY part to select from (e.g. BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1)");
    case "WKST":
      return WEEKDAY_CODES.includes(value) ? null : invalid(`WKST=${value} is not a weekday (MO to SU)`);
    default:
      return null;
  }
}

/** The rule's single line without its `RRULE:` prefix, or why there is none. */
function ruleLine(text: string): string | Fault {
  if (text.length > MAX_RULE_CHARS) {
    return { code: "too_long", message: `must be at most ${MAX_RULE_CHARS} characters` };
  }
  const trimmed = text.trim();
  if (trimmed === "") return invalid("is required, e.g. FREQ=MONTHLY;BYDAY=2TU");
  const lines = trimmed.split(/\r?\n/).filter((l) => l.trim() !== "");
  if (lines.length > 1) {
    if (lines.some((l) => /^(DTSTART|TZID)/i.test(l.trim()))) {
      return startOrZone("DTSTART");
    }
    if (lines.some((l) => /^EXDATE/i.test(l.trim()))) {
      return invalid("one RRULE line only: give the exceptions as local dates in exceptions");
    }
    return invalid("one RRULE line only (no RDATE, no second RRULE)");
  }
  return trimmed.replace(/^RRULE:/i, "").trim();
}

function startOrZone(part: string): Fault {
  return {
    code: "start_or_zone_in_rule",
    message: `${part} is not part of a plan's rule: the plan gives the start date and the site gives the time zone`,
  };
}

/** The rule's parts, read strictly, or the first fault found. */
function readParts(line: string): Map<string, string> | Fault {
  const parts = new Map<string, string>();
  for (const raw of line.split(";")) {
    const eq = raw.indexOf("=");
    const name = (eq < 0 ? raw : raw.slice(0, eq)).trim().toUpperCase();
    const value =
      eq < 0
        ? ""
        : raw
            .slice(eq + 1)
            .trim()
            .toUpperCase();
    if (name === "DTSTART" || name === "TZID") return startOrZone(name);
    if (name === "BYHOUR" || name === "BYMINUTE" || name === "BYSECOND") {
      return {
        code: "time_of_day_in_rule",
        message: `${name} is not part of a plan's rule: the time of day comes from the plan's preferred window`,
      };
    }
    if (!(PART_ORDER as readonly string[]).includes(name)) {
      // rrule's own message for what it cannot read at all.
      try {
        RRule.parseString(raw);
      } catch (e) {
        return invalid((e as Error).message);
      }
      return invalid(`${name} is not a recurrence rule part`);
    }
    if (eq < 0 || value === "") return invalid(`${name} has no value (NAME=VALUE)`);
    if (parts.has(name)) return invalid(`${name} is given twice`);
    parts.set(name, value);
  }
  return parts;
}

/** The canonical rule text of valid parts (and the parts), or the first fault. */
function canonicalRule(text: string): { rule: string; parts: Map<string, string> } | Fault {
  const line = ruleLine(text);
  if (typeof line !== "string") return line;
  const parts = readParts(line);
  if (!(parts instanceof Map)) return parts;
  const freq = parts.get("FREQ");
  if (freq === undefined) return invalid("FREQ is required (DAILY, WEEKLY, MONTHLY or YEARLY)");
  if (SUB_DAILY.includes(freq)) {
    return {
      code: "more_than_daily",
      message: `FREQ=${freq} occurs more than daily: a trade visit is at most daily`,
    };
  }
  if (!FREQS.includes(freq)) return invalid(`FREQ=${freq} is not DAILY, WEEKLY, MONTHLY or YEARLY`);
  if (parts.has("COUNT") && parts.has("UNTIL")) return invalid("COUNT and UNTIL cannot both be given");
  for (const [name, value] of parts) {
    const fault = partFault(name, value, freq, parts);
    if (fault) return fault;
  }
  if (parts.has("UNTIL")) parts.set("UNTIL", (parts.get("UNTIL") as string).slice(0, 8));
  const rule = PART_ORDER.filter((name) => parts.has(name))
    .map((name) => `${name}=${parts.get(name)}`)
    .join(";");
  return { rule, parts };
}

/** rrules by canonical rule and start: a generator run asks for the same plans again and again. */
const compiledRules = new Map<string, Rule>();
const RULES_KEPT = 1000;

/** The rrule of a recurrence's rule and start (the end and the exceptions are applied by ruleDates). */
function compiled(rec: Recurrence): Rule {
  const key = `${rec.start};${rec.rule}`;
  let rule = compiledRules.get(key);
  if (rule === undefined) {
    rule = new RRule({ ...RRule.parseString(rec.rule), dtstart: floating(rec.start), tzid: null });
    if (compiledRules.size >= RULES_KEPT) compiledRules.clear();
    compiledRules.set(key, rule);
  }
  return rule;
}

/**
 * The dates `rec` falls on from `first` (or its start, if later), in order, without its exceptions and
 * before its end, for at most SCAN_DAYS days. rrule is asked in batches, each stopped early by its
 * iterator, so a rule's long future is never listed at once.
 */
export function* ruleDates(rec: Recurrence, first: LocalDate): Generator<LocalDate> {
  const rule = compiled(rec);
  const excluded = new Set(rec.exceptions);
  const BATCH = 64;
  let lo = first > rec.start ? first : rec.start;
  const cap = addDays(lo, SCAN_DAYS);
  const stop = rec.end === null ? cap : minDate(rec.end, cap);
  let previous = "";
  while (lo < stop) {
    const batch: LocalDate[] = [];
    rule.between(floating(lo), floating(addDays(stop, -1)), true, (d) => {
      batch.push(fromFloating(d));
      return batch.length < BATCH;
    });
    for (const date of batch) {
      if (date !== previous && !excluded.has(date)) yield date;
      previous = date;
    }
    if (batch.length < BATCH) return;
    lo = addDays(batch[batch.length - 1] as LocalDate, 1);
  }
}

/**
 * Whether a DAILY rule with BY parts falls on a date in [start, stop). Checked here because rrule walks a
 * rule that never matches day by day up to the year 9999, which takes seconds (weekly, monthly and yearly
 * rules take it a period at a time: well under a second).
 */
function dailyRuleOccurs(parts: Map<string, string>, start: LocalDate, stop: LocalDate): boolean {
  const ints = (name: string) => parts.get(name)?.split(",").map(Number);
  const months = ints("BYMONTH");
  const monthDays = ints("BYMONTHDAY");
  const weekdays = parts
    .get("BYDAY")
    ?.split(",")
    .map((code) => (WEEKDAY_CODES.indexOf(code) + 1) % 7);
  const step = Number(parts.get("INTERVAL") ?? "1") * DAY_MS;
  const stopMs = floating(stop).getTime();
  for (let ms = floating(start).getTime(); ms < stopMs; ms += step) {
    const d = new Date(ms);
    const day = d.getUTCDate();
    const monthLength = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
    if (months && !months.includes(d.getUTCMonth() + 1)) continue;
    if (monthDays && !monthDays.some((n) => (n > 0 ? n : monthLength + n + 1) === day)) continue;
    if (weekdays && !weekdays.includes(d.getUTCDay())) continue;
    return true;
  }
  return false;
}

const MONTH_LENGTHS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether a MONTHLY rule can never occur for want of a day: no month its INTERVAL reaches from the start
 * is in BYMONTH, or none of them has a day that is both one of its days of the month (BYMONTHDAY, or the
 * start's day when the rule names no day) and in the place of one of its numbered weekdays (5MO is the
 * 29th to 31st). Which weekday a date falls on changes from year to year, so only the place is checked.
 * rrule would find out month by month up to the year 9999 (half a second).
 */
function monthlyRuleImpossible(parts: Map<string, string>, start: LocalDate): boolean {
  const interval = Number(parts.get("INTERVAL") ?? "1");
  const first = Number(start.slice(5, 7)) - 1;
  const byMonth = parts.get("BYMONTH")?.split(",").map(Number);
  const months = new Set<number>();
  for (let k = 0; k < 12; k++) months.add(((first + k * interval) % 12) + 1);
  const reachable = [...months].filter((m) => byMonth === undefined || byMonth.includes(m));
  if (reachable.length === 0) return true;
  const byDay = parts.get("BYDAY")?.split(",");
  // A weekday without a number falls on every day of the month, over the years.
  if (byDay?.some((d) => /^[A-Z]/.test(d))) return false;
  const monthDays = parts.get("BYMONTHDAY") ?? (byDay ? null : String(Number(start.slice(8, 10))));
  const ordinals = byDay?.map((d) => Number(d.slice(0, -2)));
  const lengths = new Set(reachable.flatMap((m) => (m === 2 ? [28, 29] : [MONTH_LENGTHS[m - 1] as number])));
  for (const length of lengths) {
    const days = monthDays
      ? monthDays.split(",").map((d) => (Number(d) > 0 ? Number(d) : length + Number(d) + 1))
      : Array.from({ length }, (_, i) => i + 1);
    for (const day of days.filter((d) => d >= 1 && d <= length)) {
      const fromStart = Math.ceil(day / 7);
      const fromEnd = -Math.ceil((length - day + 1) / 7);
      if (ordinals === undefined || ordinals.some((n) => n === fromStart || n === fromEnd)) return false;
    }
  }
  return true;
}

/** Why `rec` never occurs, or null when it does (within NEVER_YEARS of its start). */
function neverOccurs(rec: Recurrence, parts: Map<string, string>): FieldError | null {
  const never = (message: string): FieldError => ({ field: "recurrence", code: "never_occurs", message });
  const until = parts.get("UNTIL");
  if (until !== undefined) {
    const untilDate = `${until.slice(0, 4)}-${until.slice(4, 6)}-${until.slice(6, 8)}`;
    if (untilDate < rec.start)
      return never(`never occurs: it ends (UNTIL ${untilDate}) before its start ${rec.start}`);
  }
  const stop = minDate(rec.end ?? "9999-12-31", addDays(rec.start, 366 * NEVER_YEARS));
  const ends = [until === undefined ? null : `its UNTIL`, rec.end === null ? null : `its end ${rec.end}`];
  const bound = ends.filter((e) => e !== null).join(" or ");
  const within =
    bound === ""
      ? `in the ${NEVER_YEARS} years from its start ${rec.start}`
      : `from its start ${rec.start} to ${bound}`;
  const none = never(`never occurs: no date ${within} matches it`);
  if (parts.get("FREQ") === "DAILY" && !dailyRuleOccurs(parts, rec.start, stop)) return none;
  if (parts.get("FREQ") === "MONTHLY" && monthlyRuleImpossible(parts, rec.start)) return none;
  const excluded = new Set(rec.exceptions);
  let found = false;
  for (const date of ruleDates({ ...rec, end: stop, exceptions: [] }, rec.start)) {
    if (!excluded.has(date)) return null;
    found = true;
  }
  return found ? never("never occurs: every occurrence is an exception") : none;
}

/** The exceptions as sorted unique dates, and the faults of those that are not dates. */
function readExceptions(list: readonly string[]): { dates: LocalDate[]; faults: FieldError[] } {
  if (list.length > MAX_EXCEPTIONS) {
    return {
      dates: [],
      faults: [{ field: "exceptions", message: `must have at most ${MAX_EXCEPTIONS} dates` }],
    };
  }
  const faults: FieldError[] = [];
  list.forEach((d, i) => {
    if (!isLocalDate(d))
      faults.push({ field: `exceptions.${i}`, message: `"${d}" is not a date YYYY-MM-DD` });
  });
  return { dates: [...new Set(list)].sort(), faults };
}

/**
 * Reads a plan's recurrence: the RRULE text (with or without `RRULE:`), its start date, its exceptions
 * and (for a version ended by splitAt) its end. Every fault names its field: `recurrence`, `start`,
 * `end`, `exceptions` or `exceptions.<i>`.
 */
export function parseRecurrence(
  text: string,
  opts: { start: string; exceptions?: readonly string[]; end?: string | null },
): Recurrence | FieldError[] {
  const faults: FieldError[] = [];
  const rule = canonicalRule(text);
  if (!("rule" in rule)) faults.push({ field: "recurrence", ...rule });
  if (!isLocalDate(opts.start)) faults.push({ field: "start", message: "must be a date YYYY-MM-DD" });
  const end = opts.end ?? null;
  if (end !== null && !isLocalDate(end)) faults.push({ field: "end", message: "must be a date YYYY-MM-DD" });
  else if (end !== null && isLocalDate(opts.start) && end <= opts.start) {
    faults.push({ field: "end", message: `must be after the start ${opts.start}` });
  }
  const exceptions = readExceptions(opts.exceptions ?? []);
  faults.push(...exceptions.faults);
  if (faults.length > 0 || !("rule" in rule)) return faults;
  const rec: Recurrence = { rule: rule.rule, start: opts.start, end, exceptions: exceptions.dates };
  const never = neverOccurs(rec, rule.parts);
  return never === null ? rec : [never];
}

/**
 * The part of `rec` before an edit effective on `effective`: the same rule, start and exceptions, ended
 * the day before; null when it has no occurrence before `effective`. Its occurrences keep their keys and
 * windows (occurrences.ts reads a move's limit past the end); the edited rule is read with
 * `start: effective`.
 */
export function splitAt(rec: Recurrence, effective: LocalDate): Recurrence | null {
  const end = rec.end === null ? effective : minDate(rec.end, effective);
  if (end <= rec.start) return null;
  const before: Recurrence = { ...rec, end };
  return ruleDates(before, before.start).next().done ? null : before;
}

/** The rule in words, for a calendar ("every month on the 2nd Tuesday"), with its exceptions counted. */
export function describeRecurrence(rec: Recurrence): string {
  const words = compiled(rec).toText();
  const n = rec.exceptions.length;
  return n === 0 ? words : `${words}, except ${n} date${n === 1 ? "" : "s"}`;
}
