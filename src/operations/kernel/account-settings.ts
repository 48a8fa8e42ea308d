// An account's setting of one mode (what its jobs need before completion, its invoice policy, its policy
// on counter-offers), set by its key in one write: the row as it was read in the transaction, the audit
// record of the new values and the previous ones, and the row stored with that record's seal.

import type { AuditKind } from "../../audit/kinds.js";
import { sealRecord } from "../../audit/record.js";
import type { WriteTx } from "../../storage/store.js";
import { type OperationContext, principalOf } from "./operation.js";

/** What every stored setting carries besides its values. */
interface SettingRow {
  account_id: string;
  livemode: boolean;
  updated_at: string;
  updated_by: string;
  seal: string;
}

/**
 * Sets the caller's setting: `values` from what was stored (undefined: never set), sealed as `kind` with
 * `previous` (the same keys, as they were), then stored by `write`. Answers the stored row.
 */
export async function setAccountSetting<V extends object>(
  ctx: OperationContext,
  setting: {
    kind: AuditKind;
    read(accountId: string, livemode: boolean, tx: WriteTx): Promise<(V & SettingRow) | undefined>;
    values(before: V | undefined): V;
    write(row: V & SettingRow, tx: WriteTx): Promise<void>;
  },
): Promise<V & SettingRow> {
  const principal = principalOf(ctx);
  const { store } = ctx.services;
  const at = ctx.services.now().toISOString();
  const actor = `key:${principal.keyId}` as const;
  return store.write(async (tx) => {
    const before = await setting.read(principal.accountId, principal.livemode, tx);
    const values = setting.values(before);
    const previous = before
      ? Object.fromEntries(Object.keys(values).map((k) => [k, (before as Record<string, unknown>)[k]]))
      : null;
    const entry = sealRecord({
      kind: setting.kind,
      at,
      accountId: principal.accountId,
      livemode: principal.livemode,
      orderId: null,
      actor,
      data: { ...values, previous },
    });
    const row = {
      ...values,
      account_id: principal.accountId,
      livemode: principal.livemode,
      updated_at: at,
      updated_by: actor,
      seal: entry.seal,
    };
    await setting.write(row, tx);
    tx.appendAudit(entry);
    return row;
  });
}
