// Issue 30: tiles of the audit tree, as Trillian's stored subtrees and C2SP tlog-tiles keep them. One row
// per complete subtree of 256 leaves (a height-8 subtree), holding its leaf hashes and its inner nodes
// below its root (levels 0 to 7, 510 hashes, 16,320 bytes; audit/merkle.ts buildTile), so a proof of an
// old leaf reads its lowest 8 levels in one row instead of one index lookup per level. The appender writes
// a tile in the transaction that appends the leaf completing it; this migration backfills the tiles of an
// existing log, TILES_PER_BATCH tiles (16,384 leaves) read and written at a time, so its memory stays
// bounded whatever the log's size; it resumes after the last tile stored. Append-only like the rest of the
// log (triggers as in 0003). On PostgreSQL it holds the sequencer's lock, so no leaf is appended meanwhile.
// A tile missing for any reason (a process of an older version appending) is not an error: a proof reads
// those nodes from audit_leaves and audit_nodes, which keep every level as before.

import { type Kysely, type Migration, sql } from "kysely";
import { buildTile, TILE_WIDTH } from "../../audit/merkle.js";
import type { Dialect } from "../dialect.js";

const TILES_PER_BATCH = 64;
/** The sequencer's advisory lock (storage/audit-store.ts). */
const SEQUENCER_LOCK = 0x66736461;

/** Writes the tiles of every complete 256 leaves not yet stored, TILES_PER_BATCH at a time. */
async function backfillTiles(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ leaves: number | string; tiles: number | string }>`
    select (select coalesce(max(leaf_index) + 1, 0) from audit_leaves) as leaves,
      (select coalesce(max(idx) + 1, 0) from audit_tiles) as tiles`.execute(db);
  const complete = Math.floor(Number(rows[0]?.leaves ?? 0) / TILE_WIDTH);
  for (let from = Number(rows[0]?.tiles ?? 0); from < complete; from += TILES_PER_BATCH) {
    const to = Math.min(complete, from + TILES_PER_BATCH);
    const leaves = await sql<{ leaf_hash: string }>`select leaf_hash from audit_leaves
      where leaf_index >= ${from * TILE_WIDTH} and leaf_index < ${to * TILE_WIDTH}
      order by leaf_index`.execute(db);
    const hashes = leaves.rows.map((r) => Buffer.from(r.leaf_hash, "hex"));
    if (hashes.length !== (to - from) * TILE_WIDTH) throw new Error("audit_leaves has a gap");
    const tiles = Array.from({ length: to - from }, (_, i) => ({
      idx: from + i,
      hashes: buildTile(hashes.slice(i * TILE_WIDTH, (i + 1) * TILE_WIDTH)),
    }));
    await (db as Kysely<{ audit_tiles: { idx: number; hashes: Buffer } }>)
      .insertInto("audit_tiles")
      .values(tiles)
      .execute();
  }
}

async function appendOnly(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === "sqlite") {
    await sql`CREATE TRIGGER audit_tiles_no_update BEFORE UPDATE ON audit_tiles
      BEGIN SELECT RAISE(ABORT, 'audit_tiles is append-only: rows cannot be updated'); END`.execute(db);
    await sql`CREATE TRIGGER audit_tiles_no_delete BEFORE DELETE ON audit_tiles
      BEGIN SELECT RAISE(ABORT, 'audit_tiles is append-only: rows cannot be deleted'); END`.execute(db);
    return;
  }
  await sql`CREATE TRIGGER audit_tiles_append_only BEFORE UPDATE OR DELETE ON audit_tiles
    FOR EACH ROW EXECUTE FUNCTION fsd_audit_append_only()`.execute(db);
  await sql`CREATE TRIGGER audit_tiles_no_truncate BEFORE TRUNCATE ON audit_tiles
    FOR EACH STATEMENT EXECUTE FUNCTION fsd_audit_append_only()`.execute(db);
}

export function migration0028(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // SQLite runs a migration's statements outside a transaction: a backfill interrupted there is
      // resumed by the next start, after the table it already created.
      await db.schema
        .createTable("audit_tiles")
        .ifNotExists()
        .addColumn("idx", "bigint", (c) => c.primaryKey())
        .addColumn("hashes", dialect === "postgres" ? "bytea" : "blob", (c) => c.notNull())
        .execute();
      if (dialect === "postgres") await sql`select pg_advisory_xact_lock(${SEQUENCER_LOCK})`.execute(db);
      await backfillTiles(db);
      if (dialect === "sqlite") {
        await sql`DROP TRIGGER IF EXISTS audit_tiles_no_update`.execute(db);
        await sql`DROP TRIGGER IF EXISTS audit_tiles_no_delete`.execute(db);
      }
      await appendOnly(db, dialect);
    },
    async down(db: Kysely<unknown>) {
      // The tiles only repeat what audit_leaves and audit_nodes hold: dropping them loses nothing.
      await db.schema.dropTable("audit_tiles").execute();
    },
  };
}
