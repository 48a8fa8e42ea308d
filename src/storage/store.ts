// The storage port: everything the operations and the CLI need from persistence. One Kysely
// implementation (kysely-store.ts) serves SQLite and PostgreSQL.

import type { AuditEntry } from "../audit/record.js";
import type { Contractor } from "../domain/contractor.js";
import type { AuditPersistence } from "./audit-store.js";
import type { EvalsPersistence } from "./evals-store.js";
import type { CommitOutcome, CommittableChange } from "./order-writer.js";
import type {
  AccountsTable,
  ApiKeysTable,
  IdempotencyKeysTable,
  NteRequestsTable,
  OfferStatus,
  OffersTable,
  OrdersTable,
  QuotesTable,
  WebhookEventsTable,
} from "./schema.js";
import type { WebhookPersistence } from "./webhook-store.js";

export interface NewContractor extends Contractor {
  name: string;
  email: string | null;
  phone: string | null;
  homeZip: string | null;
  externalRef: string | null;
  /** Until when the contractor's insurance and license are verified (YYYY-MM-DD); absent: not verified. */
  insuranceVerifiedUntil?: string | null;
  licenseVerifiedUntil?: string | null;
}

/** Opaque write handle: what one group-committed transaction offers to a write. */
export interface OrderQuery {
  /** Unset: every account's orders (the dispatch team's view). */
  accountId?: string;
  livemode: boolean;
  status?: string;
  referenceId?: string;
  since?: string;
  until?: string;
  before?: { createdAt: string; id: string };
  limit: number;
}

/** The write handle of one group-committed transaction: the reads a command decides on, and the writes. */
export interface WriteTx {
  /** Commits an order's change (storage/order-writer.ts): all of it, or nothing and the reason why. */
  commitOrderChange(change: CommittableChange): Promise<CommitOutcome>;
  insertQuote(row: QuotesTable): Promise<void>;
  /** Inserts an order as it is (no change, no record: the writer's primitive, and fixtures'). */
  insertOrder(row: OrdersTable): Promise<void>;
  /**
   * Stores an order's dispatch latency, measured after its first offer committed (the one order column
   * written outside the order writer: see order-writer.ts). Once: a latency already stored stays.
   */
  recordDispatchLatency(orderId: string, latencyMs: number): Promise<void>;
  /** Takes one unit of an eligible contractor's capacity if it has any left; returns whether it did. */
  reserveContractor(contractorId: string): Promise<boolean>;
  /** Gives back a unit taken with reserveContractor. */
  releaseContractor(contractorId: string): Promise<void>;
  /** Writes a webhook event to the outbox with the transaction (whether it has a recipient is decided
   * before: webhooks/outbox.ts). */
  enqueueWebhook(row: WebhookEventsTable): void;
  /** Stores an idempotency record unless a live (unexpired) one exists; returns whether it was stored. */
  claimIdempotency(row: IdempotencyKeysTable, now: string): Promise<boolean>;
  /** Records a sealed audit entry in this transaction: it commits, or fails, with the decision. */
  appendAudit(entry: AuditEntry): void;
  /** Whether the account has a default webhook endpoint in this mode, as it is in this transaction. */
  hasDefaultEndpoint(accountId: string, livemode: number): Promise<boolean>;
  /** An order; with `lock`, locked until COMMIT where the store has row locks (PostgreSQL). */
  orderById(id: string, lock?: boolean): Promise<OrdersTable | undefined>;
  offerById(id: string): Promise<OffersTable | undefined>;
  offersOfOrder(orderId: string): Promise<OffersTable[]>;
  nteRequestById(id: string): Promise<NteRequestsTable | undefined>;
  nteRequestsOfOrder(orderId: string): Promise<NteRequestsTable[]>;
  /** A contractor's pool and whether it may be given work, as it is in this transaction. */
  contractorStanding(id: string): Promise<{ pool: string; active: boolean; excluded: boolean } | undefined>;
}

export interface Store {
  readonly dialect: "sqlite" | "postgres";
  migrate(): Promise<void>;
  /** Writes waiting for the next group commit. */
  queueDepth(): number;
  /** Connection pool use, where the store has a pool (PostgreSQL). */
  pool?(): { total: number; idle: number; waiting: number };
  ping(): Promise<void>;
  close(): Promise<void>;

