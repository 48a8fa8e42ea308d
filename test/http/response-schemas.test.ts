// VALIDATE_RESPONSES: a result that does not match its operation's output schema (a field missing,
// undeclared, of the wrong type or outside its enum) is a bug, answered as an internal error on every
// transport and logged with the operation and the schema's issues.

import { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import { responseIssues } from "../../src/operations/kernel/gate.js";
import { JsonResult } from "../../src/operations/kernel/json-result.js";
import { defineOperation } from "../../src/operations/kernel/operation.js";
import { estimateOperation } from "../../src/operations/matching/estimate.js";
import { createHarness, ESTIMATE_PATH } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const probe = defineOperation({
  id: "probeOutput",
  name: "test.output",
  summary: "test",
  description: "test",
  access: "public",
  effect: "read",
  limit: "none",
  http: { method: "GET", path: "/test", input: "query" },
  input: z.object({}),
  output: z.object({
    id: z.string(),
    status: z.enum(["open", "closed"]),
    at: z.iso.datetime(),
    items: z.array(z.object({ n: z.number().int(), note: z.string().nullable() })),
    meta: z.record(z.string(), z.unknown()),
  }),
  example: {},
  handler: async () => {
    throw new Error("not called");
  },
});

const good = {
  id: "x_1",
  status: "open",
  at: "2026-11-21T10:00:00.000Z",
  items: [{ n: 1, note: null }],
  meta: { anything: { goes: 1 } },
};

const paths = (result: unknown) => responseIssues(probe, result).map((i) => [i.code, i.path.join(".")]);

describe("response check", () => {
  it("accepts a result that matches, and free-form records as they are", () => {
    expect(responseIssues(probe, good)).toEqual([]);
  });

  it("names a missing field, a wrong type, a value outside the enum and an undeclared field", () => {
    const { status: _status, ...missing } = good;
    expect(paths(missing)).toEqual([["invalid_value", "status"]]);
    expect(paths({ ...good, items: [{ n: "1", note: null }] })).toEqual([["invalid_type", "items.0.n"]]);
    expect(paths({ ...good, status: "pending" })).toEqual([["invalid_value", "status"]]);
    expect(paths({ ...good, at: "yesterday" })).toEqual([["invalid_format", "at"]]);
    expect(paths({ ...good, items: [{ n: 1, note: null, secret: "s" }], extra: 1 })).toEqual([
      ["unrecognized_keys", ""],
      ["unrecognized_keys", "items.0"],
    ]);
  });

  it("reads the result as JSON, as a client does: undefined fields are absent, dates are strings", () => {
    expect(
      responseIssues(probe, { ...good, at: new Date("2026-11-21T10:00:00Z"), dropped: undefined }),
    ).toEqual([]);
    expect(paths({ ...good, id: undefined })).toEqual([["invalid_type", "id"]]);
  });
});

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return { stream, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const estimate = { trade: "hvac", location: { state: "CA", zip: "94103" }, urgency: "routine" };

/** The estimate's handler answers its real result with one field wrong. */
function breakEstimate() {
  const real = estimateOperation.handler.bind(estimateOperation);
  vi.spyOn(estimateOperation, "handler").mockImplementation(async (ctx, input) => {
    const result = await real(ctx, input);
    if (result instanceof JsonResult) throw new Error("the estimate answers a value, not JSON text");
    return { ...result, currency: "EUR" as "USD" };
  });
}

describe("VALIDATE_RESPONSES", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("answers 500 internal_error over REST and logs the operation and the issues", async () => {
    const log = capture();
    const h = await createHarness(
      { LOG_LEVEL: "error", VALIDATE_RESPONSES: "true" },
      { logDestination: log.stream },
    );
    expect((await h.post(ESTIMATE_PATH, estimate)).statusCode).toBe(200);
    breakEstimate();
    const res = await h.post(ESTIMATE_PATH, estimate);
    expectProblem(res, 500, "internal_error");
    expect(res.body).not.toContain("EUR");
    const line = log
      .parsed()
      .find((l) => (l.err as { type?: string } | undefined)?.type === "ResponseMismatch");
    expect(line).toMatchObject({
      level: 50,
      request_id: res.headers["request-id"],
      err: { operation: "dispatch.estimate", issues: [{ code: "invalid_value", path: ["currency"] }] },
    });
    await h.close();
  });

  it("answers the internal-error result over MCP and A2A", async () => {
    const log = capture();
    const h = await createHarness(
      { LOG_LEVEL: "error", VALIDATE_RESPONSES: "true" },
      { logDestination: log.stream },
    );
    breakEstimate();
    const mcp = await h.post(
      "/api/mcp",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "dispatch.estimate", arguments: estimate },
      },
      { accept: "application/json, text/event-stream" },
    );
    const result = mcp.json().result as { isError: boolean; content: Array<{ text: string }> };
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]?.text ?? "{}")).toMatchObject({
      status: 500,
      code: "internal_error",
    });
    const a2a = await h.post("/api/a2a", {
      jsonrpc: "2.0",
      id: 2,
      method: "message/send",
      params: {
        message: {
          kind: "message",
          messageId: "m-1",
          role: "user",
          parts: [{ kind: "data", data: { skill: "dispatch.estimate", input: estimate } }],
        },
      },
    });
    expect(a2a.body).toContain("internal_error (500)");
    expect(a2a.body).not.toContain("EUR");
    const mismatches = log
      .parsed()
      .filter((l) => (l.err as { type?: string } | undefined)?.type === "ResponseMismatch");
    expect(mismatches.map((l) => (l.err as { operation: string }).operation)).toEqual([
      "dispatch.estimate",
      "dispatch.estimate",
    ]);
    await h.close();
  });

  it("is off by default: the result is sent as the handler returned it", async () => {
    expect(loadConfig({}).VALIDATE_RESPONSES).toBe(false);
    const h = await createHarness({ VALIDATE_RESPONSES: "false" });
    breakEstimate();
    const res = await h.post(ESTIMATE_PATH, estimate);
    expect(res.statusCode).toBe(200);
    expect(res.json().currency).toBe("EUR");
    await h.close();
  });
});
