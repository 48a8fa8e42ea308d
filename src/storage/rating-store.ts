// Ratings of completed orders (migration 0036): a rating's row mapped to and from its value here, and the
// rated contractor's tally moved in the same write transaction, which also seals the rating's record.

import { type Kysely, sql } from "kysely";
import { NO_RATINGS, type OrderRating, type RatingScores, type RatingTally } from "../domain/ratings.js";
import { tallyOfRow } from "./contractor-store.js";
import type { Database, OrderRatingsTable } from "./schema.js";
import type { RatingStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

function fromRow(row: OrderRatingsTable): OrderRating {
  return {
    orderId: row.order_id,
    accountId: row.account_id,
    livemode: Number(row.livemode) === 1,
    contractorId: row.contractor_id,
    scores: {
      quality: Number(row.quality),
      timeliness: Number(row.timeliness),
      communication: Number(row.communication),
      value: Number(row.value),
    },
    comment: row.comment,
    createdAt: row.created_at,
    createdBy: row.created_by,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
    edits: Number(row.edits),
    seal: row.seal,
  };
}

function toRow(r: OrderRating): OrderRatingsTable {
  return {
    order_id: r.orderId,
    account_id: r.accountId,
    livemode: r.livemode ? 1 : 0,
    contractor_id: r.contractorId,
    ...r.scores,
    comment: r.comment,
    created_at: r.createdAt,
    created_by: r.createdBy,
    updated_at: r.updatedAt,
    updated_by: r.updatedBy,
    edits: r.edits,
    seal: r.seal,
  };
}

export class KyselyRatingStore implements RatingStore {
  constructor(private readonly db: Kysely<Database>) {}

  async byOrder(orderId: string, tx?: WriteTx): Promise<OrderRating | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("order_ratings")
      .selectAll()
      .where("order_id", "=", orderId)
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  async save(rating: OrderRating, before: OrderRating | undefined, tx: WriteTx): Promise<void> {
    const db = trxOf(tx, this.db);
    const { order_id: _id, ...changes } = toRow(rating);
    if (before)
      await db.updateTable("order_ratings").set(changes).where("order_id", "=", rating.orderId).execute();
    else await db.insertInto("order_ratings").values(toRow(rating)).execute();
    await this.moveTally(db, rating.contractorId, rating.scores, before?.scores, rating.updatedAt);
  }

  async tallyOf(contractorId: string): Promise<RatingTally> {
    const row = await this.db
      .selectFrom("contractors")
      .select([
        "rating_count",
        "rating_quality_sum",
        "rating_timeliness_sum",
        "rating_communication_sum",
        "rating_value_sum",
      ])
      .where("id", "=", contractorId)
      .executeTakeFirst();
    return row ? tallyOfRow(row) : NO_RATINGS;
  }

  /** Adds a rating's scores to its contractor's tally, or the change from `before` to `after`. */
  private async moveTally(
    db: Kysely<Database>,
    contractorId: string,
    after: RatingScores,
    before: RatingScores | undefined,
    at: string,
  ): Promise<void> {
    const delta = (d: keyof RatingScores) => after[d] - (before?.[d] ?? 0);
    await db
      .updateTable("contractors")
      .set({
        rating_count: sql`rating_count + ${before ? 0 : 1}`,
        rating_quality_sum: sql`rating_quality_sum + ${delta("quality")}`,
        rating_timeliness_sum: sql`rating_timeliness_sum + ${delta("timeliness")}`,
        rating_communication_sum: sql`rating_communication_sum + ${delta("communication")}`,
        rating_value_sum: sql`rating_value_sum + ${delta("value")}`,
        rated_at: at,
      })
      .where("id", "=", contractorId)
      .execute();
  }
}
