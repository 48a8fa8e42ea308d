// On SQLite an audit record's leaf (and the tree nodes it completes) is written in the record's own
// transaction, at the tree's edge. These tests check that edge under what can move it behind this
// process's back: a rolled-back transaction, another process appending to the same file, and records
// queued by an older version of the service. Every proof is checked with the independent RFC 9162
// verifier, and `audit check` recomputes the whole tree.

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AuditLog } from "../../src/audit/audit-log.js";
import { checkLog } from "../../src/audit/log-check.js";
import type { AuditEntry } from "../../src/audit/record.js";
import { loadSigningKey } from "../../src/audit/signing.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import { testRecord } from "../helpers/fixtures.js";
import { rfcVerifyInclusion } from "../helpers/rfc9162.js";

const dir = mkdtempSync(join(tmpdir(), "fd-audit-edge-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const signer = loadSigningKey(undefined, dir);

async function freshStore(name: string): Promise<KyselyStore> {
  const store = openSqliteStore(join(dir, `${name}.sqlite`));
  await store.migrate();
  return store;
}

/** RFC 9162 2.1.1's MTH over leaves given by their leaf hashes (written here, not taken from the service). */
function mth(hashes: Buffer[]): Buffer {
  if (hashes.length === 1) return hashes[0] as Buffer;
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return createHash("sha256")
    .update(Buffer.from([1]))
    .update(mth(hashes.slice(0, k)))
    .update(mth(hashes.slice(k)))
    .digest();
}

/** Writes `count` records, one group-commit write each, and returns them. */
async function write(store: KyselyStore, count: number): Promise<AuditEntry[]> {
  const entries = Array.from({ length: count }, () => testRecord());
  await Promise.all(entries.map((e) => store.write(async (tx) => tx.appendAudit(e))));
  return entries;
}

/** Every leaf proven against the latest checkpoint with the RFC's own algorithm, and the root recomputed. */
async function expectWholeLogProven(store: KyselyStore, log: AuditLog, entries: AuditEntry[]) {
  await log.sequence(true);
  const { checkpoint } = await log.checkpoint();
  expect(checkpoint?.tree_size).toBe(entries.length);
  const leaves = await store.audit.leavesWithRecords(0, entries.length + 10);
  expect(leaves.map((l) => l.seal).sort()).toEqual(entries.map((e) => e.seal).sort());
  const root = Buffer.from(checkpoint?.root_hash ?? "", "hex");
  expect(mth(leaves.map((l) => Buffer.from(l.leaf_hash, "hex"))).equals(root)).toBe(true);
  for (const e of entries) {
    const v = await log.verify(e.seal);
    expect(v?.status).toBe("verified");
    const proof = v?.inclusion_proof;
    expect(
      rfcVerifyInclusion(
        Buffer.from(e.leaf_hash, "hex"),
        proof?.leaf_index ?? -1,
        proof?.tree_size ?? 0,
        (proof?.hashes ?? []).map((h) => Buffer.from(h, "hex")),
        root,
      ),
    ).toBe(true);
  }
  const report = await checkLog(store.audit, signer.publicKey);
  expect(report).toMatchObject({ ok: true, leaves: entries.length, pending: 0, mismatch: null });
}

describe("the audit tree's edge on SQLite", () => {
  it("puts a record in the tree in its own transaction; the sequencer only signs", async () => {
    const store = await freshStore("own-tx");
    const log = new AuditLog(store.audit, signer);
    const entries = await write(store, 37);
    for (const e of entries) expect((await store.audit.findAudit(e.seal)).leaf).toBeDefined();
    expect(await store.audit.pendingAuditCount()).toBe(37); // in the tree, not yet signed
    expect(await log.sequence(true)).toBe(0); // nothing was queued
    expect(await store.audit.pendingAuditCount()).toBe(0);
    // A record verified before the next checkpoint gets one signed on demand.
    const [late] = await write(store, 1);
    expect((await log.verify((late as AuditEntry).seal))?.status).toBe("verified");
    await expectWholeLogProven(store, log, [...entries, late as AuditEntry]);
    await store.close();
  });

  it("continues from the stored edge after a transaction that appended rolls back", async () => {
    const store = await freshStore("rollback");
    const log = new AuditLog(store.audit, signer);
    const kept = await write(store, 5);
    await expect(
      store.db.transaction().execute(async (trx) => {
        await store.audit.writeEntries(trx, [testRecord(), testRecord(), testRecord()]);
        throw new Error("the decision failed after its records were appended");
      }),
    ).rejects.toThrow(/decision failed/);
    kept.push(...(await write(store, 6)));
    await expectWholeLogProven(store, log, kept);
    await store.close();
  });

  it("keeps one tree when another process appends to the same file in between", async () => {
    const file = join(dir, "two-processes.sqlite");
    const server = openSqliteStore(file);
    await server.migrate();
    const cli = openSqliteStore(file); // a second connection, as `npm run cli` has
    const log = new AuditLog(server.audit, signer);
    const entries: AuditEntry[] = [];
    for (let round = 0; round < 12; round++) {
      entries.push(...(await write(round % 2 === 0 ? server : cli, 1 + ((round * 7) % 13))));
      if (round % 4 === 3) await log.sequence(true);
    }
    await expectWholeLogProven(server, log, entries);
    await cli.close();
    await server.close();
  });

  it("sequences records an older version queued, after the leaves already in the tree", async () => {
    const store = await freshStore("legacy-queue");
    const log = new AuditLog(store.audit, signer);
    const inTree = await write(store, 9);
    const queued = Array.from({ length: 4 }, () => testRecord());
    await store.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("audit_records")
        .values(queued.map(({ leaf_hash: _leaf, ...row }) => row))
        .execute();
      await trx
        .insertInto("audit_pending")
        .values(queued.map((e) => ({ seal: e.seal, leaf_hash: e.leaf_hash })))
        .execute();
    });
    expect(await store.audit.pendingAuditCount()).toBe(13);
    expect(await log.sequence(true)).toBe(4);
    const after = await write(store, 3);
    await expectWholeLogProven(store, log, [...inTree, ...queued, ...after]);
    expect((await store.audit.findAudit((queued[0] as AuditEntry).seal)).leaf?.leaf_index).toBe(9);
    await store.close();
  });
});
