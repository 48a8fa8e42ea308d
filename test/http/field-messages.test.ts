// Every 4xx message says what the field must be in the service's own words: a table of bad inputs across
// operations (bodies, queries, path parameters, and the API key), none of whose messages carries zod's
// wording ("Too small: expected number to be >0", "Invalid ISO date", "Invalid input: expected ...").

import { beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, validOrder, validQuote } from "../helpers/harness.js";

/** zod's own phrasing, which no answer may show. */
const RAW =
  /Invalid (input|option|ISO|string|number|type|enum|union|literal|date)|Too (small|big)|expected (a |an )?(string|number|int|array|object|boolean|one of)|received |Unrecognized key|>=|<=|[^ ]>[0-9]|malformed/;

let h: Harness;
let caller: string;
let ops: string;

beforeAll(async () => {
  h = await createHarness();
  caller = await h.key("messages", "test", { ratePerMinute: 100_000, burst: 100_000 });
  ops = await h.dispatcherKey("test");
});

type Case = [label: string, method: "GET" | "POST", url: string, body: unknown, field: string, as?: "ops"];

const CASES: Case[] = [
  [
    "quote: nte_cents a string",
    "POST",
    "/api/dispatch/v1/quote",
    validQuote({ nte_cents: "5" }),
    "nte_cents",
  ],
  [
    "quote: location not an object",
    "POST",
    "/api/dispatch/v1/quote",
    { trade: "plumbing", location: 7 },
    "location",
  ],
  [
    "order: description a number",
    "POST",
    "/api/dispatch/v1/order",
    validOrder({ description: 5 }),
    "description",
  ],
  [
    "order: callback_url not a URL",
    "POST",
    "/api/dispatch/v1/order",
    validOrder({ callback_url: "nope" }),
    "callback_url",
  ],
  [
    "order: service_window.start not a time",
    "POST",
    "/api/dispatch/v1/order",
    validOrder({ urgency: "routine", service_window: { start: "soon", end: "later" } }),
    "service_window.start",
  ],
  ["estimate: location missing", "POST", "/api/dispatch/v1/estimate", { trade: "plumbing" }, "location"],
  [
    "availability: start_date not a day",
    "POST",
    "/api/dispatch/v1/availability",
    { trade: "plumbing", location: { state: "CA" }, start_date: "2030-02-30", end_date: "x" },
    "start_date",
  ],
  ["orders list: limit 0", "GET", "/api/dispatch/v1/orders?limit=0", undefined, "limit"],
  ["orders list: since not a time", "GET", "/api/dispatch/v1/orders?since=yesterday", undefined, "since"],
  ["order status: id too long", "GET", `/api/dispatch/v1/orders/${"x".repeat(80)}`, undefined, "order_id"],
  ["cancel: order_id empty", "POST", "/api/dispatch/v1/orders/cancel", { order_id: "" }, "order_id"],
  [
    "nte decision: decision unknown",
    "POST",
    "/api/dispatch/v1/orders/nte-decision",
    { order_id: "ord_1", request_id: "nte_1", decision: "maybe" },
    "decision",
  ],
  [
    "evals series: period unknown",
    "GET",
    "/api/dispatch/analytics/evals/series?period=forever",
    undefined,
    "period",
  ],
  ["audit list: limit -1", "GET", "/api/audit?limit=-1", undefined, "limit"],
  ["consistency: first a word", "GET", "/api/attest/consistency?first=one&second=two", undefined, "first"],
  ["webhook endpoint: url not a URL", "POST", "/api/dispatch/v1/webhooks/endpoint", { url: "ftp:x" }, "url"],
  [
    "dispatcher assign: reason missing",
    "POST",
    "/api/dispatcher/v1/orders/assign",
    { order_id: "ord_1", contractor_id: "ctr_1" },
    "reason",
    "ops",
  ],
  [
    "dispatcher contractors: limit huge",
    "GET",
    "/api/dispatcher/v1/contractors?limit=100000",
    undefined,
    "limit",
    "ops",
  ],
  [
    "optimize: date not a day",
    "POST",
    "/api/dispatcher/v1/schedule/optimize",
    { date: "tomorrow", state: "CA" },
    "date",
    "ops",
  ],
  [
    "dispatcher time-off: start not a time",
    "POST",
    "/api/dispatcher/v1/time-off",
    { contractor_id: "ctr_1", start: "x", end: "y" },
    "start",
    "ops",
  ],
];

describe("4xx messages in the service's own words", () => {
  it.each(CASES)("%s", async (_label, method, url, body, field, as) => {
    const key = as === "ops" ? ops : caller;
    const res =
      method === "GET"
        ? await h.get(url, { "x-api-key": key })
        : await h.post(url, body, { "x-api-key": key });
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, res.body).toBeLessThan(500);
    const problem = res.json() as { detail: string; errors?: Array<{ field: string; message: string }> };
    const entry = problem.errors?.find((e) => e.field === field);
    expect(entry, res.body).toBeDefined();
    for (const e of problem.errors ?? []) {
      expect(e.message, res.body).not.toMatch(RAW);
      // It names its field (or, for a field that is missing, says so).
      expect(e.message, res.body).toContain(e.field.split(".").pop() as string);
    }
  });

  it("words the rules the schemas leave to zod: types, bounds, formats and options", async () => {
    const messages = async (url: string, body: unknown) =>
      ((await h.post(url, body, { "x-api-key": caller })).json().errors as Array<{ message: string }>).map(
        (e) => e.message,
      );
    expect(await messages("/api/dispatch/v1/order", validOrder({ description: 5 }))).toEqual([
      "description must be a string",
    ]);
    expect(await messages("/api/dispatch/v1/quote", { trade: "plumbing", location: 7 })).toEqual([
      "location must be an object",
    ]);
    expect(await messages("/api/dispatch/v1/orders/cancel", { order_id: "" })).toEqual([
      "order_id must not be empty",
    ]);
    const consistency = await h.get("/api/attest/consistency?first=one&second=2", { "x-api-key": caller });
    expect(consistency.json().errors[0].message).toMatch(/^first must be /);
    expect(consistency.json().errors[0].message).not.toMatch(/required/);
  });

  it("says what an API key must be, for a key of the wrong shape", async () => {
    const res = await h.post("/api/dispatch/v1/quote", validQuote(), { "x-api-key": "sk_live_123" });
    expect(res.statusCode).toBe(401);
    const { detail } = res.json() as { detail: string };
    expect(detail).not.toMatch(RAW);
    expect(detail).toMatch(/fsd_live_ or fsd_test_ and 36 letters or digits/);
  });
});
