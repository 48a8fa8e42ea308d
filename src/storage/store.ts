// The storage port: everything the operations, the workers and the CLI need from persistence, one
// store per subject (keys, contractors, orders, idempotency, and the audit log, evals and webhooks),
// each read taking an optional write handle to read inside a command's transaction. One Kysely
// implementation (kysely-store.ts) serves SQLite and PostgreSQL.

import type { Selectable } from "kysely";
import type { AuditPersistence } from "../audit/persistence.js";
import type { AuditEntry } from "../audit/record.js";
import type { Commitment } from "../domain/commitments.js";
import type { Contractor, Pool } from "../domain/contractor.js";
import type { ContractorStanding } from "../domain/contractor-directory.js";
import type { DoNotDispatchEntry } from "../domain/do-not-dispatch.js";
import type { KeyRole } from "../domain/key-roles.js";
import type { ComplianceCounts, MaintenancePlan, PlanOccurrence } from "../domain/maintenance/plan.js";
import type { ChecklistAnswer, ChecklistTemplate, OrderChecklist } from "../domain/orders/checklist.js";
import type { ProofRequirements } from "../domain/orders/completion-gate.js";
import type { CounterPolicy } from "../domain/orders/counter-rules.js";
import type { InvoiceDecision, InvoiceVersion } from "../domain/orders/invoice.js";
import type { CounterOffer, NteRequest, Offer, OfferStatus, Order } from "../domain/orders/order.js";
import type { OrderStatus } from "../domain/orders/transitions.js";
import type { OrderRating, RatingTally } from "../domain/ratings.js";
import type { DayOrder } from "../domain/schedule/day-jobs.js";
import type { Asset, Site } from "../domain/sites/site.js";
import type { TradeCode } from "../domain/trades.js";
import type { StateCode } from "../domain/us-regions.js";
import type { BlobStore } from "./blobs/blob-store.js";
import type { EvalsPersistence } from "./evals-store.js";
import type { OrderEventLog } from "./order-event-store.js";
import type { CommitOutcome, CommittableChange } from "./order-writer.js";
import type { PurgeableTable } from "./retention.js";
import type {
  AccountsTable,
  ApiKeysTable,
  ConsoleSessionsTable,
  ContractorsTable,
  ContractorTimeOffTable,
  IdempotencyKeysTable,
  NotificationAttemptsTable,
  NotificationEventsTable,
  NotificationStatus,
  NotificationSubscribersTable,
  NotificationsTable,
  QuotesTable,
  RequestLinksTable,
  RequestPhotosTable,
  RequestPoliciesTable,
  RequestsTable,
  ScheduleProposalsTable,
  TrackingLinksTable,
  WebhookEventsTable,
} from "./schema.js";
import type { PartialUploadStore } from "./uploads/partial-upload-store.js";
import type { WebhookPersistence } from "./webhook-store.js";

export interface NewContractor extends Contractor {
  name: string;
  email: string | null;
  phone: string | null;
  homeZip: string | null;
  externalRef: string | null;
  /** Working hours, canonical text (domain/time/calendar.ts formatHours); null or absent: any time. */
  hours?: string | null;
}

export interface OrderQuery {
  /** Unset: every account's orders (the dispatch team's view). */
  accountId?: string;
  livemode: boolean;
  status?: OrderStatus;
  referenceId?: string;
  /** Only the recalls of this order (orders_recall_idx). */
  recallOf?: string;
  since?: string;
  until?: string;
  before?: { createdAt: string; id: string };
  limit: number;
}

/** A page of an export's orders (operations/orders/exports.ts): one mode, optionally one account and some
 * statuses, `by` in [from, to), oldest first by (`by`, id), after the previous page's last. */
export interface ExportQuery {
  accountId?: string;
  livemode: boolean;
  /** created_at for the orders' export, invoiced_at (the first invoice's time) for the invoices'. */
  by: "created_at" | "invoiced_at";
  from: string;
  to: string;
  statuses?: readonly OrderStatus[];
  after?: { at: string; id: string };
  limit: number;
}

/** The write handle of one group-committed transaction: what a write may do in it. Repositories read
 * inside it when handed it. */
export interface WriteTx {
  /** Commits an order's change (storage/order-writer.ts): all of it, or nothing and the reason why. */
  commitOrderChange(change: CommittableChange): Promise<CommitOutcome>;
  insertQuote(row: QuotesTable): Promise<void>;
  /** Inserts an order as it is (no change, no record: the writer's primitive, and fixtures'). */
  insertOrder(order: Order): Promise<void>;
  /**
   * Stores an order's dispatch latency, measured after its first offer committed (the one order column
   * written outside the order writer: see order-writer.ts). Once: a latency already stored stays.
   */
  recordDispatchLatency(orderId: string, latencyMs: number): Promise<void>;
  /** Takes one unit of an eligible contractor's capacity for `orderId` if it has any left, with its row
   * in the capacity ledger; returns whether it did. (The writer's primitive, and fixtures'.) */
  reserveContractor(contractorId: string, orderId: string): Promise<boolean>;
  /** Gives back the unit `orderId` holds of the contractor's capacity; false (and nothing changes) when
   * it holds none: a unit cannot be given back twice. */
  releaseContractor(contractorId: string, orderId: string): Promise<boolean>;
  /** Records a sealed audit entry in this transaction: it commits, or fails, with the decision. */
  appendAudit(entry: AuditEntry): void;
  /** Writes a webhook event to the outbox with the transaction (whether it has a recipient is decided
   * before: webhooks/outbox.ts). */
  enqueueWebhook(row: WebhookEventsTable): void;
  /** Whether the account has a default webhook endpoint in this mode, as it is in this transaction. */
  hasDefaultEndpoint(accountId: string, livemode: boolean): Promise<boolean>;
  /** Claims the once-a-day `job` for this UTC day and mode (the daily_runs row): true for the one
   * transaction that claims it, which commits it with its other writes. */
  claimDaily(job: string, day: string, livemode: boolean): Promise<boolean>;
  /** Writes a pool-level event to the event log with the transaction: no order and no account, so only
   * the dispatch team's stream of its mode carries it (operations/orders/event-stream.ts). */
  appendPoolEvent(event: { type: string; livemode: boolean; createdAt: string; payload: unknown }): void;
}

