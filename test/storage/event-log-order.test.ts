// The order event log's order without a global write lock (issue 29, migration 0048). On PostgreSQL two
// transactions commit in either order whatever ids they drew from the sequence; the log is read in
// (transaction, id) order and only as far as no transaction still running may write an event before it.
// Here real transactions on their own connections: one with a transaction id that never declared itself
// a writer of the log holds nothing back; two writers draw ids in one order and commit in the other: the
// reads see nothing of theirs until both have ended, then both, in commit order, and a resume after the
// first finds the second. The migration goes up, down and up again with the same answers. With
// TEST_DATABASE_URL; SQLite has one writer and keeps id order (the store contract's event reads).

import { sql } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import {
  type EventPosition,
  LOG_START,
  type NewOrderEvent,
  poolEventRow,
} from "../../src/storage/order-event-store.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  columnsOf,
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  postgresUrl,
} from "../helpers/test-store.js";

const url = process.env.TEST_DATABASE_URL;
const opened = storesClosedAfterAll();

function row(type: string): NewOrderEvent {
  return poolEventRow({ type, livemode: true, createdAt: new Date().toISOString(), payload: { type } });
}

/** A connection of its own on the store's schema, to hold a transaction open. */
async function session(schema: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: postgresUrl(), options: `-c search_path=${schema}` });
  await c.connect();
  return c;
}

async function insert(c: pg.Client, type: string): Promise<number> {
  const r = row(type);
  const { rows } = await c.query<{ id: string }>(
    `insert into order_events (type, order_id, account_id, livemode, contractor_id, previous_contractor_id,
      created_at, payload) values ($1, $2, $3, $4, $5, $6, $7, $8) returning id`,
    [r.type, r.order_id, r.account_id, r.livemode, null, null, r.created_at, r.payload],
  );
  return Number(rows[0]?.id);
}

/** What a writer of the log runs first (storage/order-event-store.ts beginLogWrite). */
const WRITER = "lock table order_events in row exclusive mode";

/** Reads the log from `from` until nothing is held back (the store's own background writers may hold
 * the horizon, briefly). */
async function settled(store: KyselyStore, from: EventPosition) {
  for (let i = 0; ; i++) {
    const page = await store.orderEvents.after(from, 100);
    if (!page.heldBack) return page.rows;
    if (i > 2_000) throw new Error("the log's horizon never passed");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe.skipIf(!url)("the order event log's commit order on PostgreSQL", () => {
  it("reads events in commit order, none past a transaction still running", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await openPostgresTestStore(2);
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrate();
    expect(await columnsOf(store, "order_events")).toContain("tx");
    const schema = store.schema as string;
    const older = await session(schema);
    const a = await session(schema);
    const b = await session(schema);
    const c = await session(schema);
    try {
      // `older` has a transaction id and is no writer of the log (it never took order_events' lock):
      // it holds nothing back. `b`, a writer, commits an event while `older` runs: read at once.
      await older.query("begin");
      await older.query("select pg_current_xact_id()");
      await b.query("begin");
      await b.query(WRITER);
      const zeroth = await insert(b, "pool.beside_older");
      await b.query("commit");
      const first = await store.orderEvents.after(LOG_START, 100);
      expect(first.rows.map((r) => Number(r.id))).toEqual([zeroth]);
      expect(first.heldBack).toBe(false);
      const start = await store.orderEvents.head();
      expect(start.id).toBe(zeroth);

      // `a` declares itself a writer and takes its transaction id; `c` then does too, draws the smaller
      // event id and commits first. c's event waits for a; then both, in transaction order.
      await a.query("begin");
      await a.query(WRITER);
      await a.query("select pg_current_xact_id()");
      await c.query("begin");
      await c.query(WRITER);
      const early = await insert(c, "pool.drawn_first");
      const late = await insert(a, "pool.drawn_second");
      expect(late).toBeGreaterThan(early);
      await c.query("commit");
      const held = await store.orderEvents.after(start, 100);
      expect(held.rows).toEqual([]);
      expect(held.heldBack).toBe(true);
      expect(await store.orderEvents.head()).toEqual(start);
      await a.query("commit");
      const rows = await settled(store, start);
      // Commit order is transaction order: a's event (the larger id) first.
      expect(rows.map((r) => Number(r.id))).toEqual([late, early]);
      const head = await store.orderEvents.head();
      expect(head.id).toBe(early);
      // After a's event comes c's, though its id is smaller; after c's, nothing.
      const afterLate = await store.orderEvents.after(await store.orderEvents.resume(late), 100);
      expect(afterLate.rows.map((r) => Number(r.id))).toEqual([early]);
      expect((await store.orderEvents.after(head, 100)).rows).toEqual([]);
      // An id the log does not hold resumes at its start.
      expect(await store.orderEvents.resume(early + 1_000)).toEqual(LOG_START);
      await older.query("commit");

      // Down: the column and its index go, the read is by id; up again: the rows kept read as one old
      // transaction, in id order, before every new one.
      await store.migrateTo("0047-orders-status-index");
      expect(await columnsOf(store, "order_events")).not.toContain("tx");
      await store.migrate();
      const { rows: kept } = await sql<{ id: string; tx: string }>`select id, tx::text as tx from order_events
        order by id`.execute(store.db);
      expect(kept.map((r) => r.tx)).toEqual(["0", "0", "0"]);
      expect((await settled(store, LOG_START)).map((r) => Number(r.id))).toEqual([zeroth, early, late]);
      await store.write(async (tx) =>
        tx.appendPoolEvent({
          type: "pool.after_up",
          livemode: true,
          createdAt: new Date().toISOString(),
          payload: {},
        }),
      );
      const again = await settled(store, LOG_START);
      expect(again.map((r) => r.type)).toEqual([
        "pool.beside_older",
        "pool.drawn_first",
        "pool.drawn_second",
        "pool.after_up",
      ]);
    } finally {
      for (const s of [older, a, b, c]) await s.end().catch(() => {});
    }
  });
});
