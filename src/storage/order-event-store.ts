// The order event log's persistence (migration 0015): rows written by the write transaction of the change
// they report (write-tx.ts), read after an id by the live event stream, purged after the webhook
// retention, and a signal after every commit that wrote some. The signal is in-process for this process's
// own commits; on PostgreSQL it also comes from every other process through LISTEN/NOTIFY (sent once the
// writing transaction has committed, `committed`): the store is the one thing every process shares, so
// no other service is needed, and a notification never arrives before its rows are visible.

import type { Insertable, Kysely, Selectable, Transaction } from "kysely";
import { sql } from "kysely";
import type { Dialect } from "./dialect.js";
import { PreparedInsert } from "./prepared-insert.js";
import type { PurgeableTable, PurgedBatch } from "./retention.js";
import type { Database, OrderEventsTable } from "./schema.js";

export type NewOrderEvent = Insertable<OrderEventsTable> & Omit<OrderEventsTable, "id">;
/** A row as read: on PostgreSQL with its transaction (`tx`, xid8 as text: migration 0048). */
export type StoredOrderEvent = Selectable<OrderEventsTable> & { tx?: string };

/**
 * A place in the log, just after an event: the log's order is (tx, id). On SQLite tx is always 0 (one
 * writer: ids increase in commit order); on PostgreSQL it is the writing transaction's id (migration
 * 0048), since transactions commit in any order whatever ids they drew.
 */
export interface EventPosition {
  tx: bigint;
  id: number;
}

/** Before every event. */
export const LOG_START: EventPosition = { tx: 0n, id: 0 };

/** Where an event sits in the log. */
export function positionOf(event: Pick<StoredOrderEvent, "id" | "tx">): EventPosition {
  return { tx: event.tx === undefined ? 0n : BigInt(event.tx), id: Number(event.id) };
}

/** Whether `a` comes after `b` in the log. */
export function isAfter(a: EventPosition, b: EventPosition): boolean {
  return a.tx === b.tx ? a.id > b.id : a.tx > b.tx;
}

/** A read of the log: events in order, and whether newer ones exist that are not final yet (committed
 * while an older transaction still runs, which may still add events before them: read again soon). */
export interface EventPage {
  rows: StoredOrderEvent[];
  heldBack: boolean;
}

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

/**
 * The first statement of a PostgreSQL transaction that may write order events, before it writes anything
 * (so before it has a transaction id): it declares itself a writer of the log by taking order_events'
 * ROW EXCLUSIVE lock, which writers share without waiting on each other; a reader held back by an older
 * transaction asks whether that one is a writer (`after`, the refined horizon).
 */
export async function beginLogWrite(trx: Transaction<Database>): Promise<void> {
  await sql.raw("lock table order_events in row exclusive mode").execute(trx);
}

/** The log's horizon on PostgreSQL, cheap: the statement's snapshot's xmin. Every transaction below it
 * has ended; one at or above it may still run. */
const XMIN_HORIZON = sql<string>`pg_snapshot_xmin(pg_current_snapshot())::text`;

/**
 * The log's horizon on PostgreSQL, refined: the oldest transaction running at the statement's snapshot
 * that may still write events, else the snapshot's xmax. A transaction running then is left out only if
 * it still runs now and does not hold order_events' lock: every writer of the log takes it before its
 * first write (beginLogWrite), so one that has a transaction id without the lock will never write an
 * event. One that has ended since the snapshot may have committed events the snapshot does not see: it
 * counts. So the horizon no longer waits on other schemas', other databases' or unrelated long
 * transactions (migrations, imports of other stores). pg_locks is read only when the cheap horizon held
 * events back. (pg_locks names transaction ids modulo 2^32.)
 */
const WRITER_HORIZON = sql<string>`coalesce((
    select min(x) from pg_snapshot_xip(pg_current_snapshot()) as x
    where not exists (
      select 1 from pg_locks t
      where t.locktype = 'transactionid' and t.mode = 'ExclusiveLock' and t.granted
        and t.transactionid::text::bigint = x::text::bigint % 4294967296
        and not exists (
          select 1 from pg_locks r
          where r.virtualtransaction = t.virtualtransaction and r.locktype = 'relation'
            and r.relation = 'order_events'::regclass
            and r.database = (select oid from pg_database where datname = current_database())))
  ), pg_snapshot_xmax(pg_current_snapshot()))::text`;

/** Starts listening for other processes' commits; resolves to a function that stops. */
export type RemoteListener = (onCommit: () => void) => Promise<() => Promise<void>>;

export interface OrderEventLog {
  /** Just after the newest final event (LOG_START when there is none): where new events will come. */
  head(): Promise<EventPosition>;
  /** Just after the event `id` (a client's Last-Event-ID); LOG_START when the log does not hold it (0,
   * an event purged by retention, an id it never gave): every event it keeps follows. */
  resume(id: number): Promise<EventPosition>;
  /** Up to `limit` final events after `from`, in the log's order, within `scope` when given. */
  after(from: EventPosition, limit: number, scope?: EventScope): Promise<EventPage>;
  /** Calls `listener` after each commit that wrote events (this process's, and on PostgreSQL every
   * process's); returns a function that stops. */
  onCommitted(listener: () => void): () => void;
}

