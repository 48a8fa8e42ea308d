// Migration 0046 makes audit_records_order_idx (order_id, livemode, seq), where it was (order_id): the audit
// listing of one order of an account (livemode, account and order given, in log order) reads that order's
// records through it, not every record of the account through audit_records_account_idx, as SQLite's
// planner chose before (it has no statistics and counts equality terms per index). The listing's answer
// is the same before, after and back down. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { type Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { ALL_ACCOUNTS } from "../../src/audit/persistence.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();

/** The columns of audit_records_order_idx, in order, in this store's schema only. */
async function orderIndexColumns(store: KyselyStore): Promise<string[]> {
  if (store.dialect === "sqlite") {
    const rows = await sql<{ name: string }>`select name from pragma_index_info('audit_records_order_idx')
      order by seqno`.execute(store.db);
    return rows.rows.map((r) => r.name);
  }
  const rows = await sql<{ name: string }>`select a.attname as name
    from pg_index i
    join pg_class c on c.oid = i.indexrelid
    join pg_namespace n on n.oid = c.relnamespace
    cross join lateral unnest(i.indkey) with ordinality as k(attnum, pos)
    join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
    where c.relname = 'audit_records_order_idx' and n.nspname = ${store.schema ?? "public"}
    order by k.pos`.execute(store.db);
  return rows.rows.map((r) => r.name);
}

const ACCOUNT = "acct_0046_busy";
const ORDER = "ord_0046_target";

/** The listing's query as `listAudit` builds it for one order of one account. */
function listingQuery(store: KyselyStore) {
  const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
  return db
    .selectFrom("audit_records")
    .selectAll()
    .where("livemode", "=", 0)
    .where("account_id", "=", ACCOUNT)
    .where("order_id", "=", ORDER)
    .orderBy("seq")
    .limit(50)
    .compile();
}

async function sqlitePlan(store: KyselyStore): Promise<string> {
  const q = listingQuery(store);
  const rows = await store.db.executeQuery<{ detail: string }>({
    ...q,
    sql: `explain query plan ${q.sql}`,
  });
  return rows.rows.map((r) => r.detail).join(" | ");
}

function suite(open: () => Promise<TestStore>) {
  it("finds one order's records through the order's index, the same records before, after and back down", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0045-requests");
    expect(await orderIndexColumns(store)).toEqual(["order_id"]);

    // An account with many records of other orders (and some without an order), and three of the target's,
    // one of them in live mode.
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const rows: Record<string, unknown>[] = [];
    for (let i = 0; i < 600; i++) {
      const target = i % 200 === 7;
      rows.push({
        seal: `seal_0046_${i}`,
        kind: "order.status_changed",
        account_id: ACCOUNT,
        livemode: target && i > 400 ? 1 : 0,
        order_id: target ? ORDER : i % 9 === 0 ? null : `ord_0046_${i % 80}`,
        actor: "system",
        created_at: "2026-11-20T10:00:00.000Z",
        record: "{}",
      });
    }
    await raw.insertInto("audit_records").values(rows).execute();
    const listed = async () =>
      (await store.audit.listAudit({ accountId: ACCOUNT, livemode: false, orderId: ORDER, limit: 50 })).map(
        (r) => r.seal,
      );
    const expected = ["seal_0046_7", "seal_0046_207"];
    expect(await listed()).toEqual(expected);
    if (store.dialect === "sqlite") expect(await sqlitePlan(store)).toContain("audit_records_account_idx");

    await store.migrate();
    expect(await orderIndexColumns(store)).toEqual(["order_id", "livemode", "seq"]);
    expect(await listed()).toEqual(expected);
    if (store.dialect === "sqlite") expect(await sqlitePlan(store)).toContain("audit_records_order_idx");
    // The dispatch team's listing of the order (every account) and an order's seals in log order.
    expect(
      (
        await store.audit.listAudit({ accountId: ALL_ACCOUNTS, livemode: true, orderId: ORDER, limit: 50 })
      ).map((r) => r.seal),
    ).toEqual(["seal_0046_407"]);
    expect((await store.audit.orderSeals(ORDER)).map((r) => r.seal)).toEqual([...expected, "seal_0046_407"]);

    await store.migrateTo("0045-requests");
    expect(await orderIndexColumns(store)).toEqual(["order_id"]);
    expect(await listed()).toEqual(expected);
    await store.migrate();
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