/** Accounts and their API keys. */
export interface KeyStore {
  findAccountByName(name: string): Promise<AccountsTable | undefined>;
  /** The names of these accounts (those that exist), by id: what the dispatch team's lists show. */
  accountNames(ids: readonly string[]): Promise<Map<string, string>>;
  ensureAccount(name: string): Promise<AccountsTable>;
  /** Inserts a key and its `key.issued` record in one transaction. */
  insert(row: ApiKeysTable, audit: AuditEntry): Promise<void>;
  findByHash(hash: string): Promise<ApiKeysTable | undefined>;
  list(accountName?: string): Promise<Array<ApiKeysTable & { account_name: string }>>;
  /** An account's keys in a mode (revoked ones too), oldest first. */
  ofAccount(accountId: string, mode: "live" | "test"): Promise<ApiKeysTable[]>;
  /**
   * Sets an account key's role and approval limit and records `audit(before)` in the same transaction;
   * "not_found" for a key that is not an account key of `accountId` (any account: null).
   */
  setRole(
    id: string,
    accountId: string | null,
    role: { role: KeyRole; approval_limit_cents: number | null },
    audit: (before: ApiKeysTable) => AuditEntry,
  ): Promise<ApiKeysTable | "not_found">;
  /** Revokes a key and records `audit(key)` in the same transaction. */
  revoke(
    id: string,
    at: string,
    audit: (key: ApiKeysTable) => AuditEntry,
  ): Promise<"revoked" | "already_revoked" | "not_found">;
}

/** A console session as read: its row and the stored hash of the key it stands for. */
export interface StoredConsoleSession extends ConsoleSessionsTable {
  key_hash: string;
}

/** The web console's sessions, by the SHA-256 of their cookie. */
export interface ConsoleSessionStore {
  insert(row: ConsoleSessionsTable): Promise<void>;
  find(idHash: string): Promise<StoredConsoleSession | undefined>;
  /** Moves the idle expiry on (never back). */
  extend(idHash: string, expiresAt: string): Promise<void>;
  delete(idHash: string): Promise<void>;
  /** Deletes the sessions expired at `now`; how many. */
  purgeExpired(now: string): Promise<number>;
}

/** The dispatch team's filters of one pool. */
export interface ContractorFilter {
  pool: Pool;
  trade?: TradeCode;
  state?: StateCode;
  standing?: ContractorStanding;
  /** A case-insensitive substring of the name. */
  name?: string;
  /** Only contractors whose base lies in this box (and so has coordinates). */
  box?: { minLat: number; maxLat: number; minLon: number; maxLon: number };
}

/** A contractor as the dispatch team reads it: its row without contact details. */
export type ContractorListing = Omit<Selectable<ContractorsTable>, "email" | "phone" | "external_ref">;

/** A contractor's measured record and current load, aggregated from its offers and orders. */
export interface ContractorRecord {
  offersReceived: number;
  offersAccepted: number;
  offersDeclined: number;
  offersExpired: number;
  offersPending: number;
  /** Orders it holds now: accepted, en_route or on_site. */
  openJobs: number;
  /** Orders it holds that ended completed or invoiced, and cannot_complete. */
  jobsCompleted: number;
  jobsCannotComplete: number;
  /** Orders it holds with both an ETA (en route) and an arrival (on site); those arriving after the
   * ETA; and the minutes after the ETA summed over the late ones. */
  arrivals: number;
  lateArrivals: number;
  minutesLate: number;
  /** Orders it holds completed before the cutoff the caller gives (their 30 days to be recalled over),
   * and of those the ones another order names as its recall_of. */
  jobsJudged: number;
  jobsRecalled: number;
}

/** An order a contractor holds now (its pending offer, or its job). */
export interface HeldOrder {
  order_id: string;
  status: string;
  trade: string;
  urgency: string;
  state: string;
  updated_at: string;
}

