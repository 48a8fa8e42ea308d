// Local calendar dates (`YYYY-MM-DD`, no zone) for maintenance plans, and their "floating" form: the
// UTC Date at 00:00 of that date, which is how rrule represents a date-time with no zone. A plan's
// dates are always local to its site; only a window (window.ts) turns one into instants. Pure.

import { localDateTime } from "../time/local-time.js";

/** A local calendar date, `YYYY-MM-DD`. */
export type LocalDate = string;

const DAY_MS = 86_400_000;
/** The years a plan's dates may name: wide enough for any plan, narrow enough to stop typos. */
const FIRST_YEAR = 1970;
const LAST_YEAR = 2999;

/** Whether `text` is a real calendar date written `YYYY-MM-DD` (years 1970-2999). */
export function isLocalDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < FIRST_YEAR || y > LAST_YEAR) return false;
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The floating Date (UTC 00:00) of a local date. */
export function floating(date: LocalDate): Date {
  return new Date(`${date}T00:00:00Z`);
}

/** The local date of a floating Date. */
export function fromFloating(date: Date): LocalDate {
  return date.toISOString().slice(0, 10);
}

/** `date` moved by `days` (negative: earlier). */
export function addDays(date: LocalDate, days: number): LocalDate {
  return fromFloating(new Date(floating(date).getTime() + days * DAY_MS));
}

/** 0 = Sunday ... 6 = Saturday. */
export function weekdayOf(date: LocalDate): number {
  return floating(date).getUTCDay();
}

/** The local date of `instant` in `zone`. */
export function localDateOf(instant: Date, zone: string): LocalDate {
  const l = localDateTime(instant, zone);
  return `${String(l.year).padStart(4, "0")}-${String(l.month).padStart(2, "0")}-${String(l.day).padStart(2, "0")}`;
}

/** The earlier of two local dates (strings of one format compare as dates). */
export function minDate(a: LocalDate, b: LocalDate): LocalDate {
  return a < b ? a : b;
}
