// Migration 0020 adds the service-level clocks' firing columns (null on the orders already there: their
// clocks have fired nothing) and the open orders' partial index, and takes both back down. On SQLite,
// and on PostgreSQL with TEST_DATABASE_URL.

import { Migrator } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { migrationProvider } from "../../src/storage/migrations/all-migrations.js";
import { openPostgresTestStore, openTestStore, type TestStore } from "../helpers/test-store.js";
import { order } from "./store-contract.js";

const opened: TestStore[] = [];
afterAll(async () => {
  for (const t of opened) {
    await t.store.close();
    await t.cleanup();
  }
});

function migrator(store: KyselyStore): Migrator {
  return new Migrator({
    db: store.db,
    provider: migrationProvider(store.dialect),
    ...(store.schema ? { migrationTableSchema: store.schema } : {}),
  });
}

const SLA_COLUMNS = [
  "sla_respond_at_risk_at",
  "sla_respond_breached_at",
  "sla_arrive_at_risk_at",
  "sla_arrive_breached_at",
];

function suite(open: () => Promise<TestStore>) {
  it("adds the firing columns, null on existing orders, and takes them back down", async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    expect((await migrator(store).migrateTo("0017-order-time")).error).toBeUndefined();
    const account = (await store.keys.ensureAccount("sla-migration")).id;
    await store.db
      .insertInto("orders")
      .values(order({ id: "ord_before0020", account_id: account, status: "offered" }))
      .execute();
    expect((await migrator(store).migrateToLatest()).error).toBeUndefined();
    const row = (await store.orders.byId("ord_before0020")) as unknown as Record<string, unknown>;
    for (const column of SLA_COLUMNS) expect(row[column], column).toBeNull();
    // No promise stated (made before 0017): the watch has nothing to read of it.
    expect(await store.orders.slaWatched(null, 10)).toEqual([]);

    // Down to the migration before 0020 (later ones are undone with it).
    expect((await migrator(store).migrateTo("0019-contractor-calendars")).error).toBeUndefined();
    const tables = await store.db.introspection.getTables();
    // On PostgreSQL the introspection lists every schema's tables: other test files' stores are there too.
    const columns =
      tables
        .find((x) => x.name === "orders" && (store.schema === undefined || x.schema === store.schema))
        ?.columns.map((c) => c.name) ?? [];
    expect(columns).toContain("arrive_by");
    for (const column of SLA_COLUMNS) expect(columns).not.toContain(column);
    expect((await migrator(store).migrateToLatest()).error).toBeUndefined();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
