// The storage contract suite: what every Store implementation must do. Run against SQLite always (and
// against PostgreSQL where a suite file provides one).

import { generateKeyPairSync } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditLog } from "../../src/audit/audit-log.js";
import { buildTile, TILE_WIDTH } from "../../src/audit/merkle.js";
import { CheckpointSigner } from "../../src/audit/signing.js";
import type { Clock } from "../../src/clock.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { AUDIT_LOG_TABLES } from "../../src/storage/migrations/0003-audit-log.js";
import type { Store } from "../../src/storage/store.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { orderFixture } from "../helpers/order-fixture.js";
import { rfcMthOfHashes, rfcPath, rfcProof } from "../helpers/rfc9162.js";
import { testClock } from "../helpers/test-clock.js";

/** A text column of each audit log table, to attempt an UPDATE on. */
const COLUMN_OF: Record<(typeof AUDIT_LOG_TABLES)[number], string> = {
  audit_records: "kind",
  audit_leaves: "leaf_hash",
  audit_nodes: "hash",
  audit_checkpoints: "root_hash",
};

/** Runs the contract on the store `open` makes, which stamps the rows it writes on its own with `clock`. */
export function runStoreContract(name: string, open: (clock: Clock) => Promise<Store>) {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    let accountId: string;
    const clock = testClock();
    // One key for every test that signs the log: the sequencer refuses a log signed with another.
    const signer = new CheckpointSigner(generateKeyPairSync("ed25519").privateKey);

    beforeAll(async () => {
      store = await open(clock.now);
      await store.migrate();
      accountId = (await store.keys.ensureAccount("contract")).id;
    });
    afterAll(async () => {
      await store.close();
    });

    it("migrates idempotently and answers ping", async () => {
      await store.migrate();
      await store.ping();
    });

    it("creates an account once per name", async () => {
      const a = await store.keys.ensureAccount("same");
      const b = await store.keys.ensureAccount("same");
      expect(a.id).toBe(b.id);
      expect((await store.keys.findAccountByName("same"))?.id).toBe(a.id);
      expect(await store.keys.findAccountByName("nobody")).toBeUndefined();
    });

    it("stores keys by hash and revokes them once", async () => {
      const row = {
        id: "key_contract1",
        account_id: accountId,
        mode: "live" as const,
        key_hash: "a".repeat(64),
        key_hint: "fsd_live_...abcd",
        label: null,
        rate_limit_per_minute: 10,
        rate_limit_burst: null,
        created_at: new Date().toISOString(),
        revoked_at: null,
        kind: "account" as const,
        contractor_id: null,
        role: null,
        approval_limit_cents: null,
      };
      await store.keys.insert(row, testRecord("key.issued"));
      expect(await store.keys.findByHash("a".repeat(64))).toEqual(row);
      expect((await store.keys.list("contract")).map((k) => k.id)).toContain("key_contract1");
      expect(
        await store.keys.revoke("key_contract1", "2026-01-01T00:00:00.000Z", () => testRecord("key.revoked")),
      ).toBe("revoked");
      expect(
        await store.keys.revoke("key_contract1", "2026-01-02T00:00:00.000Z", () => testRecord("key.revoked")),
      ).toBe("already_revoked");
      expect(
        await store.keys.revoke("key_nope", "2026-01-02T00:00:00.000Z", () => testRecord("key.revoked")),
      ).toBe("not_found");
      expect((await store.keys.findByHash("a".repeat(64)))?.revoked_at).toBe("2026-01-01T00:00:00.000Z");
    });

    it("round-trips contractors and upserts live ones by external reference", async () => {
      const c = liveContractor({ id: "ctr_contract1", externalRef: "ext-1", serviceRadiusMiles: null });
      await store.contractors.upsert([c], () => testRecord());
      await store.contractors.upsert([{ ...c, id: "ctr_ignored", hourlyRateCents: 15_000 }], () =>
        testRecord(),
      );
      const loaded = (await store.contractors.load()).filter((x) => x.id === "ctr_contract1");
      expect(loaded).toHaveLength(1);
      expect(loaded[0]).toMatchObject({
        trades: c.trades,
        states: c.states,
        hourlyRateCents: 15_000,
        serviceRadiusMiles: null,
        emergencyCapable: true,
        active: true,
      });
      expect(await store.contractors.count("live")).toBeGreaterThanOrEqual(1);
      // The same external reference in the sandbox pool is another contractor: the live one is untouched.
      const sandboxed = { ...c, id: "ctr_contract1s", pool: "sandbox" as const, hourlyRateCents: 9_000 };
      expect(await store.contractors.upsert([sandboxed], () => testRecord())).toEqual({
        inserted: 1,
        updated: 0,
      });
      const both = (await store.contractors.load()).filter((x) => x.id.startsWith("ctr_contract1"));
      expect(both.map((x) => [x.id, x.pool, x.hourlyRateCents]).sort()).toEqual([
        ["ctr_contract1", "live", 15_000],
        ["ctr_contract1s", "sandbox", 9_000],
      ]);
    });

    it("changes the contractors version on every insert or update", async () => {
      const before = await store.contractors.version();
      expect(await store.contractors.version()).toBe(before);
      const c = liveContractor({ id: "ctr_version1", externalRef: "ext-version" });
      await store.contractors.upsert([c], () => testRecord());
      const afterInsert = await store.contractors.version();
      expect(afterInsert).not.toBe(before);
      clock.advance(1); // the update is stamped a millisecond after the insert, whatever the machine's speed
      await store.contractors.upsert([{ ...c, rating: 3 }], () => testRecord());
      expect(await store.contractors.version()).not.toBe(afterInsert);
    });

    it("finds orders only for their account and mode", async () => {
      const o = orderFixture({ account_id: accountId });
      await store.write((tx) => tx.insertOrder(o));
      expect(await store.orders.find(o.id, accountId, true)).toMatchObject({ id: o.id, description: "leak" });
      expect(await store.orders.find(o.id, accountId, false)).toBeUndefined();
      expect(await store.orders.find(o.id, "acct_other", true)).toBeUndefined();
    });

    it("reads an order back as the domain's value it wrote: its mode a boolean, its ranking a list", async () => {
      const sandbox = orderFixture({
        account_id: accountId,
        livemode: false,
        status: "offered",
        urgency: "emergency",
        ranking: ["ctr_1", "ctr_2"],
        window_source: "earliest",
        sla_respond_at_risk_at: "2026-06-01T00:00:00.000Z",
        override_count: 2,
        version: 3,
      });
      const live = orderFixture({ account_id: accountId });
      await store.write(async (tx) => {
        await tx.insertOrder(sandbox);
        await tx.insertOrder(live);
      });
      expect(await store.orders.byId(sandbox.id)).toEqual(sandbox);
      expect(await store.orders.find(sandbox.id, accountId, false)).toEqual(sandbox);
      expect(await store.orders.byIds([live.id])).toEqual([live]);
      const row = await (store as KyselyStore).db
        .selectFrom("orders")
        .select(["livemode", "ranking"])
        .where("id", "=", sandbox.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ livemode: 0, ranking: JSON.stringify(["ctr_1", "ctr_2"]) });
    });

    it("claims an idempotency key once until it expires", async () => {
      const now = "2026-06-01T00:00:00.000Z";
      const rec = {
        account_id: accountId,
        livemode: 1,
        idem_key: "k1",
        request_hash: "h1",
        response_status: 200,
        response_body: "{}",
        order_id: null,
        created_at: now,
        expires_at: "2026-06-02T00:00:00.000Z",
      };
      expect(await store.write((tx) => store.idempotency.claim(rec, now, tx))).toBe(true);
      expect(
        await store.write((tx) => store.idempotency.claim({ ...rec, request_hash: "h2" }, now, tx)),
      ).toBe(false);
      expect((await store.idempotency.find(accountId, true, "k1", now))?.request_hash).toBe("h1");
      expect(await store.idempotency.find(accountId, false, "k1", now)).toBeUndefined();
      const later = "2026-06-03T00:00:00.000Z";
      expect(await store.idempotency.find(accountId, true, "k1", later)).toBeUndefined();
      expect(
        await store.write((tx) =>
          store.idempotency.claim(
            { ...rec, request_hash: "h3", expires_at: "2026-06-04T00:00:00.000Z" },
            later,
            tx,
          ),
        ),
      ).toBe(true);
      expect((await store.idempotency.find(accountId, true, "k1", later))?.request_hash).toBe("h3");
      expect(await store.idempotency.purgeExpired("2026-07-01T00:00:00.000Z")).toBeGreaterThanOrEqual(1);
      expect(await store.idempotency.find(accountId, true, "k1", later)).toBeUndefined();
    });

    it("group-commits concurrent writes, and one failing write does not fail the others", async () => {
      const dup = orderFixture({ account_id: accountId });
      await store.write((tx) => tx.insertOrder(dup));
      const fresh = Array.from({ length: 50 }, () => orderFixture({ account_id: accountId }));
      const results = await Promise.allSettled([
        ...fresh.map((o) => store.write((tx) => tx.insertOrder(o))),
        store.write((tx) => tx.insertOrder(dup)), // primary key conflict
      ]);
      expect(results.slice(0, 50).every((r) => r.status === "fulfilled")).toBe(true);
      expect(results[50]?.status).toBe("rejected");
      for (const o of fresh) expect(await store.orders.find(o.id, accountId, true)).toBeDefined();
    });

    it("writes thousands of rows in one transaction (several multi-row statements)", async () => {
      const many = Array.from({ length: 2_500 }, () => orderFixture({ account_id: accountId }));
      await store.write(async (tx) => {
        for (const o of many) await tx.insertOrder(o);
      });
      for (const o of [many[0], many[2_399], many[2_400], many[2_499]]) {
        expect(await store.orders.find(o?.id as string, accountId, true)).toMatchObject({ id: o?.id });
      }
    });

    it("keeps the audit log append-only below the application (every store must carry the triggers)", async () => {
      await store.write(async (tx) => tx.appendAudit(testRecord("quote.issued")));
      // Leaves, tree nodes and a checkpoint exist, so that every log table has a row to refuse changing.
      await new AuditLog(store.audit, signer).sequence(true);
      expect((await store.audit.latestCheckpoint())?.tree_size).toBeGreaterThan(0);
      const db = (store as KyselyStore).db;
      for (const table of AUDIT_LOG_TABLES) {
        await expect(
          sql.raw(`UPDATE ${table} SET ${COLUMN_OF[table]} = 'x'`).execute(db),
          table,
        ).rejects.toThrow(/append-only/);
        await expect(sql.raw(`DELETE FROM ${table}`).execute(db), table).rejects.toThrow(
          /append-only|kept 7 years/,
        );
      }
      // The record just written exists and is young: the retention rule refuses its deletion too.
      const rows = await db.selectFrom("audit_records").select("seal").execute();
      expect(rows.length).toBeGreaterThan(0);
    });

    it("stores every perfect subtree as recomputed from the leaves, and proves as the RFC defines, at every size", async () => {
      const warm = new AuditLog(store.audit, signer); // keeps its caches across the appends
      const sizes: number[] = [];
      // Appends in batches of many sizes (crossing powers of two at several levels), one transaction each.
      // The last batches cross several 256-leaf tiles in one transaction and end inside a partial tile.
      for (const batch of [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 1, 64, 7, 255, 600, 3]) {
        const entries = Array.from({ length: batch }, () => testRecord());
        await store.write(async (tx) => {
          for (const e of entries) tx.appendAudit(e);
        });
        await warm.sequence(true);
        const size = (await warm.checkpoint()).checkpoint?.tree_size ?? 0;
        sizes.push(size);
        // Proofs against this size from the process that watched the log grow, checked right away.
        const leaves = await store.audit.leavesWithRecords(0, size);
        const hashes = leaves.map((l) => Buffer.from(l.leaf_hash, "hex"));
        for (const m of [0, size >> 1, size - 1]) {
          const proof = await warm.inclusion(m, size);
          expect(proof, `inclusion ${m} of ${size}`).toEqual(rfcPath(m, hashes));
        }
        const first = Math.max(1, size - batch);
        expect(await warm.consistency(first, size), `consistency ${first}-${size}`).toEqual(
          rfcProof(first, hashes),
        );
      }
      const n = sizes[sizes.length - 1] as number;
      const leaves = await store.audit.leavesWithRecords(0, n);
      const hashes = leaves.map((l) => Buffer.from(l.leaf_hash, "hex"));
      // Every perfect subtree of the tree, read from the store, equals its hash recomputed from the leaves.
      const refs: Array<{ level: number; index: number }> = [];
      for (let level = 0; 2 ** level <= n; level++) {
        for (let index = 0; (index + 1) * 2 ** level <= n; index++) refs.push({ level, index });
      }
      // Read both ways: the levels below a tile's root from the tiles (what proofs read), and from the rows.
      expect(n % TILE_WIDTH).not.toBe(0);
      const tiles = await store.audit.auditNodes(refs);
      const rows = await store.audit.auditNodes(refs, "rows");
      for (const { level, index } of refs) {
        const width = 2 ** level;
        const expected = rfcMthOfHashes(hashes.slice(index * width, (index + 1) * width)).toString("hex");
        expect(tiles.get(`${level}/${index}`)?.toString("hex"), `node ${level}/${index}`).toBe(expected);
        expect(rows.get(`${level}/${index}`)?.toString("hex"), `row ${level}/${index}`).toBe(expected);
      }
      // One tile per complete 256 leaves, written with the leaf that completed it.
      const stored = await (store as KyselyStore).db
        .selectFrom("audit_tiles")
        .select(["idx", "hashes"])
        .orderBy("idx")
        .execute();
      expect(stored.map((t) => Number(t.idx))).toEqual(
        Array.from({ length: Math.floor(n / TILE_WIDTH) }, (_, i) => i),
      );
      for (const t of stored) {
        const idx = Number(t.idx);
        const leaves = hashes.slice(idx * TILE_WIDTH, (idx + 1) * TILE_WIDTH);
        expect(Buffer.from(t.hashes).equals(buildTile(leaves)), `tile ${idx}`).toBe(true);
      }
      // A process with cold caches proves every size the same way the RFC's definitions do.
      const cold = new AuditLog(store.audit, signer);
      for (const size of sizes) {
        const upto = hashes.slice(0, size);
        for (let m = 0; m < size; m += Math.max(1, size >> 3)) {
          expect(await cold.inclusion(m, size), `inclusion ${m} of ${size}`).toEqual(rfcPath(m, upto));
        }
        for (const first of [1, size >> 1, size].filter((f) => f >= 1)) {
          expect(await cold.consistency(first, n), `consistency ${first}-${n}`).toEqual(
            rfcProof(first, hashes),
          );
        }
      }
    });

    it("reserves contractor capacity atomically, up to the maximum, and counts it", async () => {
      await store.contractors.insert(
        [{ ...liveContractor({ id: "ctr_busy", maxActiveJobs: 3 }), externalRef: "busy" }],
        testRecord(),
      );
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          store.write((tx) => tx.reserveContractor("ctr_busy", `ord_busy${i}`)),
        ),
      );
      const holder = `ord_busy${results.indexOf(true)}`;
      expect(results.filter(Boolean)).toHaveLength(3);
      expect(new Map(await store.contractors.activeJobCounts()).get("ctr_busy")).toBe(3);
      await store.write((tx) => tx.releaseContractor("ctr_busy", holder));
      expect(new Map(await store.contractors.activeJobCounts()).get("ctr_busy")).toBe(2);
      expect(await store.write((tx) => tx.reserveContractor("ctr_nobody", "ord_busy9"))).toBe(false);
      // The ledger: a unit is given back once; giving it back again changes nothing.
      expect(await store.write((tx) => tx.releaseContractor("ctr_busy", holder))).toBe(false);
      expect(new Map(await store.contractors.activeJobCounts()).get("ctr_busy")).toBe(2);
    });

    it("keeps maintenance plans and claims each occurrence once", async () => {
      const m = store.maintenance;
      const plan = {
        id: "mpl_contract1",
        livemode: true,
        accountId,
        siteId: "site_contract1",
        assetId: null,
        trade: "hvac",
        name: "Filters",
        description: "Change the filters",
        checklistTemplateId: null,
        durationMinutes: 60,
        recurrence: "FREQ=MONTHLY;INTERVAL=3",
        exceptions: ["2027-04-01"],
        startsOn: "2027-01-01",
        window: { days: ["mon", "tue"], start: "08:00", end: "12:00" },
        horizonDays: 30,
        nteCents: null,
        status: "active" as const,
        version: 1,
        generatedUntil: null,
        refreshAt: null,
        createdAt: "2027-01-01T00:00:00.000Z",
        createdBy: "key:key_x",
        updatedAt: "2027-01-01T00:00:00.000Z",
        updatedBy: "key:key_x",
        seal: "seal1",
      };
      await store.write((tx) => m.insertPlan(plan, tx));
      expect(await m.planById(plan.id)).toEqual(plan);
      // The plan's own writes keep how far it was generated (regenerate forgets it, below).
      expect((await m.plansToGenerate("2027-01-01T00:00:00.000Z", 10)).map((p) => p.id)).toContain(plan.id);
      await store.write((tx) =>
        m.setGeneratedUntil(plan.id, 1, "2027-02-01T00:00:00.000Z", "2027-01-02T00:00:00.000Z", tx),
      );
      const due = async (at: string) => (await m.plansToGenerate(at, 10)).map((p) => p.id);
      expect(await due("2027-01-01T12:00:00.000Z")).not.toContain(plan.id);
      expect(await due("2027-01-02T00:00:00.000Z")).toContain(plan.id);
      // A change at another version is not marked generated, and a regenerating update forgets it.
      await store.write((tx) =>
        m.updatePlan({ ...plan, version: 2, name: "Filters (new)" }, tx, { regenerate: true }),
      );
      await store.write((tx) =>
        m.setGeneratedUntil(plan.id, 1, "2027-03-01T00:00:00.000Z", "2027-02-01T00:00:00.000Z", tx),
      );
      expect((await m.plansToGenerate("2027-01-01T12:00:00.000Z", 10)).map((p) => p.id)).toContain(plan.id);
      expect((await m.planById(plan.id))?.name).toBe("Filters (new)");
      expect(await m.plans({ livemode: true, accountId, limit: 10 })).toHaveLength(1);
      expect(await m.plans({ livemode: false, accountId, limit: 10 })).toHaveLength(0);

      const occurrence = {
        planId: plan.id,
        key: "2027-01-01",
        livemode: true,
        accountId,
        siteId: plan.siteId,
        assetId: null,
        windowStart: "2027-01-04T13:00:00.000Z",
        windowEnd: "2027-01-04T17:00:00.000Z",
        state: "generated" as const,
        orderId: "ord_planned1",
        reason: null,
        movedFrom: null,
        overdueAt: null,
        createdAt: "2027-01-01T00:00:00.000Z",
        updatedAt: "2027-01-01T00:00:00.000Z",
        seal: "seal2",
      };
      // Claimed once, even by two writes at once.
      const claims = await Promise.all([
        store.write((tx) => m.claimOccurrence(occurrence, tx)),
        store.write((tx) => m.claimOccurrence({ ...occurrence, orderId: "ord_planned2" }, tx)),
      ]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      const stored = await m.occurrence(plan.id, "2027-01-01");
      expect(stored?.orderId).toBe(claims[0] ? "ord_planned1" : "ord_planned2");
      expect((await m.occurrenceOfOrder(stored?.orderId as string))?.key).toBe("2027-01-01");
      expect(await m.endedNotFlagged("2027-01-05T00:00:00.000Z", 10)).toHaveLength(1);
      expect(await m.endedNotFlagged("2027-01-04T12:00:00.000Z", 10)).toHaveLength(0);
      const moved = {
        ...(stored as typeof occurrence),
        overdueAt: "2027-01-05T00:00:00.000Z",
        movedFrom: { start: occurrence.windowStart, end: occurrence.windowEnd },
      };
      await store.write((tx) => m.updateOccurrence(moved, tx));
      expect(await m.occurrence(plan.id, "2027-01-01")).toEqual(moved);
      expect(await m.endedNotFlagged("2027-01-05T00:00:00.000Z", 10)).toHaveLength(0);
      expect(
        await m.occurrences({ livemode: true, accountId, from: "2027-01-04T16:00:00.000Z", limit: 10 }),
      ).toHaveLength(1);
      expect(
        await m.occurrences({ livemode: true, accountId, until: "2027-01-04T13:00:00.000Z", limit: 10 }),
      ).toHaveLength(0);
    });
  });
}