/** The contractor pools. */
export interface ContractorStore {
  count(pool: "sandbox" | "live"): Promise<number>;
  /** Inserts contractors (skipping ids that exist) and records `audit` in the same transaction. */
  insert(rows: NewContractor[], audit: AuditEntry): Promise<void>;
  /** Inserts or updates contractors by their pool (each row's) and external reference, recording
   * `audit(counts)`: `contractors import`, into the live or the sandbox pool. */
  upsert(
    rows: NewContractor[],
    audit: (counts: { inserted: number; updated: number }) => AuditEntry,
  ): Promise<{ inserted: number; updated: number }>;
  /** Every contractor, with its calendar (hours and the time off not yet over). */
  load(): Promise<Contractor[]>;
  /** Gives sandbox contractors without hours the hours listed (from the generator), recording
   * `audit(changed)` when any changed; returns how many. */
  backfillSandboxHours(
    hours: ReadonlyArray<{ id: string; hours: string }>,
    audit: (changed: number) => AuditEntry,
  ): Promise<number>;
  /** A contractor's time off that ends after `after` (UTC ISO text), by start. */
  timeOff(contractorId: string, after: string): Promise<ContractorTimeOffTable[]>;
  /** One period of time off by its id. */
  timeOffById(id: string): Promise<ContractorTimeOffTable | undefined>;
  /** Adds a period of time off and records `audit` in the same transaction (the pool's version moves). */
  addTimeOff(row: ContractorTimeOffTable, audit: AuditEntry): Promise<void>;
  /** Removes a contractor's period of time off (true again when already removed); false when it has
   * none by that id. */
  removeTimeOff(contractorId: string, id: string, audit: AuditEntry): Promise<boolean>;
  /** A contractor's pool, active and excluded flags, or undefined if there is no such contractor. */
  standing(
    id: string,
    tx?: WriteTx,
  ): Promise<
    | {
        pool: string;
        active: boolean;
        excluded: boolean;
        insuranceVerifiedUntil: string | null;
        licenseVerifiedUntil: string | null;
      }
    | undefined
  >;
  /**
   * A fingerprint of each contractor named (of those that exist): its standing, reach, calendar (hours
   * and its time off ending after `since`, removed or not), limits and compliance dates. It changes when
   * any of them changes. Inside a write, the rows are locked until COMMIT where the store locks rows.
   */
  fingerprints(ids: readonly string[], since: string, tx?: WriteTx): Promise<Map<string, string>>;
  /** Whether the once-a-day `job` already ran for this UTC day and mode. */
  ranToday(job: string, day: string, livemode: boolean): Promise<boolean>;
  /** Sandbox contractors seeded before they had verification dates get theirs (only rows without either
   * date change), with the audit record, in one transaction; returns how many changed. */
  backfillSandboxVerification(
    dates: ReadonlyArray<{ id: string; insuranceVerifiedUntil: string; licenseVerifiedUntil: string }>,
    audit: (changed: number) => AuditEntry,
  ): Promise<number>;
  /** Sets a contractor's active or excluded flag, with its audit record, in one transaction. */
  setFlags(id: string, flags: { active?: boolean; excluded?: boolean }, audit: AuditEntry): Promise<boolean>;
  /** Changes whenever a contractor is added or updated: lets a running server skip needless reloads. */
  version(): Promise<string>;
  /** Jobs each contractor currently holds (those with any). */
  activeJobCounts(): Promise<Array<[string, number]>>;
  /** The time each contractor's jobs hold (the capacity ledger's blocks), by contractor id; inside `tx`
   * as that transaction sees it, when given. */
  commitments(ids?: readonly string[], tx?: WriteTx): Promise<Array<[string, Commitment]>>;
  /** Of these contractors, those eligible with capacity left now (as committed). */
  withCapacity(ids: string[]): Promise<Set<string>>;
  /** Contractors whose capacity counter, ledger rows and open offers and jobs disagree (none: no drift). */
  capacityDrift(): Promise<CapacityDrift[]>;
  /** A page of the filtered pool in name order (byte order, then id), after `after`. */
  directory(
    filter: ContractorFilter,
    page: { after?: { name: string; id: string }; limit: number },
  ): Promise<ContractorListing[]>;
  /** Every contractor of the filtered pool with its base coordinates (null when unknown), by id: what a
   * page ordered by distance is chosen from. */
  locations(filter: ContractorFilter): Promise<Array<{ id: string; lat: number | null; lon: number | null }>>;
  /** These contractors (those that exist), in no particular order. */
  listings(ids: string[]): Promise<ContractorListing[]>;
  /** How many contractors the filters match (a page's "N of total"). */
  matching(filter: ContractorFilter): Promise<number>;
  /** The measured record of each of these contractors, in one query (every id gets one, zeros for a
   * contractor with no history); its recalls over the jobs completed before `recallsJudgedBefore`. */
  records(ids: string[], recallsJudgedBefore: string): Promise<Map<string, ContractorRecord>>;
  /** The orders a contractor holds now (offered to it, accepted, en route, on site), newest first. */
  heldOrders(id: string, limit: number): Promise<HeldOrder[]>;
}

/** One contractor's capacity as `pool check` recomputes it. */
export interface CapacityDrift {
  contractorId: string;
  /** contractors.active_jobs: what reservations check against the maximum. */
  counter: number;
  /** Rows of the capacity ledger. */
  ledger: number;
  /** Pending offers and jobs it holds. */
  open: number;
  /** Orders with an open offer or job of this contractor but no ledger row. */
  unheld: string[];
  /** Orders with a ledger row of this contractor but nothing open. */
  stale: string[];
}

/** An open order as the optimised day reads it (operations/pool/schedule.ts): the columns it plans with. */
export type ScheduledOrder = DayOrder;

/** Where a page of the day's orders ended: the next page starts after it. */
export interface ScheduledCursor {
  readonly state: string;
  readonly status: string;
  readonly id: string;
}

/** A block of a contractor's time an order holds (a capacity ledger row with its time). */
export interface HeldTime {
  orderId: string;
  contractorId: string;
  /** On site from, ISO 8601 ... */
  start: string;
  /** ... until. */
  end: string;
}

/** Work orders, their offers and NTE requests, as read: the domain's values (they change through
 * WriteTx.commitOrderChange). */
