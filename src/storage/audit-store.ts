// The audit log's persistence, shared by both dialects: writing sealed records (in the caller's
// transaction), sequencing them into the Merkle tree, and the reads behind verification and queries.
// The tree arithmetic is in src/audit/merkle.ts; this file only moves rows.

import { CompiledQuery, type Kysely, sql, type Transaction } from "kysely";
import type { Hash, NewNode, NodeRef } from "../audit/merkle.js";
import {
  appendLeaves,
  buildTile,
  compactRange,
  nodeKey,
  TILE_WIDTH,
  tileNode,
  tileOf,
} from "../audit/merkle.js";
import type {
  AuditCheckpointRow,
  AuditLookup,
  AuditPersistence,
  AuditQuery,
  AuditRecordRow,
  LeafWithRecord,
  LegalHoldRow,
  SequencePlan,
} from "../audit/persistence.js";
import { ALL_ACCOUNTS } from "../audit/persistence.js";
import type { AuditEntry } from "../audit/record.js";
import { type Clock, systemClock } from "../clock.js";
import { type Dialect, inSnapshot } from "./dialect.js";
import { PreparedInsert } from "./prepared-insert.js";
import type { Database } from "./schema.js";

/** A PostgreSQL advisory lock id for the sequencer: one sequencer at a time across all processes. */
const SEQUENCER_LOCK = 0x66736461; // "fsda"

const ROWS_PER_STATEMENT = 500;

interface LeafRow {
  leaf_index: number;
  seal: string;
  leaf_hash: string;
  r_seq: number | null;
  r_seal: string | null;
  kind: string | null;
  account_id: string | null;
  livemode: number | null;
  order_id: string | null;
  actor: string | null;
  created_at: string | null;
  record: string | null;
  disclosures: string | null;
}

function toLeafWithRecord(r: LeafRow): LeafWithRecord {
  return {
    leaf_index: Number(r.leaf_index),
    seal: r.seal,
    leaf_hash: r.leaf_hash,
    record:
      r.r_seal === null
        ? null
        : {
            seq: Number(r.r_seq),
            seal: r.r_seal,
            kind: r.kind as string,
            account_id: r.account_id,
            livemode: Number(r.livemode),
            order_id: r.order_id,
            actor: r.actor as string,
            created_at: r.created_at as string,
            record: r.record as string,
            disclosures: r.disclosures,
          },
  };
}

type Db = Kysely<Database> | Transaction<Database>;

/** SQL text of a node read per (dialect, leaves, inner nodes): built once per shape, then only bound. */
const nodeReadSql = new Map<string, string>();

function nodeRead(dialect: Dialect, leaves: number, inner: number): string {
  const key = `${dialect}:${leaves}:${inner}`;
  let text = nodeReadSql.get(key);
  if (text) return text;
  let n = 0;
  const p = () => (dialect === "postgres" ? `$${++n}` : "?");
  const parts: string[] = [];
  if (leaves > 0) {
    const list = Array.from({ length: leaves }, p).join(", ");
    parts.push(
      `select 0 as level, leaf_index as idx, leaf_hash as hash from audit_leaves where leaf_index in (${list})`,
    );
  }
  if (inner > 0) {
    const terms = Array.from({ length: inner }, () => `(level = ${p()} and idx = ${p()})`).join(" or ");
    parts.push(`select level, idx, hash from audit_nodes where ${terms}`);
  }
  text = parts.join(" union all ");
  nodeReadSql.set(key, text);
  return text;
}

/**
 * Stored perfect subtrees (level 0 from the leaves), in one statement per ROWS_PER_STATEMENT refs: a
 * proof's nodes are one query whose text is compiled once per shape.
 */
async function readNodes(db: Db, dialect: Dialect, refs: NodeRef[]): Promise<Map<string, Hash>> {
  const out = new Map<string, Hash>();
  for (let i = 0; i < refs.length; i += ROWS_PER_STATEMENT) {
    const part = refs.slice(i, i + ROWS_PER_STATEMENT);
    const leaves = part.filter((r) => r.level === 0).map((r) => r.index);
    const inner = part.filter((r) => r.level > 0).flatMap((r) => [r.level, r.index]);
    const query = CompiledQuery.raw(nodeRead(dialect, leaves.length, inner.length / 2), [
      ...leaves,
      ...inner,
    ]);
    const { rows } = await db.executeQuery<{ level: number; idx: number | string; hash: string }>(query);
    for (const r of rows) out.set(nodeKey(Number(r.level), Number(r.idx)), Buffer.from(r.hash, "hex"));
  }
  return out;
}

