// Property: the evals' three read paths agree on any history and any window, and what they publish matches
// a direct computation over the orders. Random orders (every status and urgency, with or without each of
// the columns the figures read, promises kept, late, breached or still running, latencies on and around
// bucket edges, received on and around UTC midnights), then random updates and deletes through the
// triggers; then random windows (whole days, partial days, bounds on an order's own received time and a
// millisecond either side) read at a random time. The rollup read (with its deltas folded in, and not)
// gives what reading every order gives; its percentiles are within the sketch's stated error (1 %) of the
// exact nearest-rank values of the orders' latencies, and its service levels, corrected with the running
// clocks, equal the domain's computation over every order with a promise. On SQLite, and on PostgreSQL in
// the postgres project.

import fc from "fast-check";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { Order } from "../../src/domain/orders/order.js";
import { type SlaFigureRow, slaFigures, withRunningClocks } from "../../src/domain/orders/sla-figures.js";
import { ORDER_STATUSES } from "../../src/domain/orders/transitions.js";
import { URGENCIES } from "../../src/domain/pricing.js";
import { rolledServiceLevels } from "../../src/operations/evals/figures/service-levels.js";
import { tallyOf } from "../../src/operations/evals/figures/tally.js";
import { EvalsStore } from "../../src/storage/evals-store.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { createHarness } from "../helpers/harness.js";
import { orderFixture } from "../helpers/order-fixture.js";
import { isWithinSketch } from "../helpers/sketch.js";

const DAY = 86_400_000;
const BASE = Date.parse("2031-04-10T00:00:00.000Z");
const SPAN = 4 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

let store: KyselyStore;
let account: string;

beforeAll(async () => {
  const h = await createHarness();
  store = h.services.store as KyselyStore;
  account = (await store.keys.ensureAccount("rollup-property")).id;
});

/** A received time: anywhere in the span, or on / next to a UTC midnight. */
const receivedAt = fc.oneof(
  fc.integer({ min: 0, max: SPAN - 1 }),
  fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom(-1, 0, 1)).map(([d, e]) => d * DAY + e),
);
/** A duration in ms: sub-millisecond, around bucket edges, or long; sometimes negative (a clock step). */
const measured = fc.oneof(
  fc.double({ min: 0.001, max: 50, noNaN: true }).map((v) => Math.round(v * 1000) / 1000),
  fc.constantFrom(0.2, 0.199, 0.2005, 1.8, 1.999, 10, 0.0005),
);
const elapsed = fc.oneof(
  fc.integer({ min: 0, max: 6 * 3_600_000 }),
  fc.constantFrom(-5, 0, 1, 1_799_999, 1_800_000, 1_999_999, 2_000_000),
);

const orderArb = fc.record({
  received: receivedAt,
  livemode: fc.constantFrom(0, 1, 1, 1),
  status: fc.constantFrom(...ORDER_STATUSES),
  matched: fc.boolean(),
  latency: fc.option(measured, { nil: null }),
  matching: fc.option(measured, { nil: null }),
  firstAccept: fc.option(elapsed, { nil: null }),
  lastAfter: fc.integer({ min: 0, max: 3 * 3_600_000 }),
  assignments: fc.tuple(fc.nat(3), fc.nat(2), fc.nat(2)),
  nte: fc.option(fc.integer({ min: 1, max: 50_000 }), { nil: null }),
  approvedBy: fc.option(fc.integer({ min: 1, max: 20_000 }), { nil: null }),
  cost: fc.option(fc.integer({ min: 0, max: 90_000 }), { nil: null }),
  offers: fc.tuple(fc.nat(3), fc.nat(2), fc.nat(2), fc.option(fc.integer({ min: 1, max: 3 }), { nil: null })),
  urgency: fc.constantFrom(...URGENCIES),
  // No promise; as soon as possible (respond within, arrive within); or a window (start after, length).
  promise: fc.oneof(
    fc.constant(null),
    fc.record({ kind: fc.constant("asap" as const), a: fc.nat(4 * 3_600_000), b: fc.nat(8 * 3_600_000) }),
    fc.record({ kind: fc.constant("window" as const), a: fc.nat(DAY), b: fc.nat(4 * 3_600_000) }),
  ),
  // On site, from the window's start (or arrive_by): anywhere, or on and next to the on-time rule's edges.
  onSite: fc.option(
    fc.oneof(fc.integer({ min: -3 * 3_600_000, max: 6 * 3_600_000 }), {
      arbitrary: fc.constantFrom(-1_800_001, -1_800_000, -1, 0, 1, 900_000, 900_001),
      weight: 3,
    }),
    { nil: null },
  ),
  breached: fc.tuple(fc.boolean(), fc.boolean()),
});

type OrderSpec = typeof orderArb extends fc.Arbitrary<infer T> ? T : never;