export interface OrderStore {
  /** An order; `lock` (inside a write) holds it until COMMIT where the store has row locks. */
  byId(id: string, tx?: WriteTx, lock?: boolean): Promise<Order | undefined>;
  offerById(id: string, tx?: WriteTx): Promise<Offer | undefined>;
  /** An order's offers, first attempt first. */
  offersOf(orderId: string, tx?: WriteTx): Promise<Offer[]>;
  /** The pending offers of these orders (at most one each): the deadlines the dispatch team's board shows. */
  pendingOffersOf(orderIds: string[]): Promise<Offer[]>;
  /** The blocks of contractors' time these orders hold (the capacity ledger's rows with a time), each with
   * the contractor holding it: where the Schedule draws each job. */
  heldTimes(orderIds: string[]): Promise<HeldTime[]>;
  nteRequestById(id: string, tx?: WriteTx): Promise<NteRequest | undefined>;
  /** An order's NTE requests, oldest first. */
  nteRequests(orderId: string, tx?: WriteTx): Promise<NteRequest[]>;
  /** Every version of an order's itemised invoice, oldest first (none before it is invoiced). */
  invoiceVersions(orderId: string, tx?: WriteTx): Promise<InvoiceVersion[]>;
  /** The account's decisions on the order's invoice, oldest first. */
  invoiceDecisions(orderId: string, tx?: WriteTx): Promise<InvoiceDecision[]>;
  /** Every version of these orders' invoices, by order, oldest first (an export's page). */
  invoiceVersionsOf(orderIds: readonly string[]): Promise<InvoiceVersion[]>;
  /** The decisions on these orders' invoices, by order, oldest first (an export's page). */
  invoiceDecisionsOf(orderIds: readonly string[]): Promise<InvoiceDecision[]>;
  /** A page of orders for an export (ExportQuery). */
  exportPage(q: ExportQuery): Promise<Order[]>;
  /** An order of one account and mode. */
  find(id: string, accountId: string, livemode: boolean): Promise<Order | undefined>;
  /** Orders by id; inside a write with `lock`, locked until COMMIT where the store locks rows. */
  byIds(ids: string[], tx?: WriteTx, lock?: boolean): Promise<Order[]>;
  /** An account's orders in one mode (every account's without accountId), newest first, after `before`. */
  list(q: OrderQuery): Promise<Order[]>;
  /** The mode's orders not yet on site (needs_dispatcher, offered, accepted, en_route), of `state` only
   * when given, at most `limit`, in no order: the optimised day's (orders_schedule_idx). */
  scheduledOrders(livemode: boolean, state: string | undefined, limit: number): Promise<Order[]>;
  /** A page of the same orders, the columns the optimised day plans with, in (state, status, id) order
   * after `after` (from the start when null): a range of orders_schedule_idx (migration 0025), so a
   * page costs its own rows only. */
  scheduledPage(
    livemode: boolean,
    state: string | undefined,
    after: ScheduledCursor | null,
    limit: number,
  ): Promise<ScheduledOrder[]>;
  /** Orders whose service-level clocks may still fire (domain/orders/sla-clocks.ts): not closed, with a
   * respond clock or an arrive clock not yet breached, in id order after `after`. The clocks' rules
   * decide which are due. */
  slaWatched(after: string | null, limit: number): Promise<Order[]>;
  /** Pending offers whose deadline has passed (oldest deadline first). */
  dueOffers(now: string, limit: number): Promise<Offer[]>;
  /** Pending sandbox offers made before `cutoff` to contractors without a key of their own (unrevoked):
   * the simulated contractors answer them. */
  sandboxOffers(cutoff: string, limit: number): Promise<Offer[]>;
  /** Sandbox orders in one of `statuses` unchanged since `cutoff`, held by contractors without a key of
   * their own (unrevoked): the simulated contractors move them on. With `windowsStartedBy`, an accepted
   * order whose window starts after it is left out (its contractor waits for the window). */
  sandboxOrdersIn(
    statuses: readonly OrderStatus[],
    cutoff: string,
    limit: number,
    windowsStartedBy?: string,
  ): Promise<Order[]>;
  /** A contractor's offers of one mode in `status`, newest first. */
  offersOfContractor(
    contractorId: string,
    livemode: boolean,
    status: OfferStatus,
    limit: number,
  ): Promise<Offer[]>;
  /** Orders of one mode a contractor holds in one of `statuses`, newest first. */
  ordersOfContractor(
    contractorId: string,
    livemode: boolean,
    statuses: readonly OrderStatus[],
    limit: number,
  ): Promise<Order[]>;
}

/** Idempotency records. */
export interface IdempotencyStore {
  find(
    accountId: string,
    livemode: boolean,
    key: string,
    now: string,
  ): Promise<IdempotencyKeysTable | undefined>;
  /** Stores a record unless a live (unexpired) one holds the key, in the write `tx`; whether it did. */
  claim(row: IdempotencyKeysTable, now: string, tx: WriteTx): Promise<boolean>;
  purgeExpired(now: string): Promise<number>;
}

/**
 * Where another thread of this process may open a read connection of its own to the same data: the
 * SQLite file (read-only, beside the writer in WAL mode), or the PostgreSQL URL and schema. Plain data, to
 * send to a worker thread.
 */
export type ReadSource =
  | { readonly kind: "sqlite"; readonly file: string }
  | { readonly kind: "postgres"; readonly url: string; readonly schema?: string | undefined };

/** What an attachment holds, sniffed from its bytes (issue 32). */
type AttachmentKind = "photo" | "document" | "signature";

/** An order's attachment: its blob (by SHA-256), what it is, who sent it and the seal of its record. */
export interface Attachment {
  id: string;
  orderId: string;
  livemode: boolean;
  sha256: string;
  size: number;
  mediaType: string;
  kind: AttachmentKind;
  caption: string | null;
  filename: string | null;
  /** The actor that sent it, as audit records name actors (`contractor:ctr_...`, `key:key_...`). */
  uploader: string;
  createdAt: string;
  /** The image's thumbnail's blob; null for a PDF. */
  thumbnailSha256: string | null;
  /** A signature's signer, as printed on the phone; null for other kinds. */
  signerName: string | null;
  seal: string;
}

/** Orders' attachments (their bytes are in the blob store, storage/blobs/). */
export interface AttachmentStore {
  /** Writes the row in the write `tx` that seals its record. */
  insert(attachment: Attachment, tx: WriteTx): Promise<void>;
  /** An order's attachments, oldest first (inside `tx`: as that transaction sees them). */
  ofOrder(orderId: string, tx?: WriteTx): Promise<Attachment[]>;
  byId(id: string): Promise<Attachment | undefined>;
  /** Of these blobs, those an attachment or a request's photo names (as its bytes or its thumbnail). */
  referenced(sha256s: readonly string[]): Promise<Set<string>>;
  /** Removes the attachments made before `before` whose sealed record is gone (purged past its
   * retention, `audit purge`): the files follow their record, and the orphan collector then removes the
   * blobs nothing names. A record a legal hold keeps keeps its attachment. Returns how many. */
  purgeUnsealed(before: string): Promise<number>;
  /** How many signatures, and photos added by `uploader`, the order holds (inside `tx`: the completion
   * gate's read, in the transaction that completes the job). */
  proofCounts(
    orderId: string,
    uploader: string,
    tx?: WriteTx,
  ): Promise<{ signatures: number; photos: number }>;
}

