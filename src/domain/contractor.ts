// What the dispatch domain knows of a contractor. Name and contact stay in storage; callers only ever see
// a handle of their own (auth/contractor-refs.ts).

import type { RatingTally } from "./ratings.js";
import type { Calendar } from "./time/calendar.js";
import type { TradeCode } from "./trades.js";
import type { StateCode } from "./us-regions.js";

export type Pool = "sandbox" | "live";

export interface Contractor {
  /** Internal id, `ctr_<id>`. */
  readonly id: string;
  readonly pool: Pool;
  readonly trades: readonly TradeCode[];
  readonly states: readonly StateCode[];
  /** Base location; null when unknown (then only state coverage applies). */
  readonly lat: number | null;
  readonly lon: number | null;
  /** How far from its base it travels; null means anywhere in its states. */
  readonly serviceRadiusMiles: number | null;
  /** Its own routine rate, cents per hour. */
  readonly hourlyRateCents: number;
  readonly emergencyCapable: boolean;
  readonly maxActiveJobs: number;
  /** Quality record, 0-5, from its pool file: the prior its accounts' ratings are shrunk toward. */
  readonly rating: number;
  /** Its accounts' ratings of completed jobs, summed (ratings.ts); absent: none. */
  readonly ratings?: RatingTally;
  /** Typical minutes from accepting a job to setting off. */
  readonly responseMinutes: number;
  readonly active: boolean;
  readonly excluded: boolean;
  /** Until when its insurance and its license are verified (YYYY-MM-DD, valid through that day); null:
   * not verified. Both must hold on the job's day for it to be offered work (compliance.ts). */
  readonly insuranceVerifiedUntil: string | null;
  readonly licenseVerifiedUntil: string | null;
  /** Working hours in its own zone and time off (time/calendar.ts); absent: any time, never off. */
  readonly calendar?: Calendar;
}

/** A contractor's id: `ctr_` and 1-40 letters or digits (generated ids have 12). */
export const CONTRACTOR_ID_PATTERN = /^ctr_[0-9A-Za-z]{1,40}$/;
