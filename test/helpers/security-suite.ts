// The shared security suite, applied to every keyed operation: no key, malformed key, bad checksum,
// unknown key, revoked key, disabled dispatch, the rate limit and its headers.

import type { LightMyRequestResponse } from "fastify";
import { describe, expect, it } from "vitest";
import { generateApiKey } from "../../src/auth/api-key.js";
import { createHarness, type Harness } from "./harness.js";

export type KeyedCall = (h: Harness, headers: Record<string, string>) => Promise<LightMyRequestResponse>;

export function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(res.headers["request-id"]).toBeTruthy();
  const body = res.json();
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(body.request_id).toBe(res.headers["request-id"]);
  expect(typeof body.detail).toBe("string");
  expect(body.type).toBe(`/problems/${code}`);
  return body;
}

export function runSecuritySuite(name: string, call: KeyedCall) {
  describe(`${name}: shared security suite`, () => {
    let h: Harness;

    it("answers 401 missing_api_key without a key", async () => {
      h ??= await createHarness();
      expectProblem(await call(h, {}), 401, "missing_api_key");
    });

    it("answers 401 invalid_api_key for a malformed key", async () => {
      h ??= await createHarness();
      expectProblem(await call(h, { "x-api-key": "fsd_live_nope" }), 401, "invalid_api_key");
    });

    it("answers 401 for a key whose checksum is wrong, before any lookup", async () => {
      h ??= await createHarness();
      const key = await h.key("acme", "test");
      const tampered = key.slice(0, 12) + (key[12] === "x" ? "y" : "x") + key.slice(13);
      const keys = h.services.store.keys;
      const original = keys.findByHash.bind(keys);
      let lookups = 0;
      keys.findByHash = (hash: string) => {
        lookups++;
        return original(hash);
      };
      try {
        const body = expectProblem(await call(h, { "x-api-key": tampered }), 401, "invalid_api_key");
        expect(body.detail).toMatch(/checksum/);
        expect(lookups).toBe(0);
      } finally {
        keys.findByHash = original;
      }
    });

    it("answers 401 for a well-formed key that was never issued", async () => {
      h ??= await createHarness();
      expectProblem(await call(h, { "x-api-key": generateApiKey("live") }), 401, "invalid_api_key");
    });

    it("answers 401 api_key_revoked for a revoked key", async () => {
      h ??= await createHarness();
      const issued = await h.services.keys.issue({
        accountName: "revokee",
        mode: "test",
        actor: "operator:test",
      });
      await h.services.keys.revoke(issued.id, "operator:test");
      expectProblem(await call(h, { "x-api-key": issued.key }), 401, "api_key_revoked");
    });

    it("answers 503 dispatch_not_configured when dispatch is disabled, before checking the key", async () => {
      const off = await createHarness({ DISPATCH_ENABLED: "false" });
      expectProblem(await call(off, {}), 503, "dispatch_not_configured");
      expectProblem(await call(off, { "x-api-key": off.sandboxKey }), 503, "dispatch_not_configured");
      await off.close();
    });

    it("admits the burst, then answers 429 with Retry-After and rate-limit fields", async () => {
      h ??= await createHarness();
      const key = await h.key(`burst-${name}`, "test", { ratePerMinute: 60, burst: 5 });
      for (let i = 0; i < 5; i++) {
        const ok = await call(h, { "x-api-key": key });
        expect(ok.statusCode, ok.body).not.toBe(429);
        expect(ok.headers["ratelimit-policy"]).toBe('"per-key";q=60;w=60;fsd-burst=5');
        expect(ok.headers.ratelimit).toMatch(new RegExp(`^"per-key";r=${4 - i};t=\\d+$`));
        expect(ok.headers["x-ratelimit-limit"]).toBe("5");
        expect(ok.headers["x-ratelimit-remaining"]).toBe(String(4 - i));
      }
      const limited = await call(h, { "x-api-key": key });
      const body = expectProblem(limited, 429, "rate_limited");
      expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(body.retry_after_seconds).toBe(Number(limited.headers["retry-after"]));
      expect(limited.headers.ratelimit).toMatch(/^"per-key";r=0;t=\d+$/);
      expect(limited.headers["x-ratelimit-remaining"]).toBe("0");
    });

    it("checks the key before the limit (a bad key never spends the limit)", async () => {
      h ??= await createHarness();
      expectProblem(await call(h, { "x-api-key": "garbage" }), 401, "invalid_api_key");
    });
  });
}
