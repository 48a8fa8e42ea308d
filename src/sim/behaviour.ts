// The simulator's behaviour mix: how often callers, contractors and dispatchers do what, and after how
// long. Pure: every draw comes from a seeded generator, so one seed replays the same decisions. The
// figures are documented in docs/simulator.md; change both together.

import type { Urgency } from "../domain/pricing.js";
import type { Rng } from "../domain/random.js";
import type { TradeCode } from "../domain/trades.js";

export function uniform(rng: Rng, low: number, high: number): number {
  return low + rng() * (high - low);
}

/** Picks from `[value, weight]` pairs (weights need not sum to 1). */
export function weighted<T>(rng: Rng, choices: ReadonlyArray<readonly [T, number]>): T {
  const total = choices.reduce((sum, [, w]) => sum + w, 0);
  let x = rng() * total;
  for (const [value, w] of choices) {
    x -= w;
    if (x < 0) return value;
  }
  return (choices[choices.length - 1] as readonly [T, number])[0];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The mix, in one place. Probabilities are per order (or per offer, for answers). */
export const MIX = {
  urgency: [
    ["emergency", 0.08],
    ["urgent", 0.22],
    ["routine", 0.55],
    ["scheduled", 0.15],
  ] as ReadonlyArray<readonly [Urgency, number]>,
  /** Share of orders with an NTE, and the NTE as a multiple of the typical estimate. */
  nteShare: 0.8,
  nteOverEstimate: [1.0, 1.4] as const,
  /** A contractor's answer to an offer: accept, decline, or no answer (the deadline expires). */
  offer: [
    ["accept", 0.78],
    ["decline", 0.1],
    ["silent", 0.12],
  ] as ReadonlyArray<readonly ["accept" | "decline" | "silent", number]>,
  /** Callers cancelling their order (when it is still before on_site at that time), 2 min to 6 h after. */
  callerCancel: 0.05,
  callerCancelAfterMs: [2 * MINUTE, 6 * HOUR] as const,
  /** Dispatchers moving an accepted job to another contractor before it sets off (an override). */
  reassign: 0.03,
  /** Contractors that cannot complete: on the way (reported on arrival), or on site. */
  cannotCompleteEnRoute: 0.01,
  cannotCompleteOnSite: 0.03,
  /** Final cost as a share of the estimate: 70 % at or under it, 30 % over it. */
  costUnder: [0.7, 1.0] as const,
  costOver: [1.0, 1.5] as const,
  costOverShare: 0.3,
  /** Of the jobs that end over the NTE in force, the share whose contractor asks for an increase first. */
  nteAsk: 0.65,
  /** The caller's answer to an NTE increase. */
  nteApprove: 0.7,
  nteDecisionAfterMs: [10 * MINUTE, 2 * HOUR] as const,
  /** Dispatchers cancel instead of assigning: for orders nobody took, and after cannot_complete. */
  dispatcherCancelUnmatched: 0.1,
  dispatcherCancelAfterFailure: 0.3,
  invoiceAfterMs: [2 * HOUR, 48 * HOUR] as const,
  /** Jobs whose contractor leaves proof on site before completing: a photo of the work and the site
   * contact's signature (a job whose checklist asks for a photo gets one in any case). */
  proofShare: 0.1,
} as const;

/** When in a day orders arrive, by UTC hour: US business hours (13-23 UTC) busiest, nights quiet. */
const HOURLY_WEIGHTS = [
  3, 2, 1.5, 1, 0.8, 0.8, 0.8, 1, 1.5, 2, 3, 4, 5, 7, 9, 10, 10, 10, 10, 9, 8, 7, 5, 4,
] as const;

const HOURS = HOURLY_WEIGHTS.map((w, h) => [h, w] as const);

/** An arrival time in the 24 hours from `dayStartMs`, its UTC hour drawn from the daily curve. */
export function arrivalIn(rng: Rng, dayStartMs: number, urgency: Urgency): number {
  // Emergencies come at any hour: half of them ignore the business-hours curve.
  const hour = urgency === "emergency" && rng() < 0.5 ? Math.floor(rng() * 24) : weighted(rng, HOURS);
  const day = 24 * HOUR;
  const offset = (((hour * HOUR - (dayStartMs % day)) % day) + day) % day;
  return dayStartMs + ((offset + Math.floor(rng() * HOUR)) % day);
}

/** How long a contractor takes to answer, as a share of the offer's window: mostly early, never late. */
export function answerShare(rng: Rng): number {
  const x = rng();
  return 0.05 + 0.6 * x * x;
}

/** From accepting to setting off. */
const DEPART_DELAY_MS: Record<Urgency, readonly [number, number]> = {
  emergency: [5 * MINUTE, 25 * MINUTE],
  urgent: [20 * MINUTE, 2 * HOUR],
  routine: [1 * HOUR, 10 * HOUR],
  scheduled: [24 * HOUR, 96 * HOUR],
};

export function departDelayMs(rng: Rng, urgency: Urgency): number {
  return uniform(rng, ...DEPART_DELAY_MS[urgency]);
}

/** The ETA a contractor announces when it sets off, in minutes. */
export function etaMinutes(rng: Rng, urgency: Urgency): number {
  return Math.round(urgency === "emergency" ? uniform(rng, 10, 40) : uniform(rng, 15, 75));
}

/** How long the dispatch team takes to pick up an order in its queue. */
const DISPATCHER_DELAY_MS: Record<Urgency, readonly [number, number]> = {
  emergency: [3 * MINUTE, 15 * MINUTE],
  urgent: [10 * MINUTE, 45 * MINUTE],
  routine: [20 * MINUTE, 2 * HOUR],
  scheduled: [30 * MINUTE, 4 * HOUR],
};

export function dispatcherDelayMs(rng: Rng, urgency: Urgency): number {
  return uniform(rng, ...DISPATCHER_DELAY_MS[urgency]);
}

export const REASONS = {
  decline: ["fully booked today", "outside my usual area", "no parts in the van", "on another emergency"],
  callerCancel: [
    "fixed it ourselves",
    "duplicate of another work order",
    "store manager cancelled the request",
    "tenant no longer available",
  ],
  cannotComplete: [
    "parts on back order",
    "no access to the site",
    "scope beyond my license",
    "equipment needs replacement, not repair",
  ],
  nte: [
    "corroded supply line needs replacing",
    "second unit affected",
    "damaged part found on inspection",
    "extra labour to reach the fault",
  ],
  assign: ["cascade ran out; called a contractor who can go", "no one accepted in time; assigned by hand"],
  reassignAfterFailure: ["previous contractor could not complete; sending another"],
  reassign: ["contractor running late; moved to another", "customer asked for their usual contractor"],
  dispatcherCancelUnmatched: ["no contractor available in time", "caller found someone else meanwhile"],
  dispatcherCancelAfterFailure: [
    "customer withdrew after the failed visit",
    "job needs a specialist we do not have",
  ],
} as const;

export function pick<T>(rng: Rng, values: readonly T[]): T {
  return values[Math.floor(rng() * values.length)] as T;
}

export const DESCRIPTIONS: Record<TradeCode, readonly string[]> = {
  plumbing: [
    "Kitchen sink leaking under the cabinet",
    "Toilet running constantly",
    "No hot water at the staff sink",
  ],
  electrical: [
    "Breaker keeps tripping in the back office",
    "Parking lot lights out",
    "Outlet sparking near the register",
  ],
  hvac: ["Rooftop unit not cooling", "Furnace short-cycling", "Thermostat unresponsive in the lobby"],
  appliance_repair: ["Walk-in cooler warm", "Dishwasher not draining", "Ice machine leaking"],
  locksmith: ["Front door lock jammed", "Rekey after staff change", "Safe will not open"],
  roofing: ["Roof leak over the stockroom", "Flashing torn after storm", "Ponding water on flat roof"],
  pest_control: [
    "Rodent activity in storage",
    "Ants in the break room",
    "Quarterly inspection found droppings",
  ],
  handyman: ["Ceiling tile water-stained", "Door closer broken", "Shelving unit collapsed"],
};
