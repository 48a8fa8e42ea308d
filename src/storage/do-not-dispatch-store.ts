// Accounts' do-not-dispatch lists (migration 0034): an entry's row mapped to and from its value here.
// Each entry is written, and removed, inside the write transaction that seals its audit record.

import type { Kysely } from "kysely";
import type { DoNotDispatchEntry } from "../domain/do-not-dispatch.js";
import type { TradeCode } from "../domain/trades.js";
import type { Database, DoNotDispatchTable } from "./schema.js";
import type { DoNotDispatchStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

function fromRow(row: DoNotDispatchTable): DoNotDispatchEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    livemode: row.livemode === 1,
    contractorId: row.contractor_id,
    trades: row.trades === null ? null : (JSON.parse(row.trades) as TradeCode[]),
    reason: row.reason,
    createdAt: row.created_at,
    createdBy: row.created_by,
    seal: row.seal,
  };
}

function toRow(e: DoNotDispatchEntry): DoNotDispatchTable {
  return {
    id: e.id,
    account_id: e.accountId,
    livemode: e.livemode ? 1 : 0,
    contractor_id: e.contractorId,
    trades: e.trades === null ? null : JSON.stringify(e.trades),
    reason: e.reason,
    created_at: e.createdAt,
    created_by: e.createdBy,
    seal: e.seal,
    removed_at: null,
    removed_by: null,
    removal_reason: null,
  };
}

export class KyselyDoNotDispatchStore implements DoNotDispatchStore {
  constructor(private readonly db: Kysely<Database>) {}

  ofAccount(accountId: string, livemode: boolean, tx?: WriteTx): Promise<DoNotDispatchEntry[]> {
    return this.list({ livemode, accountId }, tx);
  }

  async list(
    filter: { livemode: boolean; accountId?: string | undefined; contractorId?: string | undefined },
    tx?: WriteTx,
  ): Promise<DoNotDispatchEntry[]> {
    let q = trxOf(tx, this.db)
      .selectFrom("do_not_dispatch")
      .selectAll()
      .where("livemode", "=", filter.livemode ? 1 : 0)
      .where("removed_at", "is", null);
    if (filter.accountId !== undefined) q = q.where("account_id", "=", filter.accountId);
    if (filter.contractorId !== undefined) q = q.where("contractor_id", "=", filter.contractorId);
    const rows = await q.orderBy("created_at").orderBy("id").execute();
    return rows.map(fromRow);
  }

  async byId(id: string, tx?: WriteTx): Promise<DoNotDispatchEntry | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("do_not_dispatch")
      .selectAll()
      .where("id", "=", id)
      .where("removed_at", "is", null)
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  async insert(entry: DoNotDispatchEntry, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db).insertInto("do_not_dispatch").values(toRow(entry)).execute();
  }

  async remove(id: string, at: string, by: string, reason: string, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .updateTable("do_not_dispatch")
      .set({ removed_at: at, removed_by: by, removal_reason: reason })
      .where("id", "=", id)
      .where("removed_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async version(): Promise<string> {
    const row = await this.db
      .selectFrom("do_not_dispatch")
      .select((eb) => [
        eb.fn.countAll().as("n"),
        eb.fn.count("removed_at").as("removed"),
        eb.fn.max("created_at").as("added_at"),
        eb.fn.max("removed_at").as("removed_at"),
      ])
      .executeTakeFirst();
    return row ? `${row.n}:${row.removed}:${row.added_at ?? ""}:${row.removed_at ?? ""}` : "0";
  }
}