/** What each account requires before its jobs are completed (domain/orders/completion-gate.ts). */
export interface ProofRequirementsRow extends ProofRequirements {
  account_id: string;
  livemode: boolean;
  updated_at: string;
  updated_by: string;
  /** The audit record that set them. */
  seal: string;
}

export interface ProofRequirementsStore {
  /** The account's requirements in a mode; undefined until it set them (none are required then). */
  get(accountId: string, livemode: boolean, tx?: WriteTx): Promise<ProofRequirementsRow | undefined>;
  /** Sets them, in the write `tx` that seals the change. */
  set(row: ProofRequirementsRow, tx: WriteTx): Promise<void>;
}

/** An account's invoice policy in a mode (issue 33). */
export interface InvoicePolicyRow {
  account_id: string;
  livemode: boolean;
  /** Approve an invoice with no flags whose total is below this, at once; null: never. */
  auto_approve_below_cents: number | null;
  updated_at: string;
  updated_by: string;
  /** The audit record that set it. */
  seal: string;
}

export interface InvoicePolicyStore {
  /** The account's policy in a mode; undefined until it set one (nothing is auto-approved then). */
  get(accountId: string, livemode: boolean, tx?: WriteTx): Promise<InvoicePolicyRow | undefined>;
  /** Sets it, in the write `tx` that seals the change. */
  set(row: InvoicePolicyRow, tx: WriteTx): Promise<void>;
}

/** An account's policy on counter-offers in one mode (domain/orders/counter-rules.ts). */
export interface CounterPolicyRow extends CounterPolicy {
  account_id: string;
  livemode: boolean;
  updated_at: string;
  updated_by: string;
  /** The audit record that set it. */
  seal: string;
}

/** Contractors' counter-offers (issue 33), written by the order's writer; and accounts' policies on them. */
export interface CounterStore {
  /** An order's counters, oldest first. */
  ofOrder(orderId: string, tx?: WriteTx): Promise<CounterOffer[]>;
  /** The counters of these offers (a counter's id is its offer's). */
  byOffers(offerIds: readonly string[]): Promise<CounterOffer[]>;
  /** Pending counters whose deadline is at or before `now`, earliest first: the sweeper's. */
  due(now: string, limit: number): Promise<CounterOffer[]>;
  /** The account's policy in a mode; undefined until it set one (no counter is accepted at once then). */
  policy(accountId: string, livemode: boolean, tx?: WriteTx): Promise<CounterPolicyRow | undefined>;
  /** Sets it, in the write `tx` that seals the change. */
  setPolicy(row: CounterPolicyRow, tx: WriteTx): Promise<void>;
}

/** Accounts' do-not-dispatch lists (issue 33; domain/do-not-dispatch.ts): entries in force, not removed. */
export interface DoNotDispatchStore {
  /** An account's entries in force in a mode, oldest first. */
  ofAccount(accountId: string, livemode: boolean, tx?: WriteTx): Promise<DoNotDispatchEntry[]>;
  /** Entries in force in a mode, oldest first: every account's, or one account's, or one contractor's. */
  list(
    filter: { livemode: boolean; accountId?: string | undefined; contractorId?: string | undefined },
    tx?: WriteTx,
  ): Promise<DoNotDispatchEntry[]>;
  /** An entry in force by id. */
  byId(id: string, tx?: WriteTx): Promise<DoNotDispatchEntry | undefined>;
  insert(entry: DoNotDispatchEntry, tx: WriteTx): Promise<void>;
  /** Marks an entry removed; false when it was not in force. */
  remove(id: string, at: string, by: string, reason: string, tx: WriteTx): Promise<boolean>;
  /** Changes whenever an entry is added or removed (a cheap count/max query): other processes' caches
   * compare it. */
  version(): Promise<string>;
}

/** Accounts' sites and their assets (issue 34; domain/sites/site.ts), and the site and assets orders name. */
export interface SiteStore {
  insertSite(site: Site, actor: string, tx: WriteTx): Promise<void>;
  /** Writes the site's fields, its archive time and seal as `site` holds them. */
  updateSite(site: Site, actor: string, tx: WriteTx): Promise<void>;
  /** A site by id (archived too). */
  siteById(id: string, tx?: WriteTx): Promise<Site | undefined>;
  /** An account's sites in a mode (every account's when `accountId` is left out), by id: oldest first
   * after `after`, or newest first before `before`; archived ones only when asked; `state` and `text` (in
   * the name, address or city, without case) narrow them. */
  sites(
    filter: {
      accountId?: string | undefined;
      livemode: boolean;
      state?: string | undefined;
      text?: string | undefined;
      includeArchived?: boolean;
      after?: string | undefined;
      before?: string | undefined;
      newestFirst?: boolean;
      limit: number;
    },
    tx?: WriteTx,
  ): Promise<Site[]>;
  /** How many sites an account keeps in force in a mode. */
  activeSiteCount(accountId: string, livemode: boolean, tx?: WriteTx): Promise<number>;
  insertAsset(asset: Asset, actor: string, tx: WriteTx): Promise<void>;
  updateAsset(asset: Asset, actor: string, tx: WriteTx): Promise<void>;
  assetById(id: string, tx?: WriteTx): Promise<Asset | undefined>;
  assetsByIds(ids: readonly string[], tx?: WriteTx): Promise<Asset[]>;
  /** A site's assets, by id; archived ones only when asked. */
  assetsOfSite(siteId: string, includeArchived: boolean, tx?: WriteTx): Promise<Asset[]>;
  /** The asset in force at a site with this serial (compared as domain/sites/site.ts serialKey). */
  assetBySerial(siteId: string, serial: string, tx?: WriteTx): Promise<Asset | undefined>;
  /** Records the site (and assets) an order names, in the order's transaction. */
  nameOnOrder(orderId: string, siteId: string, assetIds: readonly string[], tx: WriteTx): Promise<void>;
  /** Sites by id (archived too). */
  sitesByIds(ids: readonly string[], tx?: WriteTx): Promise<Site[]>;
  /** The site and assets each of these orders names (those that name none are left out). */
  ofOrders(
    orderIds: readonly string[],
    tx?: WriteTx,
  ): Promise<Array<{ orderId: string; siteId: string; assetIds: string[] }>>;
  /** The site and assets an order names; undefined for an order that names none. */
  ofOrder(orderId: string, tx?: WriteTx): Promise<{ siteId: string; assetIds: string[] } | undefined>;
  /** The orders that named an asset, newest first (by id), at most `limit`. */
  ordersOfAsset(assetId: string, limit: number, tx?: WriteTx): Promise<string[]>;
}

