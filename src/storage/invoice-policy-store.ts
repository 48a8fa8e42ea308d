// Each account's invoice policy per mode (issue 33): the amount below which an invoice with no flags is
// approved at once by the service; absent until the account sets it (nothing is auto-approved then).

import type { Kysely } from "kysely";
import type { Database } from "./schema.js";
import type { InvoicePolicyRow, InvoicePolicyStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

export class KyselyInvoicePolicyStore implements InvoicePolicyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async get(accountId: string, livemode: boolean, tx?: WriteTx): Promise<InvoicePolicyRow | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("invoice_policies")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      ...row,
      livemode: row.livemode === 1,
      auto_approve_below_cents:
        row.auto_approve_below_cents === null ? null : Number(row.auto_approve_below_cents),
    };
  }

  async set(row: InvoicePolicyRow, tx: WriteTx): Promise<void> {
    const values = { ...row, livemode: row.livemode ? 1 : 0 };
    await trxOf(tx, this.db)
      .insertInto("invoice_policies")
      .values(values)
      .onConflict((oc) =>
        oc.columns(["account_id", "livemode"]).doUpdateSet({
          auto_approve_below_cents: values.auto_approve_below_cents,
          updated_at: values.updated_at,
          updated_by: values.updated_by,
          seal: values.seal,
        }),
      )
      .execute();
  }
}
