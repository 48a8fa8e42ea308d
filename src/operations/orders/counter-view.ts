// A counter-offer as the account (its order's views) and the contractor (its offers) read it: one schema
// for every view that shows one.

import { z } from "zod";
import { COUNTER_RESPONSE_MINUTES, counterDetails } from "../../domain/orders/counter-rules.js";
import type { CounterOffer } from "../../domain/orders/order.js";

/** A counter as the account and the contractor read it. */
export const counterSchema = z
  .object({
    offer_id: z.string().describe("The offer countered (the counter's id)."),
    status: z
      .enum(["pending", "accepted", "declined", "expired", "withdrawn"])
      .describe(
        "pending: waits on the account until deadline_at; accepted (by the account or its policy), " +
          "declined, expired (unanswered), withdrawn (the order was cancelled or assigned meanwhile).",
      ),
    price_cents: z
      .number()
      .int()
      .nullable()
      .describe("The price the contractor asks, in cents; null: the offer's."),
    arrival_window: z
      .object({ start: z.iso.datetime(), end: z.iso.datetime() })
      .nullable()
      .describe("The arrival window the contractor proposes; null: the order's."),
    note: z.string().nullable(),
    created_at: z.iso.datetime(),
    deadline_at: z.iso
      .datetime()
      .describe(
        `The account answers by then, or the job goes to the next contractor (${COUNTER_RESPONSE_MINUTES.emergency} ` +
          `minutes for emergency work, ${COUNTER_RESPONSE_MINUTES.urgent} urgent, ${COUNTER_RESPONSE_MINUTES.routine} ` +
          `routine, ${COUNTER_RESPONSE_MINUTES.scheduled} scheduled).`,
      ),
    decided_at: z.iso.datetime().nullable(),
    reason: z.string().nullable(),
  })
  .meta({ id: "CounterOffer" });

export type CounterView = z.infer<typeof counterSchema>;

/** The order's latest counter, as its views show it. */
export function latestCounter(counters: readonly CounterOffer[]): CounterView | null {
  const last = counters[counters.length - 1];
  return last ? counterDetails(last) : null;
}
