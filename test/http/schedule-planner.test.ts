// The optimiser off the event loop: the day is planned on a worker thread, one run per mode at a time
// (409 optimizer_busy with Retry-After), and the day's orders are read by state through their own index.
// A run is held in flight at a gate its thread waits at (DayPlanner's test hook): had the planning been
// on the main thread, the gate would have stopped the event loop and every check here would hang.

import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { zonedInstant } from "../../src/domain/time/local-time.js";
import { DayPlanner } from "../../src/operations/kernel/day-planner.js";
import { resultValue } from "../../src/operations/kernel/json-result.js";
import type { OperationContext } from "../../src/operations/kernel/operation.js";
import { planningDeadline, scheduleOptimizeOperation } from "../../src/operations/pool/schedule.js";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";
import { testStoreKind } from "../helpers/test-store.js";

const OPTIMIZE = "/api/dispatcher/v1/schedule/optimize";

type Proposal = z.output<typeof scheduleOptimizeOperation.output>;

let h: Harness;
let ops: string;
let date: string;
const ids: Record<"CA" | "TX", string[]> = { CA: [], TX: [] };

function weekdayAhead(days: number): string {
  const day = new Date(Date.now() + days * 86_400_000);
  while (day.getUTCDay() === 0 || day.getUTCDay() === 6) day.setUTCDate(day.getUTCDate() + 1);
  return day.toISOString().slice(0, 10);
}

function at(zone: string, hour: number): string {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number];
  return zonedInstant(zone, { year, month, day, hour, minute: 0 }).toISOString();
}

beforeAll(async () => {
  h = await createHarness();
  await h.services.planner.warm();
  const caller = await h.key("planner", "test");
  ops = await h.dispatcherKey("test");
  date = weekdayAhead(3);
  const places = [
    { state: "CA" as const, zone: "America/Los_Angeles", city: "Los Angeles", zip: "90012" },
    { state: "TX" as const, zone: "America/Chicago", city: "Austin", zip: "78701" },
  ];
  for (const p of places) {
    for (let i = 0; i < 3; i++) {
      const res = await h.post(
        ORDER_PATH,
        validOrder({
          trade: "plumbing",
          urgency: "scheduled",
          location: {
            state: p.state,
            zip: p.zip,
            city: p.city,
            address: `${100 + i} Main St`,
            name: "Store",
          },
          service_window: { start: at(p.zone, 9 + i), end: at(p.zone, 13 + i) },
          reference_id: `planner-${p.state}-${i}`,
        }),
        { "x-api-key": caller },
      );
      expect(res.statusCode, res.body).toBe(200);
      ids[p.state].push(res.json().order_id);
    }
  }
});

afterAll(async () => {
  await h?.close();
});

