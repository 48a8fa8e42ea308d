// The write transaction: the handle one group-committed transaction offers to a write (WriteTx), and the
// prepared statements its hot paths run. Stores reach the transaction behind a handle with trxOf.

import { CompiledQuery, type Kysely, type Transaction } from "kysely";
import type { Clock } from "../clock.js";
import type { AuditStore } from "./audit-store.js";
import { type CommittedTime, TransactionTime } from "./commitment-ledger.js";
import type { Dialect } from "./dialect.js";
import { type OrderEventStore, poolEventRow } from "./order-event-store.js";
import { orderToRow } from "./order-rows.js";
import { commitOrderChange, giveBackUnit, takeUnit, type WriterTx } from "./order-writer.js";
import { PreparedInsert } from "./prepared-insert.js";
import type { Database, QuotesTable } from "./schema.js";
import type { WriteTx } from "./store.js";
import type { WebhookStore } from "./webhook-store.js";

const transactions = new WeakMap<WriteTx, Transaction<Database>>();

/** The Kysely transaction behind a write handle, or the store's database when there is none. */
export function trxOf(
  tx: WriteTx | undefined,
  db: Kysely<Database>,
): Kysely<Database> | Transaction<Database> {
  if (tx === undefined) return db;
  const trx = transactions.get(tx);
  if (!trx) throw new Error("a write handle of another store");
  return trx;
}

/** The statements of the write paths that run per order, prepared once: multi-row inserts (orders,
 * quotes, offers, capacity holds) and the conditional updates (capacity, the dispatch latency). */
export interface PreparedWrites {
  orders: PreparedInsert<"orders">;
  quotes: PreparedInsert<"quotes">;
  offers: PreparedInsert<"offers">;
  /** The capacity updates, compiled once: building a query costs more than running it. */
  reserve: (contractorId: string) => CompiledQuery;
  release: (contractorId: string) => CompiledQuery;
  /** The contractor's row locked if no other transaction holds it (PostgreSQL; no row: held). */
  lockIfFree: (contractorId: string) => CompiledQuery;
  restore: (contractorId: string) => CompiledQuery;
  holds: PreparedInsert<"capacity_holds">;
  /** An order's dispatch latency, set once (the deferred write after each offered order's commit). */
  dispatchLatency: (orderId: string, latencyMs: number) => CompiledQuery;
}

const ID_SLOT = "\u0000id";
/** A number no latency is: compiled in its slot, replaced by the latency. */
const LATENCY_SLOT = -0.5;

/** A compiled query run again with the parameter compiled as ID_SLOT replaced by `id`. */
function withId(compiled: CompiledQuery): (id: string) => CompiledQuery {
  return (id) =>
    CompiledQuery.raw(
      compiled.sql,
      compiled.parameters.map((p) => (p === ID_SLOT ? id : p)),
    );
}

/** A compiled query run again with ID_SLOT replaced by an id and LATENCY_SLOT by a number. */
function withSlots(compiled: CompiledQuery): (id: string, value: number) => CompiledQuery {
  if (!compiled.parameters.includes(ID_SLOT) || !compiled.parameters.includes(LATENCY_SLOT))
    throw new Error("a compiled query without its slots");
  return (id, value) =>
    CompiledQuery.raw(
      compiled.sql,
      compiled.parameters.map((p) => (p === ID_SLOT ? id : p === LATENCY_SLOT ? value : p)),
    );
}

/**
 * The write handle of one transaction. Plain inserts have no answer to wait for, so they are gathered
 * and written together by `flush` just before COMMIT: a group commit of many orders then costs a few
 * statements, not one per order. Conditional writes (capacity, idempotency, an order's change) run at
 * once: their outcome steers the write.
 */
