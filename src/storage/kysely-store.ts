// The one storage implementation, on Kysely. SQL stays dialect-neutral; the SQLite-specific part is only
// how the connection is opened (WAL, full sync) in sqlite.ts.

import {
  CompiledQuery,
  type Insertable,
  type Kysely,
  Migrator,
  type Selectable,
  sql,
  type Transaction,
} from "kysely";
import type { AuditEntry } from "../audit/record.js";
import type { Contractor } from "../domain/contractor.js";
import type { TradeCode } from "../domain/trades.js";
import type { StateCode } from "../domain/us-regions.js";
import { newId } from "../ids.js";
import { AuditStore } from "./audit-store.js";
import type { Dialect } from "./dialect.js";
import { EvalsStore } from "./evals-store.js";
import { GroupCommitter } from "./group-commit.js";
import { migrationProvider } from "./migrations/all-migrations.js";
import { commitOrderChange, type WriterTx } from "./order-writer.js";
import { PreparedInsert } from "./prepared-insert.js";
import type {
  AccountsTable,
  ApiKeysTable,
  ContractorsTable,
  Database,
  IdempotencyKeysTable,
  NteRequestsTable,
  OfferStatus,
  OffersTable,
  OrdersTable,
  QuotesTable,
} from "./schema.js";
import type { NewContractor, OrderQuery, Store, WriteTx } from "./store.js";
import { WebhookStore } from "./webhook-store.js";

function toContractor(row: Selectable<ContractorsTable>): Contractor {
  return {
    id: row.id,
    pool: row.pool,
    trades: JSON.parse(row.trades) as TradeCode[],
    states: JSON.parse(row.states) as StateCode[],
    lat: row.lat,
    lon: row.lon,
    serviceRadiusMiles: row.service_radius_miles,
    hourlyRateCents: Number(row.hourly_rate_cents),
    emergencyCapable: row.emergency_capable === 1,
    maxActiveJobs: row.max_active_jobs,
    rating: row.rating,
    responseMinutes: row.response_minutes,
    active: row.active === 1,
    excluded: row.excluded === 1,
  };
}

function toRow(c: NewContractor, now: string): Insertable<ContractorsTable> {
  return {
    id: c.id,
    pool: c.pool,
    external_ref: c.externalRef,
    name: c.name,
    email: c.email,
    phone: c.phone,
    trades: JSON.stringify(c.trades),
    states: JSON.stringify(c.states),
    home_zip: c.homeZip,
    lat: c.lat,
    lon: c.lon,
    service_radius_miles: c.serviceRadiusMiles,
    hourly_rate_cents: c.hourlyRateCents,
    emergency_capable: c.emergencyCapable ? 1 : 0,
    max_active_jobs: c.maxActiveJobs,
    rating: c.rating,
    response_minutes: c.responseMinutes,
    active: c.active ? 1 : 0,
    excluded: c.excluded ? 1 : 0,
    insurance_verified_until: c.insuranceVerifiedUntil ?? null,
    license_verified_until: c.licenseVerifiedUntil ?? null,
    created_at: now,
    updated_at: now,
  };
}

interface Inserts {
  orders: PreparedInsert<"orders">;
  quotes: PreparedInsert<"quotes">;
  offers: PreparedInsert<"offers">;
  /** The capacity updates, compiled once: building a query costs more than running it. */
  reserve: (contractorId: string) => CompiledQuery;
  release: (contractorId: string) => CompiledQuery;
}

const ID_SLOT = "\u0000id";

/** A compiled query run again with the parameter compiled as ID_SLOT replaced by `id`. */
function withId(compiled: CompiledQuery): (id: string) => CompiledQuery {
  return (id) =>
    CompiledQuery.raw(
      compiled.sql,
      compiled.parameters.map((p) => (p === ID_SLOT ? id : p)),
    );
}

/**
 * The write handle of one transaction. Plain inserts have no answer to wait for, so they are gathered
 * and written together by `flush` just before COMMIT: a group commit of many orders then costs a few
 * statements, not one per order. Conditional writes (capacity, idempotency, an order's change) run at
 * once: their outcome steers the write.
 */
