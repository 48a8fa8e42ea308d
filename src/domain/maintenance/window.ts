// A maintenance plan's preferred window (days of the week and wall-clock hours in the site's zone): its
// checks, the instants of one occurrence's window, and whether it fits the site's opening hours. Pure.
//
// An occurrence's window is one interval of instants, from the first instant the site's wall clock
// shows the window's start on that date to the first it shows its end. Across a daylight-saving change:
// - spring forward: a bound in the skipped hour is the instant of the jump (02:30 becomes 03:00, as
//   calendar.ts reads working hours, where zonedInstant alone would give 03:30);
// - fall back: a bound in the repeated hour is its first pass (zonedInstant's reading), so the repeated
//   hour is counted once and the window stays one interval.
// A window that spans the change is therefore an hour shorter (spring) or longer (fall) in real time, one
// wholly inside the skipped hour is empty, and every other window keeps its wall-clock hours exactly.
// Opening hours are checked on the weekly pattern (local minutes), as calendar.ts holds them.
//
// A rule date that is not a preferred day moves forward to the next preferred day, never onto or past
// the next occurrence's date; when no preferred day is free before it, the occurrence stays on its own
// date, flagged off its preferred days, rather than be lost.

import type { FieldError } from "../../errors.js";
import type { WeeklyHours } from "../time/calendar.js";
import { localDateTime, offsetMinutes, zonedInstant } from "../time/local-time.js";
import { addDays, type LocalDate, weekdayOf } from "./local-date.js";

/** Weekday codes, in the order of Date.getUTCDay (0 = Sunday), as calendar.ts names them. */
const DAY_CODES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
type DayCode = (typeof DAY_CODES)[number];
/** A window's day codes, the working week first, as its days are written back (for an input schema). */
export const WINDOW_DAYS = [
  "mon",
  "tue",
  "wed",
  "thu",
  "fri",
  "sat",
  "sun",
] as const satisfies readonly DayCode[];
const DAY_MINUTES = 1440;
const MINUTE_MS = 60_000;

export interface PreferredWindow {
  /** Preferred days, sorted mon..sun, without repeats. */
  readonly days: readonly DayCode[];
  /** Local wall-clock time `HH:MM` in the site's zone. */
  readonly start: string;
  /** `HH:MM`, after start; `24:00` is the end of the day. */
  readonly end: string;
}

/** One occurrence's window: the day it is planned on and its instants [start, end). */
export interface OccurrenceWindow {
  date: LocalDate;
  start: Date;
  end: Date;
  /** The rule's date when the occurrence moved to a preferred day; null otherwise. */
  moved_from: LocalDate | null;
  /** False when the rule's date is not a preferred day and no preferred day was free before the next. */
  on_preferred_day: boolean;
}

function clockMinutes(text: string, allow24: boolean): number | null {
  const m = /^(\d{2}):(\d{2})$/.exec(text);
  if (!m) return null;
  const [h, min] = [Number(m[1]), Number(m[2])];
  if (min > 59 || h > 24 || (h === 24 && (min !== 0 || !allow24))) return null;
  return h * 60 + min;
}

/** A valid window's start and end, in minutes after local midnight. */
function minutesOf(window: PreferredWindow): { start: number; end: number } {
  return {
    start: clockMinutes(window.start, false) ?? 0,
    end: clockMinutes(window.end, true) ?? DAY_MINUTES,
  };
}

/**
 * Reads a preferred window: days (mon..sun, at least one), start and end `HH:MM` (end after start,
 * `24:00` allowed as an end), at least `durationMinutes` long. Faults name `window.days`, `window.start`,
 * `window.end` (code `window_too_short` when shorter than the plan's estimated duration).
 */
