// Fuzz: a few thousand generated bodies, valid and broken, against quote and order, and every keyed
// operation's example with its strings replaced by hostile ones. Nothing may answer 5xx, and every answer
// is either a valid result or a well-formed problem. It runs on SQLite, and on PostgreSQL too when
// TEST_DATABASE_URL is set (vitest.config.ts), where a string the database refuses (NUL, say) would
// surface as a 500.

import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import { beforeAll, describe, expect, it } from "vitest";
import type { AnyOperation } from "../src/operations/kernel/operation.js";
import { problemSchema } from "../src/operations/kernel/schemas.js";
import { quoteOutput } from "../src/operations/matching/quote.js";
import { orderSchema } from "../src/operations/orders/order-view.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH } from "./helpers/harness.js";
import { callOperation, keyedOperations } from "./helpers/security-suite.js";

let h: Harness;
let key: string;
const keys: Record<AnyOperation["access"], Record<string, string>> = {
  public: {},
  key: {},
  contractor: {},
  dispatcher: {},
  any_key: {},
};

const UNLIMITED = { ratePerMinute: 10_000_000, burst: 10_000_000 };

beforeAll(async () => {
  h = await createHarness();
  key = await h.key("fuzz", "test", UNLIMITED);
  const contractorId = (await h.services.store.contractors.load()).find((c) => c.pool === "sandbox")?.id;
  for (const kind of ["contractor", "dispatcher"] as const) {
    const issued = await h.services.keys.issue({
      accountName: `fuzz-${kind}`,
      mode: "test",
      actor: "operator:test",
      kind,
      contractorId: kind === "contractor" ? (contractorId ?? null) : null,
      ...UNLIMITED,
    });
    keys[kind] = { "x-api-key": issued.key };
  }
  keys.key = { "x-api-key": key };
  keys.any_key = keys.key;
});

/** Code units a store or a parser may choke on: C0 controls (NUL first), DEL, lone surrogates, a BOM,
 * non-characters, and astral characters (surrogate pairs). */
const hostileUnit = fc.oneof(
  fc.constantFrom("\u0000", "\u0001", "\u001f", "\u007f", "\ufeff", "\uffff", "\ufffe", "\u2028"),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.constantFrom("\u{1F6BF}", "\u{10FFFF}", "e\u0301", "\u0130"),
);

/** Text as people type it, mostly; now and then with hostile code units anywhere in it. */
const anyText = (maxLength: number) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength }) },
    { weight: 1, arbitrary: fc.string({ maxLength, unit: "grapheme" }) },
    { weight: 1, arbitrary: fc.string({ maxLength, unit: "binary" }) },
    { weight: 1, arbitrary: fc.string({ maxLength, unit: "binary-ascii" }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.string({ maxLength: Math.max(1, maxLength - 2) }), hostileUnit, fc.nat())
        .map(([text, unit, at]) => {
          const i = text.length === 0 ? 0 : at % (text.length + 1);
          return (text.slice(0, i) + unit + text.slice(i)).slice(0, Math.max(1, maxLength));
        }),
    },
  );

const anyScalar = fc.oneof(
  anyText(20),
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
      city: maybe(anyText(300)),
      address: maybe(anyText(1100)),
      name: maybe(anyText(600)),
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
    description: maybe(anyText(5100)),
    callback_url: maybe(fc.oneof(fc.webUrl(), anyText(40))),
    reference_id: maybe(anyText(300)),
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
        city: anyText(255),
        address: anyText(1000),
      },
      { requiredKeys: ["state"] },
    ),
    urgency: fc.constantFrom("emergency", "urgent", "routine", "scheduled"),
    nte_cents: fc.integer({ min: 1, max: 2_000_000_000 }),
    description: fc.string({ minLength: 1, maxLength: 2000 }).filter((d) => d.trim().length > 0),
    reference_id: anyText(255),
  },
  { requiredKeys: ["trade", "location", "description"] },
);

/** A body whose object repeats a member name (JSON.parse keeps the last; I-JSON forbids it). */
const duplicateNamesArb = validBodyArb.chain((b) =>
  fc.constantFrom(...Object.keys(b)).map((name) => {
    const text = JSON.stringify(b);
    return `{${JSON.stringify(name)}:${JSON.stringify((b as Record<string, unknown>)[name])},${text.slice(1)}`;
  }),
);

const rawArb = fc.oneof(
  { weight: 4, arbitrary: validBodyArb.map((b) => JSON.stringify(b)) },
  { weight: 8, arbitrary: bodyArb.map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: duplicateNamesArb },
  { weight: 1, arbitrary: fc.json() },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: anyText(200) },
);

/** A 5xx fails the property at once; anything else must be a result or a problem of its own status (an
 * export's result is its text). */
function wellFormed(
  res: LightMyRequestResponse,
  output: { safeParse(v: unknown): { success: boolean } },
  text = false,
) {
  if (res.statusCode >= 500) throw new Error(`${res.statusCode}: ${res.body}`);
  if (res.statusCode === 200) return output.safeParse(text ? res.body : res.json()).success;
  return problemSchema.safeParse(res.json()).success && res.json().status === res.statusCode;
}

/** The example with each string (at any depth) kept or replaced by hostile text. */
function mutatedExample(value: unknown): fc.Arbitrary<unknown> {
  if (typeof value === "string") return fc.oneof(fc.constant(value), anyText(64));
  if (Array.isArray(value)) return fc.tuple(...value.map(mutatedExample));
  if (value && typeof value === "object") {
    return fc.record(
      Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mutatedExample(v)])) as Record<
        string,
        fc.Arbitrary<unknown>
      >,
    );
  }
  return fc.constant(value);
}

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
          return wellFormed(res, output);
        }),
        { numRuns: 1500 },
      );
      // The generator must exercise both sides: some bodies succeed, some are refused.
      expect(seen.get(200) ?? 0).toBeGreaterThan(20);
      expect((seen.get(422) ?? 0) + (seen.get(400) ?? 0)).toBeGreaterThan(20);
    },
    120_000,
  );

  // Every keyed operation of the registry, each string of its example (ids, filters, reasons, URLs) kept or
  // replaced by hostile text, through its REST route (body, query or path).
  it.each(keyedOperations().map((op) => [op.id, op] as const))(
    "%s never answers 5xx to hostile strings in its input",
    async (_id, op) => {
      await fc.assert(
        fc.asyncProperty(mutatedExample(op.example), async (input) =>
          wellFormed(
            await callOperation(h, op, input, keys[op.access]),
            op.output,
            op.textStream !== undefined,
          ),
        ),
        { numRuns: 40 },
      );
    },
    60_000,
  );
});