function row(i: number, run: number, o: OrderSpec): Order {
  const received = BASE + o.received;
  const first = o.firstAccept === null ? null : received + o.firstAccept;
  const [overrides, dispatches, redispatches] = o.assignments;
  const [made, declined, expired, acceptedAttempt] = o.offers;
  return orderFixture({
    id: `ord_p${run}_${i}`,
    account_id: account,
    livemode: o.livemode === 1,
    status: o.status,
    state: "CA",
    description: "property",
    nte_cents: o.nte,
    contractor_id: null,
    eta_tier: null,
    match_score: null,
    received_at: iso(received),
    matched_at: o.matched ? iso(received) : null,
    dispatch_latency_ms: o.matched ? o.latency : null,
    created_at: iso(received),
    updated_at: iso(received),
    accepted_at: first === null ? null : iso(first + o.lastAfter),
    final_cost_cents: o.cost,
    nte_approved_cents: o.nte !== null && o.approvedBy !== null ? o.nte + o.approvedBy : null,
    override_count: overrides + dispatches + redispatches,
    matching_time_ms: o.matching,
    first_accepted_at: first === null ? null : iso(first),
    offers_made: made + declined + expired + (acceptedAttempt === null ? 0 : 1),
    offers_declined: declined,
    offers_expired: expired,
    accepted_offer_attempt: acceptedAttempt,
    manual_dispatch_count: dispatches,
    redispatch_count: redispatches,
    urgency: o.urgency,
    respond_by: o.promise?.kind === "asap" ? iso(received + o.promise.a) : null,
    arrive_by: o.promise?.kind === "asap" ? iso(received + o.promise.a + o.promise.b) : null,
    window_start: o.promise?.kind === "window" ? iso(received + o.promise.a) : null,
    window_end: o.promise?.kind === "window" ? iso(received + o.promise.a + o.promise.b) : null,
    on_site_at:
      o.onSite === null
        ? null
        : iso(
            received +
              Math.max(0, (o.promise?.a ?? 0) + (o.promise?.kind === "asap" ? o.promise.b : 0) + o.onSite),
          ),
    sla_respond_breached_at: o.breached[0] ? iso(received + 3_600_000) : null,
    sla_arrive_breached_at: o.breached[1] ? iso(received + 7_200_000) : null,
  });
}

/**
 * A change after the insert: one column the figures read set to another value (or cleared), alone, so
 * that a column the update trigger does not watch shows; or the order deleted.
 */
const changeArb = fc.record({
  pick: fc.nat(),
  what: fc.constantFrom(
    "status",
    "received_at",
    "livemode",
    "matched_at",
    "override_count",
    "manual_dispatch_count",
    "redispatch_count",
    "nte_cents",
    "nte_approved_cents",
    "final_cost_cents",
    "offers_made",
    "offers_declined",
    "offers_expired",
    "accepted_offer_attempt",
    "dispatch_latency_ms",
    "matching_time_ms",
    "first_accepted_at",
    "accepted_at",
    "urgency",
    "respond_by",
    "arrive_by",
    "window_start",
    "window_end",
    "on_site_at",
    "sla_respond_breached_at",
    "sla_arrive_breached_at",
    "delete",
  ),
  clear: fc.boolean(),
  status: fc.constantFrom(...ORDER_STATUSES),
  at: receivedAt,
  latency: measured,
  n: fc.integer({ min: 0, max: 60_000 }),
});
type Change = typeof changeArb extends fc.Arbitrary<infer T> ? T : never;

async function apply(ids: string[], c: Change): Promise<void> {
  const id = ids[c.pick % ids.length] as string;
  if (c.what === "delete") {
    await sql`DELETE FROM orders WHERE id = ${id}`.execute(store.db);
    ids.splice(ids.indexOf(id), 1);
    return;
  }
  const nullable =
    !["status", "received_at", "livemode", "urgency"].includes(c.what) && !c.what.endsWith("_count");
  const times = ["respond_by", "arrive_by", "window_start", "window_end"];
  const counters = ["offers_made", "offers_declined", "offers_expired", "override_count"];
  const value =
    nullable && c.clear && !counters.includes(c.what)
      ? null
      : c.what === "status"
        ? c.status
        : c.what === "livemode"
          ? c.n % 2
          : c.what === "urgency"
            ? URGENCIES[c.n % URGENCIES.length]
            : c.what.endsWith("_at") || times.includes(c.what)
              ? iso(BASE + c.at + (c.what === "received_at" ? 0 : c.n * 1_000))
              : c.what.endsWith("_ms")
                ? c.latency
                : c.what === "accepted_offer_attempt" ||
                    c.what.endsWith("_count") ||
                    counters.includes(c.what)
                  ? c.n % 4
                  : c.n;
  await sql`UPDATE orders SET ${sql.ref(c.what)} = ${value} WHERE id = ${id}`.execute(store.db);
}

/** A window bound: anywhere, on a midnight, or on / next to an order's own received time. */
const boundArb = fc.oneof(
  fc.integer({ min: -DAY, max: SPAN + DAY }).map((ms) => ({ ms })),
  fc.integer({ min: -1, max: 5 }).map((d) => ({ ms: d * DAY })),
  fc.tuple(fc.nat(), fc.constantFrom(-1, 0, 1)).map(([pick, e]) => ({ pick, e })),
);
type Bound = typeof boundArb extends fc.Arbitrary<infer T> ? T : never;

