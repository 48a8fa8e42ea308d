// The one writer of work orders: commits an OrderChange (domain/orders) in the caller's transaction, all
// of it or nothing: the capacity it takes, the order's row (inserted, or updated only if its version is
// still the one the command read), the offers it makes and settles, the NTE request, the capacity it gives
// back, the audit records and the outbox event.
//
// Lock order, the same for every command (so two transactions never wait on each other in a cycle): the
// order (locked when the command read it, storage/kysely-store.ts `orderById(id, true)`), then the
// contractors whose capacity is taken, then the order's offers and NTE requests, then the contractors whose
// capacity is given back.
//
// One column is written outside it: dispatch_latency_ms, the time from the order's request to its first
// offer committed, which can only be measured once this writer's commit has returned
// (WriteTx.recordDispatchLatency, operations/dispatch-latency.ts). It is a measurement of the commit, not
// a change of the order: no command reads it, so it takes no version (a command that read the order
// before it was stored still commits).
//
// Expected outcomes are values: a contractor with no capacity left (the command is decided again without
// it), an order that moved since it was read, a guard that refused (an idempotency key another request
// claimed first). Nothing is written in those cases. Anything else that fails is a bug and throws, which
// rolls the transaction back.

import type { Kysely, Transaction } from "kysely";
import type { AuditEntry } from "../audit/record.js";
import type { Offer, OrderChange, Order as OrderRow } from "../domain/orders/order.js";
import type { Database, WebhookEventsTable } from "./schema.js";

/** An OrderChange with what the writer stores besides it: sealed records, the outbox row. */
export interface CommittableChange {
  change: OrderChange;
  audit: readonly AuditEntry[];
  /** The webhook event, when the change has one and it has a recipient. */
  outbox: WebhookEventsTable | null;
  /** Run once the capacity is secured and before anything else is written: false writes nothing. */
  guard?: () => Promise<boolean>;
}

export type CommitOutcome =
  | { ok: true }
  | { ok: false; reason: "capacity"; contractorId: string }
  | { ok: false; reason: "moved" }
  | { ok: false; reason: "guard" };

/** What the writer needs of the transaction it runs in (kysely-store.ts gives it). */
export interface WriterTx {
  trx: Transaction<Database> | Kysely<Database>;
  /** Takes a unit of an eligible contractor's capacity if it has one left; whether it did. */
  reserve(contractorId: string): Promise<boolean>;
  release(contractorId: string): Promise<void>;
  /** Rows written together just before COMMIT: nothing in this transaction reads them back. */
  buffered: { orders: OrderRow[]; offers: Offer[]; audit: AuditEntry[]; events: WebhookEventsTable[] };
}

export async function commitOrderChange(w: WriterTx, c: CommittableChange): Promise<CommitOutcome> {
  const { change } = c;
  const taken: string[] = [];
  const giveBack = async () => {
    for (const id of taken) await w.release(id);
  };
  for (const id of change.capacity.take) {
    if (!(await w.reserve(id))) {
      await giveBack();
      return { ok: false, reason: "capacity", contractorId: id };
    }
    taken.push(id);
  }
  if (c.guard && !(await c.guard())) {
    await giveBack();
    return { ok: false, reason: "guard" };
  }
  const { before, after } = change;
  if (before === null) {
    // A new order: nobody can name it before it commits, so its rows go out with the batch's inserts.
    w.buffered.orders.push(after);
    w.buffered.offers.push(...change.offers.create);
  } else {
    const version = Number(before.version ?? 0);
    const result = await w.trx
      .updateTable("orders")
      .set({ ...change.patch, version: version + 1 })
      .where("id", "=", before.id)
      .where("version", "=", version)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      await giveBack();
      return { ok: false, reason: "moved" };
    }
    for (const s of change.offers.settle) {
      const settled = await w.trx
        .updateTable("offers")
        .set({ status: s.status, responded_at: s.at, reason: s.reason })
        .where("id", "=", s.id)
        .where("status", "=", "pending")
        .executeTakeFirst();
      // The order's version guards its offers: a settled offer here means a write bypassed the writer.
      if (Number(settled.numUpdatedRows) === 0)
        throw new Error(`offer ${s.id} was settled outside its order`);
    }
    // Written now, not at COMMIT: a later command on this order in the same batch must see it.
    if (change.offers.create.length > 0) {
      await w.trx.insertInto("offers").values(change.offers.create).execute();
    }
  }
  if (change.nte.create) await w.trx.insertInto("nte_requests").values(change.nte.create).execute();
  const decide = change.nte.decide;
  if (decide) {
    const decided = await w.trx
      .updateTable("nte_requests")
      .set({ status: decide.status, decided_at: decide.at, decision_reason: decide.reason })
      .where("id", "=", decide.id)
      .where("status", "=", "pending")
      .executeTakeFirst();
    if (Number(decided.numUpdatedRows) === 0) {
      throw new Error(`NTE request ${decide.id} was decided outside its order`);
    }
  }
  for (const id of change.capacity.release) await w.release(id);
  w.buffered.audit.push(...c.audit);
  if (c.outbox) w.buffered.events.push(c.outbox);
  return { ok: true };
}
