import { describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../src/auth/rate-limiter.js";

const policy = { name: "per-key", ratePerMinute: 100, burst: 200 };

describe("GCRA memory limiter", () => {
  it("admits a burst of exactly 200 on a fresh key, then refuses", async () => {
    const now = 1_000_000;
    const limiter = new MemoryRateLimiter(() => now);
    for (let i = 0; i < 200; i++) {
      const d = await limiter.consume("k", policy);
      expect(d.allowed).toBe(true);
      expect(d.remaining).toBe(199 - i);
    }
    const refused = await limiter.consume("k", policy);
    expect(refused.allowed).toBe(false);
    expect(refused.remaining).toBe(0);
    expect(refused.retryAfterSeconds).toBe(1);
    await limiter.close();
  });

  it("refills at 100 per minute", async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    for (let i = 0; i < 200; i++) await limiter.consume("k", policy);
    expect((await limiter.consume("k", policy)).allowed).toBe(false);
    now += 600; // one emission interval
    expect((await limiter.consume("k", policy)).allowed).toBe(true);
    expect((await limiter.consume("k", policy)).allowed).toBe(false);
    now += 60_000; // a minute later: 100 more
    let admitted = 0;
    for (let i = 0; i < 150; i++) if ((await limiter.consume("k", policy)).allowed) admitted++;
    expect(admitted).toBe(100);
    await limiter.close();
  });

  it("keeps keys apart and forgets full buckets", async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    for (let i = 0; i < 200; i++) await limiter.consume("a", policy);
    expect((await limiter.consume("a", policy)).allowed).toBe(false);
    expect((await limiter.consume("b", policy)).allowed).toBe(true);
    now += 10 * 60_000;
    limiter.sweep();
    const d = await limiter.consume("a", policy);
    expect(d.allowed).toBe(true);
    expect(d.remaining).toBe(199);
    await limiter.close();
  });
});
