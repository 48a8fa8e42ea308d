// Retention that never competes with requests (issue 30): the webhook dispatcher purges a backlog older
// than WEBHOOK_RETENTION_DAYS in small batches, a bounded time per tick (on an injected clock) and the
// rest on later ticks, yielding to the event loop before every batch; a stop ends after the batch in
// progress; the backlog gauge follows the purge down to 0. On SQLite, and on PostgreSQL with
// TEST_DATABASE_URL.

import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { Metrics } from "../../src/metrics.js";
import { createFetcher } from "../../src/services/create-services.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import type { PurgeableTable } from "../../src/storage/retention.js";
import type { WebhookDeliveryStatus } from "../../src/storage/schema.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import type { Store } from "../../src/storage/store.js";
import { WebhookDispatcher } from "../../src/workers/webhook-dispatcher.js";
import { openPostgresTestStore, openTestStore, type TestStore } from "../helpers/test-store.js";

const DAY = 86_400_000;
const OLD_EVENTS = 1_200;
const OLD_HOOKS = 150;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Rows `days` ago, a millisecond apart. */
const at = (days: number, i: number) => new Date(Date.now() - days * DAY + i).toISOString();

/** A store with OLD_EVENTS order events and OLD_HOOKS delivered webhook events (a delivery and an attempt
 * each) from 60 days ago, one old event whose delivery is still pending, and a few of each from today. */
async function seeded(open: () => Promise<TestStore>): Promise<KyselyStore> {
  const t = await open();
  const store = t.store as KyselyStore;
  cleanups.push(async () => {
    await store.close();
    await t.cleanup();
  });
  await store.migrate();
  const account = (await store.keys.ensureAccount("retention")).id;
  const event = (i: number, days: number) => ({
    type: "order.offered",
    order_id: `ord_${i}`,
    account_id: account,
    livemode: 1,
    created_at: at(days, i),
    payload: "{}",
  });
  const rows = [
    ...Array.from({ length: OLD_EVENTS }, (_, i) => event(i, 60)),
    ...Array.from({ length: 10 }, (_, i) => event(i, 0)),
  ];
  for (let i = 0; i < rows.length; i += 500) {
    await store.db
      .insertInto("order_events")
      .values(rows.slice(i, i + 500))
      .execute();
  }
  const hook = (i: number, days: number, status: WebhookDeliveryStatus) => ({
    event: {
      id: `msg_${days}_${i}`,
      account_id: account,
      livemode: 1,
      order_id: `ord_${i}`,
      type: "order.offered",
      created_at: at(days, i),
      callback_url: null,
      payload: "{}",
      fanned_out: 1,
    },
    delivery: {
      id: `whd_${days}_${i}`,
      event_id: `msg_${days}_${i}`,
      endpoint_id: "whe_1",
      account_id: account,
      livemode: 1,
      status,
      attempts: 1,
      next_attempt_at: status === "pending" ? at(-1, 0) : null,
      created_at: at(days, i),
      updated_at: at(days, i),
    },
    attempt: {
      id: `wha_${days}_${i}`,
      delivery_id: `whd_${days}_${i}`,
      attempt: 1,
      started_at: at(days, i),
      duration_ms: 5,
      outcome: status === "pending" ? "retrying" : "succeeded",
    },
  });
  const hooks = [
    ...Array.from({ length: OLD_HOOKS }, (_, i) => hook(i, 60, "succeeded")),
    hook(OLD_HOOKS, 60, "pending"),
    ...Array.from({ length: 5 }, (_, i) => hook(i, 0, "succeeded")),
  ];
  await store.db
    .insertInto("webhook_events")
    .values(hooks.map((h) => h.event))
    .execute();
  await store.db
    .insertInto("webhook_deliveries")
    .values(hooks.map((h) => h.delivery))
    .execute();
  await store.db
    .insertInto("webhook_attempts")
    .values(hooks.map((h) => h.attempt))
    .execute();
  return store;
}

/** Rows of `table` older than 30 days. */
async function old(store: KyselyStore, table: "order_events" | "webhook_events" | "webhook_deliveries") {
  const row = await store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("created_at", "<", new Date(Date.now() - 30 * DAY).toISOString())
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function count(store: KyselyStore, table: "order_events" | "webhook_events" | "webhook_attempts") {
  const row = await store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function backlogGauge(metrics: Metrics): Promise<Record<string, number>> {
  const gauge = await metrics.retentionBacklog.get();
  return Object.fromEntries(gauge.values.map((v) => [String(v.labels.table), v.value]));
}

function dispatcher(store: Store, options: { metrics?: Metrics; retention?: object } = {}) {
  const fetcher = createFetcher(loadConfig({ ENV_FILE: "" }), { timeoutMs: 1000, maxRedirects: 0 });
  const d = new WebhookDispatcher(store, {
    fetcher,
    ownsFetcher: true,
    concurrency: 4,
    timeoutMs: 1000,
    retentionDays: 30,
    ...options,
  });
  cleanups.push(() => d.close());
  return d;
}

/** `store` with each purge of its tables first passed to `spy` (the purge itself is the store's own). */
function watched(store: KyselyStore, spy: (table: string) => void): Store {
  const wrap = <T extends PurgeableTable>(name: string, table: T): T =>
    new Proxy(table, {
      get(target, prop, receiver) {
        if (prop !== "purge") return Reflect.get(target, prop, receiver);
        return (...args: Parameters<PurgeableTable["purge"]>) => {
          spy(name);
          return target.purge(...args);
        };
      },
    });
  const webhooks = wrap("webhook_events", store.webhooks);
  const orderEvents = wrap("order_events", store.orderEvents);
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "webhooks") return webhooks;
      if (prop === "orderEvents") return orderEvents;
      return Reflect.get(target, prop, receiver);
    },
  });
}

