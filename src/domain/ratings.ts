// Ratings of completed work (issue 33): the account that owns an order rates the job 1-5 on four
// dimensions, once per order, editable for RATING_EDIT_DAYS after the first rating. A contractor's ratings
// are kept as a tally (how many, and the sum of each dimension), from which its aggregate and the rating
// matching scores it by are derived. Pure.
//
// The matching rating is a Bayesian average that shrinks the accounts' ratings toward a prior, so that a
// contractor with one or two ratings is not ranked on them alone:
//   shrunk = (RATING_PRIOR_WEIGHT x prior + sum of the ratings' overalls) / (RATING_PRIOR_WEIGHT + count)
// The prior is the contractor's own pool rating (`Contractor.rating`, the quality record its pool file
// carries, 0-5): it is what the service knew of the contractor before any account rated it, so a
// contractor nobody rated is scored exactly as before ratings existed, and each rating moves it by at most
// 1 / (RATING_PRIOR_WEIGHT + count) of the distance to that rating's overall. With the weight 5, five
// ratings weigh as much as the prior.

import type { OrderStatus } from "./orders/statuses.js";

const RATING_DIMENSIONS = ["quality", "timeliness", "communication", "value"] as const;
export type RatingDimension = (typeof RATING_DIMENSIONS)[number];

export const RATING_MIN = 1;
export const RATING_MAX = 5;
/** Days after the first rating during which the account may change it. */
export const RATING_EDIT_DAYS = 14;
export const RATING_COMMENT_MAX = 2000;
/** The pseudo-count of the prior in the shrunk rating (see above). */
export const RATING_PRIOR_WEIGHT = 5;

/** One rating's scores, each an integer from 1 to 5. */
export type RatingScores = Readonly<Record<RatingDimension, number>>;

/** A contractor's ratings summed: how many, and each dimension's total. */
export interface RatingTally extends RatingScores {
  readonly count: number;
}

export const NO_RATINGS: RatingTally = { count: 0, quality: 0, timeliness: 0, communication: 0, value: 0 };

/** One rating's overall: the mean of its four scores. */
export function overallOf(s: RatingScores): number {
  return (s.quality + s.timeliness + s.communication + s.value) / RATING_DIMENSIONS.length;
}

/** The tally with a rating added (`before` absent) or changed from `before` to `after`. */
export function tallyWith(tally: RatingTally, after: RatingScores, before?: RatingScores): RatingTally {
  const delta = (d: RatingDimension) => after[d] - (before?.[d] ?? 0);
  return {
    count: tally.count + (before ? 0 : 1),
    quality: tally.quality + delta("quality"),
    timeliness: tally.timeliness + delta("timeliness"),
    communication: tally.communication + delta("communication"),
    value: tally.value + delta("value"),
  };
}

/** The sum of the tally's ratings' overalls. */
function overallSum(t: RatingTally): number {
  return (t.quality + t.timeliness + t.communication + t.value) / RATING_DIMENSIONS.length;
}

/** The Bayesian average of the tally's overalls toward `prior` (0-5), with RATING_PRIOR_WEIGHT. */
export function shrunkRating(prior: number, tally: RatingTally, weight = RATING_PRIOR_WEIGHT): number {
  return (weight * prior + overallSum(tally)) / (weight + tally.count);
}

/** The rating matching scores a contractor by (0-5): its accounts' ratings shrunk toward its pool rating. */
export function matchingRating(c: { readonly rating: number; readonly ratings?: RatingTally }): number {
  return c.ratings === undefined || c.ratings.count === 0 ? c.rating : shrunkRating(c.rating, c.ratings);
}

/** Means of a tally, 2 decimals; null for a contractor nobody rated. */
export function ratingMeans(t: RatingTally): Record<RatingDimension | "overall", number> | null {
  if (t.count === 0) return null;
  const mean = (sum: number) => Math.round((sum / t.count) * 100) / 100;
  return {
    quality: mean(t.quality),
    timeliness: mean(t.timeliness),
    communication: mean(t.communication),
    value: mean(t.value),
    overall: mean(overallSum(t)),
  };
}

/** Why an order cannot be rated now (its status), or null when it can: the work must be done, that is
 * completed (completed_at set) and neither cancelled nor left cannot_complete since. Decided on
 * completed_at rather than a list of statuses, so that statuses after completion (invoiced and whatever
 * follows it) stay rateable. */
export function unrateable(order: { status: OrderStatus; completed_at: string | null }): string | null {
  if (order.completed_at === null) return `the job is ${order.status}: it can be rated once completed`;
  if (order.status === "cancelled" || order.status === "cannot_complete")
    return `the job is ${order.status}: only completed work is rated`;
  return null;
}

/** When the rating first given at `ratedAt` stops being editable (ISO 8601). */
export function editableUntil(ratedAt: string): string {
  return new Date(Date.parse(ratedAt) + RATING_EDIT_DAYS * 86_400_000).toISOString();
}

/** An account's rating of one order. */
export interface OrderRating {
  readonly orderId: string;
  readonly accountId: string;
  readonly livemode: boolean;
  /** The contractor that did the job (the order's, when it was rated). */
  readonly contractorId: string;
  readonly scores: RatingScores;
  readonly comment: string | null;
  readonly createdAt: string;
  readonly createdBy: string;
  readonly updatedAt: string;
  readonly updatedBy: string;
  /** How many times it was changed after it was first given. */
  readonly edits: number;
  /** The seal of the audit record of its last change. */
  readonly seal: string;
}
