// The rate model shared by the trade index, estimates and quotes. Pure: integer cents in, integer cents out.
//
// model hourly rate = OEWS median hourly wage x LOADED_COST_MULTIPLIER x regional factor
// job cost          = hourly rate x typical job hours x urgency multiplier
//
// LOADED_COST_MULTIPLIER = 3.0 turns a wage into a billed service rate. Evidence (reference-data/markups.md):
// employer benefits alone make total compensation ~1.42x wages (BLS ECEC, Dec 2024); loaded cost including
// non-billable time is 1.6-2.4x; billed service rates run from ~3x ("rule of three") to 5x (plumbing trade
// press) of a technician's wage. We take 3.0, the conservative end of the billed-rate evidence.

import { TRADES, type TradeCode } from "./trades.js";
import { REGIONS, type StateCode } from "./us-regions.js";

export const LOADED_COST_MULTIPLIER = 3.0;

export const URGENCIES = ["emergency", "urgent", "routine", "scheduled"] as const;
export type Urgency = (typeof URGENCIES)[number];

/**
 * Urgency multipliers: routine is the baseline. Emergency (same-hour, after-hours capable) carries the
 * overtime/after-hours premium trades commonly charge (1.5-2x); urgent (same or next day) half of that;
 * scheduled work booked days ahead lets the contractor fill gaps, a small discount.
 */
export const URGENCY_MULTIPLIERS: Readonly<Record<Urgency, number>> = {
  emergency: 1.75,
  urgent: 1.35,
  routine: 1.0,
  scheduled: 0.95,
};

/** Share of the typical job length used for the low and high end of an estimate range. */
export const ESTIMATE_HOURS_RANGE = { low: 0.75, high: 1.5 } as const;

export const CURRENCY = "USD" as const;

function dollarsToCents(dollars: number): number {
  return Math.round(dollars * 100);
}

/** National routine model rate for a trade, in cents per hour (the trade index baseline). */
export function baselineHourlyRateCents(trade: TradeCode): number {
  return dollarsToCents(TRADES[trade].wage.median * LOADED_COST_MULTIPLIER);
}

/** Routine model rate for a trade in a state, in cents per hour. */
export function regionalHourlyRateCents(
  trade: TradeCode,
  state: StateCode,
  wage = TRADES[trade].wage.median,
) {
  return dollarsToCents(wage * LOADED_COST_MULTIPLIER * REGIONS[state].regionalFactor);
}

export interface JobPrice {
  hourly_rate_cents: number;
  labor_hours: number;
  labor_cents: number;
  urgency_multiplier: number;
  urgency_adjustment_cents: number;
  total_cents: number;
}

/** Prices a job from an hourly rate: labor at the rate, then the urgency adjustment on top. */
export function priceJob(hourlyRateCents: number, laborHours: number, urgency: Urgency): JobPrice {
  const labor = Math.round(hourlyRateCents * laborHours);
  const multiplier = URGENCY_MULTIPLIERS[urgency];
  const adjustment = Math.round(labor * (multiplier - 1));
  return {
    hourly_rate_cents: hourlyRateCents,
    labor_hours: laborHours,
    labor_cents: labor,
    urgency_multiplier: multiplier,
    urgency_adjustment_cents: adjustment,
    total_cents: Math.max(0, labor + adjustment),
  };
}

/** The model's cost of a typical job in a trade, state and urgency. */
export function modelJobPrice(trade: TradeCode, state: StateCode, urgency: Urgency): JobPrice {
  return priceJob(regionalHourlyRateCents(trade, state), TRADES[trade].typicalJobHours, urgency);
}

export interface EstimateRange {
  low_cents: number;
  typical_cents: number;
  high_cents: number;
  typical: JobPrice;
}

/**
 * A price range: low = 25th-percentile wage for a shorter job, high = 75th-percentile wage for a longer
 * one, typical = median wage for the typical job length.
 */
export function estimateRange(trade: TradeCode, state: StateCode, urgency: Urgency): EstimateRange {
  const info = TRADES[trade];
  const typical = modelJobPrice(trade, state, urgency);
  const low = priceJob(
    regionalHourlyRateCents(trade, state, info.wage.p25),
    info.typicalJobHours * ESTIMATE_HOURS_RANGE.low,
    urgency,
  );
  const high = priceJob(
    regionalHourlyRateCents(trade, state, info.wage.p75),
    info.typicalJobHours * ESTIMATE_HOURS_RANGE.high,
    urgency,
  );
  return {
    low_cents: low.total_cents,
    typical_cents: typical.total_cents,
    high_cents: high.total_cents,
    typical,
  };
}
