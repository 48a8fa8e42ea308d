// Random commands on a handful of orders, for the order's property tests (on plain values and through the
// store): the three roles' commands, the sweeper's expiry and the clock. `pick` chooses an order among
// those made so far; contractor and assignment indexes range over four contractors.

import fc from "fast-check";

export type OrderStep =
  | { kind: "create"; ranking: number[]; callback: boolean }
  | { kind: "accept" | "decline" | "expire"; pick: number }
  | { kind: "report"; pick: number; to: "en_route" | "on_site" | "completed" | "cannot_complete" }
  | { kind: "cancel"; pick: number; by: "caller" | "dispatcher" }
  | { kind: "assign"; pick: number; to: number }
  | { kind: "nte"; pick: number; cents: number }
  | { kind: "decide"; pick: number; approve: boolean }
  | { kind: "invoice"; pick: number; cents: number }
  | { kind: "clock"; minutes: number };

export const orderStep: fc.Arbitrary<OrderStep> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("create" as const),
      ranking: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { maxLength: 4 }),
      callback: fc.boolean(),
    }),
  },
  fc.record({
    kind: fc.constantFrom("accept" as const, "decline" as const, "expire" as const),
    pick: fc.nat(),
  }),
  fc.record({
    kind: fc.constant("report" as const),
    pick: fc.nat(),
    to: fc.constantFrom(
      "en_route" as const,
      "on_site" as const,
      "completed" as const,
      "cannot_complete" as const,
    ),
  }),
  fc.record({
    kind: fc.constant("cancel" as const),
    pick: fc.nat(),
    by: fc.constantFrom("caller" as const, "dispatcher" as const),
  }),
  fc.record({ kind: fc.constant("assign" as const), pick: fc.nat(), to: fc.integer({ min: 0, max: 3 }) }),
  fc.record({
    kind: fc.constant("nte" as const),
    pick: fc.nat(),
    cents: fc.integer({ min: 1, max: 100_000 }),
  }),
  fc.record({ kind: fc.constant("decide" as const), pick: fc.nat(), approve: fc.boolean() }),
  fc.record({
    kind: fc.constant("invoice" as const),
    pick: fc.nat(),
    cents: fc.integer({ min: 0, max: 100_000 }),
  }),
  fc.record({ kind: fc.constant("clock" as const), minutes: fc.integer({ min: 1, max: 90 }) }),
);