/** SQL text of a read of `count` tiles by index, per (dialect, count). */
const tileReadSql = new Map<string, string>();

function tileRead(dialect: Dialect, count: number): string {
  const key = `${dialect}:${count}`;
  let text = tileReadSql.get(key);
  if (!text) {
    const list = Array.from({ length: count }, (_, i) => (dialect === "postgres" ? `$${i + 1}` : "?"));
    text = `select idx, hashes from audit_tiles where idx in (${list.join(", ")})`;
    tileReadSql.set(key, text);
  }
  return text;
}

/**
 * Stored perfect subtrees, those below a tile's root from the tile where it is stored (one row for the
 * lowest 8 levels of a proof), the rest as readNodes reads them.
 */
async function readTiled(db: Db, dialect: Dialect, refs: NodeRef[]): Promise<Map<string, Hash>> {
  const byTile = new Map<number, NodeRef[]>();
  const rest: NodeRef[] = [];
  for (const r of refs) {
    const tile = tileOf(r);
    if (tile === null) rest.push(r);
    else {
      const list = byTile.get(tile);
      if (list) list.push(r);
      else byTile.set(tile, [r]);
    }
  }
  const out = new Map<string, Hash>();
  const ids = [...byTile.keys()];
  for (let i = 0; i < ids.length; i += ROWS_PER_STATEMENT) {
    const part = ids.slice(i, i + ROWS_PER_STATEMENT);
    const query = CompiledQuery.raw(tileRead(dialect, part.length), part);
    const { rows } = await db.executeQuery<{ idx: number | string; hashes: Buffer }>(query);
    for (const row of rows) {
      const tile = Number(row.idx);
      for (const r of byTile.get(tile) ?? [])
        out.set(nodeKey(r.level, r.index), tileNode(row.hashes, tile, r));
      byTile.delete(tile);
    }
  }
  // Not in a stored tile: the tree's last, incomplete one (or a tile an older version did not write).
  for (const list of byTile.values()) rest.push(...list);
  if (rest.length > 0) for (const [key, hash] of await readNodes(db, dialect, rest)) out.set(key, hash);
  return out;
}

/** The compact range (right edge) hashes of the stored tree of `size` leaves. */
async function rangeAt(db: Db, dialect: Dialect, size: number): Promise<Hash[]> {
  const refs = compactRange(size);
  const found = await readNodes(db, dialect, refs);
  return refs.map((r) => {
    const hash = found.get(nodeKey(r.level, r.index));
    if (!hash) throw new Error(`audit tree node ${r.level}/${r.index} is missing`);
    return hash;
  });
}

const LAST_LEAF = CompiledQuery.raw(
  "select leaf_index, leaf_hash from audit_leaves order by leaf_index desc limit 1",
);

/** The tree's size and its last leaf's hash (null for an empty tree), from the last stored leaf. */
async function treeEnd(db: Db): Promise<{ size: number; lastLeaf: string | null }> {
  const last = (await db.executeQuery<{ leaf_index: number | string; leaf_hash: string }>(LAST_LEAF)).rows[0];
  return { size: last ? Number(last.leaf_index) + 1 : 0, lastLeaf: last?.leaf_hash ?? null };
}

const DATA_VERSION = CompiledQuery.raw("pragma data_version");

/** The tree's right edge as this process's last append left it: size, last leaf and compact range. */
interface TreeEdge {
  size: number;
  lastLeaf: string | null;
  range: Hash[];
}

