// Where and what the simulated orders are: (trade, state) in proportion to the live pool's active
// contractors, urgency and arrival time from the mix, the site near one of that bucket's contractors.

import type { Contractor } from "../domain/contractor.js";
import { zipsOfState } from "../domain/geo.js";
import type { Urgency } from "../domain/pricing.js";
import type { Rng } from "../domain/random.js";
import type { TradeCode } from "../domain/trades.js";
import type { StateCode } from "../domain/us-regions.js";
import { arrivalIn, MIX, pick, weighted } from "./behaviour.js";

export interface OrderPlan {
  index: number;
  at: number;
  trade: TradeCode;
  state: StateCode;
  urgency: Urgency;
  zip: string | undefined;
  city: string | undefined;
  address: string;
  site: string;
}

const STREETS = ["Main St", "Commerce Dr", "Oak Ave", "Market St", "Industrial Pkwy", "Park Blvd", "2nd St"];

/** Where and what orders are: (trade, state) drawn from the live pool in proportion to its contractors. */
export class Demand {
  private readonly buckets: Array<{ trade: TradeCode; state: StateCode; contractors: Contractor[] }> = [];
  private readonly cumulative: number[] = [];
  private readonly zips = new Map<string, ReturnType<typeof zipsOfState>>();

  constructor(byBucket: Map<string, Contractor[]>) {
    let total = 0;
    for (const [key, contractors] of [...byBucket].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const [trade, state] = key.split("|") as [TradeCode, StateCode];
      this.buckets.push({ trade, state, contractors });
      total += contractors.length;
      this.cumulative.push(total);
    }
  }

  plan(rng: Rng, index: number, dayStart: number): OrderPlan {
    const total = this.cumulative[this.cumulative.length - 1] ?? 0;
    const x = rng() * total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.cumulative[mid] ?? 0) > x) hi = mid;
      else lo = mid + 1;
    }
    const bucket = this.buckets[lo] as (typeof this.buckets)[number];
    const urgency = weighted(rng, MIX.urgency);
    const at = arrivalIn(rng, dayStart, urgency);
    // The site lies near one of the bucket's contractors: the nearest of 24 random ZIPs of the state.
    const near = pick(rng, bucket.contractors);
    let zips = this.zips.get(bucket.state);
    if (!zips) {
      zips = zipsOfState(bucket.state);
      this.zips.set(bucket.state, zips);
    }
    let best: (typeof zips)[number] | undefined;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 24 && zips.length > 0; i++) {
      const z = zips[Math.floor(rng() * zips.length)] as (typeof zips)[number];
      const d =
        near.lat === null || near.lon === null ? 0 : (z.lat - near.lat) ** 2 + (z.lon - near.lon) ** 2;
      if (d < bestDistance) {
        best = z;
        bestDistance = d;
      }
    }
    return {
      index,
      at,
      trade: bucket.trade,
      state: bucket.state,
      urgency,
      zip: best?.zip,
      city: best?.city,
      address: `${100 + Math.floor(rng() * 9900)} ${pick(rng, STREETS)}`,
      site: `Site #${1 + Math.floor(rng() * 400)}`,
    };
  }
}
