// Idempotency records: a key's stored answer, claimed in the transaction of the effect it guards, found
// while it lives (24 h), purged after.

import type { Kysely } from "kysely";
import type { Database, IdempotencyKeysTable } from "./schema.js";
import type { IdempotencyStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

export class KyselyIdempotencyStore implements IdempotencyStore {
  constructor(private readonly db: Kysely<Database>) {}

  find(accountId: string, livemode: boolean, key: string, now: string) {
    return this.db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .where("idem_key", "=", key)
      .where("expires_at", ">", now)
      .executeTakeFirst();
  }

  async purgeExpired(now: string): Promise<number> {
    const result = await this.db
      .deleteFrom("idempotency_keys")
      .where("expires_at", "<=", now)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Stores a record unless a live (unexpired) one holds the key, in the write `tx`; whether it did. */
  async claim(row: IdempotencyKeysTable, now: string, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .insertInto("idempotency_keys")
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(["account_id", "livemode", "idem_key"])
          .doUpdateSet({
            request_hash: row.request_hash,
            response_status: row.response_status,
            response_body: row.response_body,
            order_id: row.order_id,
            created_at: row.created_at,
            expires_at: row.expires_at,
          })
          .where("idempotency_keys.expires_at", "<=", now),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }
}
