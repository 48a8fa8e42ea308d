// A contractor's calendar: its working hours per weekday in its own time zone, and its time off; and
// the earliest instant a job of a given length fits in it. Pure: the clock is an argument.
//
// Working hours are written like `mon-fri 08:00-17:00; sat 09:00-13:00`: entries separated by `;`, each
// a list of days (`mon`, `mon-fri`, `sat,sun`, `fri-mon` wraps) and a list of ranges (`08:00-12:00,
// 13:00-17:00`), local wall-clock time, end after start, `24:00` allowed as an end. No hours (blank) means
// any time, the default, so pools imported before calendars existed keep matching as they did.
//
// Held as weekly minutes: sorted, merged [start, end) pairs of minutes since Sunday 00:00 local
// (0-10080) in an Int32Array, precomputed once per pool load so the matcher only does arithmetic. A
// range of instants is turned into local time with the zone's offset, found once per zone and range
// (offset segments, split where daylight-saving time changes), so a window across a change is exact:
// the hour the clock skips does not exist, the hour it repeats is worked once.

import { offsetMinutes } from "./local-time.js";

const WEEK_MINUTES = 10_080;
const DAY_MINUTES = 1440;
const MINUTE_MS = 60_000;
/** 1970-01-01 was a Thursday: local epoch minutes + this, modulo a week, is the minute of the week. */
const EPOCH_WEEK_SHIFT = 4 * DAY_MINUTES;

const DAY_CODES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
/** Display order of the days (the working week first). */
const DISPLAY_ORDER = [1, 2, 3, 4, 5, 6, 0] as const;

/** Sorted, merged [start, end) pairs of local minutes of the week (0 = Sunday 00:00). */
export type WeeklyHours = Int32Array;

export interface Calendar {
  /** IANA zone the hours are read in. */
  readonly timeZone: string;
  /** null: any time. */
  readonly weekly: WeeklyHours | null;
  /** [start, end) instant pairs (ms), sorted by start. */
  readonly timeOff: Float64Array;
}

/** A calendar that is always free. */
export const ALWAYS: Calendar = { timeZone: "UTC", weekly: null, timeOff: new Float64Array(0) };

function dayIndex(code: string): number {
  return (DAY_CODES as readonly string[]).indexOf(code.toLowerCase());
}

function minutesOf(text: string, allow24: boolean): number | null {
  const m = /^(\d{1,2}):(\d{2})$/.exec(text);
  if (!m) return null;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (min > 59) return null;
  if (h === 24 && min === 0 && allow24) return DAY_MINUTES;
  if (h > 23) return null;
  return h * 60 + min;
}

/** Parses working hours (see the module's comment); blank: any time (null). */
export function parseHours(text: string): { hours: WeeklyHours | null } | { error: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { hours: null };
  const pairs: Array<[number, number]> = [];
  for (const rawEntry of trimmed.split(";")) {
    const entry = rawEntry.trim();
    if (entry === "") continue;
    const m = /^([A-Za-z,\- ]+?)\s+(\d.*)$/.exec(entry);
    if (!m) {
      return { error: `"${entry}" is not days and hours, e.g. "mon-fri 08:00-17:00"` };
    }
    const days = new Set<number>();
    for (const part of (m[1] as string).split(",")) {
      const span = part.trim().split("-");
      const first = dayIndex(span[0]?.trim() ?? "");
      const last = span.length === 2 ? dayIndex(span[1]?.trim() ?? "") : first;
      if (span.length > 2 || first < 0 || last < 0) {
        return {
          error: `"${part.trim()}" is not a day or a span of days (sun, mon, tue, wed, thu, fri, sat)`,
        };
      }
      for (let d = first; ; d = (d + 1) % 7) {
        days.add(d);
        if (d === last) break;
      }
    }
    for (const range of (m[2] as string).split(",")) {
      const ends = range.trim().split("-");
      const start = ends.length === 2 ? minutesOf(ends[0]?.trim() ?? "", false) : null;
      const end = ends.length === 2 ? minutesOf(ends[1]?.trim() ?? "", true) : null;
      if (start === null || end === null) {
        return { error: `"${range.trim()}" is not a range of times HH:MM-HH:MM (00:00 to 24:00)` };
      }
      if (end <= start) return { error: `"${range.trim()}" ends before it starts (no overnight ranges)` };
      for (const d of days) pairs.push([d * DAY_MINUTES + start, d * DAY_MINUTES + end]);
    }
  }
  if (pairs.length === 0) return { hours: null };
  pairs.sort((a, b) => a[0] - b[0]);
  const merged: number[] = [];
  for (const [s, e] of pairs) {
    const n = merged.length;
    if (n > 0 && s <= (merged[n - 1] as number)) merged[n - 1] = Math.max(merged[n - 1] as number, e);
    else merged.push(s, e);
  }
  return { hours: Int32Array.from(merged) };
}

function clock(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
}

