// Capacity as time: the jobs a contractor holds (a pending offer or an active job, each a row of the
// capacity ledger) are commitments, each a block of on-site time at a place; a new job fits only where
// its own block, and the drive to it from the commitment before and on to the commitment after, lie in
// a free stretch of the contractor's calendar. Pure: the clock and the travel time are arguments.
//
// A block starts where the job was placed when its capacity was taken: the earliest start its calendar
// and the commitments then held allowed (inside the window for windowed work; from the contractor's
// readiness for as-soon-as-possible work), and lasts the trade's typical hours. Travel is not stored:
// it is measured between neighbours each time a job is fitted, from the previous commitment's site (an
// overnight gap covers any drive), from the contractor's base when none comes before (or the one before
// ended already).

import type { Point } from "./geo.js";
import { type Calendar, earliestStart, type ZoneOffsets } from "./time/calendar.js";
import type { TravelTime } from "./travel-time.js";

const MINUTE_MS = 60_000;

/** A block of time a contractor holds for a job. */
export interface Commitment {
  readonly orderId: string;
  /** On site from (ms since the epoch) ... */
  readonly start: number;
  /** ... until (the trade's typical hours later). */
  readonly end: number;
  /** Where; null when the job's place is unknown. */
  readonly point: Point | null;
}

/** No commitments. */
export const NO_COMMITMENTS: readonly Commitment[] = Object.freeze([]);

/** The job to fit: its place, length and the earliest and latest instant it may start on site. */
export interface FitRequest {
  /** The request's instant. */
  now: number;
  /** No start before (a window's start; `now` for as-soon-as-possible work). */
  notBefore: number;
  /** Minutes from `now` before the contractor sets off (its response time for as-soon-as-possible work). */
  leadMinutes: number;
  /** Minutes of the drive from the contractor's base to the job (the matcher measured it already). */
  fromBaseMinutes: number;
  /** No start after. */
  latestStart: number;
  durationMs: number;
  point: Point | null;
  /** Ignore working hours (emergencies); time off still holds. */
  anyHours: boolean;
}

/**
 * The earliest start at which the job fits the calendar between the contractor's commitments, with the
 * drive from the one before (or from its base) and on to the one after; null when none does. `held` in
 * any order (sorted here when not already).
 */
export function fitAmong(
  cal: Calendar,
  req: FitRequest,
  held: readonly Commitment[],
  travel: TravelTime,
  zones: ZoneOffsets,
): number | null {
  const ready = req.now + req.leadMinutes * MINUTE_MS;
  const fromBase = Math.max(req.notBefore, ready + req.fromBaseMinutes * MINUTE_MS);
  const list = isSorted(held) ? held : [...held].sort((a, b) => a.start - b.start);
  let prev: Commitment | null = null;
  for (let k = 0; k <= list.length; k++) {
    const next = list[k];
    const lo =
      prev === null || prev.end <= req.now
        ? fromBase
        : Math.max(req.notBefore, ready, prev.end + travel.minutes(prev.point, req.point) * MINUTE_MS);
    if (lo > req.latestStart) return null;
    const hi =
      next === undefined
        ? req.latestStart
        : Math.min(
            req.latestStart,
            next.start - travel.minutes(req.point, next.point) * MINUTE_MS - req.durationMs,
          );
    if (lo <= hi) {
      const at = earliestStart(cal, Math.ceil(lo), Math.floor(hi), req.durationMs, zones, req.anyHours);
      if (at !== null) return at;
    }
    if (next !== undefined) prev = latestEnding(prev, next);
  }
  return null;
}

/** Of the commitment before and the next one, the one the drive onward starts from: the one that ends
 * last (a short job inside a long one leaves the contractor at the long one's place). */
function latestEnding(prev: Commitment | null, next: Commitment): Commitment {
  return prev === null || next.end > prev.end ? next : prev;
}

/** A commitment with the drive before it: from the previous commitment's site, or from `base`. */
export interface LeadIn {
  readonly commitment: Commitment;
  /** Whole minutes of the drive, as the exact-start overlap check rounds them. */
  readonly minutes: number;
  /** Where the drive starts: the commitment it comes from, or null from the contractor's base. */
  readonly from: Commitment | null;
}

/**
 * The drive before each of a contractor's commitments, in start order, as fitAmong counts it between
 * neighbours: from the commitment before it (the one of those before that ends last), from `base` (the
 * contractor's home) when none comes before. `held` in any order. For drawing a day: travel is not
 * stored (see the module's comment), so it is measured here from the blocks alone. (fitAmong, fitting new
 * work from now on, also starts from the base after a commitment already over; a drawn day keeps the
 * drive from the job before, as it was when the later job was placed.)
 */
export function leadIns(held: readonly Commitment[], base: Point | null, travel: TravelTime): LeadIn[] {
  const list = isSorted(held) ? held : [...held].sort((a, b) => a.start - b.start);
  const out: LeadIn[] = [];
  let prev: Commitment | null = null;
  for (const c of list) {
    const minutes = Math.round(travel.minutes(prev === null ? base : prev.point, c.point));
    out.push({ commitment: c, minutes, from: prev });
    prev = latestEnding(prev, c);
  }
  return out;
}

function isSorted(held: readonly Commitment[]): boolean {
  for (let i = 1; i < held.length; i++) {
    if ((held[i] as Commitment).start < (held[i - 1] as Commitment).start) return false;
  }
  return true;
}

/** `held` with `c` in start order (a new array). */
export function withCommitment(held: readonly Commitment[] | undefined, c: Commitment): Commitment[] {
  const out = held ? held.filter((h) => h.orderId !== c.orderId) : [];
  let i = out.length;
  while (i > 0 && (out[i - 1] as Commitment).start > c.start) i--;
  out.splice(i, 0, c);
  return out;
}

/** `held` without the order's commitment (a new array, or undefined when none is left). */
export function withoutCommitment(
  held: readonly Commitment[] | undefined,
  orderId: string,
): Commitment[] | undefined {
  if (!held) return undefined;
  const out = held.filter((h) => h.orderId !== orderId);
  return out.length === 0 ? undefined : out;
}
