// The product floor for the order benchmark (issue 29): the least a correct order of THIS product must
// write, written as cheaply as SQLite allows, so that the service's order can be measured against the
// cost of its own writes and not only against the floor (floor-server.ts, which writes two rows).
//
// Same HTTP framework, body schema, price table and contractor pick as the floor (floor-common.ts), and
// the same durability as the service (src/storage/sqlite.ts): WAL, synchronous=NORMAL, busy_timeout 5000,
// wal_autocheckpoint at the service's backstop with checkpoints on a worker thread (WalCheckpointer), and
// group commit on one lane (concurrent requests gathered into one transaction, at most 256 orders, as
// the service's GroupCommitter), then an fdatasync of the -wal file off the event loop (WalSync) before
// any of them is answered. Only the writes differ from the floor. Every statement is prepared once.
//
// What one matched order writes, and why each row is required (the issue's list: "order ~29 columns with
// its primary key and the account and contractor entries; offer; capacity hold; two audit records with
// their disclosures; Merkle leaves and nodes; one event row holding the change; one outbox row"):
//
//   row                       index entries                     why
//   orders (32 columns)       id, (account, mode, created),     the order itself: what was asked, the
//                             (contractor, status)              match, the time promised; the caller lists
//                                                               its orders, a contractor its jobs
//   offers                    id, (contractor, status),         the offer the contractor answers, and
//                             (status, deadline)                the expiry watch that cascades it
//   capacity_holds            (order, contractor)               the unit and block of time the job takes
//                                                               (no double booking across processes)
//   audit_records x2          seal, (account, mode, seq),       order.created and order.matched, sealed:
//                             order                             the decision's evidence (kept 7 years),
//                                                               verifiable by seal, listed by account and
//                                                               by order; disclosures in the same row
//   audit_leaves x2           seal                              each record's leaf in the Merkle tree
//                                                               (its inclusion proof, by seal)
//   audit_nodes ~x2           (level, idx)                      the perfect subtrees the leaves complete
//                                                               (one per leaf on average): proofs and
//                                                               roots in O(log n) reads
//   order_events              created_at                        the live event stream's row: the change
//                                                               (status, contractor, offer), not the order
//   webhook_events (outbox)   id, (fanned_out, id)              the caller's webhook, delivered after
//                                                               commit by the outbox
//
// About 11 rows and 20 index entries an order (the table b-trees' own entries not counted). Left out as
// derivable or amortised, which the service also writes: the evals rollup rows (its trigger), the
// contractor's active_jobs counter (the holds count it), the dispatch latency update after the commit,
// audit tiles (one row per 256 leaves, rebuilt from the leaves), signed checkpoints (one per sequencer
// pass, not per order), idempotency rows (the load sends no key).
//
// Sealing is the product's (audit/record.ts, redaction.ts, disclosure.ts), done once per claim group: a
// record's private claims are taken out as SD-JWT style disclosures (`[salt, name, value]`, a fresh
// 128-bit salt, committed by base64url(SHA-256) in the record's `_sd`), one disclosure per audience (who
// may read it): order.created's caller details (address, site name, reference) in one, for the caller;
// order.matched's candidates for the dispatch team, the chosen contractor's id for that contractor and
// its handle for the caller. Each disclosure is one JSON.stringify and one SHA-256. The record is built
// with its members in canonical (RFC 8785) order, so one JSON.stringify is its canonical text, and its
// leaf is SHA-256(0x00 || text) (merkle.ts leafHash); the tree's nodes are appended at the edge kept in
// memory (merkle.ts appendLeaves), as the service's SQLite store does in the order's transaction.
//
// product-floor-server.ts serves it over HTTP (run.ts starts it); test/bench/product-floor.test.ts checks
// that what it writes is what this says, and that its records verify as the service's do.

import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { disclosureDigest, newSalts, SD_ALG } from "../src/audit/disclosure.js";
import { appendLeaves, compactRange, type Hash } from "../src/audit/merkle.js";
import { newSeal } from "../src/audit/record.js";
import { ContractorRefs } from "../src/auth/contractor-refs.js";
import { offerDeadline } from "../src/domain/orders/policy.js";
import type { JobPrice } from "../src/domain/pricing.js";
import { timeZoneOf } from "../src/domain/time/zones.js";
import { newSortableId } from "../src/ids.js";
import { BACKSTOP_AUTOCHECKPOINT_PAGES, WalCheckpointer } from "../src/storage/sqlite-checkpointer.js";
import { WalSync } from "../src/storage/wal-sync.js";
import { buckets, contractorsById, type OrderBody, prices } from "./floor-common.js";

