// Migration 0041 (sites and assets) adds sites, assets, order_sites and order_assets; an order from before
// it names no site. Down, the four tables go, and up again they come back. On SQLite, and on PostgreSQL with
// TEST_DATABASE_URL.

import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const TABLES = ["assets", "order_assets", "order_sites", "sites"];

const opened = storesClosedAfterAll();

async function tables(store: KyselyStore): Promise<string[]> {
  const rows =
    store.dialect === "sqlite"
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(store.db)
      : await sql<{ name: string }>`select tablename as name from pg_tables
          where schemaname = ${store.schema ?? "public"}`.execute(store.db);
  return rows.rows
    .map((r) => r.name)
    .filter((n) => TABLES.includes(n))
    .sort();
}

function suite(open: () => Promise<TestStore>) {
  it("adds the sites' tables, and takes them back down", { timeout: MIGRATION_TEST_TIMEOUT }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0040-invoice-exports");
    expect(await tables(store)).toEqual([]);
    await store.migrate();
    expect(await tables(store)).toEqual(TABLES);
    expect(await store.sites.ofOrder("ord_before0041")).toBeUndefined();
    await store.migrateTo("0040-invoice-exports");
    expect(await tables(store)).toEqual([]);
    await store.migrate();
    expect(await tables(store)).toEqual(TABLES);
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
