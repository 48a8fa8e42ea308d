// Migration 0028 backfills a tile per complete 256 leaves of a log written before it (more than one batch
// of tiles, and a partial last tile that gets none), the tiles append-only; proofs equal the RFC's before
// and after; and down drops the tiles, up writes them again. On SQLite, and on PostgreSQL with
// TEST_DATABASE_URL.

import { createHash, generateKeyPairSync } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { AuditLog } from "../../src/audit/audit-log.js";
import { appendLeaves, buildTile, TILE_WIDTH } from "../../src/audit/merkle.js";
import { CheckpointSigner } from "../../src/audit/signing.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { rfcPath, rfcProof } from "../helpers/rfc9162.js";
import { storesClosedAfterAll } from "../helpers/stores-closed.js";
import {
  MIGRATION_TEST_TIMEOUT,
  openPostgresTestStore,
  openTestStore,
  type TestStore,
} from "../helpers/test-store.js";

const opened = storesClosedAfterAll();

// 67 complete tiles (more than the migration's 64 per batch) and 77 leaves of a partial one.
const LEAVES = 67 * TILE_WIDTH + 77;
const CHUNK = 500;

/** Writes a log of LEAVES leaves with its inner nodes, as the appender did before tiles existed. */
async function writeLog(store: KyselyStore): Promise<Buffer[]> {
  const hashes = Array.from({ length: LEAVES }, (_, i) => createHash("sha256").update(`leaf ${i}`).digest());
  const { nodes } = appendLeaves(0, [], hashes);
  const leafRows = hashes.map((h, i) => ({
    leaf_index: i,
    seal: `seal_tiles${i}`,
    leaf_hash: h.toString("hex"),
    integrated_at: "2026-11-27T00:00:00.000Z",
  }));
  const nodeRows = nodes
    .filter((n) => n.level > 0)
    .map((n) => ({ level: n.level, idx: n.index, hash: n.hash.toString("hex") }));
  for (let i = 0; i < leafRows.length; i += CHUNK)
    await store.db
      .insertInto("audit_leaves")
      .values(leafRows.slice(i, i + CHUNK))
      .execute();
  for (let i = 0; i < nodeRows.length; i += CHUNK)
    await store.db
      .insertInto("audit_nodes")
      .values(nodeRows.slice(i, i + CHUNK))
      .execute();
  return hashes;
}

async function expectTiles(store: KyselyStore, hashes: Buffer[]): Promise<void> {
  const tiles = await store.db.selectFrom("audit_tiles").select(["idx", "hashes"]).orderBy("idx").execute();
  expect(tiles.map((t) => Number(t.idx))).toEqual(Array.from({ length: 67 }, (_, i) => i));
  for (const t of tiles) {
    const idx = Number(t.idx);
    const leaves = hashes.slice(idx * TILE_WIDTH, (idx + 1) * TILE_WIDTH);
    expect(Buffer.from(t.hashes).equals(buildTile(leaves)), `tile ${idx}`).toBe(true);
  }
}

async function expectProofs(store: KyselyStore, hashes: Buffer[]): Promise<void> {
  const log = new AuditLog(store.audit, new CheckpointSigner(generateKeyPairSync("ed25519").privateKey));
  for (const m of [0, 255, 256, 5_000, 16_383, 16_384, LEAVES - 78, LEAVES - 1]) {
    expect(await log.inclusion(m, LEAVES), `inclusion ${m}`).toEqual(rfcPath(m, hashes));
  }
  for (const first of [1, 300, 16_385]) {
    expect(await log.consistency(first, LEAVES), `consistency ${first}`).toEqual(rfcProof(first, hashes));
  }
}

function suite(open: () => Promise<TestStore>) {
  it("backfills a tile per complete 256 leaves, in batches, append-only, proofs unchanged; down drops them", {
    timeout: MIGRATION_TEST_TIMEOUT,
  }, async () => {
    const t = await open();
    opened.push(t);
    const store = t.store as KyselyStore;
    await store.migrateTo("0027-evals-sketches");
    const hashes = await writeLog(store);

    await store.migrate();
    await expectTiles(store, hashes);
    await expectProofs(store, hashes);
    await expect(sql`update audit_tiles set idx = idx + 1000`.execute(store.db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`delete from audit_tiles`.execute(store.db)).rejects.toThrow(/append-only/);

    await store.migrateTo("0027-evals-sketches");
    await expect(sql`select count(*) from audit_tiles`.execute(store.db)).rejects.toThrow();
    await store.migrate();
    await expectTiles(store, hashes);
    await expectProofs(store, hashes);
  });
}

describe("on SQLite", () => {
  suite(() => openTestStore());
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("on PostgreSQL", () => {
  suite(() => openPostgresTestStore());
});