function writeTx(
  trx: Transaction<Database>,
  inserts: Inserts,
  stores: { audit: AuditStore; webhooks: WebhookStore },
  dialect: Dialect,
): WriteTx & { flush(): Promise<void> } {
  const quotes: QuotesTable[] = [];
  const buffered: WriterTx["buffered"] = { orders: [], offers: [], audit: [], events: [] };
  const writer: WriterTx = {
    trx,
    buffered,
    async reserve(contractorId) {
      const result = await trx.executeQuery(inserts.reserve(contractorId));
      return Number(result.numAffectedRows ?? 0n) > 0;
    },
    async release(contractorId) {
      await trx.executeQuery(inserts.release(contractorId));
    },
  };
  // Whether an account has a default webhook endpoint, asked once per account and mode per transaction.
  const defaults = new Map<string, Promise<boolean>>();
  return {
    commitOrderChange(change) {
      return commitOrderChange(writer, change);
    },
    hasDefaultEndpoint(accountId, livemode) {
      const scope = `${livemode ? 1 : 0}|${accountId}`;
      let known = defaults.get(scope);
      if (known === undefined) {
        known = stores.webhooks.hasDefaultEndpoint(trx, accountId, livemode);
        defaults.set(scope, known);
      }
      return known;
    },
    appendAudit(entry) {
      buffered.audit.push(entry);
    },
    async insertOrder(row) {
      buffered.orders.push(row);
    },
    async recordDispatchLatency(orderId, latencyMs) {
      await trx
        .updateTable("orders")
        .set({ dispatch_latency_ms: latencyMs })
        .where("id", "=", orderId)
        .where("dispatch_latency_ms", "is", null)
        .execute();
    },
    reserveContractor: writer.reserve,
    releaseContractor: writer.release,
    enqueueWebhook(row) {
      buffered.events.push(row);
    },
    orderById(id, lock = false) {
      const query = trx.selectFrom("orders").selectAll().where("id", "=", id);
      // PostgreSQL: the row stays locked until COMMIT, so the command decides on a state nobody else can
      // change before it is written (SQLite has one writer: a transaction sees no other).
      return (lock && dialect === "postgres" ? query.forUpdate() : query).executeTakeFirst();
    },
    offerById(id) {
      return trx.selectFrom("offers").selectAll().where("id", "=", id).executeTakeFirst();
    },
    nteRequestById(id) {
      return trx.selectFrom("nte_requests").selectAll().where("id", "=", id).executeTakeFirst();
    },
    nteRequestsOfOrder(orderId) {
      return trx
        .selectFrom("nte_requests")
        .selectAll()
        .where("order_id", "=", orderId)
        .orderBy("created_at")
        .execute();
    },
    offersOfOrder(orderId) {
      return trx
        .selectFrom("offers")
        .selectAll()
        .where("order_id", "=", orderId)
        .orderBy("attempt")
        .execute();
    },
    async contractorStanding(id) {
      const row = await trx
        .selectFrom("contractors")
        .select(["pool", "active", "excluded"])
        .where("id", "=", id)
        .executeTakeFirst();
      return row
        ? { pool: row.pool, active: Number(row.active) === 1, excluded: Number(row.excluded) === 1 }
        : undefined;
    },
    async insertQuote(row) {
      quotes.push(row);
    },
    async flush() {
      await inserts.orders.run(trx, buffered.orders);
      await inserts.quotes.run(trx, quotes);
      await inserts.offers.run(trx, buffered.offers);
      await stores.webhooks.writeEvents(trx, buffered.events);
      await stores.audit.writeEntries(trx, buffered.audit);
    },
    async claimIdempotency(row: IdempotencyKeysTable, now: string) {
      const result = await trx
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
    },
  };
}

const CHUNK = 500;
/** A deferred write waits this long at most for a batch to ride along with (Store.writeDeferred). */
const DEFERRED_WRITE_MAX_DELAY_MS = 1_000;

