// Logs: access lines only when LOG_REQUESTS is on, each with the request id; 5xx logged with the stack
// but answered without internals; the API key never written.

import { Writable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { createHarness, QUOTE_PATH, validQuote } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return { lines, stream, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("logging", () => {
  it("writes one access line per request with LOG_REQUESTS=true, and never the API key", async () => {
    const log = capture();
    const h = await createHarness(
      { LOG_LEVEL: "info", LOG_REQUESTS: "true" },
      { logDestination: log.stream },
    );
    const res = await h.post(QUOTE_PATH, validQuote(), { "x-api-key": h.sandboxKey });
    expect(res.statusCode).toBe(200);
    await h.post(QUOTE_PATH, validQuote(), { "x-api-key": `${h.sandboxKey.slice(0, -1)}X` });
    // The access line is written in onResponse, which may run just after inject() has resolved.
    const access = await vi.waitFor(() => {
      const lines = log.parsed().filter((l) => l.msg === "request completed");
      expect(lines).toHaveLength(2);
      return lines;
    });
    expect(access[0]).toMatchObject({
      request_id: res.headers["request-id"],
      method: "POST",
      url: QUOTE_PATH,
      status: 200,
    });
    expect(access[1]?.status).toBe(401);
    expect(log.lines.join("\n")).not.toContain(h.sandboxKey.slice(9, 30));
    await h.close();
  });

  it("writes no access lines by default", async () => {
    const log = capture();
    const h = await createHarness({ LOG_LEVEL: "info" }, { logDestination: log.stream });
    await h.get("/api/dispatch/index");
    expect(log.parsed().filter((l) => l.msg === "request completed")).toHaveLength(0);
    await h.close();
  });

  it("logs an unexpected error with its stack and request id, and answers a bare 500 problem", async () => {
    const log = capture();
    const h = await createHarness({ LOG_LEVEL: "info" }, { logDestination: log.stream });
    h.services.store.orders.find = async () => {
      throw new Error("secret internal detail");
    };
    const res = await h.get("/api/dispatch/v1/orders/ord_x", { "x-api-key": h.sandboxKey });
    const body = expectProblem(res, 500, "internal_error");
    expect(JSON.stringify(body)).not.toContain("secret internal detail");
    const line = log.parsed().find((l) => l.msg === "unhandled error");
    expect(line?.request_id).toBe(res.headers["request-id"]);
    expect(JSON.stringify(line?.err)).toContain("secret internal detail");
    expect(log.lines.join("\n")).not.toContain(h.sandboxKey);
    await h.close();
  });
});
