// Accounts and their API keys: issuing (with its `key.issued` record in the same transaction), looking a
// key up by its hash, listing and revoking.

import type { Kysely } from "kysely";
import type { AuditEntry } from "../audit/record.js";
import type { Clock } from "../clock.js";
import type { KeyRole } from "../domain/key-roles.js";
import { newId } from "../ids.js";
import type { AuditStore } from "./audit-store.js";
import type { AccountsTable, ApiKeysTable, Database } from "./schema.js";
import type { KeyStore } from "./store.js";

export class KyselyKeyStore implements KeyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly audit: AuditStore,
    private readonly clock: Clock,
  ) {}

  findAccountByName(name: string): Promise<AccountsTable | undefined> {
    return this.db.selectFrom("accounts").selectAll().where("name", "=", name).executeTakeFirst();
  }

  async accountNames(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("accounts")
      .select(["id", "name"])
      .where("id", "in", [...new Set(ids)])
      .execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  async ensureAccount(name: string): Promise<AccountsTable> {
    const existing = await this.findAccountByName(name);
    if (existing) return existing;
    const row: AccountsTable = { id: newId("acct"), name, created_at: this.clock().toISOString() };
    await this.db
      .insertInto("accounts")
      .values(row)
      .onConflict((oc) => oc.column("name").doNothing())
      .execute();
    const stored = await this.findAccountByName(name);
    if (!stored) throw new Error(`account ${name} could not be created`);
    return stored;
  }

  async insert(row: ApiKeysTable, audit: AuditEntry): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto("api_keys").values(row).execute();
      await this.audit.writeEntries(trx, [audit]);
    });
  }

  findByHash(hash: string): Promise<ApiKeysTable | undefined> {
    return this.db.selectFrom("api_keys").selectAll().where("key_hash", "=", hash).executeTakeFirst();
  }

  list(accountName?: string) {
    let q = this.db
      .selectFrom("api_keys")
      .innerJoin("accounts", "accounts.id", "api_keys.account_id")
      .selectAll("api_keys")
      .select("accounts.name as account_name");
    if (accountName !== undefined) q = q.where("accounts.name", "=", accountName);
    return q.orderBy("api_keys.created_at").orderBy("api_keys.id").execute();
  }

  ofAccount(accountId: string, mode: "live" | "test"): Promise<ApiKeysTable[]> {
    return this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("mode", "=", mode)
      .where("kind", "=", "account")
      .orderBy("created_at")
      .orderBy("id")
      .execute();
  }

  setRole(
    id: string,
    accountId: string | null,
    role: { role: KeyRole; approval_limit_cents: number | null },
    audit: (before: ApiKeysTable) => AuditEntry,
  ): Promise<ApiKeysTable | "not_found"> {
    return this.db.transaction().execute(async (trx) => {
      let q = trx.selectFrom("api_keys").selectAll().where("id", "=", id).where("kind", "=", "account");
      if (accountId !== null) q = q.where("account_id", "=", accountId);
      const before = await q.executeTakeFirst();
      if (!before) return "not_found";
      await trx.updateTable("api_keys").set(role).where("id", "=", id).execute();
      await this.audit.writeEntries(trx, [audit(before)]);
      return { ...before, ...role };
    });
  }

  async revoke(
    id: string,
    at: string,
    audit: (key: ApiKeysTable) => AuditEntry,
  ): Promise<"revoked" | "already_revoked" | "not_found"> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
      if (!row) return "not_found";
      if (row.revoked_at !== null) return "already_revoked";
      const result = await trx
        .updateTable("api_keys")
        .set({ revoked_at: at })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return "already_revoked"; // revoked concurrently
      await this.audit.writeEntries(trx, [audit({ ...row, revoked_at: at })]);
      return "revoked";
    });
  }
}