/** Ratings of completed orders (issue 33; domain/ratings.ts), one per order, and contractors' tallies. */
export interface RatingStore {
  /** An order's rating, if it has one. */
  byOrder(orderId: string, tx?: WriteTx): Promise<OrderRating | undefined>;
  /** Writes a rating (a new one when `before` is absent, else in place of `before`) and moves its
   * contractor's tally by the difference. */
  save(rating: OrderRating, before: OrderRating | undefined, tx: WriteTx): Promise<void>;
  /** A contractor's tally of ratings (zeros for an unknown or unrated contractor). */
  tallyOf(contractorId: string): Promise<RatingTally>;
}

/** Checklist templates, orders' fixed checklists and their answers (issue 32; domain/orders/checklist.ts). */
export interface ChecklistStore {
  insertTemplate(template: ChecklistTemplate, tx: WriteTx): Promise<void>;
  templateById(id: string, tx?: WriteTx): Promise<ChecklistTemplate | undefined>;
  /** Templates of one mode, oldest first: the service's (accountId null) or one account's, or, with
   * accountId undefined, every one; of one trade if given; retired ones only when asked. */
  templates(
    filter: {
      livemode: boolean;
      accountId?: string | null;
      trade?: string;
      includeRetired?: boolean;
    },
    tx?: WriteTx,
  ): Promise<ChecklistTemplate[]>;
  /** The templates in force that an order of `trade` placed by `accountId` may get: the service's and the
   * account's (domain/orders/checklist.ts templatesFor chooses), in one read. */
  inForce(
    order: { livemode: boolean; trade: string; accountId: string },
    tx?: WriteTx,
  ): Promise<ChecklistTemplate[]>;
  /** Marks a template retired; false when it was already. */
  retireTemplate(id: string, at: string, by: string, tx: WriteTx): Promise<boolean>;
  orderChecklist(orderId: string, tx?: WriteTx): Promise<OrderChecklist | undefined>;
  /** Writes an order's checklist unless it has one already; the one it has afterwards. */
  fixOrderChecklist(checklist: OrderChecklist, tx: WriteTx): Promise<OrderChecklist>;
  answers(orderId: string, tx?: WriteTx): Promise<ChecklistAnswer[]>;
  /** Writes an item's answer, replacing the one it had. */
  saveAnswer(answer: ChecklistAnswer, tx: WriteTx): Promise<void>;
}

/** Maintenance plans and their occurrences (issue 34; domain/maintenance/plan.ts). */
export interface MaintenanceStore {
  insertPlan(plan: MaintenancePlan, tx: WriteTx): Promise<void>;
  /** Writes the plan's row as given; `regenerate` forgets how far it was generated (a changed rule). */
  updatePlan(plan: MaintenancePlan, tx: WriteTx, options?: { regenerate: boolean }): Promise<void>;
  planById(id: string, tx?: WriteTx): Promise<MaintenancePlan | undefined>;
  /** Plans of one mode in id order (active only unless asked), a page after `after`. */
  plans(
    filter: {
      livemode: boolean;
      accountId?: string;
      siteId?: string;
      assetId?: string;
      includeArchived?: boolean;
      after?: string;
      limit: number;
    },
    tx?: WriteTx,
  ): Promise<MaintenancePlan[]>;
  /** Active plans (every mode) due to be generated at `now` (never generated, or refresh_at passed). */
  plansToGenerate(now: string, limit: number): Promise<MaintenancePlan[]>;
  /** Records that the plan's occurrences starting before `until` are generated, and when to generate it
   * again, if still at `version`. */
  setGeneratedUntil(
    planId: string,
    version: number,
    until: string,
    refreshAt: string,
    tx: WriteTx,
  ): Promise<void>;
  /** Inserts the occurrence unless its (plan, key) exists: false when another write claimed it first. */
  claimOccurrence(occurrence: PlanOccurrence, tx: WriteTx): Promise<boolean>;
  updateOccurrence(occurrence: PlanOccurrence, tx: WriteTx): Promise<void>;
  /** Writes over a failed occurrence (a move that generated it): false when it is not failed any more. */
  replaceFailed(occurrence: PlanOccurrence, tx: WriteTx): Promise<boolean>;
  /** Sets the occurrence's overdue time unless it has one: false when another write set it first. */
  markOverdue(planId: string, key: string, at: string, tx: WriteTx): Promise<boolean>;
  occurrence(planId: string, key: string, tx?: WriteTx): Promise<PlanOccurrence | undefined>;
  /** Occurrences of one mode by window start, filtered. */
  occurrences(
    filter: {
      livemode: boolean;
      accountId?: string;
      planId?: string;
      siteId?: string;
      from?: string;
      until?: string;
      overdue?: boolean;
      limit: number;
    },
    tx?: WriteTx,
  ): Promise<PlanOccurrence[]>;
  occurrenceOfOrder(orderId: string, tx?: WriteTx): Promise<PlanOccurrence | undefined>;
  /** How the occurrences whose window ended in [since, until) ended: the planned-maintenance compliance. */
  complianceCounts(filter: {
    livemode: boolean;
    accountId?: string;
    since: string;
    until: string;
  }): Promise<ComplianceCounts>;
  /** The same, per site of one account (only the sites with an occurrence ended in the period). */
  complianceBySite(filter: {
    livemode: boolean;
    accountId: string;
    since: string;
    until: string;
  }): Promise<Array<{ siteId: string; counts: ComplianceCounts }>>;
  /** Generated occurrences (every mode) whose window ended before `before`, not yet settled nor flagged. */
  endedNotFlagged(before: string, limit: number): Promise<PlanOccurrence[]>;
}