describe("the optimiser's worker thread", () => {
  it("plans off the event loop, and refuses a second run of the mode while one is in flight", async () => {
    const gate = new Int32Array(new SharedArrayBuffer(4));
    let started: () => void = () => {};
    const inFlight = new Promise<void>((resolve) => {
      started = resolve;
    });
    const original = h.services.planner;
    h.services.planner = new DayPlanner({ gate, onStarted: () => started() });
    await h.services.planner.warm();
    try {
      const first = h.post(OPTIMIZE, { date, state: "CA", iterations: 100 }, { "x-api-key": ops });
      await inFlight; // its thread has the day and waits at the gate
      // The event loop goes on: a setImmediate callback runs and /healthz answers.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const health = await h.get("/healthz");
      expect(health.statusCode, health.body).toBe(200);
      // A second run of the mode is refused while the first is in flight.
      const second = await h.post(OPTIMIZE, { date, iterations: 100 }, { "x-api-key": ops });
      expect(second.statusCode, second.body).toBe(409);
      expect(second.json().code).toBe("optimizer_busy");
      expect(second.headers["retry-after"]).toMatch(/^[1-9]\d*$/);
      expect(second.json().retry_after_seconds).toBe(Number(second.headers["retry-after"]));
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      const done = await first;
      expect(done.statusCode, done.body).toBe(200);
      // Once it is done, the mode runs again.
      const again = await h.post(OPTIMIZE, { date, state: "CA", iterations: 100 }, { "x-api-key": ops });
      expect(again.statusCode, again.body).toBe(200);
    } finally {
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      await h.services.planner.close();
      h.services.planner = original;
    }
  });

  it("plans a state's day from that state's orders only", async () => {
    const res = await h.post(OPTIMIZE, { date, state: "TX", iterations: 100 }, { "x-api-key": ops });
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json();
    const planned = [
      ...p.routes.flatMap((r: { stops: Array<{ order_id: string }> }) => r.stops.map((s) => s.order_id)),
      ...p.unassigned.map((u: { order_id: string }) => u.order_id),
    ];
    expect(planned.sort()).toEqual([...ids.TX].sort());
  });

  it("plans the same day whether its thread reads the orders or they are made on the event loop", async () => {
    // The thread reads the store through its read source; a store without one (in memory) has the day's
    // jobs made on the event loop and sent. Same day, seed and budget: the same routes and unassigned.
    const body = { date, state: "CA", iterations: 200, seed: 3, mode: "full" };
    const read = await h.post(OPTIMIZE, body, { "x-api-key": ops });
    expect(read.statusCode, read.body).toBe(200);
    const store = h.services.store as { readSource?: unknown };
    const source = store.readSource;
    expect(source).toBeDefined();
    store.readSource = undefined;
    try {
      const sent = await h.post(OPTIMIZE, body, { "x-api-key": ops });
      expect(sent.statusCode, sent.body).toBe(200);
      const plan = (p: Proposal) => ({ routes: p.routes, unassigned: p.unassigned, totals: p.totals });
      expect(plan(sent.json())).toEqual(plan(read.json()));
      expect(read.json().totals.served).toBeGreaterThan(0);
    } finally {
      store.readSource = source;
    }
  });

  it("answers 503 when its thread cannot read the store, and plans again once it can", async () => {
    const store = h.services.store as { readSource?: unknown };
    const source = store.readSource;
    // A store file that is not there: the thread's read-only connection cannot open it (SQLITE_CANTOPEN).
    store.readSource = { kind: "sqlite", file: join(tmpdir(), `fd-missing-${process.pid}.sqlite`) };
    try {
      const res = await h.post(OPTIMIZE, { date, state: "TX", iterations: 10 }, { "x-api-key": ops });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().code).toBe("service_unavailable");
    } finally {
      store.readSource = source;
    }
    const again = await h.post(OPTIMIZE, { date, state: "TX", iterations: 10 }, { "x-api-key": ops });
    expect(again.statusCode, again.body).toBe(200);
  });
});

describe("the time limit", () => {
  it("counts from the request's arrival: the time spent before the planning is taken from it", () => {
    const arrived = 5_000_000_000n; // process.hrtime, ns
    // 30 ms after the arrival, at planner clock 10,000: a 50 ms limit ends at 10,020, not 10,050.
    expect(planningDeadline(50, arrived, arrived + 30_000_000n, 10_000)).toBe(10_020);
    expect(planningDeadline(2000, arrived, arrived + 1_500_000_000n, 10_000)).toBe(10_500);
    expect(planningDeadline(50, arrived, arrived, 10_000)).toBe(10_050);
    // A clock read before the arrival's (never later than the limit from now).
    expect(planningDeadline(50, arrived, arrived - 1_000_000n, 10_000)).toBe(10_050);
  });

  it("leaves every job untried when the request arrived longer ago than its limit", async () => {
    const principal = await h.services.keys.authenticate(ops);
    const ctx = (receivedHr: bigint): OperationContext => ({
      services: h.services,
      requestId: "req_planner_deadline",
      principal,
      baseUrl: "http://127.0.0.1",
      receivedAt: new Date(),
      receivedHr,
      idempotencyKey: undefined,
      rawInput: {},
      setHeader: () => {},
    });
    const input = scheduleOptimizeOperation.input.parse({ date, state: "CA", time_limit_ms: 2000 });
    const optimize = async (receivedHr: bigint) =>
      resultValue(await scheduleOptimizeOperation.handler(ctx(receivedHr), input)) as Proposal;
    // Arrived a minute ago (it waited in a queue): its two seconds are spent, the day is not planned.
    const late = await optimize(process.hrtime.bigint() - 60_000_000_000n);
    expect(late.search.stopped).toBe("time_limit_construction");
    expect(late.routes).toEqual([]);
    expect(late.unassigned.map((u) => [u.order_id, u.reason]).sort()).toEqual(
      [...ids.CA].sort().map((id) => [id, "time_limit"]),
    );
    // Arrived now: the same day is planned.
    const now = await optimize(process.hrtime.bigint());
    expect(now.totals.served).toBe(ids.CA.length);
  });
});

