// Fuzz: a few thousand generated bodies, valid and broken, against quote and order. Nothing may answer 5xx,
// and every answer is either a valid result or a well-formed problem.

import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { orderSchema } from "../src/operations/order-view.js";
import { quoteOutput } from "../src/operations/quote.js";
import { problemSchema } from "../src/operations/schemas.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH } from "./helpers/harness.js";

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await createHarness();
  key = await h.key("fuzz", "test", { ratePerMinute: 10_000_000, burst: 10_000_000 });
});

const anyScalar = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(""),
  fc.string({ unit: "binary", maxLength: 30 }),
);

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, anyScalar, fc.constant(undefined));

const locationArb = fc.oneof(
  fc.record(
    {
      state: maybe(fc.constantFrom("TX", "ca", "PR", "ZZ", "T", "TXX", "dc", "gu")),
      zip: maybe(fc.constantFrom("78701", "94103", "10001", "00901", "1234", "78701-1234", "abcde", "99999")),
      city: maybe(fc.string({ maxLength: 300 })),
      address: maybe(fc.string({ maxLength: 1100 })),
      name: maybe(fc.string({ maxLength: 600 })),
    },
    { requiredKeys: [] },
  ),
  anyScalar,
  fc.array(anyScalar, { maxLength: 3 }),
);

const bodyArb = fc.record(
  {
    trade: maybe(fc.constantFrom("plumbing", "HVAC", "Electrical", "roofing", "carpentry", " locksmith ")),
    location: locationArb,
    urgency: maybe(fc.constantFrom("emergency", "urgent", "routine", "scheduled", "now")),
    nte_cents: maybe(
      fc.oneof(fc.integer({ min: -10, max: 3_000_000_000 }), fc.double({ min: -1, max: 1e12 })),
    ),
    description: maybe(fc.string({ maxLength: 5100 })),
    callback_url: maybe(fc.oneof(fc.webUrl(), fc.string({ maxLength: 40 }))),
    reference_id: maybe(fc.string({ maxLength: 300 })),
    extra: fc.option(anyScalar, { nil: undefined }),
  },
  { requiredKeys: [] },
);

const validBodyArb = fc.record(
  {
    trade: fc.constantFrom("plumbing", "HVAC", "electrical", "handyman", "Pest_Control"),
    location: fc.record(
      {
        state: fc.constantFrom("TX", "ny", "PR", "DC", "wa"),
        city: fc.string({ maxLength: 255 }),
        address: fc.string({ maxLength: 1000 }),
      },
      { requiredKeys: ["state"] },
    ),
    urgency: fc.constantFrom("emergency", "urgent", "routine", "scheduled"),
    nte_cents: fc.integer({ min: 1, max: 2_000_000_000 }),
    description: fc.string({ minLength: 1, maxLength: 2000 }).filter((d) => d.trim().length > 0),
    reference_id: fc.string({ maxLength: 255 }),
  },
  { requiredKeys: ["trade", "location", "description"] },
);

const rawArb = fc.oneof(
  { weight: 4, arbitrary: validBodyArb.map((b) => JSON.stringify(b)) },
  { weight: 8, arbitrary: bodyArb.map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.json() },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
);

describe("fuzz", () => {
  it.each([
    ["quote", QUOTE_PATH, quoteOutput],
    ["order", ORDER_PATH, orderSchema],
  ] as const)(
    "%s never answers 5xx and always answers a result or a problem",
    async (_name, path, output) => {
      const seen = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(rawArb, async (raw) => {
          const res = await h.post(path, raw, { "x-api-key": key });
          seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode >= 500) throw new Error(`${res.statusCode}: ${res.body}`);
          if (res.statusCode === 200) return output.safeParse(res.json()).success;
          return problemSchema.safeParse(res.json()).success && res.json().status === res.statusCode;
        }),
        { numRuns: 1500 },
      );
      // The generator must exercise both sides: some bodies succeed, some are refused.
      expect(seen.get(200) ?? 0).toBeGreaterThan(20);
      expect((seen.get(422) ?? 0) + (seen.get(400) ?? 0)).toBeGreaterThan(20);
    },
    120_000,
  );
});