/** The canonical text of weekly hours (parseHours reads it back to the same hours); "" for any time. */
export function formatHours(hours: WeeklyHours | null): string {
  if (hours === null) return "";
  const perDay: string[][] = [[], [], [], [], [], [], []];
  for (let i = 0; i < hours.length; i += 2) {
    let s = hours[i] as number;
    const e = hours[i + 1] as number;
    while (s < e) {
      const day = Math.floor(s / DAY_MINUTES);
      const dayEnd = Math.min(e, (day + 1) * DAY_MINUTES);
      (perDay[day] as string[]).push(`${clock(s - day * DAY_MINUTES)}-${clock(dayEnd - day * DAY_MINUTES)}`);
      s = dayEnd;
    }
  }
  const entries: string[] = [];
  let i = 0;
  while (i < DISPLAY_ORDER.length) {
    const ranges = (perDay[DISPLAY_ORDER[i] as number] as string[]).join(",");
    let j = i;
    while (
      j + 1 < DISPLAY_ORDER.length &&
      (perDay[DISPLAY_ORDER[j + 1] as number] as string[]).join(",") === ranges
    )
      j++;
    if (ranges !== "") {
      const first = DAY_CODES[DISPLAY_ORDER[i] as number];
      const last = DAY_CODES[DISPLAY_ORDER[j] as number];
      entries.push(`${i === j ? first : `${first}-${last}`} ${ranges}`);
    }
    i = j + 1;
  }
  return entries.join("; ");
}

/** Minutes worked in a week (for a sanity check of generated calendars). */
export function weeklyMinutes(hours: WeeklyHours | null): number {
  if (hours === null) return WEEK_MINUTES;
  let total = 0;
  for (let i = 0; i < hours.length; i += 2) total += (hours[i + 1] as number) - (hours[i] as number);
  return total;
}

/** A stretch of time in which a zone's offset from UTC is constant. */
interface OffsetSegment {
  start: number;
  end: number;
  /** Minutes east of UTC. */
  offset: number;
}

/**
 * The zone's offset segments covering [from, until): split at each change, found by bisection to the
 * minute. Assumes at most one change between two instants with equal offsets less than ~4 months apart
 * (true of every zone: changes are months apart), so ranges are cut into 60-day pieces.
 */
function offsetSegments(zone: string, from: number, until: number): OffsetSegment[] {
  const out: OffsetSegment[] = [];
  const PIECE = 60 * DAY_MINUTES * MINUTE_MS;
  let start = from;
  let offset = offsetMinutes(new Date(start), zone);
  while (start < until) {
    const pieceEnd = Math.min(until, start + PIECE);
    const endOffset = offsetMinutes(new Date(pieceEnd), zone);
    if (endOffset === offset) {
      if (pieceEnd >= until) {
        out.push({ start, end: until, offset });
        break;
      }
      // Keep the segment going: merge with the next piece.
      const last = out[out.length - 1];
      if (last && last.offset === offset && last.end === start) last.end = pieceEnd;
      else out.push({ start, end: pieceEnd, offset });
      start = pieceEnd;
      continue;
    }
    let lo = start;
    let hi = pieceEnd;
    while (hi - lo > MINUTE_MS) {
      const mid = lo + Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS;
      if (offsetMinutes(new Date(mid), zone) === offset) lo = mid;
      else hi = mid;
    }
    const last = out[out.length - 1];
    if (last && last.offset === offset && last.end === start) last.end = hi;
    else out.push({ start, end: hi, offset });
    start = hi;
    offset = offsetMinutes(new Date(start), zone);
  }
  return out;
}

/**
 * Offset segments per zone for one request's range, computed once per zone (a matcher scanning a
 * bucket meets a few zones, not one per contractor). A query outside the range computes afresh.
 */
export class ZoneOffsets {
  private readonly cache = new Map<string, OffsetSegment[]>();
  /** Working stretches over the whole range, per weekly hours (by identity) and zone: contractors share
   * a few schedules, so a bucket's scan computes each once. */
  private readonly stretches = new WeakMap<WeeklyHours, Map<string, number[]>>();

  constructor(
    readonly from: number,
    readonly until: number,
  ) {}

  /** Whether [from, until) lies inside the range the caches cover. */
  covers(from: number, until: number): boolean {
    return from >= this.from && until <= this.until;
  }

  /** The working stretches of `cal`'s hours over the whole range (cached). */
  rangeStretches(cal: Calendar & { weekly: WeeklyHours }): number[] {
    let byZone = this.stretches.get(cal.weekly);
    if (byZone === undefined) {
      byZone = new Map();
      this.stretches.set(cal.weekly, byZone);
    }
    let list = byZone.get(cal.timeZone);
    if (list === undefined) {
      list = workingStretches(cal, this.from, this.until, this);
      byZone.set(cal.timeZone, list);
    }
    return list;
  }

