// The one writer's conflict paths (storage/order-writer.ts), on SQLite and, with TEST_DATABASE_URL, on
// PostgreSQL: a contractor without capacity, an order that moved since it was read, a guard that refuses.
// Each reports its reason and leaves nothing behind: no order change, no capacity taken, no ledger row,
// no record, no event.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealRecord } from "../../src/audit/record.js";
import { fitAmong } from "../../src/domain/commitments.js";
import type { Order, OrderChange } from "../../src/domain/orders/order.js";
import { ALWAYS, ZoneOffsets } from "../../src/domain/time/calendar.js";
import { greatCircleTravel } from "../../src/domain/travel-time.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import type { Placement } from "../../src/storage/order-writer.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import type { Store } from "../../src/storage/store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { orderFixture } from "../helpers/order-fixture.js";
import { openPostgresTestStore, type TestStore } from "../helpers/test-store.js";

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
        { ...liveContractor({ id: "ctr_time", maxActiveJobs: 5 }), externalRef: "time" },
        { ...liveContractor({ id: "ctr_race", maxActiveJobs: 5 }), externalRef: "race" },
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
    const row = orderFixture({
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
      blocks: [],
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
    const row = orderFixture({ account_id: account, status: "accepted", contractor_id: "ctr_free" });
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
      blocks: [],
    });
    expect(await counter("ctr_free")).toBe(before - 1);
    const again = change({ ...o, version: 1 }, { ...o, status: "completed" }, [], ["ctr_free"]);
    expect(
      await store.write((tx) => tx.commitOrderChange({ change: again, audit: sealed(again), outbox: null })),
    ).toEqual({
      ok: true,
      blocks: [],
    });
    expect(await counter("ctr_free")).toBe(before - 1);
  });

  describe("capacity as time", () => {
    const HOUR = 3_600_000;
    /** Tuesday 2030-06-04 08:00 PDT: the window's start; the job is an hour long, at one place. */
    const T0 = Date.parse("2030-06-04T15:00:00Z");
    const SF = { lat: 37.77, lon: -122.41 };
    const zones = new ZoneOffsets(T0 - 2 * 86_400_000, T0 + 2 * 86_400_000);
    /** The domain's fit: inside [T0, T0 + 2 h), one hour, between the contractor's blocks. */
    const inWindow =
      (orderId: string): Placement =>
      (_contractor, held) => {
        const at = fitAmong(
          ALWAYS,
          {
            now: T0 - 86_400_000,
            notBefore: T0,
            leadMinutes: 0,
            fromBaseMinutes: 0,
            latestStart: T0 + HOUR,
            durationMs: HOUR,
            point: SF,
            anyHours: false,
          },
          held,
          greatCircleTravel,
          zones,
        );
        return at === null ? null : { orderId, start: at, end: at + HOUR, point: SF };
      };
    const startsOf = async (contractor: string) =>
      (
        await db()
          .selectFrom("capacity_holds")
          .select("starts_at")
          .where("contractor_id", "=", contractor)
          .orderBy("starts_at")
          .execute()
      ).map((r) => r.starts_at);
    const book = (contractor: string) => {
      const row = orderFixture({ account_id: account, status: "offered", contractor_id: contractor });
      const c = change(null, row, [contractor]);
      return store.write((tx) =>
        tx.commitOrderChange({ change: c, audit: sealed(c), outbox: null, place: inWindow(row.id) }),
      );
    };

    it("takes a block of time with the unit, and takes nothing for a job with no room left", async () => {
      expect(await book("ctr_time")).toMatchObject({ ok: true, blocks: [["ctr_time", { start: T0 }]] });
      expect(await book("ctr_time")).toMatchObject({
        ok: true,
        blocks: [["ctr_time", { start: T0 + HOUR }]],
      });
      // Two of its five units are taken, but its window is full.
      expect(await book("ctr_time")).toEqual({ ok: false, reason: "capacity", contractorId: "ctr_time" });
      expect(await counter("ctr_time")).toBe(2);
      expect(await startsOf("ctr_time")).toEqual([
        new Date(T0).toISOString(),
        new Date(T0 + HOUR).toISOString(),
      ]);
    });

    it("gives the last hour to one of two concurrent orders; the time given back is free again", async () => {
      const first = await book("ctr_race");
      expect(first.ok).toBe(true);
      const outcomes = await Promise.all([book("ctr_race"), book("ctr_race")]);
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok)).toEqual([
        { ok: false, reason: "capacity", contractorId: "ctr_race" },
      ]);
      expect(await counter("ctr_race")).toBe(2);
      expect(await startsOf("ctr_race")).toEqual([
        new Date(T0).toISOString(),
        new Date(T0 + HOUR).toISOString(),
      ]);
      // The first order's job ends: its hour is free for the next order.
      const [held] = await db()
        .selectFrom("capacity_holds")
        .select("order_id")
        .where("contractor_id", "=", "ctr_race")
        .where("starts_at", "=", new Date(T0).toISOString())
        .execute();
      const o = await store.orders.byId(held?.order_id as string);
      const done = change(o ?? null, { ...(o as Order), status: "completed" }, [], ["ctr_race"]);
      expect(
        await store.write((tx) => tx.commitOrderChange({ change: done, audit: sealed(done), outbox: null })),
      ).toMatchObject({ ok: true });
      expect(await book("ctr_race")).toMatchObject({ ok: true, blocks: [["ctr_race", { start: T0 }]] });
    });
  });
});
