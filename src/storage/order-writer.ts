// The one writer of work orders: commits an OrderChange (domain/orders) in the caller's transaction, all
// of it or nothing: the capacity it takes, the order's row (inserted, or updated only if its version is
// still the one the command read), the offers it makes and settles, the NTE request, the capacity it gives
// back, the audit records and the outbox event.
//
// Lock order, the same for every command, so that two transactions never wait on each other in a cycle:
// the order (locked when the command read it: order-store.ts `byId(id, tx, true)`), then the
// contractors whose capacity the change takes or gives back, in id order, with their rows of the capacity
// ledger, then the order's row (its evals rollups are updated by trigger), its offers and NTE requests.
//
// One column is written outside it: dispatch_latency_ms, the time from the order's request to its first
// offer committed, which can only be measured once this writer's commit has returned
// (WriteTx.recordDispatchLatency, operations/orders/dispatch-latency.ts). It is a measurement of the commit, not
// a change of the order: no command reads it, so it takes no version (a command that read the order
// before it was stored still commits).
//
// Capacity is a count and a time: a unit of the contractor's maximum (the counter's conditional update,
// which also locks the contractor's row), then, when the change says how to place the job, a block of the
// contractor's time that fits between the blocks it holds now, read in this transaction (commitment-
// ledger.ts). Either missing is the same outcome: the contractor has no capacity for this job.
//
// Expected outcomes are values: a contractor with no capacity left (the command is decided again without
// it), an order that moved since it was read, a guard that refused (an idempotency key another request
// claimed first). Nothing is written in those cases. Anything else that fails is a bug and throws, which
// rolls the transaction back.

import type { Kysely, Transaction } from "kysely";
import type { AuditEntry } from "../audit/record.js";
import type { Commitment } from "../domain/commitments.js";
import { notificationKindOf } from "../domain/notifications/events.js";
import type { OrderChange } from "../domain/orders/order.js";
import { newSortableId } from "../ids.js";
import { blockColumns, commitmentOf, type TransactionTime } from "./commitment-ledger.js";
import { enqueueNotification } from "./notification-outbox.js";
import type { NewOrderEvent } from "./order-event-store.js";
import { type OfferRow, type OrderRow, offerToRow, orderPatchToRow, orderToRow } from "./order-rows.js";
import type { CapacityHoldsTable, Database, WebhookEventsTable } from "./schema.js";

/** An OrderChange with what the writer stores besides it: sealed records, the outbox row. */
export interface CommittableChange {
  change: OrderChange;
  audit: readonly AuditEntry[];
  /** The webhook event, when the change has one and it has a recipient. */
  outbox: WebhookEventsTable | null;
  /** The change's row of the order event log (every change has one: the live event stream's). */
  logged?: NewOrderEvent | null;
  /** Run once the capacity is secured and before anything else is written: false writes nothing. */
  guard?: () => Promise<boolean>;
  /** Where the job goes in a contractor's time, given the blocks it holds now: its block, or null when
   * it has no room (then it has no capacity for the job). Absent: the units hold no time. */
  place?: Placement;
}

export type Placement = (contractorId: string, held: readonly Commitment[]) => Commitment | null;

export type CommitOutcome =
  | { ok: true; blocks: Array<[string, Commitment]> }
  | { ok: false; reason: "capacity"; contractorId: string }
  | { ok: false; reason: "moved" }
  | { ok: false; reason: "guard" };

/** What the writer needs of the transaction it runs in (write-tx.ts gives it). */
export interface WriterTx {
  trx: Transaction<Database> | Kysely<Database>;
  /** Takes a unit of an eligible contractor's capacity if it has one left (the counter only); whether
   * it did. */
  reserve(contractorId: string): Promise<boolean>;
  /** Gives a unit back to the counter. */
  release(contractorId: string): Promise<void>;
  /** Puts back a unit given back in this transaction (undoing a release: no maximum to check). */
  restore(contractorId: string): Promise<void>;
  /** The contractors' time as this transaction sees it. */
  time: TransactionTime;
  /** Rows written together just before COMMIT: nothing in this transaction reads them back. */
  buffered: {
    orders: OrderRow[];
    offers: OfferRow[];
    holds: CapacityHoldsTable[];
    audit: AuditEntry[];
    events: WebhookEventsTable[];
    orderEvents: NewOrderEvent[];
  };
}

/** One step on a contractor's capacity, and how to take it back if the change cannot be written. */
interface CapacityStep {
  contractorId: string;
  undo(): Promise<void>;
}

/**
 * Takes and gives back the change's units of capacity, contractors in id order (the lock order), each
 * with its row in the ledger: a unit is given back only if the order held it. Returns the contractor
 * that had no capacity left, having undone the steps already taken; else the steps, to undo if the
 * change is not written after all.
 */
async function moveCapacity(
  w: WriterTx,
  change: OrderChange,
  place: Placement | undefined,
): Promise<
  { full: string } | { moved: true } | { steps: CapacityStep[]; blocks: Array<[string, Commitment]> }
