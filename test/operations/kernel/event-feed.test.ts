// The feed's ordering under concurrency, on a log whose reads the test holds and releases: a stream that
// opens while the feed is reading gets every event committed after it opened, once and in order, and a
// resumed stream's live events wait for its backlog.

import { describe, expect, it } from "vitest";
import { EventFeed } from "../../../src/operations/kernel/event-feed.js";
import type { EventScope, OrderEventLog, StoredOrderEvent } from "../../../src/storage/order-event-store.js";

/** An in-memory log whose latestId() answers only when the test says. */
function heldLog() {
  const rows: StoredOrderEvent[] = [];
  let signal: () => void = () => {};
  const held: Array<() => void> = [];
  let hold = false;
  const log: OrderEventLog = {
    async latestId() {
      if (hold) await new Promise<void>((r) => held.push(r));
      return rows.length;
    },
    async after(afterId: number, limit: number, scope?: EventScope) {
      return rows
        .filter((r) => r.id > afterId && (!scope || r.account_id === scope.accountId))
        .slice(0, limit);
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
});
