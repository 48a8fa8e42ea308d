// Seeded pseudo-random numbers, for what must come out the same from the same seed: the sandbox
// contractor pool and the simulator's runs.

import { createHash } from "node:crypto";

export type Rng = () => number;

/** mulberry32: a small, fast, well-distributed 32-bit PRNG; numbers in [0, 1). */
export function rngOf(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from any parts, joined with "|" (a run's seed and an order's number, say). */
export function seedOf(...parts: Array<string | number>): number {
  return createHash("sha256").update(parts.join("|")).digest().readUInt32BE(0);
}