function suite(open: () => Promise<TestStore>, openForYields: () => Promise<TestStore>) {
  it("purges a backlog larger than a tick's budget over several ticks, the gauge following it to 0", async () => {
    const store = await seeded(open);
    const metrics = new Metrics({ defaultMetrics: false });
    // Each reading of the clock is 10 ms later, so each batch takes 10 ms: a tick with a 25 ms budget
    // purges three batches.
    let ms = 0;
    const d = dispatcher(store, {
      metrics,
      retention: { budgetMs: 25, orderEventsBatch: 100, webhookEventsBatch: 50, clock: () => (ms += 10) },
    });
    await d.tick();
    // Three batches, the tables taking turns: 50 webhook events, 100 order events, 50 webhook events.
    const afterOne = await old(store, "order_events");
    expect(afterOne).toBe(OLD_EVENTS - 100);
    expect(await old(store, "webhook_events")).toBe(OLD_HOOKS + 1 - 100);
    // The order events' estimate is exact here (ids without gaps), less what the pass purged.
    expect((await backlogGauge(metrics)).order_events).toBe(afterOne);

    let ticks = 1;
    while ((await old(store, "order_events")) > 0 || (await old(store, "webhook_events")) > 1) {
      await d.tick();
      ticks++;
      expect(ticks).toBeLessThan(30);
    }
    // 12 + 3 full batches, and the webhook events' empty one: 16 batches, 3 a tick.
    expect(ticks).toBe(6);
    // Once each table's last batch came back short, the gauge is 0.
    await d.tick();
    expect(await backlogGauge(metrics)).toEqual({ order_events: 0, webhook_events: 0 });
    // Today's rows stay; so does the old event whose delivery is pending, and its delivery and attempt.
    expect(await count(store, "order_events")).toBe(10);
    expect(await count(store, "webhook_events")).toBe(6);
    expect(await count(store, "webhook_attempts")).toBe(6);
    expect(await old(store, "webhook_deliveries")).toBe(1);
  });

  it("lets other callbacks run between batches: it yields to the event loop before each", async () => {
    const store = await seeded(openForYields);
    let immediates = 0;
    let running = true;
    const spin = () => {
      immediates++;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    const seen: number[] = [];
    const d = dispatcher(
      watched(store, () => seen.push(immediates)),
      { retention: { budgetMs: Number.POSITIVE_INFINITY, orderEventsBatch: 100, webhookEventsBatch: 50 } },
    );
    await d.tick();
    running = false;
    expect(await old(store, "order_events")).toBe(0);
    expect(seen.length).toBeGreaterThan(OLD_EVENTS / 100);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1] as number);
  });

  it("stops during a backlog after the batch in progress, leaving the rest for the next start", async () => {
    const store = await seeded(open);
    let batches = 0;
    let stopRequested: (stopped: Promise<void>) => void = () => {};
    const stopping = new Promise<Promise<void>>((resolve) => {
      stopRequested = resolve;
    });
    const d: WebhookDispatcher = dispatcher(
      watched(store, () => {
        batches++;
        if (batches === 3) stopRequested(d.stop());
      }),
      { retention: { budgetMs: Number.POSITIVE_INFINITY, orderEventsBatch: 100, webhookEventsBatch: 50 } },
    );
    d.start(1);
    await await stopping;
    // The third batch, under way when stop was called, finished; none started after it.
    expect(batches).toBe(3);
    expect(await old(store, "order_events")).toBeGreaterThan(OLD_EVENTS - 3 * 100);
  });
}

// In memory, SQLite's statements never wait for I/O (no WAL to sync): nothing but the purge's own yield
// lets another callback run between its batches.
const inMemory = async (): Promise<TestStore> => ({
  store: openSqliteStore(":memory:"),
  kind: "sqlite",
  cleanup: async () => {},
});

describe("retention on SQLite", () => suite(() => openTestStore(), inMemory));
describe.skipIf(!process.env.TEST_DATABASE_URL)("retention on PostgreSQL", () =>
  suite(
    () => openPostgresTestStore(),
    () => openPostgresTestStore(),
  ),
);
