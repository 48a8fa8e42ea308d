// Migration 0022 adds the capacity ledger's block of time (null on the rows already there: they hold a
// unit, not a time) and takes it back down. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  columnsOf,
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();

const BLOCK_COLUMNS = ["starts_at", "ends_at", "lat", "lon"];

function holdColumns(store: KyselyStore): Promise<string[]> {
  return columnsOf(store, "capacity_holds");
}

function suite(open: () => Promise<TestStore>) {
  it("adds the block columns, null on existing holds, and takes them back down", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0021-schedule-proposals");
    await store.db
      .insertInto("capacity_holds")
      .values({ order_id: "ord_before0022", contractor_id: "ctr_x", taken_at: "2030-06-01T00:00:00.000Z" })
      .execute();
    await store.migrate();
    const row = (await store.db
      .selectFrom("capacity_holds")
      .selectAll()
      .where("order_id", "=", "ord_before0022")
      .executeTakeFirst()) as Record<string, unknown> | undefined;
    for (const column of BLOCK_COLUMNS) expect(row?.[column], column).toBeNull();
    // A hold without a time holds no time: the pool's reader leaves it out.
    expect(await store.contractors.commitments()).toEqual([]);
    expect(await holdColumns(store)).toEqual(expect.arrayContaining(BLOCK_COLUMNS));

    await store.migrateTo("0021-schedule-proposals");
    const columns = await holdColumns(store);
    expect(columns).toContain("taken_at");
    for (const column of BLOCK_COLUMNS) expect(columns).not.toContain(column);
    // The row is still there, and comes back up.
    await store.migrate();
    expect(
      await store.db
        .selectFrom("capacity_holds")
        .select("order_id")
        .where("contractor_id", "=", "ctr_x")
        .execute(),
    ).toEqual([{ order_id: "ord_before0022" }]);
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
