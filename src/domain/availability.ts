// Bookable windows: for a job (trade, place) and a range of local days, the appointment windows an order
// could name, each with how many eligible contractors could take it (never who), from the same matcher
// orders use, so a window offered here is a window an order at the same moment can book. Pure.
//
// Slots: each local day of the job's zone, from 08:00, windows as long as the earliest window rule's
// (time/service-window.ts: the longer of 4 hours and the trade's typical hours rounded up to whole
// hours), back to back while they end by 20:00 (08:00-12:00, 12:00-16:00, 16:00-20:00 for every trade
// today). A window is offered when it starts after now and at most 90 days ahead, and at least one
// contractor passes every hard filter for it (calendar, capacity as a count and as time: the jobs it
// holds and the drives between them, compliance, coverage, ...). The earliest window of scheduled work
// booked without one is the first such slot (firstBookable).

import type { CandidateSet } from "./candidate-set.js";
import { dayOf } from "./compliance.js";
import { type Booked, type MatchRequest, type MatchResult, match, NOTHING_BOOKED } from "./matching.js";
import { localDateTime, nextLocalDay, zonedInstant } from "./time/local-time.js";
import { EARLIEST_WINDOW, MAX_WINDOW_DAYS_AHEAD, type TimeWindow } from "./time/service-window.js";
import { TRADES, type TradeCode } from "./trades.js";

/** How many local days one request may span. */
export const AVAILABILITY_MAX_DAYS = 14;
/** The local hour the last window of a day ends by. */
const SLOT_DAY_END_HOUR = 20;

const DAY_MS = 86_400_000;

export interface LocalDay {
  year: number;
  month: number;
  day: number;
}

export interface BookableWindow extends TimeWindow {
  /** Eligible contractors with capacity now. */
  contractorsAvailable: number;
}

/** The window length for a trade, hours. */
export function slotHours(trade: TradeCode): number {
  return Math.max(EARLIEST_WINDOW.minHours, Math.ceil(TRADES[trade].typicalJobHours));
}

/**
 * A local day's slots, by zone, trade and day: working them out asks ICU for local times (tens of µs a
 * day), and the earliest window of every scheduled order without one reads the same few days.
 */
const daySlotsCache = new Map<string, readonly TimeWindow[]>();
const DAY_SLOTS_CACHE_LIMIT = 4096;

function daySlots(zone: string, day: LocalDay, hours: number): readonly TimeWindow[] {
  const key = `${zone}|${hours}|${day.year}-${day.month}-${day.day}`;
  let slots = daySlotsCache.get(key);
  if (slots === undefined) {
    const out: TimeWindow[] = [];
    for (let h = EARLIEST_WINDOW.startHour; h + hours <= SLOT_DAY_END_HOUR; h += hours) {
      out.push({
        start: zonedInstant(zone, { ...day, hour: h, minute: 0 }),
        end: zonedInstant(zone, { ...day, hour: h + hours, minute: 0 }),
      });
    }
    if (daySlotsCache.size >= DAY_SLOTS_CACHE_LIMIT) daySlotsCache.clear();
    daySlotsCache.set(key, out);
    slots = out;
  }
  return slots;
}

/** The slots of `days` local days from `first` in `zone` that start after `now` and at most 90 days ahead. */
export function slotsOf(
  zone: string,
  first: LocalDay,
  days: number,
  trade: TradeCode,
  now: Date,
): TimeWindow[] {
  const hours = slotHours(trade);
  const latest = now.getTime() + MAX_WINDOW_DAYS_AHEAD * DAY_MS;
  const out: TimeWindow[] = [];
  let day: LocalDay = first;
  for (let d = 0; d < days; d++) {
    for (const w of daySlots(zone, day, hours)) {
      if (w.start.getTime() < now.getTime() || w.end.getTime() > latest) continue;
      out.push({ start: w.start, end: w.end });
    }
    day = nextLocalDay(day);
  }
  return out;
}

/** The job as matched for one window. */
function forWindow(job: MatchRequest, window: TimeWindow, now: Date): MatchRequest {
  return {
    ...job,
    // Compliance is judged on the window's own day, as an order naming it is (operations/matching/job.ts timedJob):
    // a contractor whose insurance lapses before the window does not count for it.
    today: Math.max(job.today, dayOf(window.start)),
    time: {
      now: now.getTime(),
      window: { start: window.start.getTime(), end: window.end.getTime() },
      arriveBy: null,
      durationMinutes: Math.round(TRADES[job.trade].typicalJobHours * 60),
    },
  };
}

/** How many contractors of `set` could take the job in `window` now (`jobs`: their active-job counts;
 * `booked`: the time their jobs hold). */
function contractorsFor(
  job: MatchRequest,
  window: TimeWindow,
  set: CandidateSet,
  jobs: ArrayLike<number>,
  now: Date,
  booked: Booked = NOTHING_BOOKED,
): number {
  return match(forWindow(job, window, now), set, jobs, 1, booked).eligible;
}

/** The slots with at least one contractor who could take the job, in time order. */
export function bookableWindows(
  job: MatchRequest,
  slots: readonly TimeWindow[],
  set: CandidateSet,
  jobs: ArrayLike<number>,
  now: Date,
  booked: Booked = NOTHING_BOOKED,
): BookableWindow[] {
  const out: BookableWindow[] = [];
  for (const w of slots) {
    const n = contractorsFor(job, w, set, jobs, now, booked);
    if (n > 0) out.push({ ...w, contractorsAvailable: n });
  }
  return out;
}

/**
 * The first slot at least one contractor could take the job in, with the match for it (best first, up
 * to `limit`), or null when none of the slots has one. Stops at the first: the match an order then needs
 * is the one found.
 */
export function firstBookable(
  job: MatchRequest,
  slots: readonly TimeWindow[],
  set: CandidateSet,
  jobs: ArrayLike<number>,
  now: Date,
  booked: Booked = NOTHING_BOOKED,
  limit = 5,
): { window: TimeWindow; job: MatchRequest; result: MatchResult } | null {
  for (const w of slots) {
    const timed = forWindow(job, w, now);
    const result = match(timed, set, jobs, limit, booked);
    if (result.eligible > 0) return { window: w, job: timed, result };
  }
  return null;
}

/** The local day of an instant in a zone. */
export function localDayOf(instant: Date, zone: string): LocalDay {
  const l = localDateTime(instant, zone);
  return { year: l.year, month: l.month, day: l.day };
}