/** Rows a write will lock, declared before it runs (Store.write). */
export interface WriteLocks {
  orders?: readonly string[];
  /** Offers, for the orders they belong to. */
  offers?: readonly string[];
  contractors?: readonly (string | null | undefined)[];
}

export interface Store {
  readonly dialect: "sqlite" | "postgres";
  /** Where a worker thread reads the same data (day-reader.ts); none for an in-memory store. */
  readonly readSource?: ReadSource;
  /** Whether this process is the store's only writer (the embedded store): then what it counts of the
   * store's state (a contractor's jobs) is exact. */
  readonly singleWriter: boolean;
  migrate(): Promise<void>;
  /** Writes waiting for the next group commit. */
  queueDepth(): number;
  /** Connection pool use, where the store has a pool (PostgreSQL). */
  pool?(): { total: number; idle: number; waiting: number };
  ping(): Promise<void>;
  close(): Promise<void>;

  /**
   * Runs `work` inside a durable, group-committed transaction. `locks` names the rows the work will lock
   * (its order, the contractors whose capacity it may take or give back): on PostgreSQL a batch locks
   * the rows its writes name before any of them runs, orders then contractors, each in id order, so
   * that batches in several processes never wait on each other in a cycle (storage/kysely-store.ts).
   */
  write<T>(work: (tx: WriteTx) => Promise<T>, locks?: WriteLocks): Promise<T>;
  /**
   * Runs `work` in the next group commit that happens anyway (within a second at the latest, and before
   * the store closes): for a write that need not be durable at once and should not cost a commit, and so
   * a wait for the next request, of its own. Resolves once it is committed.
   */
  writeDeferred<T>(work: (tx: WriteTx) => Promise<T>, locks?: WriteLocks): Promise<T>;
  /** Commits the deferred writes now; resolves once they are. */
  flushDeferred(): Promise<void>;

  readonly keys: KeyStore;
  /** The web console's sessions. */
  readonly consoleSessions: ConsoleSessionStore;
  readonly contractors: ContractorStore;
  readonly orders: OrderStore;
  readonly idempotency: IdempotencyStore;
  /** Orders' attachments. */
  readonly attachments: AttachmentStore;
  /** What accounts require before their jobs are completed. */
  readonly proofRequirements: ProofRequirementsStore;
  /** Accounts' invoice policies. */
  readonly invoicePolicies: InvoicePolicyStore;
  /** Checklist templates, orders' checklists and their answers. */
  readonly checklists: ChecklistStore;
  /** Maintenance plans and their occurrences. */
  readonly maintenance: MaintenanceStore;
  /** Accounts' do-not-dispatch lists. */
  readonly doNotDispatch: DoNotDispatchStore;
  /** Ratings of completed orders. */
  readonly ratings: RatingStore;
  /** Accounts' sites and assets, and the ones orders name. */
  readonly sites: SiteStore;
  /** Contractors' counter-offers and accounts' policies on them. */
  readonly counters: CounterStore;
  /** Orders' tracking links (operations/tracking/). */
  readonly trackingLinks: TrackingLinkStore;
  /** Sites' request links, the requests reported at sites and the accounts' request policies. */
  readonly requests: RequestStore;
  /** Notifications to the people at the site: outbox, messages, attempts, opt-outs, opted-in people. */
  readonly notifications: NotificationStore;
  /** The blob store that goes with this store: chunked rows on PostgreSQL (shared by every process),
   * files under `dir` (the data directory's blobs/) on the embedded store. */
  blobStore(dir: string): BlobStore;
  /** Resumable (tus) uploads on their way, in the database so every process can resume one. */
  readonly partialUploads: PartialUploadStore;
  /** The audit log's records, tree and checkpoints. */
  readonly audit: AuditPersistence;
  /** The evals' figures of a window (live orders by status, latency percentiles). */
  readonly evals: EvalsPersistence;
  /** Webhooks: secrets, endpoints, deliveries and their attempts. */
  readonly webhooks: WebhookPersistence;
  /** Every change of every order, for the live event stream (order-event-store.ts). */
  readonly orderEvents: OrderEventLog & PurgeableTable;
  /** The day optimiser's proposals (schedule-store.ts). */
  readonly schedules: ScheduleProposals;
}