export function writeTx(
  trx: Transaction<Database>,
  prepared: PreparedWrites,
  stores: { audit: AuditStore; webhooks: WebhookStore; orderEvents: OrderEventStore },
  clock: Clock,
  /** The embedded store's committed time (commitment-ledger.ts); null: read it from the store. */
  committedTime: CommittedTime | null = null,
  /** PostgreSQL without write turns: the contractors the transaction holds locked (kysely-store.ts
   * lockDeclared); capacity is taken from another only if its row is free now. Null: no such check. */
  held: Set<string> | null = null,
): WriteTx & { flush(): Promise<void>; wroteEvents(): boolean; time: TransactionTime } {
  const quotes: QuotesTable[] = [];
  const buffered: WriterTx["buffered"] = {
    orders: [],
    offers: [],
    holds: [],
    audit: [],
    events: [],
    orderEvents: [],
  };
  const time = new TransactionTime(trx, committedTime);
  const writer: WriterTx = {
    trx,
    buffered,
    time,
    async reserve(contractorId) {
      if (held !== null && !held.has(contractorId)) {
        // Not declared: locked by another transaction now, it has no capacity for this write (waiting
        // for it could close a cycle with a batch that declared it).
        const free = await trx.executeQuery(prepared.lockIfFree(contractorId));
        if (free.rows.length === 0) return false;
        held.add(contractorId);
      }
      const result = await trx.executeQuery(prepared.reserve(contractorId));
      return Number(result.numAffectedRows ?? 0n) > 0;
    },
    async release(contractorId) {
      await trx.executeQuery(prepared.release(contractorId));
    },
    async restore(contractorId) {
      await trx.executeQuery(prepared.restore(contractorId));
    },
  };
  // Whether an account has a default webhook endpoint, asked once per account and mode per transaction.
  const defaults = new Map<string, Promise<boolean>>();
  const tx: WriteTx & { flush(): Promise<void>; wroteEvents(): boolean; time: TransactionTime } = {
    time,
    commitOrderChange(change) {
      return commitOrderChange(writer, change);
    },
    hasDefaultEndpoint(accountId, livemode) {
      const mode = livemode ? 1 : 0;
      const scope = `${mode}|${accountId}`;
      let known = defaults.get(scope);
      if (known === undefined) {
        known = stores.webhooks.hasDefaultEndpoint(trx, accountId, mode);
        defaults.set(scope, known);
      }
      return known;
    },
    appendAudit(entry) {
      buffered.audit.push(entry);
    },
    async insertOrder(order) {
      buffered.orders.push(orderToRow(order));
    },
    async recordDispatchLatency(orderId, latencyMs) {
      await trx.executeQuery(prepared.dispatchLatency(orderId, latencyMs));
    },
    async reserveContractor(contractorId, orderId) {
      return (await takeUnit(writer, contractorId, orderId, clock().toISOString())).outcome === "taken";
    },
    releaseContractor(contractorId, orderId) {
      return giveBackUnit(writer, contractorId, orderId);
    },
    enqueueWebhook(row) {
      buffered.events.push(row);
    },
    async claimDaily(job, day, livemode) {
      const claimed = await trx
        .insertInto("daily_runs")
        .values({ job, day, livemode: livemode ? 1 : 0, created_at: clock().toISOString() })
        .onConflict((oc) => oc.columns(["job", "day", "livemode"]).doNothing())
        .returning("job")
        .executeTakeFirst();
      return claimed !== undefined;
    },
    appendPoolEvent(event) {
      buffered.orderEvents.push(poolEventRow(event));
    },
    async insertQuote(row) {
      quotes.push(row);
    },
    async flush() {
      await prepared.orders.run(trx, buffered.orders);
      await prepared.quotes.run(trx, quotes);
      await prepared.offers.run(trx, buffered.offers);
      await prepared.holds.run(trx, buffered.holds);
      await stores.webhooks.writeEvents(trx, buffered.events);
      await stores.audit.writeEntries(trx, buffered.audit);
      // Last: on PostgreSQL it NOTIFYs the other processes, which PostgreSQL delivers at COMMIT.
      await stores.orderEvents.write(trx, buffered.orderEvents);
    },
    wroteEvents() {
      return buffered.orderEvents.length > 0;
    },
  };
  transactions.set(tx, trx);
  return tx;
}

/** The hot paths' statements, compiled once for the store's database and dialect. */
export function prepareWrites(db: Kysely<Database>, dialect: Dialect): PreparedWrites {
  return {
    orders: new PreparedInsert("orders", dialect),
    quotes: new PreparedInsert("quotes", dialect),
    offers: new PreparedInsert("offers", dialect),
    holds: new PreparedInsert("capacity_holds", dialect),
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
    lockIfFree: withId(
      db.selectFrom("contractors").select("id").where("id", "=", ID_SLOT).forUpdate().skipLocked().compile(),
    ),
    release: withId(
      db
        .updateTable("contractors")
        .set((eb) => ({ active_jobs: eb("active_jobs", "-", 1) }))
        .where("id", "=", ID_SLOT)
        .where("active_jobs", ">", 0)
        .compile(),
    ),
    restore: withId(
      db
        .updateTable("contractors")
        .set((eb) => ({ active_jobs: eb("active_jobs", "+", 1) }))
        .where("id", "=", ID_SLOT)
        .compile(),
    ),
    dispatchLatency: withSlots(
      db
        .updateTable("orders")
        .set({ dispatch_latency_ms: LATENCY_SLOT })
        .where("id", "=", ID_SLOT)
        .where("dispatch_latency_ms", "is", null)
        .compile(),
    ),
  };
}
