// Migration 0024 replaces orders_lifecycle_idx with orders_sandbox_idx, the same columns for the sandbox's
// orders only, drops capacity_holds_contractor_idx on SQLite (nothing reads it there), and takes both back
// down. The sandbox's sweep reads the same orders either way. On SQLite, and on PostgreSQL with
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

const orderIndexes = (store: KyselyStore) => indexesOf(store, "orders");
const holdIndexes = (store: KyselyStore) => indexesOf(store, "capacity_holds");

function suite(open: () => Promise<TestStore>) {
  it("swaps the lifecycle index for the sandbox's, the sweep reading the same orders, and back down", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0022-capacity-time");
    expect(await orderIndexes(store)).toContain("orders_lifecycle_idx");
    expect(await holdIndexes(store)).toContain("capacity_holds_contractor_idx");
    const account = (await store.keys.ensureAccount("order-indexes-migration")).id;
    const at = "2026-11-20T10:00:00.000Z";
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await raw
      .insertInto("orders")
      .values([
        orderRowBefore(
          orderFixture({
            id: "ord_sandbox0024",
            account_id: account,
            livemode: false,
            status: "accepted",
            updated_at: at,
          }),
          [],
        ),
        orderRowBefore(
          orderFixture({
            id: "ord_live0024",
            account_id: account,
            livemode: true,
            status: "accepted",
            updated_at: at,
          }),
          [],
        ),
      ])
      .execute();
    const swept = async () =>
      (await store.orders.sandboxOrdersIn(["accepted"], "2026-11-21T00:00:00.000Z", 10)).map((o) => o.id);
    expect(await swept()).toEqual(["ord_sandbox0024"]);

    await store.migrate();
    const after = await orderIndexes(store);
    expect(after).toContain("orders_sandbox_idx");
    expect(after).not.toContain("orders_lifecycle_idx");
    expect(after).toContain("orders_evals_idx");
    if (store.dialect === "sqlite")
      expect(await holdIndexes(store)).not.toContain("capacity_holds_contractor_idx");
    else expect(await holdIndexes(store)).toContain("capacity_holds_contractor_idx");
    expect(await swept()).toEqual(["ord_sandbox0024"]);
    if (store.dialect === "sqlite") {
      const plan = await sql<{ detail: string }>`explain query plan select * from orders
        where livemode = 0 and status in ('accepted', 'en_route') and updated_at <= ${at}
        order by updated_at limit 10`.execute(store.db);
      expect(plan.rows.map((r) => r.detail).join(" ")).toContain("orders_sandbox_idx");
    }

    // Down to the migration before 0024.
    await store.migrateTo("0022-capacity-time");
    const down = await orderIndexes(store);
    expect(down).toContain("orders_lifecycle_idx");
    expect(down).not.toContain("orders_sandbox_idx");
    expect(await holdIndexes(store)).toContain("capacity_holds_contractor_idx");
    expect(await swept()).toEqual(["ord_sandbox0024"]);
    await store.migrate();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