> {
  const orderId = change.after.id;
  const at = change.after.updated_at;
  const isNew = change.before === null;
  const take = new Set(change.capacity.take);
  const release = new Set(change.capacity.release);
  // Taking and giving back the same contractor's unit in one change (an assignment to the contractor the
  // job is offered to) leaves its capacity as it is.
  for (const id of take) {
    if (release.delete(id)) take.delete(id);
  }
  const steps: CapacityStep[] = [];
  const blocks: Array<[string, Commitment]> = [];
  const undoAll = async () => {
    for (const step of steps.reverse()) await step.undo();
  };
  for (const contractorId of [...new Set([...take, ...release, ...(change.capacity.retime ?? [])])].sort()) {
    if (change.capacity.retime?.includes(contractorId)) {
      // Its window moved: the order's block of the contractor's time is placed again, strictly (no room:
      // no capacity for the job in that window; the old block is put back with everything else).
      const retimed = await retime(w, contractorId, orderId, at, place);
      if ("refused" in retimed) {
        await undoAll();
        return retimed.refused;
      }
      if (retimed.block) blocks.push([contractorId, retimed.block]);
      steps.push(retimed.step);
      continue;
    }
    if (take.has(contractorId)) {
      // A new order's rows go out with the batch's inserts; a change's hold is written now, so that a
      // later command on the same order in the same batch gives it back.
      let hold: CapacityHoldsTable | null = null;
      let block: Commitment | null = null;
      let taken: "taken" | "full" | "held";
      if (isNew) {
        const placed = (await w.reserve(contractorId)) ? await placeTime(w, contractorId, place) : "full";
        taken = placed === "full" ? "full" : "taken";
        if (placed !== "full") {
          block = placed;
          hold = { order_id: orderId, contractor_id: contractorId, taken_at: at, ...blockColumns(block) };
          w.buffered.holds.push(hold);
          if (block) w.time.took(contractorId, block);
        }
      } else {
        const unit = await takeUnit(w, contractorId, orderId, at, place);
        taken = unit.outcome;
        block = unit.block;
      }
      if (taken !== "taken") {
        await undoAll();
        // "held": the order holds a unit of this contractor already: it moved since the command read it.
        return taken === "full" ? { full: contractorId } : { moved: true };
      }
      if (block) blocks.push([contractorId, block]);
      steps.push({
        contractorId,
        undo: async () => {
          if (!isNew) {
            await giveBackUnit(w, contractorId, orderId);
            return;
          }
          await w.release(contractorId);
          // Only this order's buffered hold: never another's at index -1.
          const at = hold ? w.buffered.holds.indexOf(hold) : -1;
          if (at >= 0) w.buffered.holds.splice(at, 1);
          w.time.untook(contractorId, orderId);
        },
      });
    } else {
      // Given back only if this order held it: a second release finds no row and changes nothing.
      const row = await giveBackHold(w, contractorId, orderId);
      if (row === null) continue;
      steps.push({
        contractorId,
        undo: async () => {
          await w.trx.insertInto("capacity_holds").values(row).execute();
          await w.restore(contractorId);
          w.time.ungaveBack(contractorId, orderId);
        },
      });
    }
  }
  return { steps, blocks };
}

/** Gives back the order's unit of the contractor and takes it again, placed anew: the step (its undo
 * restores the old hold), or the outcome that refuses the change. */
async function retime(
  w: WriterTx,
  contractorId: string,
  orderId: string,
  at: string,
  place: Placement | undefined,
): Promise<
  { step: CapacityStep; block: Commitment | null } | { refused: { full: string } | { moved: true } }
> {
  const old = await giveBackHold(w, contractorId, orderId);
  // The order held no unit of this contractor: it moved since the command read it.
  if (old === null) return { refused: { moved: true } };
  const putBack = async () => {
    await w.trx.insertInto("capacity_holds").values(old).execute();
    await w.restore(contractorId);
    w.time.ungaveBack(contractorId, orderId);
  };
  const unit = await takeUnit(w, contractorId, orderId, at, place);
  if (unit.outcome !== "taken") {
    await putBack();
    return { refused: unit.outcome === "full" ? { full: contractorId } : { moved: true } };
  }
  return {
    block: unit.block,
    step: {
      contractorId,
      undo: async () => {
        await giveBackUnit(w, contractorId, orderId);
        await putBack();
      },
    },
  };
}

/** After a unit was reserved: the block the job takes of the contractor's time (null: the change holds
 * no time), or "full" when it has no room (the unit is given back). */
async function placeTime(
  w: WriterTx,
  contractorId: string,
  place: Placement | undefined,
): Promise<Commitment | null | "full"> {
  if (!place) return null;
  const block = place(contractorId, await w.time.heldBy(contractorId));
  if (block !== null) return block;
  await w.release(contractorId);
  return "full";
}