export class AuditStore implements AuditPersistence {
  private leafBySeal: string | null = null;
  private edge: TreeEdge | null = null;
  private readonly inserts;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly clock: Clock = systemClock,
  ) {
    this.inserts = {
      records: new PreparedInsert("audit_records", dialect),
      pending: new PreparedInsert("audit_pending", dialect),
      leaves: new PreparedInsert("audit_leaves", dialect),
      nodes: new PreparedInsert("audit_nodes", dialect),
    };
  }

  /**
   * Writes sealed records in the caller's transaction. On SQLite they also enter the Merkle tree there
   * (leaves and completed nodes): one writer at a time holds the database, so the transaction can append
   * at the tree's edge, and the tree never lags the records. On PostgreSQL concurrent transactions cannot
   * share an edge, so records are queued and the sequencer appends them. Either way the sequencer signs
   * checkpoints over what the tree holds.
   */
  async writeEntries(trx: Transaction<Database>, entries: AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.inserts.records.run(
      trx,
      entries.map(({ leaf_hash: _leaf, ...row }) => row),
    );
    if (this.dialect === "sqlite") await this.appendAtEdge(trx, entries);
    else
      await this.inserts.pending.run(
        trx,
        entries.map((e) => ({ seal: e.seal, leaf_hash: e.leaf_hash })),
      );
  }

  /**
   * Appends leaves at the tree's edge inside a write transaction (SQLite). The edge is read from the
   * store's last leaf; the compact range is reused from this process's previous append while that last
   * leaf is the one it wrote (a rolled-back transaction or another process's append changes it), and
   * read from the stored nodes otherwise.
   */
  private async appendAtEdge(trx: Transaction<Database>, entries: AuditEntry[]): Promise<void> {
    const { size, lastLeaf } = await treeEnd(trx);
    const edge = this.edge;
    const range =
      edge && edge.size === size && edge.lastLeaf === lastLeaf
        ? edge.range
        : await rangeAt(trx, this.dialect, size);
    const grown = appendLeaves(
      size,
      range,
      entries.map((e) => Buffer.from(e.leaf_hash, "hex")),
    );
    await this.insertTree(trx, size, entries, grown.nodes, this.clock().toISOString());
    this.edge = {
      size: grown.size,
      lastLeaf: (entries[entries.length - 1] as AuditEntry).leaf_hash,
      range: grown.range,
    };
  }

  /**
   * Writes the leaves of `sealed` (appended from leaf `size` on, in order) and the inner nodes among
   * `nodes`, the new perfect subtrees that appending them completed.
   */
  private async insertTree(
    trx: Transaction<Database>,
    size: number,
    sealed: Array<{ seal: string; leaf_hash: string }>,
    nodes: NewNode[],
    integratedAt: string,
  ): Promise<void> {
    await this.inserts.leaves.run(
      trx,
      sealed.map((e, i) => ({
        leaf_index: size + i,
        seal: e.seal,
        leaf_hash: e.leaf_hash,
        integrated_at: integratedAt,
      })),
    );
    await this.inserts.nodes.run(
      trx,
      nodes
        .filter((n) => n.level > 0)
        .map((n) => ({ level: n.level, idx: n.index, hash: n.hash.toString("hex") })),
    );
    await this.insertTiles(trx, size, sealed);
  }

  /**
   * Writes the tiles that the leaves of `sealed` (appended from leaf `size` on) complete: each from its
   * leaves, those appended before this batch read back (one range read per tile, once per 256 leaves).
   */
  private async insertTiles(
    trx: Transaction<Database>,
    size: number,
    sealed: Array<{ leaf_hash: string }>,
  ): Promise<void> {
    const end = size + sealed.length;
    for (let tile = Math.floor(size / TILE_WIDTH); (tile + 1) * TILE_WIDTH <= end; tile++) {
      const from = tile * TILE_WIDTH;
      const before =
        from < size
          ? await trx
              .selectFrom("audit_leaves")
              .select("leaf_hash")
              .where("leaf_index", ">=", from)
              .where("leaf_index", "<", size)
              .orderBy("leaf_index")
              .execute()
          : [];
      const leaves = [...before, ...sealed.slice(Math.max(from, size) - size, from + TILE_WIDTH - size)].map(
        (l) => Buffer.from(l.leaf_hash, "hex"),
      );
      await trx
        .insertInto("audit_tiles")
        .values({ idx: tile, hashes: buildTile(leaves) })
        .execute();
    }
  }

  async externalChangeToken(): Promise<number | null> {
    // SQLite's data_version changes exactly when another connection (another process, the operator's
    // shell) commits; PostgreSQL has no cheap equivalent, so its readers always read.
    if (this.dialect !== "sqlite") return null;
    const { rows } = await this.db.executeQuery<{ data_version: number }>(DATA_VERSION);
    return rows[0]?.data_version ?? null;
  }

  /** One query for an integrated record (the common case), one more for any other seal. */
  async findAudit(seal: string): Promise<AuditLookup> {
    // Compiled once: verification is a public hot path, and building the query costs more than running it.
    this.leafBySeal ??= this.leafRows().where("l.seal", "=", "").compile().sql;
    const rows = (await this.db.executeQuery<LeafRow>(CompiledQuery.raw(this.leafBySeal, [seal]))).rows;
    const row = rows[0];
    if (row) {
      const leaf = toLeafWithRecord(row);
      return {
        record: leaf.record ?? undefined,
        leaf: { leaf_index: leaf.leaf_index, leaf_hash: leaf.leaf_hash },
      };
    }
    // No leaf: the record waits in the queue, or there is no such record. The queue itself is not
    // searched (it has no index on seals, to keep writes cheap).
    const record = await this.db
      .selectFrom("audit_records")
      .selectAll()
      .where("seal", "=", seal)
      .executeTakeFirst()
      .then((r) => (r ? { ...r, seq: Number(r.seq) } : undefined));
    return { record, leaf: undefined };
  }

  private leafRows() {
    return this.db
      .selectFrom("audit_leaves as l")
      .leftJoin("audit_records as r", "r.seal", "l.seal")
      .select([
        "l.leaf_index",
        "l.seal",
        "l.leaf_hash",
        "r.seq as r_seq",
        "r.seal as r_seal",
        "r.kind",
        "r.account_id",
        "r.livemode",
        "r.order_id",
        "r.actor",
        "r.created_at",
        "r.record",
        "r.disclosures",
      ]);
  }

  listAudit(q: AuditQuery): Promise<AuditRecordRow[]> {
    let query = this.db
      .selectFrom("audit_records")
      .selectAll()
      .where("livemode", "=", q.livemode ? 1 : 0);
    if (q.accountId !== ALL_ACCOUNTS) query = query.where("account_id", "=", q.accountId);
    if (q.orderId !== undefined) query = query.where("order_id", "=", q.orderId);
    if (q.kind !== undefined) query = query.where("kind", "=", q.kind);
    if (q.since !== undefined) query = query.where("created_at", ">=", q.since);
    if (q.until !== undefined) query = query.where("created_at", "<", q.until);
    if (q.after !== undefined) query = query.where("seq", ">", q.after);
    return query
      .orderBy("seq")
      .limit(q.limit)
      .execute()
      .then((rows) => rows.map((r) => ({ ...r, seq: Number(r.seq) })));
  }

  orderSeals(orderId: string): Promise<Array<{ seal: string; kind: string; created_at: string }>> {
    return this.db
      .selectFrom("audit_records")
      .select(["seal", "kind", "created_at"])
      .where("order_id", "=", orderId)
      .orderBy("seq")
      .execute();
  }

  latestCheckpoint(): Promise<AuditCheckpointRow | undefined> {
    return this.db
      .selectFrom("audit_checkpoints")
      .selectAll()
      .orderBy("tree_size", "desc")
      .limit(1)
      .executeTakeFirst()
      .then((r) => (r ? { ...r, tree_size: Number(r.tree_size) } : undefined));
  }

  checkpointAt(size: number): Promise<AuditCheckpointRow | undefined> {
    return this.db
      .selectFrom("audit_checkpoints")
      .selectAll()
      .where("tree_size", "=", size)
      .executeTakeFirst()
      .then((r) => (r ? { ...r, tree_size: Number(r.tree_size) } : undefined));
  }

  snapshot<T>(read: (log: AuditPersistence) => Promise<T>): Promise<T> {
    return inSnapshot(this.db, this.dialect, (trx) => read(new AuditStore(trx, this.dialect, this.clock)));
  }

  listCheckpoints(after: number, limit: number): Promise<AuditCheckpointRow[]> {
    return this.db
      .selectFrom("audit_checkpoints")
      .selectAll()
      .where("tree_size", ">", after)
      .orderBy("tree_size")
      .limit(limit)
      .execute()
      .then((rows) => rows.map((r) => ({ ...r, tree_size: Number(r.tree_size) })));
  }

  auditNodes(refs: NodeRef[], from: "tiles" | "rows" = "tiles"): Promise<Map<string, Hash>> {
    return from === "tiles" ? readTiled(this.db, this.dialect, refs) : readNodes(this.db, this.dialect, refs);
  }

  /** Records not yet under a signed checkpoint: queued ones, and leaves past the latest checkpoint. */
  async pendingAuditCount(): Promise<number> {
    const { rows } = await sql<{ queued: number | string; leaves: number | string; signed: number | string }>`
      select (select count(*) from audit_pending) as queued,
        (select coalesce(max(leaf_index) + 1, 0) from audit_leaves) as leaves,
        (select coalesce(max(tree_size), 0) from audit_checkpoints) as signed`.execute(this.db);
    const row = rows[0];
    if (!row) return 0;
    return Number(row.queued) + Math.max(0, Number(row.leaves) - Number(row.signed));
  }

  /**
   * Sequences up to `limit` queued records into the tree and signs the new head, in one transaction:
   * reads the tree's right edge and the latest checkpoint, lets `plan` hash the new leaves (none when
   * only leaves appended in their own transactions await a signature) and sign the head, then writes
   * leaves, nodes and checkpoint and dequeues the records. One sequencer runs at a time (an advisory
   * lock on PostgreSQL, the single writer on SQLite), and the checkpoint's tree size is its primary key,
   * so the log cannot fork. With `wait` false, returns null at once if another process is sequencing.
   * Returns null when nothing was queued and the latest checkpoint already signs every leaf.
   */
  async sequenceAudit(plan: SequencePlan, limit: number, wait: boolean): Promise<AuditCheckpointRow | null> {
    return this.db.transaction().execute(async (trx) => {
      if (this.dialect === "postgres") {
        if (wait) {
          await sql`select pg_advisory_xact_lock(${SEQUENCER_LOCK})`.execute(trx);
        } else {
          const got = await sql<{
            ok: boolean;
          }>`select pg_try_advisory_xact_lock(${SEQUENCER_LOCK}) as ok`.execute(trx);
          if (!got.rows[0]?.ok) return null;
        }
      }
      const pending = await trx
        .selectFrom("audit_pending")
        .select(["id", "seal", "leaf_hash"])
        .orderBy("id")
        .limit(limit)
        .execute();
      const { size } = await treeEnd(trx);
      const head = await trx
        .selectFrom("audit_checkpoints")
        .select(["tree_size", "key_id"])
        .orderBy("tree_size", "desc")
        .limit(1)
        .executeTakeFirst();
      const signed = head ? Number(head.tree_size) : 0;
      // Nothing queued and every leaf signed: nothing to do.
      if (pending.length === 0 && signed === size) return null;
      const range = await rangeAt(trx, this.dialect, size);
      const batch = plan({ size, signed, keyId: head?.key_id ?? null, range, pending });
      await this.insertTree(trx, size, pending, batch.nodes, batch.checkpoint.timestamp);
      await trx.insertInto("audit_checkpoints").values(batch.checkpoint).execute();
      const ids = pending.map((p) => Number(p.id));
      for (let i = 0; i < ids.length; i += ROWS_PER_STATEMENT) {
        await trx
          .deleteFrom("audit_pending")
          .where("id", "in", ids.slice(i, i + ROWS_PER_STATEMENT))
          .execute();
      }
      return batch.checkpoint;
    });
  }

  /** Leaves from `from` (inclusive), in order, with their records where not purged. */
  async leavesWithRecords(from: number, limit: number): Promise<LeafWithRecord[]> {
    const rows = await this.leafRows()
      .where("l.leaf_index", ">=", from)
      .orderBy("l.leaf_index")
      .limit(limit)
      .execute();
    return rows.map(toLeafWithRecord);
  }

  /**
   * Deletes records created before `before` that no active legal hold covers. The database's trigger
   * independently refuses any record younger than 7 years or under hold.
   */
  async purgeAudit(before: string): Promise<number> {
    const result = await this.db
      .deleteFrom("audit_records")
      .where("created_at", "<", before)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("audit_legal_holds as h")
              .select("h.id")
              .where("h.released_at", "is", null)
              .where((eb) =>
                eb.or([
                  eb.and([
                    eb("h.account_id", "is not", null),
                    eb("h.account_id", "=", eb.ref("audit_records.account_id")),
                  ]),
                  eb.and([
                    eb("h.order_id", "is not", null),
                    eb("h.order_id", "=", eb.ref("audit_records.order_id")),
                  ]),
                ]),
              ),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async addLegalHold(row: LegalHoldRow): Promise<void> {
    await this.db.insertInto("audit_legal_holds").values(row).execute();
  }

  async releaseLegalHold(id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("audit_legal_holds")
      .set({ released_at: at })
      .where("id", "=", id)
      .where("released_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  listLegalHolds(): Promise<LegalHoldRow[]> {
    return this.db.selectFrom("audit_legal_holds").selectAll().orderBy("created_at").execute();
  }
}