export class KyselyStore implements Store {
  private readonly committer: GroupCommitter<WriteTx>;
  readonly audit: AuditStore;
  readonly evals: EvalsStore;
  readonly webhooks: WebhookStore;

  constructor(
    readonly db: Kysely<Database>,
    readonly dialect: Dialect,
    /** PostgreSQL schema the store works in, when not the default (the migration tables live there too). */
    readonly schema?: string,
    /** Group commits that may run at once (1 for SQLite's single writer). */
    commitLanes = 1,
  ) {
    const inserts: Inserts = {
      orders: new PreparedInsert("orders", dialect),
      quotes: new PreparedInsert("quotes", dialect),
      offers: new PreparedInsert("offers", dialect),
      reserve: withId(
        db
          .updateTable("contractors")
          .set((eb) => ({ active_jobs: eb("active_jobs", "+", 1) }))
          .where("id", "=", ID_SLOT)
          // Eligibility is decided where the capacity is taken: a contractor deactivated or excluded
          // meanwhile is not offered work, whatever a stored ranking says.
          .where("active", "=", 1)
          .where("excluded", "=", 0)
          .whereRef("active_jobs", "<", "max_active_jobs")
          .compile(),
      ),
      release: withId(
        db
          .updateTable("contractors")
          .set((eb) => ({ active_jobs: eb("active_jobs", "-", 1) }))
          .where("id", "=", ID_SLOT)
          .where("active_jobs", ">", 0)
          .compile(),
      ),
    };
    this.audit = new AuditStore(db, dialect);
    this.evals = new EvalsStore(db, dialect);
    this.webhooks = new WebhookStore(db, dialect);
    this.committer = new GroupCommitter<WriteTx>(
      (work) =>
        this.db.transaction().execute(async (trx) => {
          const tx = writeTx(trx, inserts, this, dialect);
          const result = await work(tx);
          await tx.flush();
          return result;
        }),
      256,
      commitLanes,
    );
  }

  queueDepth(): number {
    return this.committer.depth;
  }