/** Deletes the order's row of the contractor's capacity; the row deleted, or null when there was none. */
async function deleteHold(
  w: WriterTx,
  orderId: string,
  contractorId: string,
): Promise<CapacityHoldsTable | null> {
  const row = await w.trx
    .deleteFrom("capacity_holds")
    .where("order_id", "=", orderId)
    .where("contractor_id", "=", contractorId)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Takes a unit of the contractor's capacity for the order, with its ledger row written now: "full" when
 * the contractor has none left, "held" when the order holds one already (nothing taken in either case).
 */
export async function takeUnit(
  w: WriterTx,
  contractorId: string,
  orderId: string,
  at: string,
  place?: Placement,
): Promise<{ outcome: "taken" | "full" | "held"; block: Commitment | null }> {
  if (!(await w.reserve(contractorId))) return { outcome: "full", block: null };
  const block = await placeTime(w, contractorId, place);
  if (block === "full") return { outcome: "full", block: null };
  const inserted = await w.trx
    .insertInto("capacity_holds")
    .values({ order_id: orderId, contractor_id: contractorId, taken_at: at, ...blockColumns(block) })
    .onConflict((oc) => oc.columns(["order_id", "contractor_id"]).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) {
    if (block) w.time.took(contractorId, block);
    return { outcome: "taken", block };
  }
  await w.release(contractorId);
  return { outcome: "held", block: null };
}

/** Gives back the unit the order holds of the contractor's capacity (and its time); the ledger's row, or
 * null when the order held none. */
async function giveBackHold(
  w: WriterTx,
  contractorId: string,
  orderId: string,
): Promise<CapacityHoldsTable | null> {
  const row = await deleteHold(w, orderId, contractorId);
  if (row === null) return null;
  await w.release(contractorId);
  if (commitmentOf(row)) w.time.gaveBack(contractorId, orderId);
  return row;
}

/** Gives back the unit the order holds of the contractor's capacity; false when it holds none. */
export async function giveBackUnit(w: WriterTx, contractorId: string, orderId: string): Promise<boolean> {
  return (await giveBackHold(w, contractorId, orderId)) !== null;
}

/** The counter-offer a change makes or settles (a settled counter was pending: the order's version
 * guards it, as it guards the offers). */
async function writeCounter(w: WriterTx, counter: NonNullable<OrderChange["counter"]>): Promise<void> {
  if (counter.create) {
    await w.trx
      .insertInto("counter_offers")
      .values({ ...counter.create, livemode: counter.create.livemode ? 1 : 0 })
      .execute();
  }
  const s = counter.settle;
  if (!s) return;
  const settled = await w.trx
    .updateTable("counter_offers")
    .set({ status: s.status, decided_at: s.at, decided_by: s.by, reason: s.reason })
    .where("offer_id", "=", s.offer_id)
    .where("status", "=", "pending")
    .executeTakeFirst();
  if (Number(settled.numUpdatedRows) === 0)
    throw new Error(`counter ${s.offer_id} was settled outside its order`);
}

export async function commitOrderChange(w: WriterTx, c: CommittableChange): Promise<CommitOutcome> {
  const { change } = c;
  const moved = await moveCapacity(w, change, c.place);
  if ("full" in moved) return { ok: false, reason: "capacity", contractorId: moved.full };
  if ("moved" in moved) return { ok: false, reason: "moved" };
  const undo = async () => {
    for (const step of moved.steps.reverse()) await step.undo();
  };
  if (c.guard && !(await c.guard())) {
    await undo();
    return { ok: false, reason: "guard" };
  }
  const { before, after } = change;
  if (before === null) {
    // A new order: nobody can name it before it commits, so its rows go out with the batch's inserts.
    w.buffered.orders.push(orderToRow(after));
    for (const offer of change.offers.create) w.buffered.offers.push(offerToRow(offer));
  } else {
    const result = await w.trx
      .updateTable("orders")
      .set(orderPatchToRow(change.patch, before.version + 1))
      .where("id", "=", before.id)
      .where("version", "=", before.version)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      await undo();
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
      await w.trx.insertInto("offers").values(change.offers.create.map(offerToRow)).execute();
    }
  }
  if (change.counter) await writeCounter(w, change.counter);
  if (change.nte.create) await w.trx.insertInto("nte_requests").values(change.nte.create).execute();
  if (change.invoice) {
    const { lines, ...version } = change.invoice;
    await w.trx
      .insertInto("invoice_versions")
      .values({ ...version, lines: JSON.stringify(lines) })
      .execute();
  }
  if (change.invoiceDecision) {
    await w.trx.insertInto("invoice_decisions").values(change.invoiceDecision).execute();
  }
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
  // A change the site's people hear of (domain/notifications/events.ts): its outbox row, when someone may.
  if (notificationKindOf(change.event?.type) !== null && change.event) {
    await enqueueNotification(w.trx, {
      id: newSortableId("nev"),
      account_id: after.account_id,
      livemode: after.livemode ? 1 : 0,
      order_id: after.id,
      event: change.event.type,
      created_at: change.event.at,
    });
  }
  w.buffered.audit.push(...c.audit);
  if (c.outbox) w.buffered.events.push(c.outbox);
  if (c.logged) w.buffered.orderEvents.push(c.logged);
  return { ok: true, blocks: moved.blocks };
}
