// Issue 20: every index on the tables an order writes earns its place. An order writes a row of `orders`,
// `offers`, `capacity_holds`, `order_events`, and per record one of `audit_records` and `audit_leaves`
// (plus `audit_nodes` as the tree grows), and each index on them is one more B-tree to update in the
// order's transaction and more pages to write at its COMMIT.
//
// Replaced: orders_lifecycle_idx (livemode, status, updated_at). Its one reader is the sandbox's sweep
// (order-store.ts `sandboxOrdersIn`: livemode 0, a few statuses, updated_at <= cutoff, oldest first),
// yet every live order entered it, and since updated_at changes on every write of an order, every change
// of any order rewrote its entry. Now orders_sandbox_idx, the same columns WHERE livemode = 0: the same
// sweep, and live orders never enter it. The sweep's query states `livemode = 0` as text, as the index's
// predicate does, so that SQLite (which matches a partial index's WHERE term by term) and PostgreSQL's
// generic plans use it; livemode stays the first column so that SQLite's planner, without statistics,
// prefers it to orders_received_idx (livemode, received_at).
//
// Dropped on SQLite: capacity_holds_contractor_idx (contractor_id). Its one reader reads a contractor's
// blocks in a write transaction (commitment-ledger.ts `TransactionTime.heldBy`) where the store is not
// the only writer; the embedded store is (kysely-store.ts `singleWriter`) and keeps the committed blocks
// in memory, so on SQLite nothing reads it, yet each order entered it at a random place (one more page
// written at every COMMIT). PostgreSQL keeps it.
//
// Kept, each with the query that needs it:
// orders
// - primary key (id): every read and write of one order (`byId`, the writer's versioned update).
// - orders_account_idx (account_id, livemode, created_at): `list` with an account, newest first (the
//   caller's order list, operations/orders/order-list.ts; the simulator's last order).
// - orders_evals_idx (livemode, created_at): `list` without an account, newest first: the dispatch team's
//   orders (operations/orders/dispatcher-actions.ts, the status optional) and the schedule's orders (operations/pool/schedule.ts).
// - orders_contractor_idx (contractor_id, status): `ordersOfContractor` (a contractor's jobs), the
//   contractor directory's record (`records`, by contractor id) and the contractor's current work.
// - orders_received_idx (livemode, received_at): the evals' sums and histograms over the days not yet
//   rolled up (evals-store.ts, `received_at` ranges) and the service levels' rows (`serviceLevelRows`).
// - orders_{offer,matching,first_accept,final_accept}_latency_idx (partial: the latency is known): the
//   evals' exact percentile, a row at an offset in latency order within a bucket (evals-store.ts).
// - orders_open_idx (id, partial: open statuses): the service-level clocks' watch (`slaWatched`).
// offers
// - primary key (id): `offerById`, settling an offer (order-writer.ts).
// - offers_order_idx (order_id): `offersOf` (an order's offers) and `pendingOffersOf` (the queue's deadlines).
// - offers_due_idx (status, deadline_at): `dueOffers` (the expiry sweep) and the sandbox's `sandboxOffers`.
// - offers_contractor_idx (contractor_id, status): `offersOfContractor` (a contractor's offers).
// capacity_holds
// - primary key (order_id, contractor_id): giving a unit back (`deleteHold`) and taking one at most once
//   (`takeUnit`'s ON CONFLICT).
// - capacity_holds_contractor_idx (contractor_id), PostgreSQL only: a contractor's blocks of time read in
//   a write transaction (commitment-ledger.ts `TransactionTime.heldBy`).
// audit_records
// - primary key (seq) and the unique seal: log order, `findAudit` by seal.
// - audit_records_account_idx (account_id, livemode, seq): `listAudit` of one account in log order.
// - audit_records_order_idx (order_id, partial): `orderSeals`, an order's records.
// audit_leaves: primary key (leaf_index), the tree; unique seal: a record's leaf (`findAudit`).
// audit_nodes: primary key (level, idx): the tree's inner nodes (proofs, the compact range).
// order_events: primary key (the stream's resume point); order_events_created_idx: the retention purge.

import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../dialect.js";

export function migration0024(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex("orders_sandbox_idx")
        .on("orders")
        .columns(["livemode", "status", "updated_at"])
        .where(sql<boolean>`livemode = 0`)
        .execute();
      await db.schema.dropIndex("orders_lifecycle_idx").execute();
      if (dialect === "sqlite") await db.schema.dropIndex("capacity_holds_contractor_idx").execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema
        .createIndex("orders_lifecycle_idx")
        .on("orders")
        .columns(["livemode", "status", "updated_at"])
        .execute();
      await db.schema.dropIndex("orders_sandbox_idx").execute();
      if (dialect === "sqlite")
        await db.schema
          .createIndex("capacity_holds_contractor_idx")
          .on("capacity_holds")
          .column("contractor_id")
          .execute();
    },
  };
}
