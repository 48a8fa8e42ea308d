// When an order is received: at the HTTP request's arrival, before its key is checked, whichever
// transport carries it (REST, an MCP tool call, an A2A skill). The key check is made to take a virtual
// minute here: an order whose received_at lands after it was stamped after authentication.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";

const T0 = Date.parse("2030-03-02T10:00:00.000Z");
const KEY_CHECK_MS = 60_000;

let h: Harness;
let key: string;

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0 - 86_400_000);
  h = await createHarness();
  key = await h.key("received-time", "test");
  const keys = h.services.keys;
  const authenticate = keys.authenticate.bind(keys);
  keys.authenticate = (raw) => {
    vi.setSystemTime(Date.now() + KEY_CHECK_MS);
    return authenticate(raw);
  };
});

afterAll(() => {
  vi.useRealTimers();
});

const headers = (k: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "x-api-key": k,
});

/** Creates an order over one transport; returns its id. */
const TRANSPORTS: Array<[string, (body: Record<string, unknown>) => Promise<string>]> = [
  [
    "REST",
    async (body) => {
      const res = await h.post(ORDER_PATH, body, { "x-api-key": key });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().order_id;
    },
  ],
  [
    "MCP",
    async (body) => {
      const res = await h.app.inject({
        method: "POST",
        url: "/api/mcp",
        headers: headers(key),
        payload: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "dispatch.order", arguments: body },
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      const result = res.json().result;
      expect(result.isError, res.body).toBeFalsy();
      return result.structuredContent.order_id;
    },
  ],
  [
    "A2A",
    async (body) => {
      const res = await h.app.inject({
        method: "POST",
        url: "/api/a2a",
        headers: headers(key),
        payload: {
          jsonrpc: "2.0",
          id: 1,
          method: "message/send",
          params: {
            message: {
              kind: "message",
              messageId: randomUUID(),
              role: "user",
              parts: [{ kind: "data", data: { skill: "dispatch.order", input: body } }],
            },
          },
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      const part = res.json().result.parts[0];
      expect(part.kind, res.body).toBe("data");
      return part.data.order_id;
    },
  ],
];

describe("an order's received time", () => {
  for (const [name, create] of TRANSPORTS) {
    it(`is the request's arrival, before the key check, over ${name}`, async () => {
      vi.setSystemTime(T0);
      const id = await create(validOrder({ description: `received over ${name}` }));
      const [order] = await h.services.store.orders.byIds([id]);
      expect(order?.received_at).toBe(new Date(T0).toISOString());
      // The key check did run, and took its minute, after the arrival was stamped.
      expect(Date.now()).toBeGreaterThanOrEqual(T0 + KEY_CHECK_MS);
    });
  }
});
