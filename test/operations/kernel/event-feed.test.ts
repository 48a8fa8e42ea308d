// The feed's ordering under concurrency, on a log whose reads the test holds and releases: a stream that
// opens while the feed is reading gets every event committed after it opened, once and in order, and a
// resumed stream's live events wait for its backlog.

import { describe, expect, it } from "vitest";
import { EventFeed } from "../../../src/operations/kernel/event-feed.js";
import {
  type EventPosition,
  type EventScope,
  isAfter,
  type OrderEventLog,
  positionOf,
  type StoredOrderEvent,
} from "../../../src/storage/order-event-store.js";

/** An in-memory log whose head() answers only when the test says. */
function heldLog() {
  const rows: StoredOrderEvent[] = [];
  let signal: () => void = () => {};
  const held: Array<() => void> = [];
  let hold = false;
  const log: OrderEventLog = {
    async head() {
      if (hold) await new Promise<void>((r) => held.push(r));
      return { tx: 0n, id: rows.length };
    },
    async resume(id: number) {
      return { tx: 0n, id };
    },
    async after(from: EventPosition, limit: number, scope?: EventScope) {
      const page = rows
        .filter((r) => r.id > from.id && (!scope || r.account_id === scope.accountId))
        .slice(0, limit);
      return { rows: page, heldBack: false };
    },
    onCommitted(listener) {
      signal = listener;
      return () => {};
    },
  };
  const commit = (accountId = "acc_a") => {
    rows.push({
      id: rows.length + 1,
      type: "order.offered",
      order_id: `ord_${rows.length + 1}`,
      account_id: accountId,
      livemode: 0,
      contractor_id: null,
      previous_contractor_id: null,
      created_at: new Date().toISOString(),
      payload: "{}",
    });
    signal();
  };
  return {
    log,
    commit,
    holdReads: (on: boolean) => {
      hold = on;
    },
    release: () => {
      for (const r of held.splice(0)) r();
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));
const scope = { livemode: false, accountId: "acc_a" };

describe("event feed", () => {
  it("gives a stream opened while the feed skips ahead the events committed after it opened", async () => {
    const l = heldLog();
    const feed = new EventFeed(l.log);
    const first: number[] = [];
    const stop = await feed.subscribe(scope, null, (e) => first.push(e.id));
    stop();
    // Nobody listens: the next commit makes the feed skip to the newest id, a read the test holds.
    l.holdReads(true);
    l.commit();
    await settle();
    const seen: number[] = [];
    await feed.subscribe(scope, null, (e) => seen.push(e.id));
    // Committed after the stream opened, while the feed's read of the newest id is still out.
    l.commit();
    l.holdReads(false);
    l.release();
    l.commit("acc_b");
    l.commit();
    for (let i = 0; i < 20 && seen.length < 2; i++) await settle();
    // Event 1 committed before the stream opened: it may or may not be sent; 2 and 4 must be, in order.
    expect(seen.filter((id) => id > 1)).toEqual([2, 4]);
    expect(first).toEqual([]);
  });

  it("hands a resumed stream its backlog, then live events, each once", async () => {
    const l = heldLog();
    const feed = new EventFeed(l.log);
    for (let i = 0; i < 3; i++) l.commit();
    const seen: number[] = [];
    await feed.subscribe(scope, 1, (e) => seen.push(e.id));
    l.commit();
    for (let i = 0; i < 20 && seen.length < 3; i++) await settle();
    expect(seen).toEqual([2, 3, 4]);
  });

  it("holds back events while an older transaction runs, then hands them over in commit order without another signal", async () => {
    // PostgreSQL's log (migration 0048): rows carry their transaction; a read takes only the rows of
    // transactions below its horizon (the oldest transaction still running).
    const rows: StoredOrderEvent[] = [];
    const running = new Set<bigint>();
    let signal: () => void = () => {};
    let reads = 0;
    const horizon = () =>
      running.size === 0
        ? 1n << 62n
        : // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers)
          [...running].reduce((a, b) => (a < b ? a : b));
    const ordered = () => [...rows].sort((a, b) => (isAfter(positionOf(a), positionOf(b)) ? 1 : -1));
    const log: OrderEventLog = {
      async head() {
        const final = ordered().filter((r) => positionOf(r).tx < horizon());
        const last = final[final.length - 1];
        return last ? positionOf(last) : { tx: 0n, id: 0 };
      },
      async resume(id: number) {
        const row = rows.find((r) => r.id === id);
        return row ? positionOf(row) : { tx: 0n, id: 0 };
      },
      async after(from: EventPosition, limit: number) {
        reads++;
        const page: StoredOrderEvent[] = [];
        for (const r of ordered()
          .filter((r) => isAfter(positionOf(r), from))
          .slice(0, limit)) {
          if (positionOf(r).tx >= horizon()) return { rows: page, heldBack: true };
          page.push(r);
        }
        return { rows: page, heldBack: false };
      },
      onCommitted(listener) {
        signal = listener;
        return () => {};
      },
    };
    const commit = (id: number, tx: bigint) => {
      running.delete(tx);
      rows.push({
        id,
        tx: String(tx),
        type: "order.offered",
        order_id: `ord_${id}`,
        account_id: "acc_a",
        livemode: 0,
        contractor_id: null,
        previous_contractor_id: null,
        created_at: new Date().toISOString(),
        payload: "{}",
      });
      signal();
    };
    const feed = new EventFeed(log);
    const seen: number[] = [];
    let arrived: () => void = () => {};
    const arrival = (n: number) =>
      new Promise<void>((resolve) => {
        arrived = () => {
          if (seen.length >= n) resolve();
        };
        arrived();
      });
    await feed.subscribe(scope, null, (e) => {
      seen.push(e.id);
      arrived();
    });
    // Transaction 10 writes no event and is still running when 11 commits event 2: 2 is not final.
    running.add(10n);
    const readsBefore = reads;
    commit(2, 11n);
    while (reads === readsBefore) await settle();
    await settle();
    expect(seen).toEqual([]);
    // 10 ends without a signal (it wrote no event): the feed reads again by itself.
    running.delete(10n);
    await arrival(1);
    expect(seen).toEqual([2]);
    // 12 drew id 4 and 13 drew id 3; 13 commits first and waits for 12; then both, in commit order.
    running.add(12n);
    running.add(13n);
    commit(3, 13n);
    commit(4, 12n);
    await arrival(3);
    expect(seen).toEqual([2, 4, 3]);
    // A stream resuming after 4 gets 3, which a resume after an id would have skipped.
    const resumed: number[] = [];
    await feed.subscribe(scope, 4, (e) => resumed.push(e.id));
    expect(resumed).toEqual([3]);
    feed.close();
  });
});
