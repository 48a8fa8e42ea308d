// Logs: access lines only when LOG_REQUESTS is on, each with the request id; 5xx logged with the stack
// but answered without internals; the API key never written; a client hanging up mid-body at debug only.

import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import { Writable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { createHarness, ORDER_PATH, QUOTE_PATH, validQuote } from "../helpers/harness.js";
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
    // Another key: the last character changed (a key may end in X).
    const wrong = `${h.sandboxKey.slice(0, -1)}${h.sandboxKey.endsWith("X") ? "Y" : "X"}`;
    await h.post(QUOTE_PATH, validQuote(), { "x-api-key": wrong });
    // The access line is written in onResponse, which may run just after inject() has resolved.
    const access = await vi.waitFor(
      () => {
        const lines = log.parsed().filter((l) => l.msg === "request completed");
        expect(lines).toHaveLength(2);
        return lines;
      },
      { timeout: 10_000 },
    );
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

describe("a request body cut short by its client (issue 28, item 24)", () => {
  it("is logged at debug, not as a store fault, and counted apart from the answered requests", async () => {
    const log = capture();
    const h = await createHarness({ LOG_LEVEL: "debug" }, { logDestination: log.stream });
    try {
      const base = new URL(await h.app.listen({ port: 0, host: "127.0.0.1" }));
      const aborted = () =>
        h.services.metrics.registry.getSingleMetricAsString("fsd_http_requests_aborted_total");
      for (const path of [ORDER_PATH, "/api/mcp"]) {
        let reading: IncomingMessage | undefined;
        h.app.server.once("request", (request: IncomingMessage) => {
          reading = request;
        });
        const socket = connect(Number(base.port), "127.0.0.1");
        await new Promise((ready) => socket.once("connect", ready));
        // Headers and the start of a body Content-Length says is longer; then the client hangs up.
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
            `accept: application/json, text/event-stream\r\nx-api-key: ${h.sandboxKey}\r\n` +
            'content-length: 1000\r\n\r\n{"trade":"plumb',
        );
        // Hang up once the server is reading the body (past the key check).
        await vi.waitFor(() => expect(reading?.readableFlowing).toBe(true));
        socket.destroy();
        const line = await vi.waitFor(() => {
          const found = log.parsed().find((l) => l.msg === "client hung up before its request arrived");
          expect(found).toBeDefined();
          return found;
        });
        expect(line?.level).toBe(20); // debug
      }
      await vi.waitFor(async () => {
        const counted = await aborted();
        expect(counted).toMatch(/^fsd_http_requests_aborted_total\{operation="dispatchOrder"\} 1$/m);
        expect(counted).toMatch(/^fsd_http_requests_aborted_total\{operation="mcp"\} 1$/m);
      });
      expect(log.parsed().filter((l) => (l.level as number) >= 40)).toEqual([]);
      const answered = await h.services.metrics.registry.getSingleMetricAsString("fsd_http_requests_total");
      expect(answered).not.toMatch(/status="503"/);
    } finally {
      await h.close();
    }
  });
});
