// Migration 0023 adds the proposals' contractor basis (null on the proposals already there: apply then
// checks their orders only) and takes it back down. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { Migrator } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { migrationProvider } from "../../src/storage/migrations/all-migrations.js";
import { openPostgresTestStore, openTestStore, type TestStore } from "../helpers/test-store.js";

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

async function columnsOf(store: KyselyStore): Promise<string[]> {
  const tables = await store.db.introspection.getTables();
  // On PostgreSQL the introspection lists every schema's tables: other test files' stores are there too.
  return (
    tables
      .find(
        (x) => x.name === "schedule_proposals" && (store.schema === undefined || x.schema === store.schema),
      )
      ?.columns.map((c) => c.name) ?? []
  );
}

function suite(open: () => Promise<TestStore>) {
  it("adds contractor_basis, null on existing proposals, and takes it back down", async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    expect((await migrator(store).migrateTo("0021-schedule-proposals")).error).toBeUndefined();
    expect(await columnsOf(store)).not.toContain("contractor_basis");
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
    expect((await migrator(store).migrateToLatest()).error).toBeUndefined();
    expect(await columnsOf(store)).toContain("contractor_basis");
    expect((await store.schedules.byId("prp_before0023"))?.contractor_basis).toBeNull();

    expect((await migrator(store).migrateTo("0021-schedule-proposals")).error).toBeUndefined();
    expect(await columnsOf(store)).not.toContain("contractor_basis");
    expect((await store.schedules.byId("prp_before0023"))?.basis).toBe("{}");
    expect((await migrator(store).migrateToLatest()).error).toBeUndefined();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
