// Migration 0040 (exports for accounts payable) adds two partial indexes of invoiced orders by the time
// they were first invoiced, which the invoices' export pages through: an account's (account_id, livemode,
// invoiced_at, id) and every account's (livemode, invoiced_at, id). On SQLite the export's page reads a
// range of them rather than every order of the account; down, both go. On SQLite, and on PostgreSQL with
// TEST_DATABASE_URL.

import { CompiledQuery } from "kysely";
import { describe, expect, it } from "vitest";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { orderFixture } from "../helpers/order-fixture.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  indexesOf,
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();

const INDEXES = ["orders_account_invoiced_idx", "orders_invoiced_idx"];
const FROM = "2026-10-01T00:00:00.000Z";
const TO = "2026-11-01T00:00:00.000Z";

/** The plan of the page the invoices' export reads (order-store.ts exportPage), with or without an account. */
async function pagePlan(store: KyselyStore, accountId: string | undefined): Promise<string> {
  let query = store.db
    .selectFrom("orders")
    .selectAll()
    .where("livemode", "=", 1)
    .where("invoiced_at", ">=", FROM)
    .where("invoiced_at", "<", TO);
  if (accountId !== undefined) query = query.where("account_id", "=", accountId);
  const compiled = query
    .where("status", "in", ["invoiced", "approved", "paid"])
    .orderBy("invoiced_at")
    .orderBy("id")
    .limit(500)
    .compile();
  const plan = await store.db.executeQuery<{ detail: string }>(
    CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
  );
  return plan.rows.map((r) => r.detail).join(" ");
}

function suite(open: () => Promise<TestStore>) {
  it("adds the invoiced orders' indexes, read by the export's pages, and takes them back down", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0039-invoice-approvals");
    expect(await indexesOf(store, "orders")).not.toEqual(expect.arrayContaining(INDEXES));
    await store.migrate();
    expect(await indexesOf(store, "orders")).toEqual(expect.arrayContaining(INDEXES));
    const account = (await store.keys.ensureAccount("exports-migration")).id;
    await store.write((tx) =>
      tx.insertOrder(
        orderFixture({ account_id: account, status: "approved", invoice_cents: 1, invoiced_at: FROM }),
      ),
    );
    const page = await store.orders.exportPage({
      livemode: true,
      accountId: account,
      by: "invoiced_at",
      from: FROM,
      to: TO,
      limit: 500,
    });
    expect(page.map((o) => o.account_id)).toEqual([account]);
    if (store.dialect === "sqlite") {
      expect(await pagePlan(store, account)).toContain("orders_account_invoiced_idx");
      expect(await pagePlan(store, undefined)).toContain("orders_invoiced_idx");
    }
    await store.migrateTo("0039-invoice-approvals");
    const down = await indexesOf(store, "orders");
    for (const index of INDEXES) expect(down).not.toContain(index);
    await store.migrate();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
