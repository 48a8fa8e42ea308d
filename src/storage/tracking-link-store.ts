// Tracking links (migration 0043; operations/tracking/): their rows, and the one read of an order's
// history the public page needs that the order row does not keep (when its contractor set off).

import type { Kysely } from "kysely";
import type { Database, TrackingLinksTable } from "./schema.js";
import type { TrackingLinkStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

export class KyselyTrackingLinkStore implements TrackingLinkStore {
  constructor(private readonly db: Kysely<Database>) {}

  async live(orderId: string, tx?: WriteTx): Promise<TrackingLinksTable | undefined> {
    return trxOf(tx, this.db)
      .selectFrom("tracking_links")
      .selectAll()
      .where("order_id", "=", orderId)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
  }

  async byId(id: string): Promise<TrackingLinksTable | undefined> {
    return this.db.selectFrom("tracking_links").selectAll().where("id", "=", id).executeTakeFirst();
  }

  async ofOrder(orderId: string): Promise<TrackingLinksTable[]> {
    return this.db
      .selectFrom("tracking_links")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .execute();
  }

  async insert(row: TrackingLinksTable, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .insertInto("tracking_links")
      .values(row)
      .onConflict((oc) => oc.column("order_id").where("revoked_at", "is", null).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async revoke(id: string, at: string, by: string, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .updateTable("tracking_links")
      .set({ revoked_at: at, revoked_by: by })
      .where("id", "=", id)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async progressTimes(orderId: string): Promise<Array<{ at: string; record: string }>> {
    // The audit records of the order's progress reports (indexed by order): each names the status it
    // moved to (domain/orders/commands.ts reportProgress).
    return this.db
      .selectFrom("audit_records")
      .select(["created_at as at", "record"])
      .where("order_id", "=", orderId)
      .where("kind", "=", "order.status_changed")
      .orderBy("seq")
      .execute();
  }
}
