// The one storage implementation, on Kysely: the group-committed write transaction and one store
// per subject. SQL stays dialect-neutral; the SQLite-specific part is only how the connection is opened
// (WAL, full sync) in sqlite.ts.

import { type Kysely, Migrator, sql, type Transaction } from "kysely";
import type { Clock } from "../clock.js";
import { KyselyAttachmentStore, KyselyProofRequirementsStore } from "./attachment-store.js";
import { AuditStore } from "./audit-store.js";
import type { BlobStore } from "./blobs/blob-store.js";
import { FsBlobStore } from "./blobs/fs-blob-store.js";
import { SqlBlobStore } from "./blobs/sql-blob-store.js";
import { KyselyChecklistStore } from "./checklist-store.js";
import { CommittedTime, type TransactionTime } from "./commitment-ledger.js";
import { KyselyConsoleSessionStore } from "./console-session-store.js";
import { KyselyContractorStore } from "./contractor-store.js";
import { KyselyCounterStore } from "./counter-store.js";
import type { Dialect } from "./dialect.js";
import { KyselyDoNotDispatchStore } from "./do-not-dispatch-store.js";
import { EvalsStore } from "./evals-store.js";
import { GroupCommitter } from "./group-commit.js";
import { KyselyIdempotencyStore } from "./idempotency-store.js";
import { KyselyInvoicePolicyStore } from "./invoice-policy-store.js";
import { KyselyKeyStore } from "./key-store.js";
import { KyselyMaintenanceStore } from "./maintenance-store.js";
import { migrationProvider } from "./migrations/all-migrations.js";
import { KyselyNotificationStore } from "./notification-store.js";
import { beginLogWrite, OrderEventStore, type RemoteListener } from "./order-event-store.js";
import { KyselyOrderStore } from "./order-store.js";
import { KyselyRatingStore } from "./rating-store.js";
import { KyselyRequestStore } from "./request-store.js";
import { ScheduleStore } from "./schedule-store.js";
import type { Database } from "./schema.js";
import { KyselySiteStore } from "./site-store.js";
import type { Store, WriteLocks, WriteTx } from "./store.js";
import { isRetryableConflict } from "./store-errors.js";
import { KyselyTrackingLinkStore } from "./tracking-link-store.js";
import { PartialUploadStore } from "./uploads/partial-upload-store.js";

/** A PostgreSQL advisory lock id held while migrating (any schema of the database): one at a time. */
export const MIGRATION_LOCK = 0x66736d67; // "fsmg"

import { WebhookStore } from "./webhook-store.js";
import { prepareWrites, writeTx } from "./write-tx.js";

/**
 * Locks, first in a PostgreSQL batch, the rows its writes declared (Store.write), in the one lock order of
 * the order writer (order-writer.ts): the orders in id order (an offer's order with them), then the
 * contractors in id order, those the writes named and those holding the orders' jobs. Every batch takes
 * its locks in that order before any write runs, so two batches (of one process's lanes or of several
 * processes) never wait on each other in a cycle. A contractor a write takes capacity from without having
 * declared it (the next one of a cascade, a candidate after the first was full) is not waited for: the
 * writer asks for its row with SKIP LOCKED first (write-tx.ts), and one locked by another transaction
 * counts as having no capacity now, as a contractor taken meanwhile does. One round trip a batch (none
 * when nothing is declared); the contractors it holds locked are returned.
 */
async function lockDeclared(
  trx: Transaction<Database>,
  declared: readonly WriteLocks[],
): Promise<Set<string>> {
  const offers = new Set<string>();
  const orders = new Set<string>();
  const contractors = new Set<string>();
  for (const d of declared) {
    for (const id of d.offers ?? []) offers.add(id);
    for (const id of d.orders ?? []) orders.add(id);
    for (const id of d.contractors ?? []) if (id) contractors.add(id);
  }
  if (offers.size + orders.size + contractors.size === 0) return new Set();
  // One statement: the orders (an offer's with them) locked in id order first (the CTE, which the
  // contractors' condition needs before it reads a row), then the contractors, named and holding those
  // orders' jobs, in id order. It answers the contractors it locked.
  const { rows } = await sql<{ id: string }>`with locked_orders as (
      select id, contractor_id from orders
      where id = any(${[...orders]}::text[]) or id in (select order_id from offers where id = any(${[...offers]}::text[]))
      order by id for update)
    select id from contractors
    where id = any(${[...contractors]}::text[] || array(select contractor_id from locked_orders where contractor_id is not null))
    order by id for update`.execute(trx);
  return new Set(rows.map((r) => r.id));
}

