// Property: the evals' recall figures from their rollup (migration 0049) equal those read from the orders
// themselves, on any history and any window. Random orders (completed or not, by one of a few contractors,
// in either mode, some a recall of an earlier one, several recalls of one order, an order and its recall
// inserted in one statement or in two), random changes through the triggers (completion set, moved or
// cleared, the contractor or the mode changed, an order deleted: an order with its recalls, a recall
// alone), then random windows (whole days, partial days, bounds on and next to an order's completion and
// a UTC midnight). On SQLite, and on PostgreSQL in the postgres project (its rollup's deltas unfolded,
// then folded).

import fc from "fast-check";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { RecallCount } from "../../src/storage/evals-store.js";
import { EvalsStore } from "../../src/storage/evals-store.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { createHarness } from "../helpers/harness.js";
import { orderFixture } from "../helpers/order-fixture.js";

const DAY = 86_400_000;
const BASE = Date.parse("2031-05-10T00:00:00.000Z");
const SPAN = 4 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();
const CONTRACTORS = ["con_a", "con_b", "con_c"];

let store: KyselyStore;
let account: string;

beforeAll(async () => {
  const h = await createHarness();
  store = h.services.store as KyselyStore;
  account = (await store.keys.ensureAccount("recall-rollup-property")).id;
});

/** A time in the span, or on / next to a UTC midnight. */
const at = fc.oneof(
  fc.integer({ min: 0, max: SPAN - 1 }),
  fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom(-1, 0, 1)).map(([d, e]) => d * DAY + e),
);

const orderArb = fc.record({
  completed: fc.option(at, { nil: null }),
  livemode: fc.constantFrom(0, 1, 1, 1),
  contractor: fc.nat(CONTRACTORS.length - 1),
  // A recall of an earlier order (its index modulo the ones before), or not.
  recallOf: fc.option(fc.nat(), { nil: null, freq: 2 }),
  // Inserted with the first statement or the second.
  later: fc.boolean(),
});
type OrderSpec = typeof orderArb extends fc.Arbitrary<infer T> ? T : never;

const changeArb = fc.record({
  pick: fc.nat(),
  what: fc.constantFrom("completed_at", "contractor_id", "livemode", "delete"),
  clear: fc.boolean(),
  at,
  n: fc.nat(),
});
type Change = typeof changeArb extends fc.Arbitrary<infer T> ? T : never;

const boundArb = fc.oneof(
  fc.integer({ min: -DAY, max: SPAN + DAY }).map((ms) => ({ ms })),
  fc.integer({ min: -1, max: 5 }).map((d) => ({ ms: d * DAY })),
  fc.tuple(fc.nat(), fc.constantFrom(-1, 0, 1)).map(([pick, e]) => ({ pick, e })),
);
type Bound = typeof boundArb extends fc.Arbitrary<infer T> ? T : never;

let run = 0;

function rows(specs: OrderSpec[]) {
  const ids = specs.map((_, i) => `ord_r${run}_${String(i).padStart(2, "0")}`);
  return specs.map((o, i) => ({
    later: o.later,
    order: orderFixture({
      id: ids[i] as string,
      account_id: account,
      livemode: o.livemode === 1,
      status: o.completed === null ? "accepted" : "completed",
      received_at: iso(BASE),
      created_at: iso(BASE),
      updated_at: iso(BASE),
      contractor_id: CONTRACTORS[o.contractor] as string,
      completed_at: o.completed === null ? null : iso(BASE + o.completed),
      recall_of: o.recallOf === null || i === 0 ? null : (ids[o.recallOf % i] as string),
    }),
  }));
}

async function apply(ids: string[], c: Change): Promise<void> {
  const id = ids[c.pick % ids.length] as string;
  if (c.what === "delete") {
    await sql`DELETE FROM orders WHERE id = ${id}`.execute(store.db);
    ids.splice(ids.indexOf(id), 1);
    return;
  }
  const value =
    c.what === "completed_at"
      ? c.clear
        ? null
        : iso(BASE + c.at)
      : c.what === "livemode"
        ? c.n % 2
        : CONTRACTORS[c.n % CONTRACTORS.length];
  await sql`UPDATE orders SET ${sql.ref(c.what)} = ${value} WHERE id = ${id}`.execute(store.db);
}

async function completedAt(bound: Bound, ids: string[]): Promise<number> {
  if ("ms" in bound) return BASE + bound.ms;
  const id = ids[bound.pick % Math.max(ids.length, 1)];
  const order = id ? (await store.orders.byIds([id]))[0] : undefined;
  return (order?.completed_at ? Date.parse(order.completed_at) : BASE) + bound.e;
}

const sorted = (counts: RecallCount[]) =>
  [...counts].sort((a, b) => String(a.contractorId).localeCompare(String(b.contractorId)));

describe("the evals' recall figures", () => {
  it("from the rollup equal those from the orders, on random histories and windows", async () => {
    const direct = new EvalsStore(store.db, store.dialect, { rollup: false });
    await fc.assert(
      fc.asyncProperty(
        fc.array(orderArb, { minLength: 1, maxLength: 30 }),
        fc.array(changeArb, { maxLength: 15 }),
        fc.array(fc.tuple(boundArb, boundArb), { minLength: 1, maxLength: 5 }),
        async (specs, changes, windows) => {
          run++;
          // A fresh history each run: the last one's orders leave in one statement, recalls and all.
          await sql`DELETE FROM orders`.execute(store.db);
          const made = rows(specs);
          // Two statements: the later recalls in the second, everything else in the first (an order and
          // its recall in one statement, or in two; a recall before the order it names, sometimes).
          const second = (m: (typeof made)[number]) => m.later && m.order.recall_of !== null;
          for (const part of [made.filter((m) => !second(m)), made.filter(second)]) {
            if (part.length === 0) continue;
            await store.write(async (tx) => {
              for (const m of part) await tx.insertOrder(m.order);
            });
          }
          const ids = (await sql<{ id: string }>`SELECT id FROM orders`.execute(store.db)).rows.map(
            (r) => r.id,
          );
          for (const c of changes) if (ids.length > 0) await apply(ids, c);
          for (const [a, b] of windows) {
            const [x, y] = [await completedAt(a, ids), await completedAt(b, ids)];
            if (x === y) continue;
            const [since, until] = [iso(Math.min(x, y)), iso(Math.max(x, y))];
            for (const livemode of [true, false]) {
              const expected = sorted(await direct.recallCounts(livemode, since, until));
              const where = `${livemode ? "live" : "sandbox"} ${since} .. ${until}`;
              expect(sorted(await store.evals.recallCounts(livemode, since, until)), where).toEqual(expected);
              if (store.dialect === "postgres") {
                // Folded: the same figures.
                await sql`SELECT fsd_evals_recall_compact()`.execute(store.db);
                expect(sorted(await store.evals.recallCounts(livemode, since, until)), where).toEqual(
                  expected,
                );
              }
            }
          }
        },
      ),
      { numRuns: store.dialect === "postgres" ? 25 : 80 },
    );
  }, 240_000);
});
