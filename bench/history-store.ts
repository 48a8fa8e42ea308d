// Years of history in an embedded SQLite store, written in bulk (issue 30; bench/history.ts measures it).
//
// On a store already holding the benchmark's live pool and keys (bench/workload.ts prepareStore), it
// appends `orders` orders received evenly over the `years` before `now`, oldest first, and for each the
// audit records of its life, the log's leaves, tree nodes and tiles, and a signed checkpoint every 65,536
// leaves and at the end:
//   - orders: bench/order-rows.ts's rows (every column the evals read, a promise kept or breached), each
//     matched to a contractor of the live pool (its trade and state), inserted through the store's own
//     triggers, so the evals' per-day rollups and sketches (migration 0027) are kept as in production;
//     orders received more than 30 days ago are settled (no open status): mostly invoiced or completed,
//     some cancelled or cannot_complete;
//   - audit records: quote.issued, order.created, order.offered, then as the order's status says
//     order.accepted, order.status_changed (en_route, on_site, completed), order.invoiced or
//     order.cancelled: about 7.5 a order on average; each sealed by audit/record.ts sealRecord, as the service
//     seals them (the data shaped like the service's, not byte for byte), numbered in time order;
//   - leaves, the tree's perfect-subtree nodes and 256-leaf tiles with the log's own arithmetic
//     (audit/merkle.ts appendLeaves, buildTile, as bench/proofs.ts builds its log), checkpoints signed
//     with the store's key (DATA_DIR's, the one the service signs with);
//   - order events (the event log) for the orders of the last `eventDays` days only: older ones are what
//     retention purges (WEBHOOK_RETENTION_DAYS), and bench/history.ts writes such a backlog on purpose.
// It continues the log the store holds (the pool import's and the keys' records), so the service appends
// after it as after any other records.

import { join } from "node:path";
import { performance } from "node:perf_hooks";
import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { appendLeaves, buildTile, type Hash, TILE_WIDTH } from "../src/audit/merkle.js";
import { type AuditEntry, type AuditInput, sealRecord } from "../src/audit/record.js";
import { type CheckpointSigner, loadSigningKey } from "../src/audit/signing.js";
import { migration0027 } from "../src/storage/migrations/0027-evals-sketches.js";
import { COLUMNS, order, random } from "./order-rows.js";

const DAY = 86_400_000;
const CHECKPOINT_EVERY = 65_536;
const ORDERS_PER_TRANSACTION = 2_000;

export interface HistoryOptions {
  orders: number;
  years: number;
  /** The end of the history (ms): its newest order is received just before. */
  now: number;
  /** Order events are written for the orders received within this many days of `now`. */
  eventDays: number;
  /** The name of the caller's account (prepareStore's: "bench"). */
  accountName: string;
  progress?: (ordersDone: number) => void;
}

export interface HistoryBuilt {
  orders: number;
  records: number;
  events: number;
  treeSize: number;
  seconds: number;
}

/** The id of the history's `i`th order (oldest first): the benchmark samples old orders by it. */
export function historyOrderId(i: number): string {
  return `ord_hist${i.toString(36).padStart(8, "0")}`;
}

const col = (name: (typeof COLUMNS)[number]) => COLUMNS.indexOf(name);
const AT = {
  id: col("id"),
  status: col("status"),
  trade: col("trade"),
  state: col("state"),
  urgency: col("urgency"),
  contractor: col("contractor_id"),
  received: col("received_at"),
  accepted: col("accepted_at"),
  completed: col("completed_at"),
  invoiced: col("invoiced_at"),
  invoice: col("invoice_cents"),
  cost: col("final_cost_cents"),
  nte: col("nte_cents"),
  onSite: col("on_site_at"),
};

