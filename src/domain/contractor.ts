// What the dispatch domain knows of a contractor. Name and contact stay in storage; callers only ever see
// the masked handle `ctr-<id>`.

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
  /** Quality record, 0-5. */
  readonly rating: number;
  /** Typical minutes from accepting a job to setting off. */
  readonly responseMinutes: number;
  readonly active: boolean;
  readonly excluded: boolean;
}

/** The public, masked handle of a contractor: `ctr_ab12` -> `ctr-ab12`. */
export function contractorRef(id: string): string {
  return `ctr-${id.startsWith("ctr_") ? id.slice(4) : id}`;
}
