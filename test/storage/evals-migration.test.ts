// Migration 0012 rebuilds the evals' rollup (and fills the columns its figures read) from the orders a
// store already holds: after it, the rollup gives the figures a read of every order gives; down goes
// back to 0008's rollup, and up again rebuilds it. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { type Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { sealRecord } from "../../src/audit/record.js";
import type { Order } from "../../src/domain/orders/order.js";
import { EvalsStore } from "../../src/storage/evals-store.js";
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

function migrateTo(store: KyselyStore, name: string): Promise<void> {
  return store.migrateTo(name);
}

function migrateToLatest(store: KyselyStore): Promise<void> {
  return store.migrate();
}

const DAY = 86_400_000;
const T0 = Date.parse("2030-01-20T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** The columns 0012 adds: an order as 0010 stored it has none of them. */
const ADDED = [
  "matching_time_ms",
  "first_accepted_at",
  "offers_made",
  "offers_declined",
  "offers_expired",
  "accepted_offer_attempt",
  "manual_dispatch_count",
  "redispatch_count",
] as const;

/** Columns of later migrations (0013's arrival, 0017's order time, 0020's clocks), which 0010's table
 * does not have either. */
const LATER = [
  "on_site_at",
  "sla_respond_at_risk_at",
  "sla_respond_breached_at",
  "sla_arrive_at_risk_at",
  "sla_arrive_breached_at",
  "time_zone",
  "window_start",
  "window_end",
  "window_source",
  "respond_by",
  "arrive_by",
] as const;

function as0010(order: Order): Record<string, unknown> {
  return orderRowBefore(order, [...ADDED, ...LATER]);
}

/** Orders of ten days as 0010 stored them: every status, some with NTEs, overrides and latencies. */
function history(accountId: string) {
  const statuses = ["offered", "accepted", "completed", "invoiced", "cancelled", "needs_dispatcher"];
  return Array.from({ length: 60 }, (_, i) => {
    const received = T0 - 10 * DAY + i * 4 * 3_600_000 + i * 7_919;
    const status = statuses[i % statuses.length] as Order["status"];
    const accepted =
      ["accepted", "completed", "invoiced"].includes(status) || (status === "cancelled" && i % 2);
    return as0010(
      orderFixture({
        id: `ord_mig${String(i).padStart(3, "0")}`,
        account_id: accountId,
        livemode: i % 7 !== 6,
        status,
        received_at: iso(received),
        created_at: iso(received),
        updated_at: iso(received),
        matched_at: status === "needs_dispatcher" ? null : iso(received),
        dispatch_latency_ms: status === "needs_dispatcher" ? null : 0.01 + (i % 13) / 1000,
        accepted_at: accepted ? iso(received + (i + 1) * 60_000) : null,
        override_count: i % 5 === 0 ? 1 : 0,
        nte_cents: i % 3 === 0 ? 10_000 : null,
        final_cost_cents: ["completed", "invoiced"].includes(status) ? 8_000 + i * 100 : null,
        invoice_cents: status === "invoiced" ? 8_000 + i * 50 : null,
      }),
    );
  });
}

/** Offers and audit records of three orders of the history, from which 0012 fills its columns. */
function traces(accountId: string) {
  const at = (minutes: number) => iso(T0 - 5 * DAY + minutes * 60_000);
  const offer = (orderId: string, attempt: number, status: string) => ({
    id: `ofr_mig_${orderId}_${attempt}`,
    order_id: orderId,
    contractor_id: `ctr_${attempt}`,
    livemode: 1,
    attempt,
    status,
    offered_at: at(attempt),
    deadline_at: at(attempt + 60),
    responded_at: at(attempt + 1),
    reason: null,
  });
  const record = (
    orderId: string,
    kind: "order.accepted" | "order.assigned",
    minutes: number,
    from?: string,
  ) => {
    const entry = sealRecord({
      kind,
      at: at(minutes),
      accountId,
      livemode: true,
      orderId,
      actor: "operator:test",
      data: from ? { action: "assign", from_status: from } : { offer_id: "x" },
    });
    const { leaf_hash: _, disclosures: _d, ...row } = entry;
    return row;
  };
  // What order.matched recorded before 0012: the time from the request to the in-memory pick.
  const {
    leaf_hash: _,
    disclosures: _d,
    ...matched
  } = sealRecord({
    kind: "order.matched",
    at: at(0),
    accountId,
    livemode: true,
    orderId: "ord_mig001",
    actor: "operator:test",
    data: { status: "offered", dispatch_latency_ms: 0.042 },
  });
  return {
    // ord_mig001: declined, expired, then accepted at the third attempt; later reassigned by hand.
    // ord_mig002: its first offer accepted; the contractor failed and a dispatcher re-dispatched it.
    // ord_mig005: no contractor at creation; a dispatcher assigned it, then another.
    offers: [
      offer("ord_mig001", 1, "declined"),
      offer("ord_mig001", 2, "expired"),
      offer("ord_mig001", 3, "accepted"),
      offer("ord_mig002", 1, "accepted"),
    ],
    audit: [
      matched,
      record("ord_mig001", "order.accepted", 30),
      record("ord_mig001", "order.assigned", 90, "accepted"),
      record("ord_mig002", "order.accepted", 10),
      record("ord_mig002", "order.assigned", 200, "cannot_complete"),
      record("ord_mig005", "order.assigned", 50, "needs_dispatcher"),
      record("ord_mig005", "order.assigned", 70, "accepted"),
    ],
    at,
  };
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
  it("rebuilds the rollup from the orders there are, and back to 0008's and forth", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await migrateTo(store, "0010-order-version");
    const account = (await store.keys.ensureAccount("migration")).id;
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await raw.insertInto("orders").values(history(account)).execute();
    const { offers, audit, at } = traces(account);
    await raw.insertInto("offers").values(offers).execute();
    await raw.insertInto("audit_records").values(audit).execute();

    await migrateToLatest(store);
    await figuresAgree(store);
    const rows = await store.orders.byIds(["ord_mig001", "ord_mig002", "ord_mig005", "ord_mig003"]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const added = (id: string) => Object.fromEntries(ADDED.map((c) => [c, byId.get(id)?.[c]]));
    expect(added("ord_mig001")).toEqual({
      matching_time_ms: null,
      first_accepted_at: at(30),
      offers_made: 3,
      offers_declined: 1,
      offers_expired: 1,
      accepted_offer_attempt: 3,
      manual_dispatch_count: 0,
      redispatch_count: 0,
    });
    expect(added("ord_mig002")).toMatchObject({
      first_accepted_at: at(10),
      offers_made: 1,
      accepted_offer_attempt: 1,
      manual_dispatch_count: 0,
      redispatch_count: 1,
    });
    expect(added("ord_mig005")).toMatchObject({
      first_accepted_at: at(50),
      offers_made: 0,
      accepted_offer_attempt: null,
      manual_dispatch_count: 1,
      redispatch_count: 0,
    });
    // Without records, the last acceptance stands for the first.
    expect(byId.get("ord_mig003")?.first_accepted_at).toBe(byId.get("ord_mig003")?.accepted_at);
    expect(byId.get("ord_mig003")?.first_accepted_at).not.toBeNull();
    // The in-memory measurements are not the committed-offer latency: none is left.
    const latencies = await store.db.selectFrom("orders").select("dispatch_latency_ms").execute();
    expect(latencies.filter((r) => r.dispatch_latency_ms !== null)).toEqual([]);

    await migrateTo(store, "0010-order-version");
    // 0008's rollup again, filled from the orders, and kept by its triggers.
    expect(await rolledUp(store)).toBe(60);
    // Down: the in-memory measurement is back where order.matched kept it.
    const back = await store.db
      .selectFrom("orders")
      .select("dispatch_latency_ms")
      .where("id", "=", "ord_mig001")
      .executeTakeFirst();
    expect(back?.dispatch_latency_ms).toBe(0.042);
    await raw
      .insertInto("orders")
      .values(as0010(orderFixture({ id: "ord_mig_after", account_id: account })))
      .execute();
    expect(await rolledUp(store)).toBe(61);
    await migrateToLatest(store);
    await figuresAgree(store);
    // Up and down through every migration since 0010, twice, on PostgreSQL under load: a budget of its own.
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