/** The audit records (and event types) of one order's life, from its row. */
export function lifeOf(
  row: readonly unknown[],
  accountId: string,
  keyId: string,
): Array<{ input: AuditInput; event: string | null }> {
  const s = (k: number) => row[k] as string | null;
  const orderId = s(AT.id) as string;
  const status = s(AT.status) as string;
  const contractor = s(AT.contractor);
  const received = Date.parse(s(AT.received) as string);
  const iso = (ms: number) => new Date(ms).toISOString();
  const base = { accountId, livemode: true, orderId };
  const caller = `key:${keyId}` as const;
  const trade = s(AT.trade);
  const state = s(AT.state);
  const urgency = s(AT.urgency);
  const out: Array<{ input: AuditInput; event: string | null }> = [
    {
      input: {
        ...base,
        orderId: null,
        kind: "quote.issued",
        at: iso(received - 60_000),
        actor: caller,
        data: {
          trade,
          state,
          urgency,
          estimate: { typical_cents: 30_000, low_cents: 21_000, high_cents: 41_000 },
        },
      },
      event: null,
    },
    {
      input: {
        ...base,
        kind: "order.created",
        at: iso(received),
        actor: caller,
        data: { trade, state, urgency, nte_cents: row[AT.nte] ?? null, description: "bench order" },
      },
      event: null,
    },
  ];
  if (contractor === null) return out;
  out.push({
    input: {
      ...base,
      kind: "order.offered",
      at: iso(received + 2),
      actor: "system:matcher",
      data: { contractor_id: contractor, attempt: 1, estimated_cost_cents: 30_000, ranked: [contractor] },
    },
    event: "order.offered",
  });
  const accepted = s(AT.accepted);
  if (accepted === null) {
    if (status === "cancelled")
      out.push({
        input: {
          ...base,
          kind: "order.cancelled",
          at: iso(received + 600_000),
          actor: caller,
          data: { reason: "not needed" },
        },
        event: "order.cancelled",
      });
    return out;
  }
  const by = `contractor:${contractor}` as const;
  out.push({
    input: { ...base, kind: "order.accepted", at: accepted, actor: by, data: { contractor_id: contractor } },
    event: "order.accepted",
  });
  const step = (to: string, at: string | null) =>
    out.push({
      input: { ...base, kind: "order.status_changed", at: at ?? accepted, actor: by, data: { status: to } },
      event: `order.${to}`,
    });
  const arrived = s(AT.onSite);
  const completed = s(AT.completed);
  if (arrived !== null || completed !== null || status === "en_route") step("en_route", accepted);
  if (arrived !== null) step("on_site", arrived);
  if (completed !== null) step("completed", completed);
  if (status === "invoiced")
    out.push({
      input: {
        ...base,
        kind: "order.invoiced",
        at: s(AT.invoiced) ?? accepted,
        actor: by,
        data: { invoice_cents: row[AT.invoice] },
      },
      event: "order.invoiced",
    });
  if (status === "cancelled")
    out.push({
      input: {
        ...base,
        kind: "order.cancelled",
        at: iso(Date.parse(accepted) + 600_000),
        actor: caller,
        data: { reason: "not needed" },
      },
      event: "order.cancelled",
    });
  return out;
}

export interface LogEntry {
  e: AuditEntry;
  /** When the record was integrated (its leaf's integrated_at, and the checkpoint's time after it). */
  at: string;
}

/**
 * Appends sealed records to the audit log of an open SQLite store as the service's sequencer leaves it:
 * records, leaves, the tree's perfect-subtree nodes (level > 0: leaves are their own level) and 256-leaf
 * tiles computed with the log's own arithmetic (audit/merkle.ts appendLeaves, buildTile), and a checkpoint
 * signed every `checkpointEvery` leaves and at the end. It continues the log the store holds (its leaves'
 * hashes give the compact range and the tile being filled). Call `append` inside a transaction.
 */
export class LogWriter {
  size: number;
  private range: Hash[];
  private tile: Hash[];
  private nextCheckpoint: number;
  private readonly insertRecord: SQLite.Statement;
  private readonly insertLeaf: SQLite.Statement;
  private readonly insertNode: SQLite.Statement;
  private readonly insertTile: SQLite.Statement;
  private readonly insertCheckpoint: SQLite.Statement;

