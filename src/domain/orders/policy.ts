// The order's policy figures: how long a contractor has to answer an offer, how many contractors are
// offered a job before a dispatcher takes over, and which NTE is in force. Pure.

import type { Urgency } from "../pricing.js";
import type { Order } from "./order.js";

/** How long a contractor has to answer an offer, by urgency (live orders). */
const OFFER_WINDOW_MS: Record<string, number> = {
  emergency: 5 * 60_000,
  urgent: 15 * 60_000,
  routine: 60 * 60_000,
};
/** Sandbox offers expire sooner, so that an integrator sees the cascade in seconds. */
const SANDBOX_OFFER_WINDOW_MS = 20_000;
/** Contractors offered the job, one after another, before a dispatcher takes over. */
export const MAX_OFFERS = 3;

/** An offer's deadline. Sandbox offers get the short window while simulated contractors play them. */
export function offerDeadline(urgency: Urgency, livemode: boolean, now: Date, sandboxPlayed = true): string {
  const window =
    livemode || !sandboxPlayed
      ? (OFFER_WINDOW_MS[urgency] ?? OFFER_WINDOW_MS.routine ?? 3_600_000)
      : SANDBOX_OFFER_WINDOW_MS;
  return new Date(now.getTime() + window).toISOString();
}

/** The NTE in force: the last increase the caller approved, else the caller's own; null when none was set. */
export function nteInForce(order: Pick<Order, "nte_cents" | "nte_approved_cents">): number | null {
  return order.nte_approved_cents ?? order.nte_cents;
}