  async migrate(): Promise<void> {
    // On PostgreSQL the migration tables live in the schema the store works in (its search_path):
    // Kysely otherwise finds another schema's migration tables in the same database and skips its own.
    const schema =
      this.dialect === "postgres"
        ? (this.schema ??
          (await sql<{ s: string }>`select current_schema() as s`.execute(this.db)).rows[0]?.s)
        : undefined;
    const migrator = new Migrator({
      db: this.db,
      provider: migrationProvider(this.dialect),
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === "Error");
    if (error || failed) {
      throw new Error(`migration failed${failed ? ` at ${failed.migrationName}` : ""}: ${String(error)}`);
    }
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.committer.flushDeferred();
    await this.committer.flushed();
    await this.db.destroy();
  }

  write<T>(work: (tx: WriteTx) => Promise<T>): Promise<T> {
    return this.committer.submit(work);
  }

  writeDeferred<T>(work: (tx: WriteTx) => Promise<T>): Promise<T> {
    return this.committer.defer(work, DEFERRED_WRITE_MAX_DELAY_MS);
  }

  flushDeferred(): Promise<void> {
    return this.committer.flushDeferred();
  }

  findAccountByName(name: string): Promise<AccountsTable | undefined> {
    return this.db.selectFrom("accounts").selectAll().where("name", "=", name).executeTakeFirst();
  }

  async ensureAccount(name: string): Promise<AccountsTable> {
    const existing = await this.findAccountByName(name);
    if (existing) return existing;
    const row: AccountsTable = { id: newId("acct"), name, created_at: new Date().toISOString() };
    await this.db
      .insertInto("accounts")
      .values(row)
      .onConflict((oc) => oc.column("name").doNothing())
      .execute();
    const stored = await this.findAccountByName(name);
    if (!stored) throw new Error(`account ${name} could not be created`);
    return stored;
  }

  async insertApiKey(row: ApiKeysTable, audit: AuditEntry): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto("api_keys").values(row).execute();
      await this.audit.writeEntries(trx, [audit]);
    });
  }

  findApiKeyByHash(hash: string): Promise<ApiKeysTable | undefined> {
    return this.db.selectFrom("api_keys").selectAll().where("key_hash", "=", hash).executeTakeFirst();
  }

  listApiKeys(accountName?: string) {
    let q = this.db
      .selectFrom("api_keys")
      .innerJoin("accounts", "accounts.id", "api_keys.account_id")
      .selectAll("api_keys")
      .select("accounts.name as account_name");
    if (accountName !== undefined) q = q.where("accounts.name", "=", accountName);
    return q.orderBy("api_keys.created_at").orderBy("api_keys.id").execute();
  }

  async revokeApiKey(
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

  async countContractors(pool: "sandbox" | "live"): Promise<number> {
    const row = await this.db
      .selectFrom("contractors")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("pool", "=", pool)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insertContractors(rows: NewContractor[], audit: AuditEntry): Promise<void> {
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      await this.audit.writeEntries(trx, [audit]);
      for (let i = 0; i < rows.length; i += CHUNK) {
        // Ids are deterministic for the sandbox pool: a second process seeding at the same time skips them.
        await trx
          .insertInto("contractors")
          .values(rows.slice(i, i + CHUNK).map((c) => toRow(c, now)))
          .onConflict((oc) => oc.column("id").doNothing())
          .execute();
      }
    });
  }

  async upsertLiveContractors(
    rows: NewContractor[],
    audit: (counts: { inserted: number; updated: number }) => AuditEntry,
  ): Promise<{ inserted: number; updated: number }> {
    const now = new Date().toISOString();
    let inserted = 0;
    let updated = 0;
    await this.db.transaction().execute(async (trx) => {
      for (const c of rows) {
        const existing = await trx
          .selectFrom("contractors")
          .select("id")
          .where("pool", "=", "live")
          .where("external_ref", "=", c.externalRef)
          .executeTakeFirst();
        if (existing) {
          const { id: _id, created_at: _created, ...changes } = toRow(c, now);
          await trx.updateTable("contractors").set(changes).where("id", "=", existing.id).execute();
          updated++;
        } else {
          await trx.insertInto("contractors").values(toRow(c, now)).execute();
          inserted++;
        }
      }
      await this.audit.writeEntries(trx, [audit({ inserted, updated })]);
    });
    return { inserted, updated };
  }

  async hasContractor(id: string): Promise<boolean> {
    const row = await this.db.selectFrom("contractors").select("id").where("id", "=", id).executeTakeFirst();
    return row !== undefined;
  }

  async contractorState(id: string) {
    const row = await this.db
      .selectFrom("contractors")
      .select(["pool", "active", "excluded"])
      .where("id", "=", id)
      .executeTakeFirst();
    return row
      ? { pool: row.pool, active: Number(row.active) === 1, excluded: Number(row.excluded) === 1 }
      : undefined;
  }

  async setContractorFlags(id: string, flags: { active?: boolean; excluded?: boolean }, audit: AuditEntry) {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable("contractors")
        .set({
          ...(flags.active === undefined ? {} : { active: flags.active ? 1 : 0 }),
          ...(flags.excluded === undefined ? {} : { excluded: flags.excluded ? 1 : 0 }),
          updated_at: new Date().toISOString(),
        })
        .where("id", "=", id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await this.audit.writeEntries(trx, [audit]);
      return true;
    });
  }

  async loadContractors(): Promise<Contractor[]> {
    const rows = await this.db.selectFrom("contractors").selectAll().orderBy("id").execute();
    return rows.map(toContractor);
  }

  async contractorsVersion(): Promise<string> {
    const row = await this.db
      .selectFrom("contractors")
      .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.max("updated_at").as("latest")])
      .executeTakeFirstOrThrow();
    return `${Number(row.n)}|${row.latest ?? ""}`;
  }

  async activeJobCounts(): Promise<Array<[string, number]>> {
    const rows = await this.db
      .selectFrom("contractors")
      .select(["id", "active_jobs"])
      .where("active_jobs", ">", 0)
      .execute();
    return rows.map((r) => [r.id, Number(r.active_jobs)]);
  }

  findOrder(id: string, accountId: string, livemode: boolean): Promise<OrdersTable | undefined> {
    return this.db
      .selectFrom("orders")
      .selectAll()
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .executeTakeFirst();
  }

  dueOffers(now: string, limit: number): Promise<OffersTable[]> {
    return this.db
      .selectFrom("offers")
      .selectAll()
      .where("status", "=", "pending")
      .where("deadline_at", "<=", now)
      .orderBy("deadline_at")
      .limit(limit)
      .execute();
  }

  sandboxOffers(cutoff: string, limit: number): Promise<OffersTable[]> {
    return this.db
      .selectFrom("offers")
      .selectAll()
      .where("status", "=", "pending")
      .where("livemode", "=", 0)
      .where("offered_at", "<=", cutoff)
      .orderBy("offered_at")
      .limit(limit)
      .execute();
  }

  sandboxOrdersIn(statuses: string[], cutoff: string, limit: number): Promise<OrdersTable[]> {
    return this.db
      .selectFrom("orders")
      .selectAll()
      .where("livemode", "=", 0)
      .where("status", "in", statuses)
      .where("updated_at", "<=", cutoff)
      .orderBy("updated_at")
      .limit(limit)
      .execute();
  }

  contractorOffers(contractorId: string, status: OfferStatus, limit: number): Promise<OffersTable[]> {
    return this.db
      .selectFrom("offers")
      .selectAll()
      .where("contractor_id", "=", contractorId)
      .where("status", "=", status)
      .orderBy("offered_at", "desc")
      .limit(limit)
      .execute();
  }

  contractorOrders(contractorId: string, statuses: string[], limit: number): Promise<OrdersTable[]> {
    return this.db
      .selectFrom("orders")
      .selectAll()
      .where("contractor_id", "=", contractorId)
      .where("status", "in", statuses)
      .orderBy("created_at", "desc")
      .limit(limit)
      .execute();
  }

  nteRequests(orderId: string): Promise<NteRequestsTable[]> {
    return this.db
      .selectFrom("nte_requests")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("created_at")
      .execute();
  }

  ordersByIds(ids: string[]): Promise<OrdersTable[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom("orders").selectAll().where("id", "in", ids).execute();
  }

  listOrders(q: OrderQuery): Promise<OrdersTable[]> {
    let query = this.db
      .selectFrom("orders")
      .selectAll()
      .where("livemode", "=", q.livemode ? 1 : 0);
    if (q.accountId !== undefined) query = query.where("account_id", "=", q.accountId);
    if (q.status !== undefined) query = query.where("status", "=", q.status);
    if (q.referenceId !== undefined) query = query.where("reference_id", "=", q.referenceId);
    if (q.since !== undefined) query = query.where("created_at", ">=", q.since);
    if (q.until !== undefined) query = query.where("created_at", "<", q.until);
    const before = q.before;
    if (before) {
      query = query.where((eb) =>
        eb.or([
          eb("created_at", "<", before.createdAt),
          eb.and([eb("created_at", "=", before.createdAt), eb("id", "<", before.id)]),
        ]),
      );
    }
    // Served by orders_account_idx (account_id, livemode, created_at).
    return query.orderBy("created_at", "desc").orderBy("id", "desc").limit(q.limit).execute();
  }

  findIdempotency(accountId: string, livemode: boolean, key: string, now: string) {
    return this.db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .where("idem_key", "=", key)
      .where("expires_at", ">", now)
      .executeTakeFirst();
  }

  async purgeExpiredIdempotency(now: string): Promise<number> {
    const result = await this.db
      .deleteFrom("idempotency_keys")
      .where("expires_at", "<=", now)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
