// The evals per day (GET /api/dispatch/analytics/evals/series): a small history of live and sandbox orders
// over three UTC days, read at a fixed time. The counts are checked against the history; each day's
// figures from the rollup against the same day computed from the orders themselves (the evals' reference,
// rollup: false); the latencies against the orders' own.

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { evalsSeriesOutput } from "../../src/operations/evals/evals-series.js";
import { EvalsStore } from "../../src/storage/evals-store.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";
import { isWithinSketch } from "../helpers/sketch.js";

const SERIES = "/api/dispatch/analytics/evals/series";
const H = 3_600_000;
const D = 24 * H;
/** When the series is read: 15:00 UTC on 2030-06-15, so the 7 days are 06-09 .. 06-15. */
const T0 = Date.parse("2030-06-15T15:00:00.000Z");

type Series = ReturnType<typeof evalsSeriesOutput.parse>;

let h: Harness;
let live: string;

async function order(at: number, body: object, key = live): Promise<string> {
  vi.setSystemTime(at);
  const res = await h.post(ORDER_PATH, body, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().order_id as string;
}

async function cancel(at: number, orderId: string): Promise<void> {
  vi.setSystemTime(at);
  const res = await h.post("/api/dispatch/v1/orders/cancel", { order_id: orderId }, { "x-api-key": live });
  expect(res.statusCode, res.body).toBe(200);
}

async function series(query: string): Promise<Series> {
  const res = await h.get(`${SERIES}${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return evalsSeriesOutput.parse(res.json());
}

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0 - 10 * D);
  h = await createHarness();
  await h.services.store.contractors.insert(
    [liveContractor({ id: "ctr_series", maxActiveJobs: 10 })],
    testRecord(),
  );
  await h.services.pool.load();
  live = await h.key("series", "live");
  const sandbox = await h.key("series", "test");
  // 06-13: three live orders (two offered to the pool's plumber, one roofing job no one takes), one cancelled.
  const a = await order(T0 - 2 * D - 5 * H, validOrder({ trade: "plumbing" }));
  await order(T0 - 2 * D - 4 * H, validOrder({ trade: "plumbing" }));
  await order(T0 - 2 * D - 3 * H, validOrder({ trade: "roofing" }));
  await cancel(T0 - 2 * D - 2 * H, a);
  // 06-14: two live orders, and two sandbox orders.
  await order(T0 - D - 6 * H, validOrder({ trade: "plumbing" }));
  await order(T0 - D - 5 * H, validOrder({ trade: "plumbing" }));
  await order(T0 - D - 4 * H, validOrder(), sandbox);
  await order(T0 - D - 3 * H, validOrder(), sandbox);
  // 06-15 (today): one live order.
  await order(T0 - H, validOrder({ trade: "roofing" }));
  vi.setSystemTime(T0);
});

afterAll(async () => {
  vi.useRealTimers();
  await h?.close();
});

describe("GET /api/dispatch/analytics/evals/series", () => {
  it("gives one entry per UTC day ending today, with the day's orders by status and its rates", async () => {
    const s = await series("?period=rolling_7d");
    expect(s.period).toBe("rolling_7d");
    expect(s.mode).toBe("live");
    expect(s.estimated).toBe(true);
    expect(s.generated_at).toBe(new Date(T0).toISOString());
    expect(s.days.map((d) => d.day)).toEqual([
      "2030-06-09",
      "2030-06-10",
      "2030-06-11",
      "2030-06-12",
      "2030-06-13",
      "2030-06-14",
      "2030-06-15",
    ]);
    expect(s.days.map((d) => d.partial)).toEqual([false, false, false, false, false, false, true]);
    expect(s.days.map((d) => d.orders_received)).toEqual([0, 0, 0, 0, 3, 2, 1]);
    const [d13, d14, d15] = s.days.slice(4) as [Series["days"][0], Series["days"][0], Series["days"][0]];
    expect(d13.orders_by_status).toMatchObject({ cancelled: 1, offered: 1, needs_dispatcher: 1 });
    // The one outcome of 06-13 is a cancellation: a completion rate of 0 over a sample of 1.
    expect(d13.completion_rate).toEqual({ value: 0, sample_size: 1, unit: "ratio" });
    expect(d14.orders_by_status).toMatchObject({ offered: 2 });
    expect(d14.completion_rate).toEqual({ value: null, sample_size: 0, unit: "ratio" });
    expect(d15.orders_by_status).toMatchObject({ needs_dispatcher: 1 });
    // No order was assigned by a dispatcher: the override rate is 0 of the orders dispatched.
    expect(d13.human_override_rate).toEqual({ value: 0, sample_size: 2, unit: "ratio" });
    // A day without orders has zeros and empty samples, not missing fields.
    expect(s.days[0]?.dispatch_latency_p50).toEqual({ value: null, sample_size: 0, unit: "ms" });
    expect(Object.values(s.days[0]?.orders_by_status ?? {}).every((n) => n === 0)).toBe(true);
  });

  it("takes each day's dispatch latencies from that day's offered orders", async () => {
    const s = await series("?period=rolling_7d");
    const store = h.services.store as unknown as KyselyStore;
    for (const day of s.days) {
      const offered = (await store.db
        .selectFrom("orders")
        .select("dispatch_latency_ms")
        .where("livemode", "=", 1)
        .where("received_at", ">=", `${day.day}T00:00:00.000Z`)
        .where("received_at", "<", new Date(Date.parse(`${day.day}T00:00:00.000Z`) + D).toISOString())
        .where("dispatch_latency_ms", "is not", null)
        .execute()) as Array<{ dispatch_latency_ms: number }>;
      const sorted = offered.map((o) => Number(o.dispatch_latency_ms)).sort((a, b) => a - b);
      expect(day.dispatch_latency_p50.sample_size, day.day).toBe(sorted.length);
      if (sorted.length === 0) continue;
      const rank = (q: number) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;
      // Within the sketch's stated error (1 %) of the exact nearest-rank values.
      expect(isWithinSketch(day.dispatch_latency_p50.value, rank(0.5)), day.day).toBe(true);
      expect(isWithinSketch(day.dispatch_latency_p95.value, rank(0.95)), day.day).toBe(true);
    }
  });

  it("agrees day by day with the figures computed from the orders themselves", async () => {
    const store = h.services.store as unknown as KyselyStore;
    const reference = new EvalsStore(store.db, store.dialect, { rollup: false });
    for (const livemode of [true, false]) {
      const fromRollup = await store.evals.daily(livemode, "2030-06-09", "2030-06-15", [
        "offer",
        "first_accept",
      ]);
      const fromOrders = await reference.daily(livemode, "2030-06-09", "2030-06-15", [
        "offer",
        "first_accept",
      ]);
      expect([...fromRollup.keys()].sort()).toEqual([...fromOrders.keys()].sort());
      for (const [day, figures] of fromOrders) {
        const rolled = fromRollup.get(day);
        expect(Object.fromEntries(rolled?.byStatus ?? []), day).toEqual(Object.fromEntries(figures.byStatus));
        expect(rolled?.latency.offer, day).toEqual(figures.latency.offer);
        expect(rolled?.latency.first_accept, day).toEqual(figures.latency.first_accept);
      }
    }
  });

  it("shows the sandbox's orders with mode=sandbox, and only there", async () => {
    const s = await series("?period=rolling_7d&mode=sandbox");
    expect(s.mode).toBe("sandbox");
    expect(s.days.map((d) => d.orders_received)).toEqual([0, 0, 0, 0, 0, 2, 0]);
  });

  it("covers 30 days by default and 90 on request", async () => {
    expect((await series("")).days).toHaveLength(30);
    const ninety = await series("?period=rolling_90d");
    expect(ninety.days).toHaveLength(90);
    expect(ninety.days.at(-1)?.day).toBe("2030-06-15");
    expect(ninety.days.reduce((sum, d) => sum + d.orders_received, 0)).toBe(6);
  });

  it("answers 422 naming the field for an unknown period or mode", async () => {
    for (const [query, field] of [
      ["?period=rolling_1d", "period"],
      ["?mode=production", "mode"],
    ] as const) {
      const res = await h.get(`${SERIES}${query}`);
      expect(res.statusCode, res.body).toBe(422);
      expect(JSON.stringify(res.json())).toContain(field);
    }
  });
});
