// The published dispatch latency is the time an order took to a committed, durable first offer: for the
// same orders made by an in-process HTTP client, each order's stored latency (and so the published
// percentiles) is at least the time the store took to acknowledge that order's commit, seen from inside
// the process, and at most the client's round trip. The store's acknowledgement is slowed down by 15 ms
// (a slow disk), so that a figure taken before the commit (an in-memory pick: tens of microseconds) could
// not pass.

import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { evalsOutput } from "../../src/operations/evals/evals.js";
import type { Committed } from "../../src/operations/orders/command-runner.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";

const SLOW_COMMIT_MS = 15;
const SEQUENTIAL = 12;
const CONCURRENT = 8;

let h: Harness;
let key: string;
/** Per order created with an offer: how long its write took, from submission to durable acknowledgement. */
const commitMs = new Map<string, number>();

beforeAll(async () => {
  h = await createHarness();
  const pool = Array.from({ length: 4 }, (_, i) =>
    liveContractor({ id: `ctr_lat${i}`, trades: ["hvac"], maxActiveJobs: 50 }),
  );
  await h.services.store.contractors.insert(pool, testRecord());
  await h.services.pool.load();
  key = await h.key("latency", "live", { ratePerMinute: 10_000, burst: 1_000 });
  const store = h.services.store;
  const write = store.write.bind(store);
  store.write = async (work) => {
    const start = process.hrtime.bigint();
    const result = await write(work);
    // At least SLOW_COMMIT_MS on the clock the latency is measured on (a timer may fire a little early).
    while (Number(process.hrtime.bigint() - start) / 1e6 < SLOW_COMMIT_MS) await sleep(1);
    const committed = result as Committed | undefined;
    if (committed?.kind === "committed" && committed.change.before === null) {
      if (committed.change.offers.create.length > 0) {
        commitMs.set(committed.change.after.id, Number(process.hrtime.bigint() - start) / 1e6);
      }
    }
    return result;
  };
});

const nearest = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.ceil(q * values.length) - 1] as number;

describe("the published dispatch latency", () => {
  it("is at least each order's durable commit and at most what the HTTP client waited", async () => {
    const roundTrip = new Map<string, number>();
    const order = async (i: number) => {
      const t0 = process.hrtime.bigint();
      const res = await h.post(ORDER_PATH, validOrder({ description: `latency ${i}` }), { "x-api-key": key });
      const elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status).toBe("offered");
      roundTrip.set(res.json().order_id, elapsed);
    };
    for (let i = 0; i < SEQUENTIAL; i++) await order(i);
    // Orders arriving together share group commits and wait for each other: that waiting counts too.
    await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => order(SEQUENTIAL + i)));

    const res = await h.get("/api/dispatch/analytics/evals?period=rolling_7d");
    expect(res.statusCode, res.body).toBe(200);
    const report = evalsOutput.parse(res.json());

    const ids = [...roundTrip.keys()];
    const stored = new Map(
      (await h.services.store.orders.byIds(ids)).map((o) => [o.id, o.dispatch_latency_ms as number]),
    );
    for (const id of ids) {
      const latency = stored.get(id) as number;
      expect(commitMs.get(id), id).toBeGreaterThanOrEqual(SLOW_COMMIT_MS);
      expect(latency, id).toBeGreaterThanOrEqual(commitMs.get(id) as number);
      expect(latency, id).toBeLessThanOrEqual(roundTrip.get(id) as number);
    }
    const spans = ids.map((id) => commitMs.get(id) as number);
    const trips = ids.map((id) => roundTrip.get(id) as number);
    const { dispatch_latency_p50: p50, dispatch_latency_p95: p95 } = report.operations;
    expect(p50.sample_size).toBe(ids.length);
    expect(p95.sample_size).toBe(ids.length);
    // Published to the microsecond: compare with a microsecond's slack for the rounding.
    expect(p50.value as number).toBeGreaterThanOrEqual(nearest(spans, 0.5) - 0.001);
    expect(p95.value as number).toBeGreaterThanOrEqual(nearest(spans, 0.95) - 0.001);
    expect(p50.value as number).toBeLessThanOrEqual(nearest(trips, 0.5) + 0.001);
    expect(p95.value as number).toBeLessThanOrEqual(nearest(trips, 0.95) + 0.001);
  });
});