  constructor(
    db: SQLite.Database,
    private readonly signer: CheckpointSigner,
    private readonly checkpointEvery = CHECKPOINT_EVERY,
  ) {
    const pending = db.prepare("select count(*) from audit_pending").pluck().get() as number;
    if (pending > 0)
      throw new Error(`${pending} audit records not sequenced yet: start and stop the service first`);
    const existing = (
      db.prepare("select leaf_hash from audit_leaves order by leaf_index").pluck().all() as string[]
    ).map((h) => Buffer.from(h, "hex"));
    const grown = appendLeaves(0, [], existing);
    this.size = grown.size;
    this.range = grown.range;
    this.tile = existing.slice(existing.length - (existing.length % TILE_WIDTH));
    this.nextCheckpoint = (Math.floor(this.size / checkpointEvery) + 1) * checkpointEvery;
    this.insertRecord = db.prepare(
      `insert into audit_records (seal, kind, account_id, livemode, order_id, actor, created_at, record, disclosures)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertLeaf = db.prepare(
      "insert into audit_leaves (leaf_index, seal, leaf_hash, integrated_at) values (?, ?, ?, ?)",
    );
    this.insertNode = db.prepare("insert into audit_nodes (level, idx, hash) values (?, ?, ?)");
    this.insertTile = db.prepare("insert or replace into audit_tiles (idx, hashes) values (?, ?)");
    this.insertCheckpoint = db.prepare(
      `insert into audit_checkpoints (tree_size, root_hash, timestamp, key_id, signature)
       values (@tree_size, @root_hash, @timestamp, @key_id, @signature)`,
    );
  }

  /** Appends `entries` in their order; `last`: a checkpoint after them whatever the size. */
  append(entries: readonly LogEntry[], last: boolean): void {
    let at = 0;
    while (at < entries.length) {
      const part = entries.slice(at, at + Math.min(entries.length - at, this.nextCheckpoint - this.size));
      const grown = appendLeaves(
        this.size,
        this.range,
        part.map((p) => Buffer.from(p.e.leaf_hash, "hex")),
      );
      part.forEach(({ e, at: when }, k) => {
        this.insertRecord.run(
          e.seal,
          e.kind,
          e.account_id,
          e.livemode,
          e.order_id,
          e.actor,
          e.created_at,
          e.record,
          e.disclosures,
        );
        this.insertLeaf.run(this.size + k, e.seal, e.leaf_hash, when);
        this.tile.push(Buffer.from(e.leaf_hash, "hex"));
        if (this.tile.length === TILE_WIDTH) {
          this.insertTile.run((this.size + k + 1) / TILE_WIDTH - 1, buildTile(this.tile));
          this.tile = [];
        }
      });
      for (const n of grown.nodes)
        if (n.level > 0) this.insertNode.run(n.level, n.index, n.hash.toString("hex"));
      this.size = grown.size;
      this.range = grown.range;
      at += part.length;
      if (this.size === this.nextCheckpoint || (last && at === entries.length)) {
        const { origin: _origin, ...checkpoint } = this.signer.sign({
          tree_size: this.size,
          root_hash: grown.root.toString("hex"),
          timestamp: part[part.length - 1]?.at as string,
        });
        this.insertCheckpoint.run(checkpoint);
        if (this.size === this.nextCheckpoint) this.nextCheckpoint += this.checkpointEvery;
      }
    }
  }
}

/** Appends the history to the store in `dataDir` (see the module's comment). */
export async function buildHistory(dataDir: string, opts: HistoryOptions): Promise<HistoryBuilt> {
  const began = performance.now();
  const db = new SQLite(join(dataDir, "field-dispatch.sqlite"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  db.pragma("cache_size = -200000");
  const accountId = db
    .prepare("select id from accounts where name = ?")
    .pluck()
    .get(opts.accountName) as string;
  const keyId =
    (db.prepare("select id from api_keys where account_id = ? limit 1").pluck().get(accountId) as string) ??
    "key_bench";
  const contractors = (
    db
      .prepare("select id, trades, states from contractors where pool = 'live' and active = 1")
      .all() as Array<{
      id: string;
      trades: string;
      states: string;
    }>
  ).map((c) => ({
    id: c.id,
    trade: JSON.parse(c.trades)[0] as string,
    state: JSON.parse(c.states)[0] as string,
  }));
  if (contractors.length === 0) throw new Error("no live contractors in the store: prepare it first");

  const log = new LogWriter(db, loadSigningKey(undefined, dataDir));
  const insertOrder = db.prepare(
    `insert into orders (${COLUMNS.join(", ")}) values (${COLUMNS.map(() => "?").join(", ")})`,
  );
  const insertEvent = db.prepare(
    `insert into order_events (type, order_id, account_id, livemode, contractor_id, previous_contractor_id, created_at, payload)
     values (?, ?, ?, 1, ?, null, ?, ?)`,
  );

  // The evals' rollup triggers are dropped for the bulk, and the rollup rebuilt after it by the migration
  // that made it (0027's up: its backfill from the orders, then the triggers again): the same rows the
  // triggers would have written, in a fraction of the time.
  for (const t of ["orders_evals_insert", "orders_evals_update", "orders_evals_delete"])
    db.exec(`drop trigger ${t}`);
  const rnd = random(30);
  const span = opts.years * 365 * DAY;
  const eventsFrom = opts.now - opts.eventDays * DAY;
  const settledBefore = opts.now - 30 * DAY;
  let records = 0;
  let events = 0;

  const chunk = db.transaction((from: number, to: number) => {
    const entries: LogEntry[] = [];
    for (let i = from; i < to; i++) {
      const received = opts.now - span + ((i + 0.5) * span) / opts.orders;
      const row = order(i, received, rnd, accountId, received < settledBefore);
      const c = contractors[Math.floor(rnd() * contractors.length)] as (typeof contractors)[number];
      row[AT.id] = historyOrderId(i);
      row[AT.trade] = c.trade;
      row[AT.state] = c.state;
      if (row[AT.contractor] !== null) row[AT.contractor] = c.id;
      insertOrder.run(row);
      for (const { input, event } of lifeOf(row, accountId, keyId)) {
        const e = sealRecord(input);
        entries.push({ e, at: input.at });
        if (event !== null && received >= eventsFrom) {
          insertEvent.run(
            event,
            row[AT.id],
            accountId,
            row[AT.contractor],
            input.at,
            JSON.stringify({ order: { id: row[AT.id], status: event.slice(6) } }),
          );
          events++;
        }
      }
    }
    // The chunk's records in time order (an order's life runs into the next ones').
    entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    log.append(entries, to === opts.orders);
    records += entries.length;
  });
  for (let i = 0; i < opts.orders; i += ORDERS_PER_TRANSACTION) {
    chunk(i, Math.min(opts.orders, i + ORDERS_PER_TRANSACTION));
    opts.progress?.(Math.min(opts.orders, i + ORDERS_PER_TRANSACTION));
  }
  db.close();
  await rebuildEvalsRollup(join(dataDir, "field-dispatch.sqlite"));
  // No ANALYZE: the service never runs it, so its query plans on a real store are made without
  // statistics, and so must the large store's be (the fresh store has none either).
  const after = new SQLite(join(dataDir, "field-dispatch.sqlite"));
  after.pragma("wal_checkpoint(TRUNCATE)");
  after.close();
  return {
    orders: opts.orders,
    records,
    events,
    treeSize: log.size,
    seconds: (performance.now() - began) / 1000,
  };
}

/** Drops the evals' rollup (0027's tables, index and triggers) and runs 0027's up: backfill and triggers. */
async function rebuildEvalsRollup(file: string): Promise<void> {
  const database = new SQLite(file);
  database.pragma("synchronous = OFF");
  for (const t of ["orders_evals_insert", "orders_evals_update", "orders_evals_delete"])
    database.exec(`drop trigger if exists ${t}`);
  for (const t of ["evals_sketch_delta", "evals_sketch_daily", "evals_daily_delta", "evals_daily"])
    database.exec(`drop table if exists ${t}`);
  database.exec("drop index if exists orders_sla_running_idx");
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
  try {
    await migration0027("sqlite").up(db);
  } finally {
    await db.destroy();
  }
}

/** The number of history orders the store in `file` holds (0 if none or no store). */
export function historyOrders(file: string): number {
  try {
    const db = new SQLite(file, { readonly: true, fileMustExist: true });
    try {
      return db.prepare("select count(*) from orders where id like 'ord_hist%'").pluck().get() as number;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/** Old order events: `count` rows from 100 to 40 days before now, each the size of a compact event. */
export function writeBacklog(file: string, count: number): number {
  const db = new SQLite(file);
  const began = performance.now();
  const insert = db.prepare(
    `insert into order_events (type, order_id, account_id, livemode, contractor_id, previous_contractor_id,
       created_at, payload) values (?, ?, ?, 1, ?, null, ?, ?)`,
  );
  const payload = JSON.stringify({ order: { status: "completed", note: "x".repeat(240) } });
  const first = Date.now() - 100 * DAY;
  const step = (60 * DAY) / count;
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const at = new Date(first + i * step).toISOString();
      insert.run("order.completed", `ord_bench${i >> 3}`, "acct_bench", "ctr_bench", at, payload);
    }
  })();
  db.close();
  return (performance.now() - began) / 1000;
}