// The caller: one live account and key, as the service benchmark's load sends.
const ACCOUNT = "acct_bench";
const ACTOR = "key:key_bench";
/** The account's handles of contractors (HMAC-SHA256, cached), as the service answers them. */
const refs = new ContractorRefs(createHash("sha256").update("product floor handles").digest());
const LEAF_PREFIX = Buffer.from([0x00]);
/** How many candidates the order.matched record ranks (the service's matcher keeps the best 5). */
const CANDIDATES = 5;
const TWO_HOURS = 7_200_000;
interface Sealed {
  seal: string;
  kind: string;
  at: string;
  record: string;
  disclosures: string;
  leaf: Hash;
}

interface Write {
  order: unknown[];
  offer: unknown[];
  hold: unknown[];
  records: [Sealed, Sealed];
  event: unknown[];
  outbox: unknown[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Disclosures of one record: `[audience, name, value]` each; their stored text and the digests. */
function disclose(claims: Array<[string, string, unknown]>): { stored: string; digests: string[] } {
  const salts = newSalts(claims.length);
  const lines: string[] = [];
  const digests: string[] = [];
  for (let i = 0; i < claims.length; i++) {
    const [to, name, value] = claims[i] as [string, string, unknown];
    const json = JSON.stringify([salts[i], name, value]);
    lines.push(`${to}\t${json}`);
    digests.push(disclosureDigest(Buffer.from(json, "utf8").toString("base64url")));
  }
  return { stored: lines.join("\n"), digests: digests.sort() };
}

/** A record sealed: its envelope's members in canonical order (`data` already so), one serialisation. */
function seal(kind: string, at: string, orderId: string, data: object, disclosures: string): Sealed {
  const s = newSeal();
  const record = JSON.stringify({
    account_id: ACCOUNT,
    actor: ACTOR,
    at,
    data,
    kind,
    livemode: true,
    order_id: orderId,
    seal: s,
    v: 2,
  });
  const leaf = createHash("sha256").update(LEAF_PREFIX).update(record, "utf8").digest();
  return { seal: s, kind, at, record, disclosures, leaf };
}

/** The product floor on a SQLite file: `order` validates nothing more (the HTTP layer did), picks,
 * seals and commits one order, and answers as the service does once its group commit is durable. */
export interface ProductFloor {
  order(input: OrderBody): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export function openProductFloor(file: string): ProductFloor {
  mkdirSync(dirname(file), { recursive: true });
  const db = new SQLite(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  db.exec(`
    CREATE TABLE IF NOT EXISTS orders (
      id TEXT PRIMARY KEY, account_id TEXT NOT NULL, livemode INTEGER NOT NULL, status TEXT NOT NULL,
      trade TEXT NOT NULL, urgency TEXT NOT NULL, state TEXT NOT NULL, zip TEXT, city TEXT, address TEXT,
      location_name TEXT, description TEXT NOT NULL, nte_cents INTEGER, callback_url TEXT, reference_id TEXT,
      contractor_id TEXT, estimated_cost_cents INTEGER NOT NULL, eta_tier TEXT, match_score REAL,
      received_at TEXT NOT NULL, matched_at TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
      ranking TEXT, matching_time_ms REAL, offers_made INTEGER NOT NULL, time_zone TEXT, window_start TEXT,
      window_end TEXT, respond_by TEXT, arrive_by TEXT, version INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS orders_account_idx ON orders (account_id, livemode, created_at);
    CREATE INDEX IF NOT EXISTS orders_contractor_idx ON orders (contractor_id, status);
    CREATE TABLE IF NOT EXISTS offers (
      id TEXT PRIMARY KEY, order_id TEXT NOT NULL, contractor_id TEXT NOT NULL, livemode INTEGER NOT NULL,
      attempt INTEGER NOT NULL, status TEXT NOT NULL, offered_at TEXT NOT NULL, deadline_at TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS offers_contractor_idx ON offers (contractor_id, status);
    CREATE INDEX IF NOT EXISTS offers_due_idx ON offers (status, deadline_at);
    CREATE TABLE IF NOT EXISTS capacity_holds (
      order_id TEXT NOT NULL, contractor_id TEXT NOT NULL, taken_at TEXT NOT NULL, starts_at TEXT,
      ends_at TEXT, lat REAL, lon REAL, PRIMARY KEY (order_id, contractor_id)
    );
    CREATE TABLE IF NOT EXISTS audit_records (
      seq INTEGER PRIMARY KEY, seal TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, account_id TEXT,
      livemode INTEGER NOT NULL, order_id TEXT, actor TEXT NOT NULL, created_at TEXT NOT NULL,
      record TEXT NOT NULL, disclosures TEXT
    );
    CREATE INDEX IF NOT EXISTS audit_records_account_idx ON audit_records (account_id, livemode, seq);
    CREATE INDEX IF NOT EXISTS audit_records_order_idx ON audit_records (order_id);
    CREATE TABLE IF NOT EXISTS audit_leaves (
      leaf_index INTEGER PRIMARY KEY, seal TEXT NOT NULL UNIQUE, leaf_hash BLOB NOT NULL
    );
    CREATE TABLE IF NOT EXISTS audit_nodes (
      level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (level, idx)
    );
    CREATE TABLE IF NOT EXISTS order_events (
      id INTEGER PRIMARY KEY, type TEXT NOT NULL, order_id TEXT NOT NULL, account_id TEXT NOT NULL,
      livemode INTEGER NOT NULL, contractor_id TEXT, created_at TEXT NOT NULL, change TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS order_events_created_idx ON order_events (created_at);
    CREATE TABLE IF NOT EXISTS webhook_events (
      id TEXT PRIMARY KEY, account_id TEXT NOT NULL, livemode INTEGER NOT NULL, order_id TEXT NOT NULL,
      type TEXT NOT NULL, created_at TEXT NOT NULL, payload TEXT NOT NULL, fanned_out INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS webhook_events_fanout_idx ON webhook_events (fanned_out, id);
  `);

  const insertOrder = db.prepare(
    `INSERT INTO orders VALUES (${Array.from({ length: 32 }, () => "?").join(", ")})`,
  );
  const insertOffer = db.prepare("INSERT INTO offers VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  const insertHold = db.prepare("INSERT INTO capacity_holds VALUES (?, ?, ?, ?, ?, ?, ?)");
  const insertRecord = db.prepare(
    "INSERT INTO audit_records (seal, kind, account_id, livemode, order_id, actor, created_at, record, disclosures) " +
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertLeaf = db.prepare("INSERT INTO audit_leaves VALUES (?, ?, ?)");
  const insertNode = db.prepare("INSERT INTO audit_nodes VALUES (?, ?, ?)");
  const insertEvent = db.prepare(
    "INSERT INTO order_events (type, order_id, account_id, livemode, contractor_id, created_at, change) " +
      "VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const insertOutbox = db.prepare("INSERT INTO webhook_events VALUES (?, ?, ?, ?, ?, ?, ?, 0)");
  const walSync = new WalSync(file);
  const checkpointer = new WalCheckpointer(file);

  /** The tree's right edge: its size and compact range, read once at start, then kept by this process
   * (the only writer), as the service's SQLite store keeps it between its appends. */
  const edge = (() => {
    const size = (db.prepare("SELECT count(*) AS n FROM audit_leaves").get() as { n: number }).n;
    const leaf = db.prepare("SELECT leaf_hash FROM audit_leaves WHERE leaf_index = ?").pluck();
    const node = db.prepare("SELECT hash FROM audit_nodes WHERE level = ? AND idx = ?").pluck();
    const range = compactRange(size).map(
      (r) => (r.level === 0 ? leaf.get(r.index) : node.get(r.level, r.index)) as Hash,
    );
    return { size, range };
  })();

  let picks = 0;

  // Group commit, as the service's GroupCommitter on SQLite (and the floor): one batch at a time; requests
  // arriving while a batch commits and syncs wait for the next one.
  let queue: Write[] = [];
  let draining = false;
  const commitBatch = db.transaction((batch: Write[]) => {
    const leaves: Hash[] = [];
    for (const w of batch) {
      insertOrder.run(w.order);
      insertOffer.run(w.offer);
      insertHold.run(w.hold);
      for (const r of w.records) {
        insertRecord.run(r.seal, r.kind, ACCOUNT, 1, w.order[0], ACTOR, r.at, r.record, r.disclosures);
        leaves.push(r.leaf);
      }
      insertEvent.run(w.event);
      insertOutbox.run(w.outbox);
    }
    // The records' leaves at the tree's edge, in commit order, and the perfect subtrees they complete.
    const grown = appendLeaves(edge.size, edge.range, leaves);
    let i = 0;
    for (const w of batch) for (const r of w.records) insertLeaf.run(edge.size + i++, r.seal, r.leaf);
    for (const n of grown.nodes) if (n.level > 0) insertNode.run(n.level, n.index, n.hash);
    return grown;
  });
  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, 256);
      queue = queue.slice(256);
      try {
        const grown = commitBatch(batch);
        // The edge moves only once the transaction committed.
        edge.size = grown.size;
        edge.range = grown.range;
        await walSync.sync();
        for (const w of batch) w.resolve();
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    draining = false;
  }
  function submit(write: Omit<Write, "resolve" | "reject">): Promise<void> {
    return new Promise((resolve, reject) => {
      queue.push({ ...write, resolve, reject });
      if (!draining) {
        draining = true;
        // Let the requests already being processed in this tick join the batch.
        setImmediate(() => void drain());
      }
    });
  }

  async function order(input: OrderBody): Promise<Record<string, unknown>> {
    const receivedAt = new Date();
    const price = prices.get(`${input.trade}|${input.location.state}|${input.urgency}`) as JobPrice;
    const bucket = buckets.get(`${input.trade}|${input.location.state}`) ?? [];
    const first = picks++;
    const matchStart = process.hrtime.bigint();
    // The candidates, ranked: the next ones in the bucket in turn, as the floor picks.
    const candidates: object[] = [];
    const ranking: string[] = [];
    for (let i = 0; i < Math.min(CANDIDATES, bucket.length); i++) {
      const id = bucket[(first + i) % bucket.length] as string;
      ranking.push(id);
      // Members in canonical order, as every object a record seals.
      candidates.push({
        components: { eta: 0.8 - i / 20, fit: 1, load: 0.75, price: 0.6, quality: 0.9 },
        contractor_id: id,
        distance_miles: 4.2 + i,
        eta_minutes: 45 + 15 * i,
        eta_tier: i === 0 ? "fast" : "standard",
        price_cents: price.total_cents,
        score: Math.round((0.82 - i / 50) * 1e6) / 1e6,
        within_nte: input.nte_cents === undefined ? null : price.total_cents <= input.nte_cents,
      });
    }
    const matchingTimeMs = Number(process.hrtime.bigint() - matchStart) / 1e6;
    const contractorId = ranking[0] ?? "ctr_none";
    const contractor = contractorsById.get(contractorId);
    const id = newSortableId("ord");
    const now = new Date();
    const at = now.toISOString();
    const received = receivedAt.toISOString();
    const deadline = offerDeadline(input.urgency, true, now);
    const timeZone = timeZoneOf(input.location.state, input.location.zip);
    // The time promised: a window a day later for scheduled work, else respond within 1 h, arrive within 4.
    const scheduled = input.urgency === "scheduled";
    const windowStart = scheduled ? new Date(now.getTime() + 86_400_000).toISOString() : null;
    const windowEnd = scheduled ? new Date(now.getTime() + 86_400_000 + 14_400_000).toISOString() : null;
    const respondBy = scheduled ? null : new Date(now.getTime() + 3_600_000).toISOString();
    const arriveBy = scheduled ? null : new Date(now.getTime() + 14_400_000).toISOString();
    const blockStart = windowStart ?? new Date(now.getTime() + 2_700_000).toISOString();
    const blockEnd = new Date(Date.parse(blockStart) + TWO_HOURS).toISOString();
    const contractorRef = refs.of(ACCOUNT, contractorId);
    const { location } = input;

    // order.created: the input as received, the caller's details (site address and name, reference) in
    // one disclosure for the caller.
    const createdClaims = disclose([
      [
        "caller",
        "caller_details",
        {
          address: location.address ?? null,
          name: location.name ?? null,
          reference_id: input.reference_id ?? null,
        },
      ],
    ]);
    const created = seal(
      "order.created",
      received,
      id,
      {
        _sd: createdClaims.digests,
        _sd_alg: SD_ALG,
        input: {
          description: input.description,
          location: { city: location.city, state: location.state, zip: location.zip },
          nte_cents: input.nte_cents,
          trade: input.trade,
          urgency: input.urgency,
        },
      },
      createdClaims.stored,
    );
    // order.matched: the decision and the time promised; the ranking for the dispatch team, the chosen
    // contractor's id for that contractor, its handle for the caller.
    const matchedClaims = disclose([
      ["", "candidates", candidates],
      [`contractor:${contractorId}`, "chosen", contractorId],
      ["caller", "chosen_ref", contractorRef],
    ]);
    const matched = seal(
      "order.matched",
      at,
      id,
      {
        _sd: matchedClaims.digests,
        _sd_alg: SD_ALG,
        considered: bucket.length,
        eligible: bucket.length,
        estimated_cost_cents: price.total_cents,
        matching_time_ms: matchingTimeMs,
        model_price_cents: price.total_cents,
        offer_deadline_at: deadline,
        rejected: { capacity: 0, compliance: 0, coverage: 0, trade: 0 },
        service_time: {
          arrival_window:
            windowStart === null ? null : { end: windowEnd, source: "requested", start: windowStart },
          arrive_by: arriveBy,
          respond_by: respondBy,
          time_zone: timeZone,
        },
        status: "offered",
      },
      matchedClaims.stored,
    );
    const offerId = `off_${id.slice(4)}_1`;
    const order = [
      id,
      ACCOUNT,
      1,
      "offered",
      input.trade,
      input.urgency,
      location.state,
      location.zip ?? null,
      location.city ?? null,
      location.address ?? null,
      location.name ?? null,
      input.description,
      input.nte_cents ?? null,
      null,
      input.reference_id ?? null,
      contractorId,
      price.total_cents,
      "fast",
      0.82,
      received,
      at,
      at,
      at,
      JSON.stringify(ranking),
      matchingTimeMs,
      1,
      timeZone,
      windowStart,
      windowEnd,
      respondBy,
      arriveBy,
      0,
    ];
    // The event: the change (status, contractor, offer), not a copy of the order.
    const change = JSON.stringify({
      offer: { deadline_at: deadline, id: offerId },
      previous_status: "received",
      status: "offered",
    });
    await submit({
      order,
      offer: [offerId, id, contractorId, 1, 1, "pending", at, deadline],
      hold: [id, contractorId, at, blockStart, blockEnd, contractor?.lat ?? null, contractor?.lon ?? null],
      records: [created, matched],
      event: ["order.offered", id, ACCOUNT, 1, contractorId, at, change],
      outbox: [
        newSortableId("whe"),
        ACCOUNT,
        1,
        id,
        "order.offered",
        at,
        JSON.stringify({
          contractor_ref: contractorRef,
          created_at: at,
          order_id: id,
          previous_status: "received",
          status: "offered",
          type: "order.offered",
        }),
      ],
    });
    // The service's answer to an order: its view, with its contractor handle and its seals.
    return {
      order_id: id,
      status: "offered",
      contractor_ref: contractorRef,
      status_url: `/api/dispatch/v1/orders/${id}`,
      livemode: true,
      trade: input.trade,
      urgency: input.urgency,
      location: {
        state: location.state,
        zip: location.zip ?? null,
        city: location.city ?? null,
        address: location.address ?? null,
        name: location.name ?? null,
      },
      description: input.description,
      nte_cents: input.nte_cents ?? null,
      reference_id: input.reference_id ?? null,
      estimated_cost_cents: price.total_cents,
      currency: "USD",
      time_zone: timeZone,
      arrival_window: windowStart === null ? null : { start: windowStart, end: windowEnd },
      respond_by: respondBy,
      arrive_by: arriveBy,
      eta_tier: "fast",
      created_at: at,
      updated_at: at,
      seal: matched.seal,
      seals: [created, matched].map((r) => ({ seal: r.seal, kind: r.kind, created_at: r.at })),
    };
  }

  return {
    order,
    async close() {
      await walSync.close();
      await checkpointer.stop();
      db.close();
    },
  };
}