describe("the day's orders in the store", () => {
  it("reads them a page at a time, in (state, status, id) order, each once", async () => {
    const all = await h.services.store.orders.scheduledOrders(false, undefined, 1000);
    for (const state of ["CA", undefined] as const) {
      for (const size of [1, 2, 1000]) {
        const read: Array<{ id: string; state: string; status: string }> = [];
        let after = null;
        for (;;) {
          const page = await h.services.store.orders.scheduledPage(false, state, after, size);
          read.push(...page);
          const last = page.at(-1);
          if (last === undefined || page.length < size) break;
          after = { state: last.state, status: last.status, id: last.id };
        }
        const expected = all
          .filter((o) => state === undefined || o.state === state)
          .map((o) => ({ id: o.id, state: o.state, status: o.status }))
          .sort((a, b) =>
            a.state !== b.state
              ? a.state < b.state
                ? -1
                : 1
              : a.status !== b.status
                ? a.status < b.status
                  ? -1
                  : 1
                : a.id < b.id
                  ? -1
                  : 1,
          );
        expect(read.map((o) => ({ id: o.id, state: o.state, status: o.status }))).toEqual(expected);
      }
    }
    expect(await h.services.store.orders.scheduledPage(true, "CA", null, 10)).toEqual([]);
  });

  it("reads only the state's open orders when a state is given", async () => {
    const ca = await h.services.store.orders.scheduledOrders(false, "CA", 100);
    expect(ca.map((o) => o.state)).toEqual(ca.map(() => "CA"));
    for (const id of ids.CA) expect(ca.map((o) => o.id)).toContain(id);
    const all = (await h.services.store.orders.scheduledOrders(false, undefined, 100)).map((o) => o.id);
    for (const id of [...ids.CA, ...ids.TX]) expect(all).toContain(id);
    expect(await h.services.store.orders.scheduledOrders(true, "CA", 100)).toEqual([]);
  });

  it.skipIf(testStoreKind() !== "sqlite")(
    "is read through an index of open orders, never the whole mode",
    () => {
      const db = new SQLite(join(h.config.DATA_DIR, "test.sqlite"), { readonly: true });
      const detail = (where: string) =>
        (
          db
            .prepare(
              "EXPLAIN QUERY PLAN SELECT * FROM orders WHERE status in ('needs_dispatcher', 'offered', " +
                `'accepted', 'en_route') AND ${where} LIMIT 100`,
            )
            .all() as Array<{ detail: string }>
        )
          .map((r) => r.detail)
          .join("; ");
      try {
        // With a state: that state's entries of orders_schedule_idx, in either mode.
        for (const mode of [0, 1]) {
          expect(detail(`livemode = ${mode} AND state = 'CA'`)).toContain(
            "USING INDEX orders_schedule_idx (livemode=? AND state=? AND status=?)",
          );
        }
        // Without: the mode's open orders (the test mode's by status in orders_sandbox_idx).
        expect(detail("livemode = 1")).toContain("USING INDEX orders_schedule_idx (livemode=?)");
        expect(detail("livemode = 0")).toMatch(/USING INDEX orders_(schedule_idx|sandbox_idx) \(livemode=\?/);
        // A page after a cursor: a range of the index in its order, no sort of the state's open orders.
        const page = (where: string) => detail(`livemode = 0 AND ${where} ORDER BY state, status, id`);
        expect(page("state = 'CA'")).not.toContain("TEMP B-TREE");
        const withState = page("(state, status, id) > ('CA', 'accepted', 'ord_x') AND state <= 'CA'");
        expect(withState).toContain(
          "USING INDEX orders_schedule_idx (livemode=? AND (state,status,id)>(?,?,?) AND state<?)",
        );
        expect(withState).not.toContain("TEMP B-TREE");
        const without = page("(state, status, id) > ('CA', 'accepted', 'ord_x')");
        expect(without).toContain(
          "USING INDEX orders_schedule_idx (livemode=? AND (state,status,id)>(?,?,?))",
        );
        expect(without).not.toContain("TEMP B-TREE");
      } finally {
        db.close();
      }
    },
  );
});
