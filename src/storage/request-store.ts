// Requests (migration 0045; operations/requests/): sites' request links, the requests reported at sites,
// the accounts' request policies, and the one read of orders a request's duplicate rule needs (a site's
// open orders of a trade).

import type { Kysely } from "kysely";
import type { OrderStatus } from "../domain/orders/statuses.js";
import { OPEN_ORDER_STATUSES } from "../domain/requests/request.js";
import type { TradeCode } from "../domain/trades.js";
import type {
  Database,
  RequestLinksTable,
  RequestPhotosTable,
  RequestPoliciesTable,
  RequestsTable,
} from "./schema.js";
import type { RequestDecision, RequestFilter, RequestStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

export class KyselyRequestStore implements RequestStore {
  constructor(private readonly db: Kysely<Database>) {}

  async liveLink(siteId: string, tx?: WriteTx): Promise<RequestLinksTable | undefined> {
    return trxOf(tx, this.db)
      .selectFrom("request_links")
      .selectAll()
      .where("site_id", "=", siteId)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
  }

  async linkById(id: string): Promise<RequestLinksTable | undefined> {
    return this.db.selectFrom("request_links").selectAll().where("id", "=", id).executeTakeFirst();
  }

  async insertLink(row: RequestLinksTable, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .insertInto("request_links")
      .values(row)
      .onConflict((oc) => oc.column("site_id").where("revoked_at", "is", null).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async revokeLink(id: string, at: string, by: string, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .updateTable("request_links")
      .set({ revoked_at: at, revoked_by: by })
      .where("id", "=", id)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insert(row: RequestsTable, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db).insertInto("requests").values(row).execute();
  }

  async byId(id: string, tx?: WriteTx): Promise<RequestsTable | undefined> {
    return trxOf(tx, this.db).selectFrom("requests").selectAll().where("id", "=", id).executeTakeFirst();
  }

  async list(filter: RequestFilter): Promise<RequestsTable[]> {
    let q = this.db
      .selectFrom("requests")
      .selectAll()
      .where("account_id", "=", filter.accountId)
      .where("livemode", "=", filter.livemode ? 1 : 0);
    if (filter.status !== undefined) q = q.where("status", "=", filter.status);
    if (filter.siteId !== undefined) q = q.where("site_id", "=", filter.siteId);
    if (filter.before !== undefined) q = q.where("id", "<", filter.before);
    return q.orderBy("id", "desc").limit(filter.limit).execute();
  }

  async decide(id: string, decision: RequestDecision, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .updateTable("requests")
      .set(decision)
      .where("id", "=", id)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async openOrdersAt(
    siteId: string,
    trade: TradeCode,
    tx?: WriteTx,
  ): Promise<Array<{ id: string; trade: TradeCode; status: OrderStatus; createdAt: string }>> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("order_sites")
      .innerJoin("orders", "orders.id", "order_sites.order_id")
      .select(["orders.id", "orders.trade", "orders.status", "orders.created_at"])
      .where("order_sites.site_id", "=", siteId)
      .where("orders.trade", "=", trade)
      .where("orders.status", "in", [...OPEN_ORDER_STATUSES])
      .orderBy("orders.created_at", "desc")
      .limit(20)
      .execute();
    return rows.map((r) => ({ id: r.id, trade: r.trade, status: r.status, createdAt: r.created_at }));
  }

  async policy(
    accountId: string,
    livemode: boolean,
    tx?: WriteTx,
  ): Promise<RequestPoliciesTable | undefined> {
    return trxOf(tx, this.db)
      .selectFrom("request_policies")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .executeTakeFirst();
  }

  async setPolicy(row: RequestPoliciesTable, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db)
      .insertInto("request_policies")
      .values(row)
      .onConflict((oc) =>
        oc.columns(["account_id", "livemode"]).doUpdateSet({
          mode: row.mode,
          updated_at: row.updated_at,
          updated_by: row.updated_by,
          seal: row.seal,
        }),
      )
      .execute();
  }

  /** Adds the photo at its position; false when that position was taken meanwhile (two at once). */
  async addPhoto(row: RequestPhotosTable, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .insertInto("request_photos")
      .values(row)
      .onConflict((oc) => oc.columns(["request_id", "position"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async photosOf(requestId: string, tx?: WriteTx): Promise<RequestPhotosTable[]> {
    return trxOf(tx, this.db)
      .selectFrom("request_photos")
      .selectAll()
      .where("request_id", "=", requestId)
      .orderBy("position")
      .execute();
  }
}
