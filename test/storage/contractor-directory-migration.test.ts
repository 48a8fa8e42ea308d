// Migration 0013 fills orders.on_site_at from the audit log: the latest report to on_site since the
// order's last acceptance or assignment (the arrival of the contractor holding it), for orders past
// their arrival. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import type { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { sealRecord } from "../../src/audit/record.js";
import type { OrderStatus } from "../../src/domain/orders/transitions.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { orderFixture, orderRowBefore } from "../helpers/order-fixture.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();

function migrate(store: KyselyStore, to?: string): Promise<void> {
  return store.migrateTo(to);
}

const T0 = Date.parse("2030-02-01T12:00:00.000Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

function suite(open: () => Promise<TestStore>) {
  it("takes the arrival of the contractor holding the order, and none from before its assignment", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await migrate(store, "0012-evals-figures");
    const account = (await store.keys.ensureAccount("migration")).id;
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const row = (id: string, status: OrderStatus, acceptedAt: number, etaAt: number | null) =>
      orderRowBefore(
        orderFixture({
          id,
          account_id: account,
          status,
          accepted_at: at(acceptedAt),
          eta_at: etaAt === null ? null : at(etaAt),
        }),
        // Columns of 0013 and later migrations, which 0012's table does not have.
        [
          "on_site_at",
          "time_zone",
          "window_start",
          "window_end",
          "window_source",
          "respond_by",
          "arrive_by",
          "sla_respond_at_risk_at",
          "sla_respond_breached_at",
          "sla_arrive_at_risk_at",
          "sla_arrive_breached_at",
        ],
      );
    await raw
      .insertInto("orders")
      .values([
        row("ord_arrived", "completed", 0, 30),
        // Re-dispatched after its first contractor arrived and failed; the second is on its way.
        row("ord_redispatched", "cannot_complete", 100, 130),
        row("ord_on_way", "en_route", 0, 30),
      ])
      .execute();
    const onSite = (orderId: string, minutes: number) => {
      const {
        leaf_hash: _,
        disclosures: _d,
        ...entry
      } = sealRecord({
        kind: "order.status_changed",
        at: at(minutes),
        accountId: account,
        livemode: true,
        orderId,
        actor: "operator:test",
        data: { from: "en_route", status: "on_site", to: "on_site" },
      });
      return entry;
    };
    await raw
      .insertInto("audit_records")
      .values([onSite("ord_arrived", 40), onSite("ord_redispatched", 50)])
      .execute();

    await migrate(store);
    const rows = await store.orders.byIds(["ord_arrived", "ord_redispatched", "ord_on_way"]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.on_site_at]))).toEqual({
      ord_arrived: at(40),
      ord_redispatched: null,
      ord_on_way: null,
    });
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
