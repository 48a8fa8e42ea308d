// The order event log's persistence (migration 0015): rows written by the write transaction of the change
// they report (write-tx.ts), read after an id by the live event stream, purged after the webhook
// retention, and a signal after every commit that wrote some. The signal is in-process for this process's
// own commits; on PostgreSQL it also comes from every other process through LISTEN/NOTIFY (the write
// transaction NOTIFYs, which PostgreSQL delivers at COMMIT): the store is the one thing every process
// shares, so no other service is needed, and a notification never arrives before its rows are visible.

import type { Insertable, Kysely, Selectable, Transaction } from "kysely";
import { sql } from "kysely";
import type { Dialect } from "./dialect.js";
import { PreparedInsert } from "./prepared-insert.js";
import type { PurgeableTable, PurgedBatch } from "./retention.js";
import type { Database, OrderEventsTable } from "./schema.js";

export type NewOrderEvent = Insertable<OrderEventsTable> & Omit<OrderEventsTable, "id">;
export type StoredOrderEvent = Selectable<OrderEventsTable>;

/** The events one caller may see: its mode, and its account's orders or its contractor's work (neither:
 * every order of the mode, the dispatch team's). */
export interface EventScope {
  livemode: boolean;
  accountId?: string;
  contractorId?: string;
}

/** The NOTIFY channel; the payload is the schema the store works in, so stores sharing a database (the
 * tests' schemas) wake only their own streams. */
export const EVENTS_CHANNEL = "field_dispatch_order_events";

/** A pool-level event (not an order's): only the dispatch team's stream of its mode carries it. */
export interface PoolEvent {
  type: string;
  livemode: boolean;
  createdAt: string;
  payload: unknown;
}

/** A pool event's row: no order, no account, no contractor, so account and contractor scopes match none
 * of them; the dispatch team's (every event of its mode) carries it. */
export function poolEventRow(event: PoolEvent): NewOrderEvent {
  return {
    type: event.type,
    order_id: "",
    account_id: "",
    livemode: event.livemode ? 1 : 0,
    contractor_id: null,
    previous_contractor_id: null,
    created_at: event.createdAt,
    payload: JSON.stringify(event.payload),
  };
}

/** Takes the store's write turn on PostgreSQL, first thing in a transaction: writes take turns across
 * processes, which is also what makes order_events' ids increase in commit order (0015). */
export async function takeWriteTurn(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(current_schema()))`.execute(trx);
}

/** Starts listening for other processes' commits; resolves to a function that stops. */
export type RemoteListener = (onCommit: () => void) => Promise<() => Promise<void>>;

export interface OrderEventLog {
  /** The newest event's id (0 when there is none). */
  latestId(): Promise<number>;
  /** Up to `limit` events after `afterId`, oldest first, within `scope` when given. */
  after(afterId: number, limit: number, scope?: EventScope): Promise<StoredOrderEvent[]>;
  /** Calls `listener` after each commit that wrote events (this process's, and on PostgreSQL every
   * process's); returns a function that stops. */
  onCommitted(listener: () => void): () => void;
}

export class OrderEventStore implements OrderEventLog, PurgeableTable {
  private readonly insert: PreparedInsert<"order_events">;
  private readonly listeners = new Set<() => void>();
  private remote: Promise<() => Promise<void>> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly listen: RemoteListener | null,
    /** Whether writes take turns (PostgreSQL shared by processes: kysely-store.ts serializeWrites). */
    private readonly serialized = false,
  ) {
    this.insert = new PreparedInsert("order_events", dialect);
  }

  /**
   * A transaction outside the store's write path (the contractor directory's changes) that reports pool
   * events (`publish`): it takes the write turn first, when writes take turns (before it locks any row,
   * so it never waits on the write path while holding what the write path needs), writes the events last
   * and signals the streams once committed, as the write path does.
   */
  async transactionWithEvents<T>(
    work: (trx: Transaction<Database>, publish: (event: PoolEvent) => void) => Promise<T>,
  ): Promise<T> {
    const rows: NewOrderEvent[] = [];
    const result = await this.db.transaction().execute(async (trx) => {
      if (this.serialized) await takeWriteTurn(trx);
      const out = await work(trx, (event) => rows.push(poolEventRow(event)));
      await this.write(trx, rows);
      return out;
    });
    if (rows.length > 0) this.committed();
    return result;
  }

  /** Writes events in the transaction of the changes they report, the last statement before COMMIT. */
  async write(trx: Transaction<Database>, rows: NewOrderEvent[]): Promise<void> {
    if (rows.length === 0) return;
    await this.insert.run(trx, rows);
    if (this.dialect === "postgres") {
      await sql`select pg_notify(${EVENTS_CHANNEL}, current_schema())`.execute(trx);
    }
  }

  /** Called by the store once a transaction that wrote events committed. */
  committed(): void {
    for (const listener of this.listeners) listener();
  }

  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.listen && this.remote === null) {
      this.remote = this.listen(() => this.committed());
      this.remote.catch(() => {
        this.remote = null;
      });
    }
    return () => {
      this.listeners.delete(listener);
    };
  }

  async latestId(): Promise<number> {
    const row = await this.db
      .selectFrom("order_events")
      .select((eb) => eb.fn.max("id").as("id"))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  after(afterId: number, limit: number, scope?: EventScope): Promise<StoredOrderEvent[]> {
    let q = this.db.selectFrom("order_events").selectAll().where("id", ">", afterId);
    if (scope) {
      q = q.where("livemode", "=", scope.livemode ? 1 : 0);
      if (scope.accountId !== undefined) q = q.where("account_id", "=", scope.accountId);
      const contractor = scope.contractorId;
      if (contractor !== undefined) {
        q = q.where((eb) =>
          eb.or([eb("contractor_id", "=", contractor), eb("previous_contractor_id", "=", contractor)]),
        );
      }
    }
    return q.orderBy("id").limit(limit).execute();
  }

  /** Oldest first on order_events_created_idx: a range read of `limit` index entries, then a delete by
   * primary key. */
  async purge(before: string, limit: number, from?: string): Promise<PurgedBatch> {
    let old = this.db
      .selectFrom("order_events")
      .select(["id", "created_at"])
      .where("created_at", "<", before);
    if (from !== undefined) old = old.where("created_at", ">=", from);
    const rows = await old.orderBy("created_at").limit(limit).execute();
    if (rows.length === 0) return { rows: 0, next: null };
    const result = await this.db
      .deleteFrom("order_events")
      .where(
        "id",
        "in",
        rows.map((r) => r.id),
      )
      .executeTakeFirst();
    return {
      rows: Number(result.numDeletedRows),
      next: rows.length < limit ? null : (rows[rows.length - 1]?.created_at ?? null),
    };
  }

  /** The ids from the oldest to the newest event older than `before`: ids increase in commit order and
   * the purge takes the oldest first, so this is exact but for the ids never used (a PostgreSQL sequence's
   * values lost with a rolled-back transaction) and events committed out of created_at order. */
  async backlog(before: string): Promise<number> {
    const newest = await this.db
      .selectFrom("order_events")
      .select("id")
      .where("created_at", "<", before)
      .orderBy("created_at", "desc")
      .limit(1)
      .executeTakeFirst();
    if (!newest) return 0;
    const oldest = await this.db
      .selectFrom("order_events")
      .select((eb) => eb.fn.min("id").as("id"))
      .executeTakeFirst();
    return Math.max(0, Number(newest.id) - Number(oldest?.id ?? newest.id) + 1);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    const remote = this.remote;
    this.remote = null;
    if (remote) await (await remote.catch(() => async () => {}))();
  }
}
