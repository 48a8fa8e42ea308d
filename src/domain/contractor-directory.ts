// What the dispatch team reads of a contractor beyond its matching data: its standing, how current its
// verifications are, its measured record as ratios, and the order of a directory page by distance. Pure.

import { distanceMiles, type Point } from "./geo.js";

export const CONTRACTOR_STANDINGS = ["active", "inactive", "excluded"] as const;
export type ContractorStanding = (typeof CONTRACTOR_STANDINGS)[number];

/** Excluded whatever its active flag (never matched); else active or inactive. */
export function standingOf(active: boolean, excluded: boolean): ContractorStanding {
  return excluded ? "excluded" : active ? "active" : "inactive";
}

export const VERIFICATION_STATES = ["verified", "expiring", "expired", "not_verified"] as const;
export type VerificationState = (typeof VERIFICATION_STATES)[number];

/** A verification date within this many days of today is flagged `expiring`. */
export const EXPIRING_WITHIN_DAYS = 45;

/**
 * A verification valid through `until` (YYYY-MM-DD), read on `today` (YYYY-MM-DD, UTC): expired before
 * today; expiring when it ends within EXPIRING_WITHIN_DAYS days (today included); else verified.
 */
export function verificationOf(until: string | null | undefined, today: string): VerificationState {
  if (!until) return "not_verified";
  if (until < today) return "expired";
  const horizon = new Date(Date.parse(`${today}T00:00:00Z`) + EXPIRING_WITHIN_DAYS * 86_400_000)
    .toISOString()
    .slice(0, 10);
  return until <= horizon ? "expiring" : "verified";
}

/** numerator / denominator rounded to 4 decimals; null without a denominator. */
export function ratio(numerator: number, denominator: number): number | null {
  return denominator > 0 ? Math.round((numerator / denominator) * 10_000) / 10_000 : null;
}

export interface Located {
  id: string;
  lat: number | null;
  lon: number | null;
}

export interface Ranked {
  id: string;
  /** Miles from the origin to the contractor's base; null when its base is unknown. */
  distance: number | null;
}

/** Nearest first; contractors without a known base last; ties by id. */
function compareRanked(a: Ranked, b: Ranked): number {
  if (a.distance !== b.distance) {
    if (a.distance === null) return 1;
    if (b.distance === null) return -1;
    return a.distance - b.distance;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Contractors by distance from `origin`: within `radiusMiles` of it when given (a base must be known
 * then), in compareRanked order, those after `after` (a position of the same order) only.
 */
export function rankByDistance(
  contractors: readonly Located[],
  origin: Point,
  radiusMiles: number | undefined,
  after?: Ranked,
): Ranked[] {
  const ranked: Ranked[] = [];
  for (const c of contractors) {
    const distance =
      c.lat === null || c.lon === null ? null : distanceMiles(origin, { lat: c.lat, lon: c.lon });
    if (radiusMiles !== undefined && (distance === null || distance > radiusMiles)) continue;
    const r = { id: c.id, distance };
    if (after && compareRanked(r, after) <= 0) continue;
    ranked.push(r);
  }
  return ranked.sort(compareRanked);
}
