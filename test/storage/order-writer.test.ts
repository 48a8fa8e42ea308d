// The one writer's conflict paths (storage/order-writer.ts), on SQLite and, with TEST_DATABASE_URL, on
// PostgreSQL: a contractor without capacity, an order that moved since it was read, a guard that refuses.
// Each reports its reason and leaves nothing behind: no order change, no capacity taken, no ledger row,
// no record, no event.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealRecord } from "../../src/audit/record.js";
import type { Order, OrderChange } from "../../src/domain/orders/order.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import type { Store } from "../../src/storage/store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { openPostgresTestStore, type TestStore } from "../helpers/test-store.js";
import { order as orderRow } from "./store-contract.js";

const STORES: Array<"sqlite" | "postgres"> = process.env.TEST_DATABASE_URL
  ? ["sqlite", "postgres"]
  : ["sqlite"];

describe.each(STORES)("the order writer (%s)", (kind) => {
  let opened: TestStore;
  let store: Store;
  let account: string;

  beforeAll(async () => {
    if (kind === "postgres") opened = await openPostgresTestStore();
    else {
      const dir = mkdtempSync(join(tmpdir(), "fd-writer-"));
      opened = {
        store: openSqliteStore(join(dir, "w.sqlite")),
        kind,
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    }
    store = opened.store;
    await store.migrate();
    await store.contractors.insert(
      [
        { ...liveContractor({ id: "ctr_full", maxActiveJobs: 1 }), externalRef: "full" },
        { ...liveContractor({ id: "ctr_free", maxActiveJobs: 5 }), externalRef: "free" },
      ],
      testRecord(),
    );
    account = (await store.keys.ensureAccount("writer")).id;
  });
  afterAll(async () => {
    await store.close();
    await opened.cleanup();
  });

  const db = () => (store as KyselyStore).db;
  const counter = async (id: string) =>
    Number(
      (await db().selectFrom("contractors").select("active_jobs").where("id", "=", id).executeTakeFirst())
        ?.active_jobs,
    );
  const holds = async (orderId: string) =>
    (await db().selectFrom("capacity_holds").selectAll().where("order_id", "=", orderId).execute()).length;
  const records = async (orderId: string) =>
    (await db().selectFrom("audit_records").select("seal").where("order_id", "=", orderId).execute()).length;

  /** A change that moves `order` from `before` to accepted with `take`'s capacity and a record. */
  function change(before: Order | null, after: Order, take: string[], release: string[] = []): OrderChange {
    return {
      kind: "change",
      before,
      after,
      patch: before === null ? after : { status: after.status, contractor_id: after.contractor_id },
      offers: { create: [], settle: [] },
      nte: { create: null, decide: null },
      capacity: { take, release },
      audit: [{ kind: "order.assigned", actor: "operator:t", at: after.updated_at, data: {} }],
      event: null,
    };
  }
  const sealed = (c: OrderChange) =>
    c.audit.map((f) =>
      sealRecord({
        kind: f.kind,
        at: f.at,
        accountId: account,
        livemode: true,
        orderId: c.after.id,
        actor: f.actor,
        data: f.data,
      }),
    );

  async function placed(contractor: string | null): Promise<Order> {
    const row = orderRow({
      account_id: account,
      status: contractor ? "accepted" : "needs_dispatcher",
      contractor_id: contractor,
    });
    const created = change(null, row, contractor ? [contractor] : []);
    const outcome = await store.write((tx) =>
      tx.commitOrderChange({ change: created, audit: sealed(created), outbox: null }),
    );
    expect(outcome).toEqual({ ok: true, blocks: [] });
    return { ...row, version: 0 };
  }

  it("reports a contractor without capacity, and takes nothing", async () => {
    await placed("ctr_full"); // its one unit
    const o = await placed(null);
    const c = change(o, { ...o, status: "accepted", contractor_id: "ctr_full" }, ["ctr_full"]);
    const outcome = await store.write((tx) =>
      tx.commitOrderChange({ change: c, audit: sealed(c), outbox: null }),
    );
    expect(outcome).toEqual({ ok: false, reason: "capacity", contractorId: "ctr_full" });
    expect(await counter("ctr_full")).toBe(1);
    expect(await holds(o.id)).toBe(0);
    expect((await store.orders.byId(o.id))?.status).toBe("needs_dispatcher");
    expect(await records(o.id)).toBe(1);
  });

  it("reports an order that moved since it was read, and gives back what it took", async () => {
    const o = await placed(null);
    const first = change(o, { ...o, status: "accepted", contractor_id: "ctr_free" }, ["ctr_free"]);
    expect(
      await store.write((tx) => tx.commitOrderChange({ change: first, audit: sealed(first), outbox: null })),
    ).toEqual({
      ok: true,
    });
    const before = await counter("ctr_free");
    // A second writer that read the same version: it loses, and its capacity step is undone.
    const stale = change(o, { ...o, status: "accepted", contractor_id: "ctr_free" }, ["ctr_free"]);
    const outcome = await store.write((tx) =>
      tx.commitOrderChange({ change: stale, audit: sealed(stale), outbox: null }),
    );
    expect(outcome).toEqual({ ok: false, reason: "moved" });
    expect(await counter("ctr_free")).toBe(before);
    expect(await holds(o.id)).toBe(1);
    expect(await records(o.id)).toBe(2);
    expect((await store.orders.byId(o.id))?.version).toBe(1);
    // Without capacity to move, the version alone catches it.
    const late = change(o, { ...o, status: "cancelled" }, []);
    expect(
      await store.write((tx) => tx.commitOrderChange({ change: late, audit: sealed(late), outbox: null })),
    ).toEqual({
      ok: false,
      reason: "moved",
    });
    expect((await store.orders.byId(o.id))?.status).toBe("accepted");
    expect(await records(o.id)).toBe(2);
  });

  it("writes nothing when its guard refuses (an idempotency key claimed elsewhere)", async () => {
    const row = orderRow({ account_id: account, status: "accepted", contractor_id: "ctr_free" });
    const c = change(null, row, ["ctr_free"]);
    const before = await counter("ctr_free");
    const outcome = await store.write((tx) =>
      tx.commitOrderChange({ change: c, audit: sealed(c), outbox: null, guard: async () => false }),
    );
    expect(outcome).toEqual({ ok: false, reason: "guard" });
    expect(await counter("ctr_free")).toBe(before);
    expect(await store.orders.byId(row.id)).toBeUndefined();
    expect(await holds(row.id)).toBe(0);
    expect(await records(row.id)).toBe(0);
  });

  it("gives a unit back once: a second release of the same hold changes nothing", async () => {
    const o = await placed("ctr_free");
    const before = await counter("ctr_free");
    const done = change(o, { ...o, status: "completed" }, [], ["ctr_free"]);
    expect(
      await store.write((tx) => tx.commitOrderChange({ change: done, audit: sealed(done), outbox: null })),
    ).toEqual({
      ok: true,
    });
    expect(await counter("ctr_free")).toBe(before - 1);
    const again = change({ ...o, version: 1 }, { ...o, status: "completed" }, [], ["ctr_free"]);
    expect(
      await store.write((tx) => tx.commitOrderChange({ change: again, audit: sealed(again), outbox: null })),
    ).toEqual({
      ok: true,
    });
    expect(await counter("ctr_free")).toBe(before - 1);
  });
});
