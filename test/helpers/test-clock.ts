// A clock a test moves by hand: the wall clock plus however far the test has advanced it, so that time
// the code under test measures "passes" at once, without the test sleeping.

import type { Clock } from "../../src/clock.js";

export interface TestClock {
  now: Clock;
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void;
}

export function testClock(): TestClock {
  let skewMs = 0;
  return {
    now: () => new Date(Date.now() + skewMs),
    advance(ms) {
      skewMs += ms;
    },
  };
}
