// The floor for the order benchmark: the least a correct, durable, audited order must do, and nothing
// else. It parses and validates a body of the order's shape (Fastify's compiled JSON schema), prices the
// job from a table, picks a contractor from an in-memory array, builds a decision record of about 1.2 KB,
// SHA-256s it, and inserts the order row and the record row into SQLite (WAL) before it answers.
//
// Durability is the service's, by the service's own means (src/storage/sqlite.ts): synchronous=NORMAL,
// concurrent requests gathered into one transaction (group commit, one lane, at most 256 writes), then
// an fdatasync of the -wal file off the event loop (WalSync) before any of them is answered; WAL
// checkpoints run on a worker thread (WalCheckpointer). A floor is a fair lower bound: it skips what the
// issue does not ask of it (keys, rate limits, candidate ranking, offers, the audit log's tree), but it
// does not skip the sync.
//
//   node dist/bench/floor-server.js      (PORT, FLOOR_DB: the SQLite file; run.ts starts it)

import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import Fastify from "fastify";
import type { JobPrice } from "../src/domain/pricing.js";
import { BACKSTOP_AUTOCHECKPOINT_PAGES, WalCheckpointer } from "../src/storage/sqlite-checkpointer.js";
import { WalSync } from "../src/storage/wal-sync.js";
import { buckets, type OrderBody, orderBody, prices } from "./floor-common.js";

const file = process.env.FLOOR_DB ?? "floor.sqlite";
mkdirSync(dirname(file), { recursive: true });
const db = new SQLite(file);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("busy_timeout = 5000");
db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
db.exec(`
  CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY, status TEXT NOT NULL, trade TEXT NOT NULL, state TEXT NOT NULL, zip TEXT,
    urgency TEXT NOT NULL, description TEXT NOT NULL, nte_cents INTEGER, reference_id TEXT,
    contractor_id TEXT NOT NULL, estimated_cost_cents INTEGER NOT NULL, created_at TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL, kind TEXT NOT NULL,
    sha256 TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL
  );
`);
const insertOrder = db.prepare(
  "INSERT INTO orders VALUES (@id, @status, @trade, @state, @zip, @urgency, @description, @nte_cents, @reference_id, @contractor_id, @estimated_cost_cents, @created_at)",
);
const insertRecord = db.prepare(
  "INSERT INTO records (order_id, kind, sha256, body, created_at) VALUES (?, ?, ?, ?, ?)",
);
const walSync = new WalSync(file);
const checkpointer = new WalCheckpointer(file);

// The price table and the pool's contractors by (trade, state): floor-common.ts, shared with the
// product floor.
let picks = 0;

interface OrderRow {
  id: string;
  status: string;
  trade: string;
  state: string;
  zip: string | null;
  urgency: string;
  description: string;
  nte_cents: number | null;
  reference_id: string | null;
  contractor_id: string;
  estimated_cost_cents: number;
  created_at: string;
}
interface Write {
  order: OrderRow;
  record: string;
  sha256: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

// Group commit, as the service's GroupCommitter on SQLite: one batch at a time; requests arriving while a
// batch commits and syncs wait for the next one.
let queue: Write[] = [];
let draining = false;
const commitBatch = db.transaction((batch: Write[]) => {
  for (const w of batch) {
    insertOrder.run(w.order);
    insertRecord.run(w.order.id, "order.created", w.sha256, w.record, w.order.created_at);
  }
});
async function drain(): Promise<void> {
  while (queue.length > 0) {
    const batch = queue.slice(0, 256);
    queue = queue.slice(256);
    try {
      commitBatch(batch);
      await walSync.sync();
      for (const w of batch) w.resolve();
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  }
  draining = false;
}
function submit(order: OrderRow, record: string, sha256: string): Promise<void> {
  return new Promise((resolve, reject) => {
    queue.push({ order, record, sha256, resolve, reject });
    if (!draining) {
      draining = true;
      // Let the requests already being processed in this tick join the batch.
      setImmediate(() => void drain());
    }
  });
}

let sequence = 0;
const idPrefix = `ord_${Date.now().toString(36)}`;

const app = Fastify({ logger: false });
app.get("/healthz", async () => ({ ok: true }));
app.post<{ Body: OrderBody }>("/order", { schema: { body: orderBody } }, async (request) => {
  const input = request.body;
  const price = prices.get(`${input.trade}|${input.location.state}|${input.urgency}`) as JobPrice;
  const bucket = buckets.get(`${input.trade}|${input.location.state}`) ?? [];
  const first = picks++;
  const contractorId = bucket[first % bucket.length] ?? "ctr_none";
  const now = new Date().toISOString();
  const order: OrderRow = {
    id: `${idPrefix}${(sequence++).toString(36).padStart(8, "0")}`,
    status: "offered",
    trade: input.trade,
    state: input.location.state,
    zip: input.location.zip ?? null,
    urgency: input.urgency,
    description: input.description,
    nte_cents: input.nte_cents ?? null,
    reference_id: input.reference_id ?? null,
    contractor_id: contractorId,
    estimated_cost_cents: price.total_cents,
    created_at: now,
  };
  // The decision record: what was asked, what was decided and why, as an audit record carries it.
  const record = JSON.stringify({
    kind: "order.created",
    at: now,
    actor: "key:bench",
    order_id: order.id,
    input,
    decision: {
      contractor_id: contractorId,
      // The candidates considered, as the service's record lists its ranking: the next three in turn.
      candidates: [0, 1, 2].map((i) => ({
        contractor_id: bucket[(first + i) % bucket.length] ?? "ctr_none",
        rank: i + 1,
        price_cents: price.total_cents,
      })),
      price,
      within_nte: input.nte_cents === undefined ? null : price.total_cents <= input.nte_cents,
      rule: "the first eligible contractor in the bucket, in turn",
    },
    order,
  });
  const sha256 = createHash("sha256").update(record).digest("hex");
  await submit(order, record, sha256);
  return {
    order_id: order.id,
    status: order.status,
    contractor_ref: `ctr-${contractorId.slice(4)}`,
    estimated_cost_cents: order.estimated_cost_cents,
    currency: "USD",
    created_at: now,
    seal: sha256,
  };
});

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" });
process.stdout.write(`Floor listening at ${address}\n`);
process.on("SIGTERM", () => {
  void (async () => {
    await app.close();
    await walSync.close();
    await checkpointer.stop();
    db.close();
    process.exit(0);
  })();
});
