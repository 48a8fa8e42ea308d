// Every field limit of the contract's table: the bound itself passes, one past it gets 422 naming the field.

import { beforeAll, describe, expect, it } from "vitest";
import {
  createHarness,
  type Harness,
  ORDER_PATH,
  QUOTE_PATH,
  validOrder,
  validQuote,
} from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await createHarness();
  key = await h.key("limits", "test", { ratePerMinute: 100_000, burst: 100_000 });
});

const location = (extra: Record<string, unknown>) => ({ state: "TX", ...extra });

const quoteCases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
  ["location.state", { location: location({ state: "TX" }) }, { location: location({ state: "TXX" }) }],
  ["location.state", { location: location({ state: "tx" }) }, { location: location({ state: "T" }) }],
  [
    "location.zip",
    { location: location({ zip: "73301-0001" }) },
    { location: location({ zip: "73301-00011" }) },
  ],
  [
    "location.city",
    { location: location({ city: "c".repeat(255) }) },
    { location: location({ city: "c".repeat(256) }) },
  ],
  ["nte_cents", { nte_cents: 1 }, { nte_cents: 0 }],
  ["nte_cents", { nte_cents: 500 }, { nte_cents: 1.5 }],
  ["description", { description: "d".repeat(2000) }, { description: "d".repeat(2001) }],
  ["urgency", { urgency: "scheduled" }, { urgency: "whenever" }],
];

const orderCases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
  ["location.state", { location: location({ state: "DC" }) }, { location: location({ state: "" }) }],
  ["location.zip", { location: location({ zip: "78701" }) }, { location: location({ zip: "78701-12345" }) }],
  [
    "location.city",
    { location: location({ city: "c".repeat(255) }) },
    { location: location({ city: "c".repeat(256) }) },
  ],
  [
    "location.address",
    { location: location({ address: "a".repeat(1000) }) },
    { location: location({ address: "a".repeat(1001) }) },
  ],
  [
    "location.name",
    { location: location({ name: "n".repeat(500) }) },
    { location: location({ name: "n".repeat(501) }) },
  ],
  ["description", { description: "d" }, { description: "" }],
  ["description", { description: "d".repeat(5000) }, { description: "d".repeat(5001) }],
  ["reference_id", { reference_id: "r".repeat(255) }, { reference_id: "r".repeat(256) }],
  ["nte_cents", { nte_cents: 1 }, { nte_cents: -1 }],
  ["callback_url", { callback_url: "https://example.com/hook" }, { callback_url: "example.com/hook" }],
  ["urgency", { urgency: "emergency" }, { urgency: "EMERGENCY!" }],
];

describe.each([
  ["quote", QUOTE_PATH, validQuote, quoteCases],
  ["order", ORDER_PATH, validOrder, orderCases],
] as const)("%s field limits", (_name, path, valid, cases) => {
  it.each(cases as Array<[string, Record<string, unknown>, Record<string, unknown>]>)(
    "%s: the bound passes and one past it is 422",
    async (field, ok, bad) => {
      const good = await h.post(path, valid(ok), { "x-api-key": key });
      expect(good.statusCode, good.body).toBe(200);
      const res = await h.post(path, valid(bad), { "x-api-key": key });
      const body = expectProblem(res, 422, "validation_failed");
      expect(body.errors.map((e: { field: string }) => e.field)).toContain(field);
    },
  );

  it("requires its required fields", async () => {
    const res = await h.post(path, {}, { "x-api-key": key });
    const fields = expectProblem(res, 422, "validation_failed").errors.map((e: { field: string }) => e.field);
    expect(fields).toContain("trade");
    expect(fields).toContain("location");
    if (path === ORDER_PATH) expect(fields).toContain("description");
  });

  it("rejects a body that is not an object", async () => {
    for (const body of ["[]", '"text"', "42", "null"]) {
      const res = await h.post(path, body, { "x-api-key": key });
      expect(res.statusCode, body).toBe(422);
    }
  });
});
