// Migration 0037 (recalls) adds orders.recall_of, null for the orders before it, and two partial indexes
// the evals' recall figures read through: the recalls (recall_of set) and the completed orders (by mode
// and completed_at). Down, both indexes and the column go. On SQLite, and on PostgreSQL with
// TEST_DATABASE_URL.

import { type Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { orderFixture, orderRowBefore } from "../helpers/order-fixture.js";
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
  it("adds recall_of (null for earlier orders) and the recall figures' indexes, and takes them back down", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0035-invoices");
    const account = (await store.keys.ensureAccount("recalls-migration")).id;
    const completedAt = "2026-10-01T10:00:00.000Z";
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await raw
      .insertInto("orders")
      .values(
        orderRowBefore(
          orderFixture({
            id: "ord_before0037",
            account_id: account,
            contractor_id: null,
            status: "completed",
            completed_at: completedAt,
          }),
          [],
        ),
      )
      .execute();

    await store.migrate();
    expect(await indexesOf(store, "orders")).toEqual(
      expect.arrayContaining(["orders_recall_idx", "orders_completed_idx"]),
    );
    expect((await store.orders.byId("ord_before0037"))?.recall_of).toBeNull();
    // The earlier order is counted as a job completed, not recalled.
    expect(
      await store.evals.recallCounts(true, "2026-09-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z"),
    ).toEqual([{ contractorId: null, completed: 1, recalled: 0 }]);
    if (store.dialect === "sqlite") {
      const plan = await sql<{ detail: string }>`explain query plan
        select o.id, exists (select 1 from orders r where r.recall_of = o.id) from orders o
        where o.livemode = 1 and o.completed_at is not null and o.completed_at >= ${completedAt}`.execute(
        store.db,
      );
      const details = plan.rows.map((r) => r.detail).join(" ");
      expect(details).toContain("orders_completed_idx");
      expect(details).toContain("orders_recall_idx");
    }

    await store.migrateTo("0035-invoices");
    const down = await indexesOf(store, "orders");
    expect(down).not.toContain("orders_recall_idx");
    expect(down).not.toContain("orders_completed_idx");
    const columns =
      store.dialect === "sqlite"
        ? (await sql<{ name: string }>`select name from pragma_table_info('orders')`.execute(store.db)).rows
        : (
            await sql<{ name: string }>`select column_name as name from information_schema.columns
              where table_name = 'orders' and table_schema = ${store.schema ?? "public"}`.execute(store.db)
          ).rows;
    expect(columns.map((c) => c.name)).not.toContain("recall_of");
    await store.migrate();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
