// A list of contractors laid out for fast scanning: the fields the hard filters and the score read, in
// typed arrays (struct of arrays), so matching a job against thousands of candidates touches a few
// contiguous arrays instead of chasing thousands of objects. Pure data; built once per pool load.

import { compliantThrough } from "./compliance.js";
import type { Contractor } from "./contractor.js";
import { matchingRating } from "./ratings.js";
import type { TradeCode } from "./trades.js";
import type { StateCode } from "./us-regions.js";

export const FLAG_ACTIVE = 1;
export const FLAG_EXCLUDED = 2;
export const FLAG_EMERGENCY = 4;

const RAD = Math.PI / 180;

export interface CandidateSet {
  readonly length: number;
  readonly contractors: readonly Contractor[];
  /** When every member is known to work this trade in this state (an index bucket), the scan skips those checks. */
  readonly only: { trade: TradeCode; state: StateCode } | null;
  /** Slot of each member in the active-jobs array passed to `match`. */
  readonly slot: Int32Array;
  readonly flags: Uint8Array;
  /** Radians; NaN when the contractor has no coordinates. */
  readonly latRad: Float64Array;
  readonly lonRad: Float64Array;
  readonly cosLat: Float64Array;
  /** Miles; NaN for statewide contractors. */
  readonly radius: Float64Array;
  readonly maxJobs: Int32Array;
  /** The rating the quality score reads: its accounts' ratings shrunk toward its pool rating (ratings.ts). */
  readonly rating: Float64Array;
  readonly responseMinutes: Float64Array;
  /** The last day (days since the epoch) both verifications hold; NOT_VERIFIED_DAY when either is missing. */
  readonly compliantThrough: Int32Array;
}

export function candidateSet(
  contractors: readonly Contractor[],
  slots?: readonly number[],
  only: { trade: TradeCode; state: StateCode } | null = null,
): CandidateSet {
  const n = contractors.length;
  const set = {
    length: n,
    contractors,
    only,
    slot: new Int32Array(n),
    flags: new Uint8Array(n),
    latRad: new Float64Array(n),
    lonRad: new Float64Array(n),
    cosLat: new Float64Array(n),
    radius: new Float64Array(n),
    maxJobs: new Int32Array(n),
    rating: new Float64Array(n),
    responseMinutes: new Float64Array(n),
    compliantThrough: new Int32Array(n),
  };
  contractors.forEach((c, i) => {
    set.slot[i] = slots ? (slots[i] ?? i) : i;
    set.flags[i] =
      (c.active ? FLAG_ACTIVE : 0) |
      (c.excluded ? FLAG_EXCLUDED : 0) |
      (c.emergencyCapable ? FLAG_EMERGENCY : 0);
    const located = c.lat !== null && c.lon !== null;
    set.latRad[i] = located ? (c.lat as number) * RAD : Number.NaN;
    set.lonRad[i] = located ? (c.lon as number) * RAD : Number.NaN;
    set.cosLat[i] = located ? Math.cos((c.lat as number) * RAD) : Number.NaN;
    set.radius[i] = c.serviceRadiusMiles ?? Number.NaN;
    set.maxJobs[i] = c.maxActiveJobs;
    set.rating[i] = matchingRating(c);
    set.responseMinutes[i] = c.responseMinutes;
    set.compliantThrough[i] = compliantThrough(c);
  });
  return set;
}

/** Active-job counts for a plain list, in the slot order `candidateSet(list)` assigns. */
export function jobsOfList(contractors: readonly Contractor[], jobs: (id: string) => number): Int32Array {
  return Int32Array.from(contractors, (c) => jobs(c.id));
}
