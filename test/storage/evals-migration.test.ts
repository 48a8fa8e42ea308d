// Migration 0012 rebuilds the evals' rollup (and fills the columns its figures read) from the orders a
// store already holds: after it, the rollup gives the figures a read of every order gives; down goes
// back to 0008's rollup, and up again rebuilds it. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { Migrator, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { EvalsStore } from "../../src/storage/evals-store.js";
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

async function migrateTo(store: KyselyStore, name: string): Promise<void> {
  const { error } = await migrator(store).migrateTo(name);
  if (error) throw error;
}

async function migrateToLatest(store: KyselyStore): Promise<void> {
  const { error } = await migrator(store).migrateToLatest();
  if (error) throw error;
}

const DAY = 86_400_000;
const T0 = Date.parse("2030-01-20T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** Orders of ten days as 0010 stored them: every status, some with NTEs, overrides and latencies. */
function history(accountId: string) {
  const statuses = ["offered", "accepted", "completed", "invoiced", "cancelled", "needs_dispatcher"];
  return Array.from({ length: 60 }, (_, i) => {
    const received = T0 - 10 * DAY + i * 4 * 3_600_000 + i * 7_919;
    const status = statuses[i % statuses.length] as string;
    const accepted =
      ["accepted", "completed", "invoiced"].includes(status) || (status === "cancelled" && i % 2);
    return order({
      id: `ord_mig${String(i).padStart(3, "0")}`,
      account_id: accountId,
      livemode: i % 7 === 6 ? 0 : 1,
      status,
      received_at: iso(received),
      created_at: iso(received),
      updated_at: iso(received),
      matched_at: status === "needs_dispatcher" ? null : iso(received),
      dispatch_latency_ms: status === "needs_dispatcher" ? null : 0.01 + (i % 13) / 1000,
      accepted_at: accepted ? iso(received + (i + 1) * 60_000) : null,
      nte_cents: i % 3 === 0 ? 10_000 : null,
      final_cost_cents: ["completed", "invoiced"].includes(status) ? 8_000 + i * 100 : null,
      invoice_cents: status === "invoiced" ? 8_000 + i * 50 : null,
    });
  });
}

async function figuresAgree(store: KyselyStore): Promise<void> {
  const live = new EvalsStore(store.db, store.dialect, { rollup: false });
  for (const [since, until] of [
    [T0 - 12 * DAY, T0],
    [T0 - 9 * DAY + 5 * 3_600_000, T0 - 2 * DAY + 11 * 3_600_000],
  ] as const) {
    const rolled = await store.evals.figures(true, iso(since), iso(until));
    expect(rolled.byStatus.size).toBeGreaterThan(0);
    expect(rolled).toEqual(await live.figures(true, iso(since), iso(until)));
  }
}

/** Orders counted by the rollup there is (0008's or 0012's: both have the `orders` sum; PostgreSQL's
 * deltas not yet folded in included). */
async function rolledUp(store: KyselyStore): Promise<number> {
  const deltas = store.dialect === "postgres" ? sql`UNION ALL SELECT orders FROM evals_daily_delta` : sql``;
  const { rows } = await sql<{ n: number | string | null }>`
    SELECT sum(orders) AS n FROM (SELECT orders FROM evals_daily ${deltas}) r`.execute(store.db);
  return Number(rows[0]?.n ?? 0);
}

function suite(open: () => Promise<TestStore>) {
  it("rebuilds the rollup from the orders there are, and back to 0008's and forth", async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await migrateTo(store, "0010-order-version");
    const account = (await store.ensureAccount("migration")).id;
    await store.db.insertInto("orders").values(history(account)).execute();

    await migrateToLatest(store);
    await figuresAgree(store);

    await migrateTo(store, "0010-order-version");
    // 0008's rollup again, filled from the orders, and kept by its triggers.
    expect(await rolledUp(store)).toBe(60);
    await store.db
      .insertInto("orders")
      .values(order({ id: "ord_mig_after", account_id: account }))
      .execute();
    expect(await rolledUp(store)).toBe(61);
    await migrateToLatest(store);
    await figuresAgree(store);
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