  /** Runs `work` inside a durable, group-committed transaction. */
  write<T>(work: (tx: WriteTx) => Promise<T>): Promise<T>;
  /**
   * Runs `work` in the next group commit that happens anyway (within a second at the latest, and before
   * the store closes): for a write that need not be durable at once and should not cost a commit, and so
   * a wait for the next request, of its own. Resolves once it is committed.
   */
  writeDeferred<T>(work: (tx: WriteTx) => Promise<T>): Promise<T>;
  /** Commits the deferred writes now; resolves once they are. */
  flushDeferred(): Promise<void>;

  findAccountByName(name: string): Promise<AccountsTable | undefined>;
  ensureAccount(name: string): Promise<AccountsTable>;

  /** The audit log's records, tree and checkpoints. */
  readonly audit: AuditPersistence;

  /** The evals' figures of a window (live orders by status, latency percentiles). */
  readonly evals: EvalsPersistence;

  /** Webhooks: secrets, endpoints, deliveries and their attempts. */
  readonly webhooks: WebhookPersistence;

  /** Inserts a key and its `key.issued` record in one transaction. */
  insertApiKey(row: ApiKeysTable, audit: AuditEntry): Promise<void>;
  findApiKeyByHash(hash: string): Promise<ApiKeysTable | undefined>;
  listApiKeys(accountName?: string): Promise<Array<ApiKeysTable & { account_name: string }>>;
  /** Revokes a key and records `audit(key)` in the same transaction. */
  revokeApiKey(
    id: string,
    at: string,
    audit: (key: ApiKeysTable) => AuditEntry,
  ): Promise<"revoked" | "already_revoked" | "not_found">;

  countContractors(pool: "sandbox" | "live"): Promise<number>;
  /** Inserts contractors (skipping ids that exist) and records `audit` in the same transaction. */
  insertContractors(rows: NewContractor[], audit: AuditEntry): Promise<void>;
  /** Inserts or updates live contractors by their external reference, recording `audit(counts)`. */
  upsertLiveContractors(
    rows: NewContractor[],
    audit: (counts: { inserted: number; updated: number }) => AuditEntry,
  ): Promise<{ inserted: number; updated: number }>;
  loadContractors(): Promise<Contractor[]>;
  hasContractor(id: string): Promise<boolean>;
  /** A contractor's pool, active and excluded flags, or undefined if there is no such contractor. */
  contractorState(id: string): Promise<{ pool: string; active: boolean; excluded: boolean } | undefined>;
  /** Sets a contractor's active or excluded flag, with its audit record, in one transaction. */
  setContractorFlags(
    id: string,
    flags: { active?: boolean; excluded?: boolean },
    audit: AuditEntry,
  ): Promise<boolean>;
  /** Changes whenever a contractor is added or updated: lets a running server skip needless reloads. */
  contractorsVersion(): Promise<string>;
  /** Jobs each contractor currently holds (those with any). */
  activeJobCounts(): Promise<Array<[string, number]>>;

  findOrder(id: string, accountId: string, livemode: boolean): Promise<OrdersTable | undefined>;
  /** Pending offers whose deadline has passed (oldest deadline first). */
  dueOffers(now: string, limit: number): Promise<OffersTable[]>;
  /** Pending sandbox offers made before `cutoff`: the simulated contractors answer them. */
  sandboxOffers(cutoff: string, limit: number): Promise<OffersTable[]>;
  /** Sandbox orders in one of `statuses` unchanged since `cutoff`: the simulated contractors move them on. */
  sandboxOrdersIn(statuses: string[], cutoff: string, limit: number): Promise<OrdersTable[]>;
  /** A contractor's offers in `status`, newest first. */
  contractorOffers(contractorId: string, status: OfferStatus, limit: number): Promise<OffersTable[]>;
  /** Orders a contractor holds in one of `statuses`, newest first. */
  contractorOrders(contractorId: string, statuses: string[], limit: number): Promise<OrdersTable[]>;
  ordersByIds(ids: string[]): Promise<OrdersTable[]>;
  nteRequests(orderId: string): Promise<NteRequestsTable[]>;
  /** An account's orders in one mode, newest first, after the (created_at, id) position `before`. */
  listOrders(q: OrderQuery): Promise<OrdersTable[]>;
  findIdempotency(
    accountId: string,
    livemode: boolean,
    key: string,
    now: string,
  ): Promise<IdempotencyKeysTable | undefined>;
  purgeExpiredIdempotency(now: string): Promise<number>;
}
