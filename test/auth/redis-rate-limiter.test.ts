// The shared GCRA limiter on Redis: the same decisions as the in-memory one, one bucket across
// processes, and the fallback policy when Redis goes away and comes back.

import { afterAll, describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../src/auth/rate-limiter.js";
import { RedisRateLimiter } from "../../src/auth/redis-rate-limiter.js";
import { ownRedis } from "../helpers/redis-server.js";

const url = process.env.TEST_REDIS_URL;
const policy = { name: "per-key", ratePerMinute: 100, burst: 200 };
const prefix = () => `fsd:test:${Math.random().toString(36).slice(2, 10)}:`;
const limiters: RedisRateLimiter[] = [];
afterAll(async () => {
  for (const l of limiters) await l.close();
});

function limiter(redisUrl: string, options: ConstructorParameters<typeof RedisRateLimiter>[1] = {}) {
  const l = new RedisRateLimiter(redisUrl, { keyPrefix: prefix(), timeoutMs: 2000, ...options });
  limiters.push(l);
  return l;
}

async function ready(l: RedisRateLimiter, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (l.client.status !== "ready") {
    if (Date.now() > deadline) throw new Error(`redis client is ${l.client.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!url)("Redis GCRA limiter (TEST_REDIS_URL)", () => {
  it("decides exactly as the in-memory limiter: a burst of 200, then refusals", async () => {
    const redis = limiter(url as string);
    await ready(redis);
    const memory = new MemoryRateLimiter();
    for (let i = 0; i < 205; i++) {
      const a = await redis.consume("k", policy);
      const b = memory.consume("k", policy);
      expect(a.allowed, `request ${i}`).toBe(b.allowed);
      expect(a.remaining, `request ${i}`).toBe(b.remaining);
      if (!a.allowed) expect(a.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    expect(redis.mode).toBe("redis");
    await memory.close();
  });

  it("is one bucket for every process that shares the Redis", async () => {
    const keyPrefix = prefix();
    const a = limiter(url as string, { keyPrefix });
    const b = limiter(url as string, { keyPrefix });
    await Promise.all([ready(a), ready(b)]);
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).consume("shared", policy)),
    );
    expect(results.filter((d) => d.allowed)).toHaveLength(200);
  });

  it("keeps answering from memory while Redis is down, and shares again once it is back", async () => {
    const server = await ownRedis();
    await server.start();
    const events: string[] = [];
    const l = limiter(server.url, {
      timeoutMs: 200,
      events: { onFallback: () => events.push("fallback"), onRecovered: () => events.push("recovered") },
    });
    await ready(l);
    expect((await l.consume("k", { ...policy, burst: 3 })).allowed).toBe(true);
    expect(l.mode).toBe("redis");

    await server.kill();
    const during = [];
    for (let i = 0; i < 5; i++) during.push(await l.consume("k", { ...policy, burst: 3 }));
    expect(l.mode).toBe("memory");
    // The in-memory fallback applies the same policy: a fresh bucket of 3.
    expect(during.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(events).toEqual(["fallback"]);
    expect(await l.ready()).toBe(false);

    await server.start();
    await ready(l, 15_000);
    const after = await l.consume("other", { ...policy, burst: 3 });
    expect(after.allowed).toBe(true);
    expect(l.mode).toBe("redis");
    expect(events).toEqual(["fallback", "recovered"]);
    expect(await l.ready()).toBe(true);
    await server.kill();
  }, 30_000);
});
