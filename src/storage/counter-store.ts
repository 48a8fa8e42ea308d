// Counter-offers (migration 0038): the rows of contractors' counters, mapped to and from the domain's
// CounterOffer here (written only by the order's writer, with the change that makes or settles one), and
// each account's policy on them, written in the transaction that seals its change.

import type { Kysely } from "kysely";
import type { CounterOffer } from "../domain/orders/order.js";
import type { CounterOffersTable, Database } from "./schema.js";
import type { CounterPolicyRow, CounterStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

function fromRow(row: CounterOffersTable): CounterOffer {
  return {
    ...row,
    livemode: row.livemode === 1,
    price_cents: row.price_cents === null ? null : Number(row.price_cents),
  };
}

export class KyselyCounterStore implements CounterStore {
  constructor(private readonly db: Kysely<Database>) {}

  async ofOrder(orderId: string, tx?: WriteTx): Promise<CounterOffer[]> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("counter_offers")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("created_at")
      .orderBy("offer_id")
      .execute();
    return rows.map(fromRow);
  }

  async byOffers(offerIds: readonly string[]): Promise<CounterOffer[]> {
    if (offerIds.length === 0) return [];
    const rows = await this.db
      .selectFrom("counter_offers")
      .selectAll()
      .where("offer_id", "in", [...offerIds])
      .execute();
    return rows.map(fromRow);
  }

  async due(now: string, limit: number): Promise<CounterOffer[]> {
    const rows = await this.db
      .selectFrom("counter_offers")
      .selectAll()
      .where("status", "=", "pending")
      .where("deadline_at", "<=", now)
      .orderBy("deadline_at")
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  async policy(accountId: string, livemode: boolean, tx?: WriteTx): Promise<CounterPolicyRow | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("counter_policies")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      ...row,
      livemode: row.livemode === 1,
      auto_accept_within_pct: row.auto_accept_within_pct === null ? null : Number(row.auto_accept_within_pct),
    };
  }

  async setPolicy(row: CounterPolicyRow, tx: WriteTx): Promise<void> {
    const values = { ...row, livemode: row.livemode ? 1 : 0 };
    await trxOf(tx, this.db)
      .insertInto("counter_policies")
      .values(values)
      .onConflict((oc) =>
        oc.columns(["account_id", "livemode"]).doUpdateSet({
          auto_accept_within_pct: values.auto_accept_within_pct,
          updated_at: values.updated_at,
          updated_by: values.updated_by,
          seal: values.seal,
        }),
      )
      .execute();
  }
}
