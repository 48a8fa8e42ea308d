// Counter-offers' rules (issue 33): how long the account has to answer one, which counters the account's
// policy accepts at once, what a counter may propose, and which counter of an order waits. Pure: the
// commands that use them are counter-commands.ts (and cancel/assign in commands.ts, which withdraw a
// waiting counter).
//
// A counter is the contractor's answer to its pending offer, before the offer's deadline: a price, an
// arrival window, or both. The offer is settled "countered"; the order stays offered to that contractor,
// whose capacity (and block of time) stays held until the account answers or the counter's own deadline
// passes. A counter is therefore waiting exactly while the order is offered, to the contractor of its
// latest offer, and that offer is countered: every other change of the order (acceptance, decline,
// expiry, a dispatcher's assignment, a cancellation) ends that state.

import type { Urgency } from "../pricing.js";
import type { Actor, CounterOffer, CounterSettlement, Offer, Order, OrderState } from "./order.js";
import { nteInForce } from "./policy.js";

/** How long the account has to answer a counter, by urgency: shorter for urgent work, whose clock runs. */
export const COUNTER_RESPONSE_MINUTES: Record<Urgency, number> = {
  emergency: 5,
  urgent: 15,
  routine: 60,
  scheduled: 240,
};

/** The highest price a counter may propose, in cents (the ceiling of a job's final cost). */
export const COUNTER_PRICE_MAX_CENTS = 100_000_000;

/** The widest band an account's policy may set: a counter at most this many percent above the estimate. */
export const AUTO_ACCEPT_MAX_PCT = 100;

/** Who accepts a counter on the account's behalf when its policy does. */
export const POLICY_ACTOR: Actor = "system:counter-policy";

export function counterDeadline(urgency: Urgency, now: Date): string {
  return new Date(now.getTime() + COUNTER_RESPONSE_MINUTES[urgency] * 60_000).toISOString();
}

/** The offer whose counter waits on the account, or null (see the module's comment). */
export function counteredOffer(state: OrderState): Offer | null {
  const { order, offers } = state;
  const latest = offers[offers.length - 1];
  if (order.status !== "offered" || !latest || latest.status !== "countered") return null;
  return latest.contractor_id === order.contractor_id ? latest : null;
}

/** The settlement withdrawing the waiting counter of a change that takes the order elsewhere (assigned,
 * cancelled); undefined when none waits. */
export function withdrawnCounter(
  state: OrderState,
  at: string,
  by: Actor,
  reason: string,
): { settle: CounterSettlement } | undefined {
  const offer = counteredOffer(state);
  return offer ? { settle: { offer_id: offer.id, status: "withdrawn", at, by, reason } } : undefined;
}

/** What the account's policy says of counters: accept at once those at most this many percent above the
 * estimate (and never above the NTE in force, nor with a new window); null: none, the account answers. */
export interface CounterPolicy {
  auto_accept_within_pct: number | null;
}

/** The highest price the policy accepts at once for this order, or null when it accepts none. */
export function autoAcceptCeiling(
  policy: CounterPolicy | null,
  order: Pick<Order, "estimated_cost_cents" | "nte_cents" | "nte_approved_cents">,
): { band_cents: number; nte_in_force_cents: number | null; ceiling_cents: number } | null {
  const pct = policy?.auto_accept_within_pct ?? null;
  if (pct === null) return null;
  // Integer cents: the band's edge rounded down, so a counter a cent above it waits for the account.
  const band = Math.floor((order.estimated_cost_cents * (100 + pct)) / 100);
  const nte = nteInForce(order);
  return {
    band_cents: band,
    nte_in_force_cents: nte,
    ceiling_cents: nte === null ? band : Math.min(band, nte),
  };
}

/** Whether the policy accepts this counter at once: a price alone (a new window is the account's to
 * judge), within the band above the estimate, and within the NTE in force. */
export function autoAccepts(
  policy: CounterPolicy | null,
  order: Order,
  counter: Pick<CounterOffer, "price_cents" | "window_start">,
): boolean {
  const ceiling = autoAcceptCeiling(policy, order);
  if (ceiling === null || counter.price_cents === null || counter.window_start !== null) return false;
  return counter.price_cents <= ceiling.ceiling_cents;
}

/** A counter as the account and the contractor read it (the event's `counter` too). */
export function counterDetails(c: CounterOffer) {
  return {
    offer_id: c.offer_id,
    status: c.status,
    price_cents: c.price_cents === null ? null : Number(c.price_cents),
    arrival_window: c.window_start && c.window_end ? { start: c.window_start, end: c.window_end } : null,
    note: c.note,
    created_at: c.created_at,
    deadline_at: c.deadline_at,
    decided_at: c.decided_at,
    reason: c.reason,
  };
}
