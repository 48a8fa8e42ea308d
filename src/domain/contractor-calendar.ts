// A contractor's calendar from what is stored of it: its hours' text, read in the zone of its home ZIP
// (time/zones.ts; the state of the ZIP, else its first covered state), and its time off.

import { lookupZip } from "./geo.js";
import {
  type Calendar,
  parseHours,
  type WeeklyHours,
  workingStretches,
  ZoneOffsets,
} from "./time/calendar.js";
import { localDateTime, nextLocalDay, zonedInstant } from "./time/local-time.js";
import { timeZoneOf } from "./time/zones.js";
import type { StateCode } from "./us-regions.js";

/** The zone a contractor's hours are read in. */
export function contractorTimeZone(homeZip: string | null, states: readonly StateCode[]): string {
  const zipState = homeZip ? lookupZip(homeZip)?.state : undefined;
  const state = (zipState as StateCode | undefined) ?? states[0];
  return state === undefined ? "UTC" : timeZoneOf(state, homeZip);
}

const parsedHours = new Map<string, WeeklyHours | null>();

/** Parsed hours, one shared array per text: contractors on the same schedule share it, and the matcher
 * computes each schedule's stretches once per request (time/calendar.ts ZoneOffsets). */
function weeklyOf(text: string): WeeklyHours | null {
  let weekly = parsedHours.get(text);
  if (weekly === undefined) {
    const parsed = parseHours(text);
    weekly = "hours" in parsed ? parsed.hours : null;
    if (parsedHours.size < 100_000) parsedHours.set(text, weekly);
  }
  return weekly;
}

/**
 * The calendar of a contractor; undefined when it has neither hours nor time off (available any time,
 * the matcher's fast path). Stored hours were checked when written: unreadable ones count as none.
 */
export function contractorCalendar(
  hours: string | null,
  homeZip: string | null,
  states: readonly StateCode[],
  timeOff: ReadonlyArray<{ start: number; end: number }>,
): Calendar | undefined {
  const weekly = hours ? weeklyOf(hours) : null;
  if (weekly === null && timeOff.length === 0) return undefined;
  // Sorted and merged, as earliestStart reads them.
  const sorted = [...timeOff].filter((p) => p.end > p.start).sort((a, b) => a.start - b.start);
  const merged: number[] = [];
  for (const p of sorted) {
    const n = merged.length;
    if (n > 0 && p.start <= (merged[n - 1] as number))
      merged[n - 1] = Math.max(merged[n - 1] as number, p.end);
    else merged.push(p.start, p.end);
  }
  return {
    timeZone: contractorTimeZone(homeZip, states),
    weekly,
    timeOff: Float64Array.from(merged),
  };
}

/** How far ahead a contractor's shift is read: the end of the stretch at work, or the next one. */
export const SHIFT_HORIZON_DAYS = 14;
const DAY_MS = 86_400_000;

/** Where a contractor stands at an instant: at work or not (and why), and when that changes. */
export interface ShiftNow {
  onShift: boolean;
  /** Off: outside its hours, or inside a period of time off (time off wins). */
  offReason: "hours" | "time_off" | null;
  /** At work: when this stretch ends (its hours end or time off starts); null: not within the horizon. */
  endsAt: number | null;
  /** Off: when it is next at work; null: not within the horizon. */
  nextStartAt: number | null;
  /** Its periods of time off that overlap its local day of `now`, [start, end) instants. */
  timeOffToday: Array<{ start: number; end: number }>;
}

/** The offset cache shiftAt reads: one per request, shared by the contractors of a page. */
export function shiftZones(now: number): ZoneOffsets {
  return new ZoneOffsets(now, now + SHIFT_HORIZON_DAYS * DAY_MS);
}

/**
 * The contractor's shift at `now` from its calendar (undefined: any time): its working stretches over the
 * next SHIFT_HORIZON_DAYS less its time off, as the matcher reads them (time/calendar.ts).
 */
export function shiftAt(
  calendar: Calendar | undefined,
  now: number,
  zones: ZoneOffsets = shiftZones(now),
): ShiftNow {
  if (calendar === undefined) {
    return { onShift: true, offReason: null, endsAt: null, nextStartAt: null, timeOffToday: [] };
  }
  const until = now + SHIFT_HORIZON_DAYS * DAY_MS;
  const stretches = workingStretches(calendar, now, until, zones);
  const off = calendar.timeOff;
  // The free stretches: working stretches with the time off carved out, in order.
  const free: number[] = [];
  for (let i = 0; i < stretches.length; i += 2) {
    let s = stretches[i] as number;
    const e = stretches[i + 1] as number;
    for (let j = 0; j < off.length && s < e; j += 2) {
      const os = off[j] as number;
      const oe = off[j + 1] as number;
      if (oe <= s || os >= e) continue;
      if (os > s) free.push(s, os);
      s = Math.max(s, oe);
    }
    if (s < e) free.push(s, e);
  }
  const inOff = (t: number) => {
    for (let j = 0; j < off.length; j += 2)
      if ((off[j] as number) <= t && t < (off[j + 1] as number)) return true;
    return false;
  };
  const first = free.length > 0 ? (free[0] as number) : null;
  const onShift = first !== null && first <= now;
  const firstEnd = free.length > 1 ? (free[1] as number) : null;
  const local = localDateTime(new Date(now), calendar.timeZone);
  const dayStart = zonedInstant(calendar.timeZone, { ...local, hour: 0, minute: 0 }).getTime();
  const dayEnd = zonedInstant(calendar.timeZone, { ...nextLocalDay(local), hour: 0, minute: 0 }).getTime();
  const timeOffToday: Array<{ start: number; end: number }> = [];
  for (let j = 0; j < off.length; j += 2) {
    const os = off[j] as number;
    const oe = off[j + 1] as number;
    if (os < dayEnd && oe > dayStart) timeOffToday.push({ start: os, end: oe });
  }
  return {
    onShift,
    offReason: onShift ? null : inOff(now) ? "time_off" : "hours",
    endsAt: onShift && firstEnd !== null && firstEnd < until ? firstEnd : null,
    nextStartAt: onShift ? null : first,
    timeOffToday,
  };
}
