// Migration 0023 adds the proposals' contractor basis (null on the proposals already there: apply then
// checks their orders only) and takes it back down. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

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

function proposalColumns(store: KyselyStore): Promise<string[]> {
  return columnsOf(store, "schedule_proposals");
}

function suite(open: () => Promise<TestStore>) {
  it("adds contractor_basis, null on existing proposals, and takes it back down", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0021-schedule-proposals");
    expect(await proposalColumns(store)).not.toContain("contractor_basis");
    await store.db
      .insertInto("schedule_proposals")
      .values({
        id: "prp_before0023",
        livemode: 0,
        created_at: "2026-11-24T08:00:00.000Z",
        expires_at: "2026-11-24T09:00:00.000Z",
        hash: "0".repeat(64),
        body: "{}",
        basis: "{}",
        applied_at: null,
      })
      .execute();
    await store.migrate();
    expect(await proposalColumns(store)).toContain("contractor_basis");
    expect((await store.schedules.byId("prp_before0023"))?.contractor_basis).toBeNull();

    await store.migrateTo("0021-schedule-proposals");
    expect(await proposalColumns(store)).not.toContain("contractor_basis");
    expect((await store.schedules.byId("prp_before0023"))?.basis).toBe("{}");
    await store.migrate();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