/** A deferred write waits this long at most for a batch to ride along with (Store.writeDeferred). */
const DEFERRED_WRITE_MAX_DELAY_MS = 1_000;

export class KyselyStore implements Store {
  private readonly committer: GroupCommitter<WriteTx, WriteLocks>;
  readonly audit: AuditStore;
  readonly evals: EvalsStore;
  readonly webhooks: WebhookStore;
  readonly orderEvents: OrderEventStore;
  readonly keys: KyselyKeyStore;
  readonly consoleSessions: KyselyConsoleSessionStore;
  readonly contractors: KyselyContractorStore;
  readonly orders: KyselyOrderStore;
  readonly idempotency: KyselyIdempotencyStore;
  readonly attachments: KyselyAttachmentStore;
  readonly proofRequirements: KyselyProofRequirementsStore;
  readonly invoicePolicies: KyselyInvoicePolicyStore;
  readonly partialUploads: PartialUploadStore;
  readonly checklists: KyselyChecklistStore;
  readonly doNotDispatch: KyselyDoNotDispatchStore;
  readonly ratings: KyselyRatingStore;
  readonly counters: KyselyCounterStore;
  readonly sites: KyselySiteStore;
  readonly trackingLinks: KyselyTrackingLinkStore;
  readonly requests: KyselyRequestStore;
  readonly notifications: KyselyNotificationStore;
  readonly schedules: ScheduleStore;
  readonly maintenance: KyselyMaintenanceStore;
  /** PostgreSQL schema the store works in, when not the default (the migration tables live there too). */
  readonly schema: string | undefined;
  readonly singleWriter: boolean;
  private readonly clock: Clock;

  constructor(
    readonly db: Kysely<Database>,
    readonly dialect: Dialect,
    options: {
      schema?: string | undefined;
      /** Group commits that may run at once (1 for SQLite's single writer). */
      commitLanes?: number;
      /** Writes per transaction at most. */
      maxBatch?: number;
      /** The time the store stamps rows it writes on its own (accounts, contractors). */
      clock: Clock;
      /** Hears other processes' commits of order events (PostgreSQL's LISTEN). */
      listen?: RemoteListener;
    },
  ) {
    this.schema = options.schema;
    // The embedded store belongs to one process (docs/operations.md, "Stores"); a server database is shared.
    this.singleWriter = dialect === "sqlite";
    const prepared = prepareWrites(db, dialect);
    // The embedded store's only writer is this process: it keeps the committed time in memory.
    const committedTime = this.singleWriter ? new CommittedTime() : null;
    this.audit = new AuditStore(db, dialect, options.clock);
    this.evals = new EvalsStore(db, dialect);
    this.webhooks = new WebhookStore(db, dialect);
    this.orderEvents = new OrderEventStore(db, dialect, options.listen ?? null);
    this.keys = new KyselyKeyStore(db, this.audit, options.clock);
    this.consoleSessions = new KyselyConsoleSessionStore(db);
    this.contractors = new KyselyContractorStore(db, this.audit, options.clock, dialect, this.orderEvents);
    this.orders = new KyselyOrderStore(db, dialect);
    this.idempotency = new KyselyIdempotencyStore(db);
    this.attachments = new KyselyAttachmentStore(db);
    this.proofRequirements = new KyselyProofRequirementsStore(db);
    this.invoicePolicies = new KyselyInvoicePolicyStore(db);
    this.partialUploads = new PartialUploadStore(db);
    this.checklists = new KyselyChecklistStore(db);
    this.doNotDispatch = new KyselyDoNotDispatchStore(db);
    this.ratings = new KyselyRatingStore(db);
    this.counters = new KyselyCounterStore(db);
    this.sites = new KyselySiteStore(db);
    this.trackingLinks = new KyselyTrackingLinkStore(db);
    this.requests = new KyselyRequestStore(db);
    this.notifications = new KyselyNotificationStore(db, dialect);
    this.clock = options.clock;
    this.schedules = new ScheduleStore(db);
    this.maintenance = new KyselyMaintenanceStore(db);
    this.committer = new GroupCommitter<WriteTx, WriteLocks>(
      async (work, locks) => {
        let wroteEvents = false;
        const done: { time: TransactionTime | null } = { time: null };
        const result = await this.db.transaction().execute(async (trx) => {
          // PostgreSQL: the contractors this transaction holds locked so far.
          let held: Set<string> | null = null;
          if (dialect === "postgres") {
            // Declares the transaction a writer of the order event log before it writes anything (the
            // log's horizon, order-event-store.ts), then locks what the batch's writes named, in the one
            // lock order.
            await beginLogWrite(trx);
            held = await lockDeclared(trx, locks);
          }
          // Before this transaction writes anything: what is loaded is what is committed.
          if (committedTime !== null && !committedTime.loaded) await committedTime.load(trx);
          const tx = writeTx(trx, prepared, this, options.clock, committedTime, held);
          const result = await work(tx);
          await tx.flush();
          wroteEvents = tx.wroteEvents();
          done.time = tx.time;
          return result;
        });
        // Committed: the embedded store's time follows, before the next transaction starts.
        if (committedTime !== null && done.time !== null) committedTime.apply(done.time);
        if (wroteEvents) this.orderEvents.committed();
        return result;
      },
      options.maxBatch ?? 256,
      options.commitLanes ?? 1,
      isRetryableConflict,
    );
  }

