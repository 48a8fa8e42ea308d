// The pure rules of ratings: the overall, the tally a rating and its change move, the shrunk rating matching
// scores by, what can be rated, and how long a rating stays editable.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  editableUntil,
  matchingRating,
  NO_RATINGS,
  overallOf,
  RATING_PRIOR_WEIGHT,
  type RatingScores,
  type RatingTally,
  ratingMeans,
  shrunkRating,
  tallyWith,
  unrateable,
} from "../../src/domain/ratings.js";

const fives: RatingScores = { quality: 5, timeliness: 5, communication: 5, value: 5 };
const mixed: RatingScores = { quality: 4, timeliness: 2, communication: 3, value: 5 };

describe("a rating's overall and a contractor's tally", () => {
  it("takes the overall as the mean of the four scores", () => {
    expect(overallOf(mixed)).toBe(3.5);
    expect(overallOf(fives)).toBe(5);
  });

  it("adds a rating, and moves by the difference when one changes", () => {
    const one = tallyWith(NO_RATINGS, mixed);
    expect(one).toEqual({ count: 1, ...mixed });
    const two = tallyWith(one, fives);
    expect(two).toEqual({ count: 2, quality: 9, timeliness: 7, communication: 8, value: 10 });
    const changed = tallyWith(two, fives, mixed);
    expect(changed).toEqual({ count: 2, quality: 10, timeliness: 10, communication: 10, value: 10 });
    expect(ratingMeans(changed)).toEqual({
      quality: 5,
      timeliness: 5,
      communication: 5,
      value: 5,
      overall: 5,
    });
    expect(ratingMeans(NO_RATINGS)).toBeNull();
  });
});

describe("the shrunk rating", () => {
  it("is the prior alone while nobody has rated the contractor", () => {
    expect(shrunkRating(4.2, NO_RATINGS)).toBe(4.2);
    expect(matchingRating({ rating: 4.2 })).toBe(4.2);
    expect(matchingRating({ rating: 4.2, ratings: NO_RATINGS })).toBe(4.2);
  });

  it("pulls few ratings toward the prior, as if the prior were five more ratings", () => {
    expect(RATING_PRIOR_WEIGHT).toBe(5);
    // One rating of 1 against a prior of 4: (5 x 4 + 1) / 6 = 3.5.
    const one = tallyWith(NO_RATINGS, { quality: 1, timeliness: 1, communication: 1, value: 1 });
    expect(shrunkRating(4, one)).toBe(3.5);
    expect(matchingRating({ rating: 4, ratings: one })).toBe(3.5);
  });

  it("approaches the accounts' mean as ratings accumulate", () => {
    let tally = NO_RATINGS;
    for (let i = 0; i < 995; i++) tally = tallyWith(tally, mixed);
    // (5 x 1 + 995 x 3.5) / 1000.
    expect(shrunkRating(1, tally)).toBeCloseTo(3.4875, 9);
  });

  it("stays between the prior and the ratings' mean, inside 0-5", () => {
    const scores = fc.record({
      quality: fc.integer({ min: 1, max: 5 }),
      timeliness: fc.integer({ min: 1, max: 5 }),
      communication: fc.integer({ min: 1, max: 5 }),
      value: fc.integer({ min: 1, max: 5 }),
    });
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 5, noNaN: true }),
        fc.array(scores, { minLength: 1 }),
        (prior, all) => {
          const tally = all.reduce<RatingTally>((t, s) => tallyWith(t, s), NO_RATINGS);
          const mean = all.reduce((sum, s) => sum + overallOf(s), 0) / all.length;
          const shrunk = shrunkRating(prior, tally);
          expect(shrunk).toBeGreaterThanOrEqual(Math.min(prior, mean) - 1e-9);
          expect(shrunk).toBeLessThanOrEqual(Math.max(prior, mean) + 1e-9);
          expect(shrunk).toBeLessThanOrEqual(5);
        },
      ),
    );
  });
});

describe("what can be rated, and until when", () => {
  it("rates completed work in any later status, never before completion or after a cancellation", () => {
    const at = "2026-06-01T12:00:00.000Z";
    expect(unrateable({ status: "completed", completed_at: at })).toBeNull();
    expect(unrateable({ status: "invoiced", completed_at: at })).toBeNull();
    expect(unrateable({ status: "on_site", completed_at: null })).toMatch(/on_site.*once completed/);
    expect(unrateable({ status: "cancelled", completed_at: null })).toMatch(/cancelled/);
    expect(unrateable({ status: "cancelled", completed_at: at })).toMatch(/cancelled/);
  });

  it("keeps a rating editable for 14 days after it was first given", () => {
    expect(editableUntil("2026-06-01T12:00:00.000Z")).toBe("2026-06-15T12:00:00.000Z");
  });
});
