// Migration 0020 adds the service-level clocks' firing columns (null on the orders already there: their
// clocks have fired nothing) and the open orders' partial index, and takes both back down. On SQLite,
// and on PostgreSQL with TEST_DATABASE_URL.

import type { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { orderFixture, orderRowBefore } from "../helpers/order-fixture.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  columnsOf,
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();

const SLA_COLUMNS = [
  "sla_respond_at_risk_at",
  "sla_respond_breached_at",
  "sla_arrive_at_risk_at",
  "sla_arrive_breached_at",
];

function suite(open: () => Promise<TestStore>) {
  it("adds the firing columns, null on existing orders, and takes them back down", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0017-order-time");
    const account = (await store.keys.ensureAccount("sla-migration")).id;
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await raw
      .insertInto("orders")
      .values(
        orderRowBefore(
          orderFixture({ id: "ord_before0020", account_id: account, status: "offered" }),
          SLA_COLUMNS,
        ),
      )
      .execute();
    await store.migrate();
    const row = (await store.orders.byId("ord_before0020")) as unknown as Record<string, unknown>;
    for (const column of SLA_COLUMNS) expect(row[column], column).toBeNull();
    // No promise stated (made before 0017): the watch has nothing to read of it.
    expect(await store.orders.slaWatched(null, 10)).toEqual([]);

    // Down to the migration before 0020 (later ones are undone with it).
    await store.migrateTo("0019-contractor-calendars");
    const columns = await columnsOf(store, "orders");
    expect(columns).toContain("arrive_by");
    for (const column of SLA_COLUMNS) expect(columns).not.toContain(column);
    await store.migrate();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