  blobStore(dir: string): BlobStore {
    return this.dialect === "postgres" ? new SqlBlobStore(this.db, this.clock) : new FsBlobStore(dir);
  }

  queueDepth(): number {
    return this.committer.depth;
  }

  async migrate(): Promise<void> {
    return this.migrateTo(undefined);
  }

  /** Migrates up or down to the migration named `target` (its file name without the extension, such as
   * "0019-contractor-calendars"), or to the latest when undefined: for a rollback, and for tests of a
   * migration's way down. On PostgreSQL under the same lock as every migration. */
  async migrateTo(target: string | undefined): Promise<void> {
    if (this.dialect !== "postgres") return this.runMigrations(this.db, undefined, target);
    // On PostgreSQL the migration tables live in the schema the store works in (its search_path):
    // Kysely otherwise finds another schema's migration tables in the same database and skips its own.
    const schema =
      this.schema ?? (await sql<{ s: string }>`select current_schema() as s`.execute(this.db)).rows[0]?.s;
    // Kysely creates its migration tables (after introspecting every table of the database) before it
    // takes its own lock, so two processes migrating at once (workers starting together, or stores in
    // other schemas of the same database) can both try to create them, or introspect a schema being
    // changed, and fail. One session-level advisory lock, held on one connection around the whole
    // migration, makes them take turns (the tests drop their schemas under it too).
    await this.db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
      try {
        await this.runMigrations(conn, schema, target);
      } finally {
        await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
      }
    });
  }

  private async runMigrations(
    db: Kysely<Database>,
    schema: string | undefined,
    target: string | undefined,
  ): Promise<void> {
    const migrator = new Migrator({
      db,
      provider: migrationProvider(this.dialect),
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
    const { error, results } = await (target === undefined
      ? migrator.migrateToLatest()
      : migrator.migrateTo(target));
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
    await this.orderEvents.close();
    await this.db.destroy();
  }

  write<T>(work: (tx: WriteTx) => Promise<T>, locks?: WriteLocks): Promise<T> {
    return this.committer.submit(work, locks);
  }

  writeDeferred<T>(work: (tx: WriteTx) => Promise<T>, locks?: WriteLocks): Promise<T> {
    return this.committer.defer(work, DEFERRED_WRITE_MAX_DELAY_MS, locks);
  }

  flushDeferred(): Promise<void> {
    return this.committer.flushDeferred();
  }
}
