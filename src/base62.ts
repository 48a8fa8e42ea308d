// Base62 text of numbers and of random draws, for identifiers, seals and API keys.

import { randomFillSync } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function base62(value: number, width: number): string {
  let n = value;
  let out = "";
  while (n > 0) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out.padStart(width, "0");
}

// Random bytes are drawn from the CSPRNG in 4 KiB batches: one call per ~100 ids instead of one per character.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/** Uniform random base62 string (rejection sampling: bytes >= 248 are redrawn, so no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}