async function resolve(bound: Bound, ids: string[]): Promise<number> {
  if ("ms" in bound) return BASE + bound.ms;
  const id = ids[bound.pick % Math.max(ids.length, 1)];
  const order = id ? (await store.orders.byIds([id]))[0] : undefined;
  return (order ? Date.parse(order.received_at) : BASE) + bound.e;
}

let run = 0;

type OrderRow = SlaFigureRow & {
  dispatch_latency_ms: number | null;
  matching_time_ms: number | null;
  accepted_at: string | null;
};

/** The window's orders read one by one, and each figure computed from them directly. */
async function direct(livemode: boolean, since: string, until: string, now: Date) {
  const { rows } = await sql<OrderRow>`SELECT * FROM orders
    WHERE livemode = ${livemode ? 1 : 0} AND received_at >= ${since} AND received_at < ${until}`.execute(
    store.db,
  );
  const elapsed = (r: OrderRow, at: string | null) =>
    at === null ? [] : [Date.parse(at) - Date.parse(r.received_at)];
  const values = {
    offer: rows.flatMap((r) => (r.dispatch_latency_ms === null ? [] : [Number(r.dispatch_latency_ms)])),
    matching: rows.flatMap((r) => (r.matching_time_ms === null ? [] : [Number(r.matching_time_ms)])),
    first_accept: rows.flatMap((r) => elapsed(r, r.first_accepted_at)),
    final_accept: rows.flatMap((r) => elapsed(r, r.accepted_at)),
  };
  const nearest = (v: number[], q: number) =>
    v.length === 0
      ? null
      : ([...v].sort((a, b) => a - b)[Math.max(1, Math.ceil(q * v.length - 1e-9)) - 1] as number);
  const latency = Object.fromEntries(
    Object.entries(values).map(([m, v]) => [m, { n: v.length, p50: nearest(v, 0.5), p95: nearest(v, 0.95) }]),
  );
  const promised = rows.filter((r) => r.respond_by !== null || r.arrive_by !== null || r.window_end !== null);
  return { latency, serviceLevels: slaFigures(promised, now) };
}

/** What the evals publish: the figures from the rollup, the service levels corrected to `now`. */
async function published(reader: EvalsStore, livemode: boolean, since: string, until: string, now: Date) {
  const figures = await reader.figures(livemode, since, until);
  const running = await reader.runningClockRows(livemode, since, until);
  return { figures, serviceLevels: withRunningClocks(rolledServiceLevels(tallyOf(figures)), running, now) };
}

describe("the evals' read paths", () => {
  it("agree on random histories and random windows", async () => {
    const live = new EvalsStore(store.db, store.dialect, { rollup: false });
    const unfolded = new EvalsStore(store.db, store.dialect, { compact: false });
    const readers = store.dialect === "postgres" ? [store.evals, unfolded] : [store.evals];
    await fc.assert(
      fc.asyncProperty(
        fc.array(orderArb, { minLength: 1, maxLength: 40 }),
        fc.array(changeArb, { maxLength: 25 }),
        fc.array(fc.tuple(boundArb, boundArb), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: -DAY, max: SPAN + 2 * DAY }),
        async (orders, changes, windows, nowOffset) => {
          const now = new Date(BASE + nowOffset);
          run++;
          // A fresh history each run: the last one's orders leave through the delete trigger.
          await sql`DELETE FROM orders`.execute(store.db);
          const rows = orders.map((o, i) => row(i, run, o));
          await store.write(async (tx) => {
            for (const r of rows) await tx.insertOrder(r);
          });
          const ids = rows.map((r) => r.id);
          for (const c of changes) if (ids.length > 0) await apply(ids, c);
          for (const [a, b] of windows) {
            const [x, y] = [await resolve(a, ids), await resolve(b, ids)];
            if (x === y) continue;
            const [since, until] = [iso(Math.min(x, y)), iso(Math.max(x, y))];
            const expected = await live.figures(true, since, until);
            for (const reader of readers) {
              expect(await reader.figures(true, since, until), `${since} .. ${until}`).toEqual(expected);
            }
            expect(await store.evals.figures(false, since, until)).toEqual(
              await live.figures(false, since, until),
            );
            for (const livemode of [true, false]) {
              const exact = await direct(livemode, since, until, now);
              const got = await published(store.evals, livemode, since, until, now);
              expect(got.serviceLevels, `${since} .. ${until} at ${now.toISOString()}`).toEqual(
                exact.serviceLevels,
              );
              for (const [metric, e] of Object.entries(exact.latency)) {
                const g = got.figures.latency[metric as keyof typeof got.figures.latency];
                const where = `${metric} ${since} .. ${until}: ${JSON.stringify(g)} against ${JSON.stringify(e)}`;
                expect(g.n, where).toBe(e.n);
                expect(isWithinSketch(g.p50, e.p50) && isWithinSketch(g.p95, e.p95), where).toBe(true);
              }
            }
          }
        },
      ),
      { numRuns: store.dialect === "postgres" ? 20 : 60 },
    );
  }, 240_000);
});