  segments(zone: string, from: number, until: number): OffsetSegment[] {
    if (from < this.from || until > this.until) return offsetSegments(zone, from, until);
    let segs = this.cache.get(zone);
    if (segs === undefined) {
      segs = offsetSegments(zone, this.from, this.until);
      this.cache.set(zone, segs);
    }
    return segs;
  }
}

function floorMod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

/** The working stretches of [from, until) as instant pairs, sorted and merged. */
export function workingStretches(cal: Calendar, from: number, until: number, zones: ZoneOffsets): number[] {
  const weekly = cal.weekly;
  if (weekly === null) return [from, until];
  const out: number[] = [];
  const push = (s: number, e: number) => {
    const n = out.length;
    if (n > 0 && s <= (out[n - 1] as number)) out[n - 1] = Math.max(out[n - 1] as number, e);
    else out.push(s, e);
  };
  for (const seg of zones.segments(cal.timeZone, from, until)) {
    const start = Math.max(seg.start, from);
    const end = Math.min(seg.end, until);
    if (start >= end) continue;
    const localFrom = Math.floor(start / MINUTE_MS) + seg.offset;
    const localUntil = Math.ceil(end / MINUTE_MS) + seg.offset;
    for (
      let base = localFrom - floorMod(localFrom + EPOCH_WEEK_SHIFT, WEEK_MINUTES);
      base < localUntil;
      base += WEEK_MINUTES
    ) {
      for (let i = 0; i < weekly.length; i += 2) {
        const ls = base + (weekly[i] as number);
        const le = base + (weekly[i + 1] as number);
        if (le <= localFrom) continue;
        if (ls >= localUntil) break;
        const us = Math.max(start, (ls - seg.offset) * MINUTE_MS);
        const ue = Math.min(end, (le - seg.offset) * MINUTE_MS);
        if (us < ue) push(us, ue);
      }
    }
  }
  return out;
}

/** `stretches` (sorted instant pairs, as workingStretches gives them) less the calendar's time off: the
 * instant pairs left to work, sorted; none when time off covers them. */
export function lessTimeOff(stretches: readonly number[], timeOff: Float64Array): number[] {
  const out: number[] = [];
  let k = 0;
  for (let i = 0; i < stretches.length; i += 2) {
    let s = stretches[i] as number;
    const e = stretches[i + 1] as number;
    // Time off sorted by start: skip those that ended before s, then carve.
    while (k < timeOff.length && (timeOff[k + 1] as number) <= s) k += 2;
    for (let j = k; j < timeOff.length && s < e; j += 2) {
      const offStart = timeOff[j] as number;
      const offEnd = timeOff[j + 1] as number;
      if (offStart >= e) break;
      if (offEnd <= s) continue;
      if (offStart > s) out.push(s, offStart);
      s = Math.max(s, offEnd);
    }
    if (s < e) out.push(s, e);
  }
  return out;
}

/**
 * The earliest instant (ms) at or after `from` and at or before `latestStart` at which a job of
 * `durationMs` fits the calendar: inside working hours (continuously) and outside time off; null when
 * none does. `anyHours` ignores the working hours (time off still holds).
 */
export function earliestStart(
  cal: Calendar,
  from: number,
  latestStart: number,
  durationMs: number,
  zones: ZoneOffsets,
  anyHours = false,
): number | null {
  if (latestStart < from) return null;
  const until = latestStart + durationMs;
  let stretches: number[];
  let i = 0;
  if (anyHours || cal.weekly === null) {
    stretches = [from, until];
  } else if (zones.covers(from, until)) {
    stretches = zones.rangeStretches(cal as Calendar & { weekly: WeeklyHours });
    // The first stretch that ends after `from` (binary search over the sorted ends).
    let lo = 0;
    let hi = stretches.length / 2;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((stretches[2 * mid + 1] as number) <= from) lo = mid + 1;
      else hi = mid;
    }
    i = 2 * lo;
  } else {
    stretches = workingStretches(cal, from, until, zones);
  }
  const off = cal.timeOff;
  let k = 0;
  for (; i < stretches.length; i += 2) {
    let s = Math.max(stretches[i] as number, from);
    const e = Math.min(stretches[i + 1] as number, until);
    if (s >= e) {
      if (s >= until) return null;
      continue;
    }
    if (s > latestStart) return null;
    // Time off sorted by start: skip those that ended before s, then carve.
    while (k < off.length && (off[k + 1] as number) <= s) k += 2;
    let j = k;
    while (s < e) {
      if (s > latestStart) return null;
      const offStart = j < off.length ? (off[j] as number) : Number.POSITIVE_INFINITY;
      const offEnd = j < off.length ? (off[j + 1] as number) : Number.POSITIVE_INFINITY;
      if (offEnd <= s) {
        j += 2;
        continue;
      }
      const freeEnd = Math.min(e, offStart);
      if (freeEnd - s >= durationMs) return s;
      if (offStart >= e) break;
      s = Math.max(s, offEnd);
      j += 2;
    }
  }
  return null;
}