export class OrderEventStore implements OrderEventLog, PurgeableTable {
  private readonly insert: PreparedInsert<"order_events">;
  private readonly listeners = new Set<() => void>();
  private remote: Promise<() => Promise<void>> | null = null;
  private notifying = false;
  private notifyAgain = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly listen: RemoteListener | null,
  ) {
    this.insert = new PreparedInsert("order_events", dialect);
  }

  /**
   * A transaction outside the store's write path (the contractor directory's changes) that reports pool
   * events (`publish`): on PostgreSQL it declares itself a writer of the log first (beginLogWrite),
   * writes the events last and signals the streams once committed, as the write path does.
   */
  async transactionWithEvents<T>(
    work: (trx: Transaction<Database>, publish: (event: PoolEvent) => void) => Promise<T>,
  ): Promise<T> {
    const rows: NewOrderEvent[] = [];
    const result = await this.db.transaction().execute(async (trx) => {
      if (this.dialect === "postgres") await beginLogWrite(trx);
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
  }

  /**
   * Called by the store once a transaction of this process that wrote events committed: this process's
   * streams read now, and on PostgreSQL the other processes are told. The NOTIFY is sent after the
   * COMMIT, not in the writing transaction: a transaction that NOTIFYs holds a cluster-wide lock from its
   * NOTIFY until its commit is flushed (PostgreSQL serialises notifying commits so that the queue is in
   * commit order), which would make every write transaction of every process commit one at a time. Sent
   * alone, with synchronous_commit off (nothing to make durable), it holds that lock for microseconds;
   * one at a time per process, the commits meanwhile told by the next. A notification lost (the process
   * dies before it is sent) is made up by the feed's periodic read (operations/kernel/event-feed.ts).
   */
  committed(): void {
    this.heard();
    if (this.dialect !== "postgres") return;
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifying = true;
    // One statement, its own transaction: synchronous_commit is read at its commit.
    sql`select set_config('synchronous_commit', 'off', true), pg_notify(${EVENTS_CHANNEL}, current_schema())`
      .execute(this.db)
      .catch(() => {})
      .finally(() => {
        this.notifying = false;
        if (this.notifyAgain) {
          this.notifyAgain = false;
          this.committed();
        }
      });
  }

  /** Wakes this process's listeners (a commit of this process, or one another process told of). */
  private heard(): void {
    for (const listener of this.listeners) listener();
  }

  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.listen && this.remote === null) {
      this.remote = this.listen(() => this.heard());
      this.remote.catch(() => {
        this.remote = null;
      });
    }
    return () => {
      this.listeners.delete(listener);
    };
  }

  async head(): Promise<EventPosition> {
    if (this.dialect !== "postgres") {
      const row = await this.db
        .selectFrom("order_events")
        .select((eb) => eb.fn.max("id").as("id"))
        .executeTakeFirst();
      return { tx: 0n, id: Number(row?.id ?? 0) };
    }
    // The newest event, if final (below the cheap horizon); else the newest below the refined horizon:
    // order_events_tx_idx read backwards from it.
    const newest = (
      await sql<{ tx: string; id: string | number; final: boolean }>`select tx::text as tx, id,
        tx < pg_snapshot_xmin(pg_current_snapshot()) as final
        from order_events order by tx desc, id desc limit 1`.execute(this.db)
    ).rows[0];
    if (!newest) return LOG_START;
    if (newest.final) return positionOf({ tx: newest.tx, id: Number(newest.id) });
    const row = (
      await sql<{ tx: string; id: string | number }>`select tx::text as tx, id from order_events
        where tx < (${WRITER_HORIZON})::xid8 order by tx desc, id desc limit 1`.execute(this.db)
    ).rows[0];
    return row ? positionOf({ tx: row.tx, id: Number(row.id) }) : LOG_START;
  }

  async resume(id: number): Promise<EventPosition> {
    if (id <= 0) return LOG_START;
    if (this.dialect !== "postgres") {
      const row = await this.db
        .selectFrom("order_events")
        .select("id")
        .where("id", "=", id)
        .executeTakeFirst();
      return row ? { tx: 0n, id } : LOG_START;
    }
    const row = (
      await sql<{ tx: string }>`select tx::text as tx from order_events where id = ${id}`.execute(this.db)
    ).rows[0];
    return row ? positionOf({ tx: row.tx, id }) : LOG_START;
  }

  async after(from: EventPosition, limit: number, scope?: EventScope): Promise<EventPage> {
    const page = await this.read(from, limit, scope, XMIN_HORIZON);
    // Held back by an older transaction: most often one that writes no event (or another store's). Ask
    // which of the running ones may still write to the log, in one statement with its own snapshot.
    return page.heldBack ? this.read(from, limit, scope, WRITER_HORIZON) : page;
  }

  private async read(
    from: EventPosition,
    limit: number,
    scope: EventScope | undefined,
    horizon: typeof XMIN_HORIZON,
  ): Promise<EventPage> {
    let q = this.db.selectFrom("order_events").selectAll();
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
    // SQLite: one writer, ids in commit order, every committed event final.
    if (this.dialect !== "postgres") {
      return {
        rows: await q.where("id", ">", from.id).orderBy("id").limit(limit).execute(),
        heldBack: false,
      };
    }
    const found = await q
      .select([sql<string>`order_events.tx::text`.as("tx"), horizon.as("horizon")])
      .where(sql<boolean>`(tx, id) > (${from.tx.toString()}::xid8, ${from.id})`)
      .orderBy(sql`order_events.tx`)
      .orderBy("id")
      .limit(limit)
      .execute();
    const rows: StoredOrderEvent[] = [];
    for (const { horizon: below, ...row } of found) {
      // A transaction at or above the horizon may have an older one still running, which could still
      // write events before it: it and everything after it wait for a later read.
      if (BigInt(row.tx) >= BigInt(below)) return { rows, heldBack: true };
      rows.push(row);
    }
    return { rows, heldBack: false };
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

  /** The ids from the oldest to the newest event older than `before`: ids are drawn in time order and the
   * purge takes the oldest first, so this is exact but for the ids never used (a PostgreSQL sequence's
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
