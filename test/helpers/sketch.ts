// The evals' percentiles come from a log-bucket sketch (migrations/0027-evals-sketches.ts): each is within
// SKETCH_RELATIVE_ERROR (1 %) of the exact nearest-rank value, and a published one is rounded to the
// microsecond. These matchers hold a figure to that and no more.

import { SKETCH_RELATIVE_ERROR } from "../../src/storage/migrations/0027-evals-sketches.js";

/** Half a microsecond (the published rounding) and a hair of floating point. */
const ROUNDING_MS = 0.0005 + 1e-9;

/** Whether `value` is within the sketch's stated error of the exact value `exact` (ms). */
export function isWithinSketch(value: number | null, exact: number | null): boolean {
  if (value === null || exact === null) return value === exact;
  // A latency below zero (a wall clock stepped back) is published as 0.
  const target = Math.max(exact, 0);
  return Math.abs(value - target) <= SKETCH_RELATIVE_ERROR * target * (1 + 1e-9) + ROUNDING_MS;
}

/** An asymmetric matcher (for toEqual): a number within the sketch's stated error of `exact`. */
export function withinSketch(exact: number | null) {
  if (exact === null) return null;
  return {
    asymmetricMatch: (value: unknown) => typeof value === "number" && isWithinSketch(value, exact),
    toString: () => "WithinSketch",
    toAsymmetricMatcher: () => `within ${SKETCH_RELATIVE_ERROR * 100} % of ${exact}`,
  };
}

/** A published latency figure: its value within the sketch's error of `exact`, its sample exact. */
export const sketchMs = (exact: number | null, n: number) => ({
  value: withinSketch(exact),
  sample_size: n,
  unit: "ms",
});
