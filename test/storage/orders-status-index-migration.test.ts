// Migration 0047 adds orders_status_idx (livemode, status, created_at, id), partial: every status but the
// four that accumulate (completed, approved, paid, cancelled). The dispatch team's list of a status in
// flight reads through it (on SQLite: the plan), where it walked every order of the mode newest first;
// an account's list of a status keeps the account's index; the lists' answers are the same before, after
// and back down. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { type Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { OrderStatus } from "../../src/domain/orders/statuses.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { orderToRow } from "../../src/storage/order-rows.js";
import { orderFixture } from "../helpers/order-fixture.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  indexesOf,
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();

function suite(open: () => Promise<TestStore>) {
  it("lists a status in flight through orders_status_idx, the same orders before, after and back down", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0046-audit-order-index");
    expect(await indexesOf(store, "orders")).not.toContain("orders_status_idx");

    const busy = (await store.keys.ensureAccount("status-index-busy")).id;
    const small = (await store.keys.ensureAccount("status-index-small")).id;
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const statuses: OrderStatus[] = ["completed", "paid", "cancelled", "accepted", "needs_dispatcher"];
    const rows: Record<string, unknown>[] = [];
    for (let i = 0; i < 300; i++) {
      // Mostly finished work; an accepted order every 50th, a needs_dispatcher every 75th.
      const status: OrderStatus =
        i % 50 === 3 ? "accepted" : i % 75 === 5 ? "needs_dispatcher" : (statuses[i % 3] as OrderStatus);
      const minute = String(i % 60).padStart(2, "0");
      const hour = String(Math.floor(i / 60)).padStart(2, "0");
      rows.push(
        orderToRow(
          orderFixture({
            id: `ord_0047_${String(i).padStart(3, "0")}`,
            account_id: i % 10 === 0 ? small : busy,
            livemode: true,
            status,
            created_at: `2026-11-20T${hour}:${minute}:00.000Z`,
          }),
        ),
      );
    }
    await raw.insertInto("orders").values(rows).execute();
    const listed = async (status: OrderStatus, accountId?: string) =>
      (
        await store.orders.list({
          livemode: true,
          status,
          limit: 50,
          ...(accountId !== undefined ? { accountId } : {}),
        })
      ).map((o) => o.id);
    const answers = async () => ({
      accepted: await listed("accepted"),
      needs: await listed("needs_dispatcher"),
      completed: await listed("completed"),
      smallAccepted: await listed("accepted", small),
      busyPaid: await listed("paid", busy),
    });
    const before = await answers();
    expect(before.accepted).toHaveLength(6);
    expect(before.accepted).toEqual([...before.accepted].sort().reverse());
    expect(before.needs.length).toBeGreaterThan(0);
    expect(before.completed).toHaveLength(50);

    await store.migrate();
    expect(await indexesOf(store, "orders")).toContain("orders_status_idx");
    expect(await answers()).toEqual(before);
    if (store.dialect === "sqlite") {
      const explain = async (query: string) =>
        (await sql<{ detail: string }>`${sql.raw(`explain query plan ${query}`)}`.execute(store.db)).rows
          .map((r) => r.detail)
          .join(" | ");
      // The store's statements, as order-store.ts `list` builds them (the dispatch team's, an account's).
      const team = await explain(
        `select * from orders where livemode = 1 and status = 'accepted' and status not in ('completed', 'approved', 'paid', 'cancelled') order by created_at desc, id desc limit 51`,
      );
      expect(team).toContain("orders_status_idx");
      expect(team).not.toContain("TEMP B-TREE");
      const account = await explain(
        `select * from orders where livemode = 1 and account_id = 'a' and status = 'accepted' order by created_at desc, id desc limit 51`,
      );
      expect(account).toContain("orders_account_idx");
    }

    await store.migrateTo("0046-audit-order-index");
    expect(await indexesOf(store, "orders")).not.toContain("orders_status_idx");
    expect(await answers()).toEqual(before);
    await store.migrate();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
