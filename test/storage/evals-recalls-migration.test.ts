// Migration 0049 fills the evals' recall rollup from the orders there are (completed orders by mode, UTC
// day and contractor, and how many of them a later order recalls), and its triggers follow from there: the
// 90-day recall figures read from it equal those read from the orders, before more orders, after, and
// after going down and up again. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { type Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { EvalsStore, type RecallCount } from "../../src/storage/evals-store.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { orderToRow } from "../../src/storage/order-rows.js";
import { orderFixture } from "../helpers/order-fixture.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();
const DAY = 86_400_000;
const BASE = Date.parse("2031-01-01T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const sorted = (counts: RecallCount[]) =>
  [...counts].sort((a, b) => String(a.contractorId).localeCompare(String(b.contractorId)));

function suite(open: () => Promise<TestStore>) {
  it("fills the recall rollup from the orders there are and follows them", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0048-order-events-commit-order");
    const account = (await store.keys.ensureAccount("recall-rollup-migration")).id;
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const orders = (from: number, n: number) =>
      Array.from({ length: n }, (_, k) => {
        const i = from + k;
        return orderFixture({
          id: `ord_0049_${String(i).padStart(3, "0")}`,
          account_id: account,
          livemode: i % 7 !== 0,
          status: i % 5 === 0 ? "accepted" : "completed",
          contractor_id: `con_${i % 3}`,
          received_at: iso(BASE + i * 3_600_000),
          created_at: iso(BASE + i * 3_600_000),
          completed_at: i % 5 === 0 ? null : iso(BASE + i * 3_600_000 + 7_200_000),
          // Every fourth order recalls the one three before it (some recalled twice over the lot).
          recall_of: i % 4 === 0 && i >= 3 ? `ord_0049_${String(i - 3).padStart(3, "0")}` : null,
        });
      });
    await raw.insertInto("orders").values(orders(0, 120).map(orderToRow)).execute();
    await store.migrate();
    const direct = new EvalsStore(store.db, store.dialect, { rollup: false });
    const since = iso(BASE - 90 * DAY + 5 * 3_600_000);
    const until = iso(BASE + 30 * DAY);
    const expectSame = async () => {
      for (const livemode of [true, false]) {
        const want = sorted(await direct.recallCounts(livemode, since, until));
        expect(sorted(await store.evals.recallCounts(livemode, since, until))).toEqual(want);
      }
      return sorted(await direct.recallCounts(true, since, until));
    };
    const before = await expectSame();
    expect(before.reduce((n, c) => n + c.recalled, 0)).toBeGreaterThan(0);
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from evals_recall_daily`.execute(
      store.db,
    );
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    // More orders through the triggers: the same answers as the orders give.
    await store.write(async (tx) => {
      for (const order of orders(120, 40)) await tx.insertOrder(order);
    });
    const after = await expectSame();
    expect(after).not.toEqual(before);

    await store.migrateTo("0048-order-events-commit-order");
    expect(sorted(await direct.recallCounts(true, since, until))).toEqual(after);
    await store.migrate();
    await expectSame();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