/** Notifications to the people at the site (migration 0044; storage/notification-store.ts). */
export interface NotificationStore {
  /** Outbox rows not yet fanned out, oldest first. */
  pendingEvents(limit: number): Promise<NotificationEventsTable[]>;
  /** Writes an event's messages (each once per recipient, whoever writes it) and marks it fanned out. */
  fanOut(eventId: string, messages: NotificationsTable[]): Promise<number>;
  insert(row: NotificationsTable, tx?: WriteTx): Promise<void>;
  /** Claims due messages under a lease until `leaseUntil`, counting the attempt. */
  claimDue(now: string, leaseUntil: string, limit: number): Promise<NotificationsTable[]>;
  /** Logs an attempt and settles the message while the claim holds: whether it held. */
  recordAttempt(
    id: string,
    attempt: number,
    result: NotificationAttemptResult,
    seal: string | null,
    tx: WriteTx,
  ): Promise<boolean>;
  list(q: NotificationQuery): Promise<NotificationsTable[]>;
  byId(id: string, tx?: WriteTx): Promise<NotificationsTable | undefined>;
  attemptsOf(id: string): Promise<NotificationAttemptsTable[]>;
  ofEvent(eventId: string): Promise<NotificationsTable[]>;
  subscribers(accountId: string, livemode: boolean): Promise<NotificationSubscribersTable[]>;
  setSubscribers(
    accountId: string,
    livemode: boolean,
    rows: NotificationSubscribersTable[],
    tx: WriteTx,
  ): Promise<void>;
  /** Of `emails` (lower case), those opted out of the account's messages in a mode. */
  optedOut(accountId: string, livemode: boolean, emails: readonly string[]): Promise<Set<string>>;
  /** Opts an address out (true) or back in (false); whether anything changed. */
  setOptOut(
    row: { account_id: string; livemode: number; email: string; created_at: string; source: string },
    out: boolean,
    tx?: WriteTx,
  ): Promise<boolean>;
}

export interface NotificationQuery {
  accountId: string;
  livemode: boolean;
  orderId?: string | undefined;
  status?: NotificationStatus | undefined;
  /** Keyset: messages older than this id (newest first). */
  before?: string | undefined;
  limit: number;
}

export interface NotificationAttemptResult {
  startedAt: string;
  durationMs: number;
  outcome: NotificationAttemptsTable["outcome"];
  response: string | null;
  error: string | null;
  nextAttemptAt: string | null;
}

/** Orders' tracking links (migration 0043; operations/tracking/). */
export interface TrackingLinkStore {
  /** The order's link in force (not revoked), if it has one. */
  live(orderId: string, tx?: WriteTx): Promise<TrackingLinksTable | undefined>;
  byId(id: string): Promise<TrackingLinksTable | undefined>;
  /** Every link of the order, newest first (revoked ones too). */
  ofOrder(orderId: string): Promise<TrackingLinksTable[]>;
  /** Inserts a link unless the order has one in force already: whether it did. */
  insert(row: TrackingLinksTable, tx: WriteTx): Promise<boolean>;
  /** Revokes the link unless it was: whether it did. */
  revoke(id: string, at: string, by: string, tx: WriteTx): Promise<boolean>;
  /** The order's progress reports (audit records order.status_changed), oldest first: when and the
   * sealed record's text. */
  progressTimes(orderId: string): Promise<Array<{ at: string; record: string }>>;
}

/** Which of an account's requests a list reads (newest first, before `before`). */
export interface RequestFilter {
  accountId: string;
  livemode: boolean;
  status?: RequestsTable["status"] | undefined;
  siteId?: string | undefined;
  before?: string | undefined;
  limit: number;
}

/** A pending request's outcome, as written. */
export type RequestDecision = Pick<
  RequestsTable,
  "status" | "trade" | "order_id" | "reason" | "decided_by" | "decided_at" | "updated_at" | "decision_seal"
>;

/** Requests (migration 0045; operations/requests/). */
export interface RequestStore {
  /** The site's request link in force (not revoked), if it has one. */
  liveLink(siteId: string, tx?: WriteTx): Promise<RequestLinksTable | undefined>;
  linkById(id: string): Promise<RequestLinksTable | undefined>;
  /** Inserts a link unless the site has one in force already: whether it did. */
  insertLink(row: RequestLinksTable, tx: WriteTx): Promise<boolean>;
  /** Revokes the link unless it was: whether it did. */
  revokeLink(id: string, at: string, by: string, tx: WriteTx): Promise<boolean>;
  insert(row: RequestsTable, tx: WriteTx): Promise<void>;
  byId(id: string, tx?: WriteTx): Promise<RequestsTable | undefined>;
  list(filter: RequestFilter): Promise<RequestsTable[]>;
  /** Writes a pending request's outcome: false when it was no longer pending (decided elsewhere first). */
  decide(id: string, decision: RequestDecision, tx: WriteTx): Promise<boolean>;
  /** The site's open orders (domain/requests/request.ts OPEN_ORDER_STATUSES) of a trade, newest first. */
  openOrdersAt(
    siteId: string,
    trade: TradeCode,
    tx?: WriteTx,
  ): Promise<Array<{ id: string; trade: TradeCode; status: OrderStatus; createdAt: string }>>;
  policy(accountId: string, livemode: boolean, tx?: WriteTx): Promise<RequestPoliciesTable | undefined>;
  setPolicy(row: RequestPoliciesTable, tx: WriteTx): Promise<void>;
  /** Adds a photo to a request. */
  /** False when the photo's position was taken meanwhile. */
  addPhoto(row: RequestPhotosTable, tx: WriteTx): Promise<boolean>;
  /** A request's photos, by position (inside `tx`: as that transaction sees them). */
  photosOf(requestId: string, tx?: WriteTx): Promise<RequestPhotosTable[]>;
}

/** The day optimiser's proposals. */
interface ScheduleProposals {
  insert(row: ScheduleProposalsTable): Promise<void>;
  byId(id: string): Promise<ScheduleProposalsTable | undefined>;
  /** Marks a proposal applied unless it already was: true for the one caller that claims it. Inside a
   * write it commits, or rolls back, with the write. */
  claim(id: string, at: string, tx?: WriteTx): Promise<boolean>;
  purge(cutoff: string): Promise<number>;
}
