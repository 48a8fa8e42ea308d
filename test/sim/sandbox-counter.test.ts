// When the sandbox's contractors counter an offer (src/sim/sandbox-counter.ts): on request, 15 % above the
// estimate whatever the account's policy; now and then, 8 % above it, only where the policy accepts that
// at once, so no sandbox job waits on a counter nobody answers.

import { describe, expect, it } from "vitest";
import { SANDBOX_COUNTER_WITHIN_PCT } from "../../src/bootstrap.js";
import { COUNTER_MARKER, sandboxCounterPrice } from "../../src/sim/sandbox-counter.js";
import { orderFixture } from "../helpers/order-fixture.js";

const policy = { auto_accept_within_pct: SANDBOX_COUNTER_WITHIN_PCT };
const ids = Array.from({ length: 600 }, (_, i) => `ord_${String(i).padStart(20, "q")}`);
const routine = (id: string, more = {}) =>
  orderFixture({
    id,
    urgency: "routine",
    estimated_cost_cents: 20_000,
    nte_cents: null,
    description: "Leak",
    ...more,
  });

describe("the sandbox contractor's counter-offer", () => {
  it("asks 15 % more when the description says so, whatever the policy", () => {
    const order = routine(ids[0] as string, { description: `Leak ${COUNTER_MARKER}`, urgency: "emergency" });
    expect(sandboxCounterPrice(order, null)).toBe(23_000);
    expect(sandboxCounterPrice(order, policy)).toBe(23_000);
  });

  it("now and then asks 8 % more on routine work, only where the policy accepts it at once", () => {
    const countered = ids.filter((id) => sandboxCounterPrice(routine(id), policy) !== null);
    expect(countered.length).toBeGreaterThan(60);
    expect(countered.length).toBeLessThan(140);
    const id = countered[0] as string;
    expect(sandboxCounterPrice(routine(id), policy)).toBe(21_600);
    // No policy, a band too narrow, an NTE below the price, or urgent work: it accepts instead.
    expect(sandboxCounterPrice(routine(id), null)).toBeNull();
    expect(sandboxCounterPrice(routine(id), { auto_accept_within_pct: 5 })).toBeNull();
    expect(sandboxCounterPrice(routine(id, { nte_cents: 21_000 }), policy)).toBeNull();
    expect(sandboxCounterPrice(routine(id, { urgency: "urgent" }), policy)).toBeNull();
  });
});
