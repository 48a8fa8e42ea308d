// Property test through the real runner, writer and store: random sequences of the three roles' commands,
// the sweeper's expiries and the clock, on SQLite (and on PostgreSQL when TEST_DATABASE_URL is set), leave
// the database with every order invariant holding (test/helpers/order-invariants.ts): status and
// contractor agree with the audit records, at most one pending offer and only while offered, capacity held
// equals pending offers plus jobs, one outbox event per status change for an order with a recipient.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ContractorRefs } from "../../src/auth/contractor-refs.js";
import { loadConfig } from "../../src/config.js";
import { createOrder } from "../../src/domain/orders/commands.js";
import { ContractorPool } from "../../src/operations/kernel/contractor-pool.js";
import * as commands from "../../src/operations/orders/command-runner.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import type { Store } from "../../src/storage/store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { orderRequestFixture } from "../helpers/order-fixture.js";
import { orderAnomalies } from "../helpers/order-invariants.js";
import { type OrderStep, orderStep } from "../helpers/order-steps.js";
import { openPostgresTestStore, type TestStore } from "../helpers/test-store.js";

const CONTRACTORS = ["ctr_pa", "ctr_pb", "ctr_pc", "ctr_pd"];
/** A live contractor as its key presents it. */
const live = (contractorId: string) => ({ contractorId, livemode: true });

/** One run's world: a fresh store with four live contractors of capacity 2, and a movable clock. */
async function world(kind: "sqlite" | "postgres") {
  let opened: TestStore;
  if (kind === "postgres") opened = await openPostgresTestStore();
  else {
    const dir = mkdtempSync(join(tmpdir(), "fd-prop-"));
    opened = {
      store: openSqliteStore(join(dir, "store.sqlite")),
      kind,
      async cleanup() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const store: Store = opened.store;
  await store.migrate();
  await store.contractors.insert(
    CONTRACTORS.map((id) => ({ ...liveContractor({ id, maxActiveJobs: 2 }), externalRef: id })),
    testRecord(),
  );
  const account = (await store.keys.ensureAccount("prop")).id;
  const clock = { ms: Date.parse("2026-11-23T12:00:00.000Z") };
  const pool = new ContractorPool(store);
  await pool.load();
  const services = {
    store,
    pool,
    config: loadConfig({ DATA_DIR: "/nonexistent", SANDBOX_SIMULATION: "false" }),
    refs: new ContractorRefs(Buffer.alloc(32, 7)),
    now: () => new Date(clock.ms),
  };
  const close = async () => {
    await store.close();
    await opened.cleanup();
  };
  return { services, clock, account, close };
}

type World = Awaited<ReturnType<typeof world>>;

async function play(w: World, s: OrderStep, orders: string[]): Promise<void> {
  const { services } = w;
  const store = services.store;
  if (s.kind === "clock") {
    w.clock.ms += s.minutes * 60_000;
    return;
  }
  if (s.kind === "create") {
    const id = `ord_prop${orders.length}${Math.random().toString(36).slice(2, 8)}`;
    const at = services.now().toISOString();
    const ranking = s.ranking.map((i) => CONTRACTORS[i] as string);
    // What the caller asks for; the command decides the rest of the order.
    const request = orderRequestFixture({
      id,
      account_id: w.account,
      state: "CA",
      zip: "94103",
      nte_cents: 50_000,
      callback_url: s.callback ? "https://hooks.example.com/x" : null,
      received_at: at,
      created_at: at,
    });
    await commands.tryOrderCommand(
      services,
      {},
      async () => null,
      (_none, ctx) =>
        createOrder(
          {
            request,
            candidates: ranking.map((c) => ({
              contractorId: c,
              priceCents: 30_000,
              etaTier: "same_day",
              score: 1,
            })),
            modelPriceCents: 30_000,
            matchingTimeMs: 0,
            actor: "key:prop",
            createdData: {},
            decisionData: {},
            time: { timeZone: "America/Chicago", window: null },
          },
          ctx,
        ),
    );
    orders.push(id);
    return;
  }
  const orderId = orders[s.pick % Math.max(1, orders.length)];
  if (orderId === undefined) return;
  const order = await store.orders.byId(orderId);
  if (!order) return;
  const pending = (await store.orders.offersOf(orderId)).find((o) => o.status === "pending");
  const holder = order.contractor_id ?? "ctr_pa";
  const expected = (work: () => Promise<unknown>) =>
    work().catch((e: unknown) => {
      // Refusals (4xx problems) are expected outcomes of random commands; anything else is a bug.
      if (!(e instanceof Error && "status" in e && Number((e as { status: number }).status) < 500)) throw e;
    });
  switch (s.kind) {
    case "accept":
      if (pending)
        await expected(() =>
          commands.acceptOffer(services, live(pending.contractor_id), pending.id, "contractor:p"),
        );
      return;
    case "decline":
      if (pending)
        await expected(() =>
          commands.declineOffer(services, live(pending.contractor_id), pending.id, null, "contractor:p"),
        );
      return;
    case "expire":
      if (pending) {
        w.clock.ms = Math.max(w.clock.ms, Date.parse(pending.deadline_at));
        await commands.settleOffer(services, pending.id, "expired", "system:dispatch");
      }
      return;
    case "report": {
      const report =
        s.to === "en_route"
          ? ({ status: "en_route", eta_minutes: 30 } as const)
          : s.to === "completed"
            ? ({ status: "completed", final_cost_cents: 40_000 } as const)
            : s.to === "cannot_complete"
              ? ({ status: "cannot_complete", reason: "no parts" } as const)
              : ({ status: "on_site" } as const);
      await expected(() => commands.reportProgress(services, live(holder), orderId, report, "contractor:p"));
      return;
    }
    case "cancel":
      await expected(() => commands.cancelOrder(services, orderId, null, s.by, "key:prop"));
      return;
    case "assign":
      await expected(() =>
        commands.assign(services, orderId, true, CONTRACTORS[s.to] as string, "by hand", "operator:prop"),
      );
      return;
    case "nte":
      await expected(() =>
        commands.requestNte(services, live(holder), orderId, s.cents, "more work", "contractor:p"),
      );
      return;
    case "decide": {
      const request = (await store.orders.nteRequests(orderId)).find((r) => r.status === "pending");
      if (request)
        await expected(() =>
          commands.decideNte(
            services,
            orderId,
            request.id,
            s.approve ? "approved" : "rejected",
            null,
            "key:prop",
          ),
        );
      return;
    }
    case "invoice":
      await expected(() => commands.invoice(services, live(holder), orderId, s.cents, "contractor:p"));
      return;
  }
}

const STORES: Array<"sqlite" | "postgres"> = process.env.TEST_DATABASE_URL
  ? ["sqlite", "postgres"]
  : ["sqlite"];

describe.each(STORES)("the order's invariants through the store (%s)", (kind) => {
  const open: World[] = [];
  afterAll(async () => {
    for (const w of open) await w.close();
  });

  it("hold after any sequence of commands", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(orderStep, { minLength: 5, maxLength: 40 }), async (steps) => {
        const w = await world(kind);
        open.push(w);
        const orders: string[] = [];
        for (const s of steps) await play(w, s, orders);
        expect(await orderAnomalies(w.services.store)).toEqual([]);
        await w.close();
        open.splice(open.indexOf(w), 1);
      }),
      { numRuns: kind === "sqlite" ? 25 : 10 },
    );
  }, 240_000);
});
