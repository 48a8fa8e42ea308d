// A contractor's calendar from what is stored of it: its hours' text, read in the zone of its home ZIP
// (time/zones.ts; the state of the ZIP, else its first covered state), and its time off.

import { lookupZip } from "./geo.js";
import { type Calendar, parseHours, type WeeklyHours } from "./time/calendar.js";
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
