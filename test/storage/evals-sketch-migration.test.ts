// Migration 0027 backfills the evals' per-day sketches and service-level sums from the orders a store
// already holds: after it, the rollup gives what reading every order gives, its percentiles within the
// sketch's 1 % of the exact ones and its service levels equal to the domain's over every order. Down goes
// back to 0012's rollup (histograms and latency indexes, kept by its triggers), and up again rebuilds
// this one. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

import { type Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { Order } from "../../src/domain/orders/order.js";
import { slaFigures, withRunningClocks } from "../../src/domain/orders/sla-figures.js";
import { URGENCIES } from "../../src/domain/pricing.js";
import { rolledServiceLevels } from "../../src/operations/evals/figures/service-levels.js";
import { tallyOf } from "../../src/operations/evals/figures/tally.js";
import { EvalsStore } from "../../src/storage/evals-store.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { orderFixture, orderRowBefore } from "../helpers/order-fixture.js";
import { isWithinSketch } from "../helpers/sketch.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();

const H = 3_600_000;
const DAY = 24 * H;
const T0 = Date.parse("2030-03-01T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** Eighty orders over ten days: latencies, promises kept, late, breached and still running. */
function history(accountId: string): Order[] {
  const statuses = ["offered", "accepted", "on_site", "completed", "invoiced", "cancelled"] as const;
  return Array.from({ length: 80 }, (_, i) => {
    const received = T0 - 10 * DAY + i * 3 * H + i * 6_151;
    const status = statuses[i % statuses.length] as Order["status"];
    const accepted = status !== "offered" && (status !== "cancelled" || i % 2 === 0);
    const windowed = i % 3 === 0;
    const arriveBy = received + (2 + (i % 5)) * H;
    return orderFixture({
      id: `ord_sk${String(i).padStart(3, "0")}`,
      account_id: accountId,
      livemode: i % 9 !== 8,
      status,
      urgency: URGENCIES[i % URGENCIES.length] as Order["urgency"],
      received_at: iso(received),
      created_at: iso(received),
      updated_at: iso(received),
      matched_at: iso(received),
      dispatch_latency_ms: 1 + ((i * 37) % 400) / 7,
      matching_time_ms: 0.01 + (i % 13) / 997,
      first_accepted_at: accepted ? iso(received + (i + 1) * 61_000) : null,
      accepted_at: accepted ? iso(received + (i + 1) * 61_000 + (i % 4) * H) : null,
      respond_by: windowed ? null : iso(received + H),
      arrive_by: windowed ? null : iso(arriveBy),
      window_start: windowed ? iso(received + DAY) : null,
      window_end: windowed ? iso(received + DAY + 4 * H) : null,
      on_site_at: ["on_site", "completed", "invoiced"].includes(status)
        ? iso((windowed ? received + DAY : arriveBy) + ((i % 7) - 3) * 10 * 60_000)
        : null,
      sla_respond_breached_at: i % 11 === 0 ? iso(received + H) : null,
    });
  });
}

/** The window's orders read one by one: exact percentiles and the domain's service levels. */
async function direct(store: KyselyStore, since: string, until: string, now: Date) {
  const rows = (await store.orders.list({ livemode: true, limit: 1000 })).filter(
    (o) => o.received_at >= since && o.received_at < until,
  );
  const nearest = (v: number[], q: number) =>
    v.length === 0 ? null : ([...v].sort((a, b) => a - b)[Math.ceil(q * v.length) - 1] as number);
  const offer = rows.flatMap((r) => (r.dispatch_latency_ms === null ? [] : [r.dispatch_latency_ms]));
  const accept = rows.flatMap((r) =>
    r.first_accepted_at === null ? [] : [Date.parse(r.first_accepted_at) - Date.parse(r.received_at)],
  );
  return {
    offer: { n: offer.length, p50: nearest(offer, 0.5), p95: nearest(offer, 0.95) },
    accept: { n: accept.length, p50: nearest(accept, 0.5), p95: nearest(accept, 0.95) },
    serviceLevels: slaFigures(
      rows.filter((r) => r.respond_by || r.arrive_by || r.window_end),
      now,
    ),
  };
}

async function figuresAgree(store: KyselyStore): Promise<void> {
  const live = new EvalsStore(store.db, store.dialect, { rollup: false });
  const now = new Date(T0);
  for (const [since, until] of [
    [T0 - 12 * DAY, T0],
    [T0 - 9 * DAY + 5 * H, T0 - 2 * DAY + 11 * H],
  ] as const) {
    const rolled = await store.evals.figures(true, iso(since), iso(until));
    expect(rolled.byStatus.size).toBeGreaterThan(0);
    expect(rolled).toEqual(await live.figures(true, iso(since), iso(until)));
    const exact = await direct(store, iso(since), iso(until), now);
    expect(rolled.latency.offer.n).toBe(exact.offer.n);
    expect(isWithinSketch(rolled.latency.offer.p50, exact.offer.p50)).toBe(true);
    expect(isWithinSketch(rolled.latency.offer.p95, exact.offer.p95)).toBe(true);
    expect(rolled.latency.first_accept.n).toBe(exact.accept.n);
    expect(isWithinSketch(rolled.latency.first_accept.p50, exact.accept.p50)).toBe(true);
    expect(isWithinSketch(rolled.latency.first_accept.p95, exact.accept.p95)).toBe(true);
    const running = await store.evals.runningClockRows(true, iso(since), iso(until));
    const serviceLevels = withRunningClocks(rolledServiceLevels(tallyOf(rolled)), running, now);
    expect(serviceLevels).toEqual(exact.serviceLevels);
    expect(serviceLevels.onTime.arrived).toBeGreaterThan(0);
  }
}

/** The evals' tables of 0012 and 0027 (0049's recall rollup has its own test). */
async function tables(store: KyselyStore): Promise<string[]> {
  const { rows } =
    store.dialect === "postgres"
      ? await sql<{ name: string }>`SELECT tablename AS name FROM pg_tables
          WHERE schemaname = current_schema() AND tablename LIKE 'evals_%'`.execute(store.db)
      : await sql<{ name: string }>`SELECT name FROM sqlite_master
          WHERE type = 'table' AND name LIKE 'evals_%'`.execute(store.db);
  return rows
    .map((r) => r.name)
    .filter((name) => !name.startsWith("evals_recall_"))
    .sort();
}

async function indexes(store: KyselyStore): Promise<string[]> {
  const { rows } =
    store.dialect === "postgres"
      ? await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes
          WHERE schemaname = current_schema() AND tablename = 'orders'`.execute(store.db)
      : await sql<{ name: string }>`SELECT name FROM sqlite_master
          WHERE type = 'index' AND tbl_name = 'orders'`.execute(store.db);
  return rows
    .map((r) => r.name)
    .filter((n) => /latency_idx|sla_running/.test(n))
    .sort();
}

/** Orders the sums count (the deltas not yet folded in included). */
async function rolledUp(store: KyselyStore): Promise<number> {
  const deltas = store.dialect === "postgres" ? sql`UNION ALL SELECT orders FROM evals_daily_delta` : sql``;
  const { rows } = await sql<{ n: number | string | null }>`
    SELECT sum(orders) AS n FROM (SELECT orders FROM evals_daily ${deltas}) r`.execute(store.db);
  return Number(rows[0]?.n ?? 0);
}

function suite(open: () => Promise<TestStore>) {
  it("backfills the sketches and service levels from the orders there are, and back to 0012's and forth", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0026-webhook-retention");
    const account = (await store.keys.ensureAccount("sketch-migration")).id;
    const raw = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await raw
      .insertInto("orders")
      .values(history(account).map((o) => orderRowBefore(o, [])))
      .execute();

    await store.migrate();
    expect(await tables(store)).toEqual(
      store.dialect === "postgres"
        ? ["evals_daily", "evals_daily_delta", "evals_sketch_daily", "evals_sketch_delta"]
        : ["evals_daily", "evals_sketch_daily", "evals_sketch_delta"],
    );
    expect(await indexes(store)).toEqual(["orders_sla_running_idx"]);
    // Backfilled: one sketch row per day and latency, nothing waiting to be folded.
    const { rows } = await sql<{ n: number | string }>`
      SELECT count(*) AS n FROM evals_sketch_daily WHERE metric = 'offer'`.execute(store.db);
    expect(Number(rows[0]?.n)).toBeGreaterThanOrEqual(10);
    await figuresAgree(store);

    await store.migrateTo("0026-webhook-retention");
    // 0012's rollup again, filled from the orders, and kept by its triggers.
    expect(await indexes(store)).toEqual([
      "orders_final_accept_latency_idx",
      "orders_first_accept_latency_idx",
      "orders_matching_latency_idx",
      "orders_offer_latency_idx",
    ]);
    expect(await tables(store)).toContain("evals_latency_daily");
    expect(await rolledUp(store)).toBe(80);
    await raw
      .insertInto("orders")
      .values(
        orderRowBefore(
          orderFixture({ id: "ord_sk_after", account_id: account, received_at: iso(T0 - 3 * DAY) }),
          [],
        ),
      )
      .execute();
    expect(await rolledUp(store)).toBe(81);

    await store.migrate();
    expect(await rolledUp(store)).toBe(81);
    await figuresAgree(store);
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