export function parseWindow(
  input: { days: readonly string[]; start: string; end: string },
  durationMinutes: number,
): PreferredWindow | FieldError[] {
  const faults: FieldError[] = [];
  const days = new Set<DayCode>();
  for (const d of input.days) {
    const code = d.trim().toLowerCase();
    if ((DAY_CODES as readonly string[]).includes(code)) days.add(code as DayCode);
    else
      faults.push({
        field: "window.days",
        message: `"${d}" is not a day (mon, tue, wed, thu, fri, sat, sun)`,
      });
  }
  if (input.days.length === 0) faults.push({ field: "window.days", message: "must name at least one day" });
  const start = clockMinutes(input.start, false);
  const end = clockMinutes(input.end, true);
  if (start === null)
    faults.push({ field: "window.start", message: "must be a time HH:MM (00:00 to 23:59)" });
  if (end === null) faults.push({ field: "window.end", message: "must be a time HH:MM (00:01 to 24:00)" });
  if (start !== null && end !== null) {
    if (end <= start)
      faults.push({ field: "window.end", message: "must be after the start (no overnight windows)" });
    else if (end - start < durationMinutes) {
      faults.push({
        field: "window.end",
        code: "window_too_short",
        message: `the window is ${end - start} minutes, shorter than the plan's ${durationMinutes}-minute duration`,
      });
    }
  }
  if (faults.length > 0) return faults;
  return { days: WINDOW_DAYS.filter((d) => days.has(d)), start: input.start, end: input.end };
}

/**
 * The first instant at which the wall clock in `zone` shows `minutes` after midnight of `date` or later:
 * zonedInstant's, except in a skipped hour, where it is the instant the clock jumps (not an hour on).
 */
export function wallInstant(zone: string, date: LocalDate, minutes: number): Date {
  const day = minutes >= DAY_MINUTES ? addDays(date, 1) : date;
  const m = minutes % DAY_MINUTES;
  const [year, month, dom] = day.split("-").map(Number) as [number, number, number];
  const wanted = { year, month, day: dom, hour: Math.floor(m / 60), minute: m % 60 };
  const t = zonedInstant(zone, wanted);
  const shown = localDateTime(t, zone);
  const skipped =
    shown.year !== wanted.year ||
    shown.month !== wanted.month ||
    shown.day !== wanted.day ||
    shown.hour !== wanted.hour ||
    shown.minute !== wanted.minute;
  if (!skipped) return t;
  // The clock jumped by `gap` minutes at some instant in (t - gap, t]: find it to the minute.
  const after = offsetMinutes(t, zone);
  const gap = after - offsetMinutes(new Date(t.getTime() - DAY_MINUTES * MINUTE_MS), zone);
  let lo = t.getTime() - Math.max(gap, 1) * MINUTE_MS;
  let hi = t.getTime();
  while (hi - lo > MINUTE_MS) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS;
    if (offsetMinutes(new Date(mid), zone) === after) hi = mid;
    else lo = mid;
  }
  return new Date(hi);
}

/**
 * The window of the occurrence the rule puts on `date`, in `zone`: on `date` when it is a preferred
 * day, else on the next preferred day before `limit` (the next occurrence's date; null: none), else on
 * `date` itself, flagged.
 */
export function occurrenceWindow(
  date: LocalDate,
  window: PreferredWindow,
  zone: string,
  limit: LocalDate | null = null,
): OccurrenceWindow {
  const preferred = (d: LocalDate) => window.days.includes(DAY_CODES[weekdayOf(d)] as DayCode);
  let day = date;
  let onPreferred = preferred(date);
  for (let i = 1; !onPreferred && i < 7; i++) {
    const candidate = addDays(date, i);
    if (limit !== null && candidate >= limit) break;
    if (preferred(candidate)) {
      day = candidate;
      onPreferred = true;
    }
  }
  const { start, end } = minutesOf(window);
  return {
    date: day,
    start: wallInstant(zone, day, start),
    end: wallInstant(zone, day, end),
    moved_from: day === date ? null : date,
    on_preferred_day: onPreferred,
  };
}

/**
 * Whether the window overlaps the site's opening hours for at least `durationMinutes` on one of its
 * preferred days (read on the weekly pattern, in local minutes); null hours: always open. False: the
 * plan is refused on `window`.
 */
export function windowFitsHours(
  window: PreferredWindow,
  hours: WeeklyHours | null,
  durationMinutes: number,
): boolean {
  const { start, end } = minutesOf(window);
  if (end - start < durationMinutes) return false;
  if (hours === null) return true;
  for (const code of window.days) {
    const base = DAY_CODES.indexOf(code) * DAY_MINUTES;
    for (let i = 0; i < hours.length; i += 2) {
      const overlap =
        Math.min(base + end, hours[i + 1] as number) - Math.max(base + start, hours[i] as number);
      if (overlap > 0 && overlap >= durationMinutes) return true;
    }
  }
  return false;
}
