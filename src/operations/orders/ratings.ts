// Ratings (issue 33): the account that owns a completed order rates the job 1-5 on quality, timeliness,
// communication and value, with a comment (dispatch.order_rate): one rating per order, which the account
// may change for RATING_EDIT_DAYS after it first gave it. Each rating and each change is sealed in the
// order's audit log (order.rated) in the transaction that writes it and moves the contractor's tally, which
// the matcher's quality component reads, shrunk toward the contractor's pool rating (domain/ratings.ts).
// The account and the dispatch team read an order's rating (order.rating); a contractor reads only its
// own aggregate (contractor.ratings): how many and the means, never which account gave what. The record
// names no contractor, so it carries no disclosure for one, and a contractor's view of the order's audit
// records (contractor.audit) leaves it out.

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import {
  editableUntil,
  matchingRating,
  NO_RATINGS,
  type OrderRating,
  overallOf,
  RATING_COMMENT_MAX,
  RATING_EDIT_DAYS,
  RATING_MAX,
  RATING_MIN,
  RATING_PRIOR_WEIGHT,
  type RatingScores,
  type RatingTally,
  ratingMeans,
  unrateable,
} from "../../domain/ratings.js";
import { ApiError } from "../../errors.js";
import { contractorOf, defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { sealRef, sealRefSchema } from "../matching/decision-records.js";
import { orderFor } from "./attachment-access.js";
import { orderIdParam } from "./attachments.js";

const RATED = "order.rated";

const score = (name: string) =>
  z
    .number({ error: `${name} must be a whole number from ${RATING_MIN} to ${RATING_MAX}` })
    .int({ error: `${name} must be a whole number from ${RATING_MIN} to ${RATING_MAX}` })
    .min(RATING_MIN, { error: `${name} must be a whole number from ${RATING_MIN} to ${RATING_MAX}` })
    .max(RATING_MAX, { error: `${name} must be a whole number from ${RATING_MIN} to ${RATING_MAX}` });

const ratingSchema = z
  .object({
    order_id: z.string(),
    quality: z.number().int(),
    timeliness: z.number().int(),
    communication: z.number().int(),
    value: z.number().int(),
    overall: z.number().describe("The mean of the four scores, 2 decimals."),
    comment: z.string().nullable(),
    rated_at: z.iso.datetime().describe("When the rating was first given."),
    updated_at: z.iso.datetime().describe("When it was last changed (rated_at if never)."),
    edits: z.number().int().min(0).describe("How many times it was changed."),
    editable_until: z.iso
      .datetime()
      .describe(`Until when the account may change it (${RATING_EDIT_DAYS} days after rated_at).`),
    contractor_id: z
      .string()
      .optional()
      .describe("The contractor that did the job: for the dispatch team (the account reads its handle)."),
    contractor_ref: z.string().optional().describe("The account's handle of the contractor."),
    record: sealRefSchema.describe(`The audit record of its last change (${RATED}).`),
  })
  .meta({ id: "OrderRating" });

const meansSchema = z
  .object({
    quality: z.number(),
    timeliness: z.number(),
    communication: z.number(),
    value: z.number(),
    overall: z.number(),
  })
  .nullable()
  .describe("The mean of each score and of the overalls, 2 decimals; null while nobody has rated it.");

/** A contractor's ratings as a whole, for itself and the dispatch team: never who gave which. */
export const ratingAggregateSchema = z
  .object({
    count: z.number().int().min(0).describe("How many of its jobs accounts rated (all time)."),
    means: meansSchema,
    matching_rating: z
      .number()
      .describe(
        `The rating matching's quality component reads (0-5, 2 decimals): the accounts' overalls shrunk ` +
          `toward the contractor's pool rating as if that were ${RATING_PRIOR_WEIGHT} more ratings.`,
      ),
  })
  .meta({ id: "RatingAggregate" });

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** A contractor's aggregate from its tally and pool rating. */
export function ratingAggregate(
  poolRating: number,
  tally: RatingTally,
): z.input<typeof ratingAggregateSchema> {
  return {
    count: tally.count,
    means: ratingMeans(tally),
    matching_rating: round2(matchingRating({ rating: poolRating, ratings: tally })),
  };
}

function ratingView(ctx: OperationContext, r: OrderRating, role: "account" | "dispatcher") {
  return {
    order_id: r.orderId,
    ...r.scores,
    overall: round2(overallOf(r.scores)),
    comment: r.comment,
    rated_at: r.createdAt,
    updated_at: r.updatedAt,
    edits: r.edits,
    editable_until: editableUntil(r.createdAt),
    ...(role === "dispatcher"
      ? { contractor_id: r.contractorId }
      : { contractor_ref: ctx.services.refs.of(r.accountId, r.contractorId) }),
    record: sealRef(ctx.baseUrl, r.seal, RATED, r.updatedAt),
  };
}

const rateInput = z.strictObject({
  order_id: z.string().min(1).max(64).describe("Your completed order."),
  quality: score("quality").describe("The work itself, 1-5."),
  timeliness: score("timeliness").describe("Arrival and completion on time, 1-5."),
  communication: score("communication").describe("Keeping you informed, 1-5."),
  value: score("value").describe("The price for the work, 1-5."),
  comment: z
    .string()
    .trim()
    .max(RATING_COMMENT_MAX, { error: `comment is at most ${RATING_COMMENT_MAX} characters` })
    .optional()
    .describe(`Optional, at most ${RATING_COMMENT_MAX} characters (trimmed; empty: none).`),
});

type RateInput = z.output<typeof rateInput>;

const sameRating = (r: OrderRating, s: RatingScores, comment: string | null) =>
  r.comment === comment &&
  r.scores.quality === s.quality &&
  r.scores.timeliness === s.timeliness &&
  r.scores.communication === s.communication &&
  r.scores.value === s.value;

/** Writes the account's rating of its order (or its change) with its sealed record; the rating after. */
async function rate(ctx: OperationContext, input: RateInput): Promise<OrderRating> {
  const principal = principalOf(ctx);
  const { store } = ctx.services;
  const at = ctx.services.now().toISOString();
  const actor = `key:${principal.keyId}` as const;
  const scores: RatingScores = {
    quality: input.quality,
    timeliness: input.timeliness,
    communication: input.communication,
    value: input.value,
  };
  const comment = input.comment ? input.comment : null;
  return store.write(
    async (tx) => {
      // The order's row locked: two ratings of one order at once write one after the other.
      const order = await store.orders.byId(input.order_id, tx, true);
      if (!order || order.account_id !== principal.accountId || order.livemode !== principal.livemode) {
        throw new ApiError("not_found", `No order ${input.order_id} for this API key.`);
      }
      const why = unrateable(order);
      if (why !== null || order.contractor_id === null) {
        throw new ApiError(
          "invalid_transition",
          `Order ${order.id} cannot be rated: ${why ?? "no contractor"}.`,
          {
            extra: { current_status: order.status },
          },
        );
      }
      const before = await store.ratings.byOrder(order.id, tx);
      // The same rating again (a retry) writes nothing, closed or not.
      if (before && sameRating(before, scores, comment)) return before;
      if (before && at >= editableUntil(before.createdAt)) {
        throw new ApiError(
          "rating_closed",
          `The rating of order ${order.id} could be changed until ${editableUntil(before.createdAt)} ` +
            `(${RATING_EDIT_DAYS} days after it was given).`,
          { extra: { editable_until: editableUntil(before.createdAt) } },
        );
      }
      const record = sealRecord({
        kind: RATED,
        at,
        accountId: order.account_id,
        livemode: order.livemode,
        orderId: order.id,
        actor,
        data: {
          ...scores,
          overall: overallOf(scores),
          comment,
          edit: before ? before.edits + 1 : 0,
          previous: before ? { ...before.scores, comment: before.comment } : null,
        },
        refOf: ctx.services.refs.forAccount(order.account_id),
      });
      const rating: OrderRating = {
        orderId: order.id,
        accountId: order.account_id,
        livemode: order.livemode,
        contractorId: before?.contractorId ?? order.contractor_id,
        scores,
        comment,
        createdAt: before?.createdAt ?? at,
        createdBy: before?.createdBy ?? actor,
        updatedAt: at,
        updatedBy: actor,
        edits: before ? before.edits + 1 : 0,
        seal: record.seal,
      };
      await store.ratings.save(rating, before, tx);
      tx.appendAudit(record);
      return rating;
    },
    { orders: [input.order_id] },
  );
}

export const orderRateOperation = defineOperation({
  id: "orderRate",
  name: "dispatch.order_rate",
  summary: "Rate a completed order, or change your rating",
  description:
    `Rates the work of one of your completed orders 1-${RATING_MAX} on quality, timeliness, communication ` +
    `and value, with an optional comment: one rating per order, which this call also changes for ` +
    `${RATING_EDIT_DAYS} days after it was first given (then 409 rating_closed, with editable_until). ` +
    "Sealed in the order's audit log (order.rated, with the previous scores on a change). The contractor " +
    "sees only its aggregate, never your rating; matching weighs its ratings (docs: Ratings). The same " +
    "rating sent again writes nothing. 404 for an order that is not yours; 409 invalid_transition " +
    "before the job is completed, or when it was cancelled or could not be completed.",
  access: "key",
  effect: "write",
  limit: "key",
  setsState: true,
  http: { method: "POST", path: "/api/dispatch/v1/orders/rate", input: "body" },
  problems: [404, 409],
  input: rateInput,
  output: ratingSchema,
  example: {
    order_id: "ord_0VberZOdAb12Cd34Ef56",
    quality: 5,
    timeliness: 4,
    communication: 5,
    value: 4,
    comment: "Fixed the leak first time, left the site clean.",
  },
  async handler(ctx, input) {
    return ratingView(ctx, await rate(ctx, input), "account");
  },
});

export const orderRatingOperation = defineOperation({
  id: "orderRating",
  name: "order.rating",
  summary: "Read an order's rating",
  description:
    "The account's rating of a completed order, for the account that owns the order and the dispatch " +
    "team: the four scores, their mean, the comment, when it was given and changed, until when it may " +
    "be changed, and its audit record. 409 invalid_transition while the work is not done (or when it was " +
    "cancelled), 404 while a completed order has no rating. A contractor reads its aggregate " +
    "(contractor.ratings), not who rated what: 403 key_kind_not_allowed.",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/orders/:order_id/rating", input: "params" },
  problems: [403, 409],
  input: z.strictObject({ order_id: orderIdParam }),
  output: ratingSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const { order, role } = await orderFor(ctx, input.order_id);
    if (role === "contractor") {
      throw new ApiError(
        "key_kind_not_allowed",
        "A contractor reads its ratings as a whole (GET /api/contractor/v1/ratings), not an order's rating.",
      );
    }
    const why = unrateable(order);
    if (why !== null) {
      throw new ApiError("invalid_transition", `Order ${order.id} has no rating: ${why}.`, {
        extra: { current_status: order.status },
      });
    }
    const rating = await ctx.services.store.ratings.byOrder(order.id);
    if (!rating) throw new ApiError("not_found", `Order ${order.id} has no rating yet.`);
    return ratingView(ctx, rating, role);
  },
});

export const contractorRatingsOperation = defineOperation({
  id: "contractorRatings",
  name: "contractor.ratings",
  summary: "Your ratings as a whole",
  description:
    "How many of your jobs accounts rated and the mean of each score (quality, timeliness, communication, " +
    "value) and of the overalls, over all time, with the rating matching weighs you by (your ratings " +
    `shrunk toward your pool rating as if that were ${RATING_PRIOR_WEIGHT} more). Never which account gave ` +
    "which rating.",
  access: "contractor",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/contractor/v1/ratings", input: "query" },
  input: z.strictObject({}),
  output: z
    .object({ contractor_id: z.string().describe("You."), ...ratingAggregateSchema.shape })
    .meta({ id: "ContractorRatings" }),
  example: {},
  async handler(ctx) {
    const { contractorId } = contractorOf(ctx);
    const [listing] = await ctx.services.store.contractors.listings([contractorId]);
    const tally = listing ? await ctx.services.store.ratings.tallyOf(contractorId) : NO_RATINGS;
    return { contractor_id: contractorId, ...ratingAggregate(Number(listing?.rating ?? 0), tally) };
  },
});
