// The work order's life after creation: offers and the cascade, the contractor's answers and progress,
// the caller's cancellation, and the sandbox's simulated contractors. Every change goes through the state
// machine (domain/lifecycle.ts), is written with a conditional update (the status it changes from must
// still hold, so two processes or two requests cannot both move an order), and is sealed in the audit log
// in the same transaction.
//
// Deadlines live in the store. Each process sweeps due offers every OFFER_SWEEP_MS; an offer is settled
// by a conditional update, so a restart neither loses a deadline nor fires one twice.

import { type Actor, sealRecord } from "../audit/record.js";
import {
  type Action,
  holdsContractor,
  type OrderStatus,
  type Role,
  transition,
} from "../domain/lifecycle.js";
import { ApiError } from "../errors.js";
import { newSortableId } from "../ids.js";
import { validationError } from "../operations/gate.js";
import type { NteRequestsTable, OffersTable, OrdersTable } from "../storage/schema.js";
import type { Store, WriteTx } from "../storage/store.js";
import { statusEventType, type WebhookEventType } from "../webhooks/events.js";
import { enqueueOrderEvent } from "../webhooks/outbox.js";
import { Periodic } from "./periodic.js";

/** How long a contractor has to answer an offer, by urgency (live orders). */
export const OFFER_WINDOW_MS: Record<string, number> = {
  emergency: 5 * 60_000,
  urgent: 15 * 60_000,
  routine: 60 * 60_000,
};
/** Sandbox offers expire sooner, so that an integrator sees the cascade in seconds. */
export const SANDBOX_OFFER_WINDOW_MS = 20_000;
/** Contractors offered the job, one after another, before a dispatcher takes over. */
export const MAX_OFFERS = 3;
export const OFFER_SWEEP_MS = 1_000;
/** The sandbox's simulated contractors answer an offer, and move a job on, after this long. */
export const SANDBOX_STEP_MS = 3_000;

/** Values in a sandbox order's description that force an outcome. */
export const SANDBOX_MARKERS = {
  decline: "[sandbox:decline]",
  noAnswer: "[sandbox:no_answer]",
  cannotComplete: "[sandbox:cannot_complete]",
} as const;

/** An offer's deadline. Sandbox offers get the short window while simulated contractors play them. */
export function offerDeadline(urgency: string, livemode: boolean, now: Date, sandboxPlayed = true): string {
  const window =
    livemode || !sandboxPlayed
      ? (OFFER_WINDOW_MS[urgency] ?? OFFER_WINDOW_MS.routine ?? 3_600_000)
      : SANDBOX_OFFER_WINDOW_MS;
  return new Date(now.getTime() + window).toISOString();
}

export type NextOffer = { status: "offered"; offer: OffersTable } | { status: "needs_dispatcher" };

/**
 * Picks the best-ranked contractor not yet tried that has capacity (taking one unit of it, inside the
 * caller's transaction) and makes its offer, which the caller writes with tx.insertOffer; or says the
 * cascade ran out.
 */
export async function offerNext(
  tx: WriteTx,
  order: Pick<OrdersTable, "id" | "livemode" | "urgency">,
  ranking: readonly string[],
  tried: ReadonlySet<string>,
  attempt: number,
  now: Date,
  sandboxPlayed = true,
): Promise<NextOffer> {
  if (attempt > MAX_OFFERS) return { status: "needs_dispatcher" };
  for (const contractorId of ranking) {
    if (tried.has(contractorId)) continue;
    if (!(await tx.reserveContractor(contractorId))) continue;
    const offer: OffersTable = {
      id: newSortableId("ofr"),
      order_id: order.id,
      contractor_id: contractorId,
      livemode: order.livemode,
      attempt,
      status: "pending",
      offered_at: now.toISOString(),
      deadline_at: offerDeadline(order.urgency, order.livemode === 1, now, sandboxPlayed),
      responded_at: null,
      reason: null,
    };
    return { status: "offered", offer };
  }
  return { status: "needs_dispatcher" };
}

/** The NTE in force: the last increase the caller approved, else the caller's own; null when none was set. */
export function nteInForce(order: Pick<OrdersTable, "nte_cents" | "nte_approved_cents">): number | null {
  const value = order.nte_approved_cents ?? order.nte_cents;
  return value === null || value === undefined ? null : Number(value);
}

function ranking(order: OrdersTable): string[] {
  try {
    const ids: unknown = JSON.parse(order.ranking ?? "[]");
    return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}

/** 409 for a conditional update that lost to another change of the same order (or offer). */
function changedMeanwhile(
  currentStatus: string,
  what = "The order changed meanwhile; read it again.",
): ApiError {
  return new ApiError("invalid_transition", what, { extra: { current_status: currentStatus } });
}

/** 409 for declining an offer that is no longer pending (its current_status is the offer's). */
function notDeclinable(offerStatus: string): ApiError {
  return changedMeanwhile(offerStatus, `The offer is ${offerStatus}: it can no longer be declined.`);
}

/** 409 invalid_transition naming the current status, for a move the state machine refuses. */
function checkTransition(current: string, action: Action, role: Role): OrderStatus {
  try {
    return transition(current as OrderStatus, action, role);
  } catch (error) {
    throw new ApiError("invalid_transition", (error as Error).message, {
      extra: { current_status: current },
    });
  }
}

export type ProgressReport =
  | { status: "en_route"; eta_minutes: number }
  | { status: "on_site" }
  | { status: "completed"; final_cost_cents: number }
  | { status: "cannot_complete"; reason: string };

const REPORT_ACTION: Record<ProgressReport["status"], Action> = {
  en_route: "depart",
  on_site: "arrive",
  completed: "complete",
  cannot_complete: "cannot_complete",
};

export class OrderLifecycle {
  private readonly sweep = new Periodic(
    () => this.tick(),
    (err) => this.options.logger?.error({ err }, "order lifecycle sweep failed"),
  );

  constructor(
    private readonly store: Store,
    private readonly options: {
      now?: () => Date;
      logger?: { error(obj: object, msg: string): void };
      /** Told when a contractor's capacity is given back or taken (the in-memory index of this process). */
      onRelease?: (contractorId: string) => void;
      onReserve?: (contractorId: string) => void;
      /** Whether tick() plays the sandbox's simulated contractors (default true). */
      sandbox?: boolean;
      /** The base of the URLs webhook events carry (see webhooks/outbox.ts). */
      baseUrl?: string;
    } = {},
  ) {}

  /** Gives a contractor's unit of capacity back in the store, and to this process's index once committed. */
  private async release(tx: WriteTx, contractorId: string, released: string[]): Promise<void> {
    await tx.releaseContractor(contractorId);
    released.push(contractorId);
  }

  /** Runs `work` in a transaction; once it committed, tells this process's index what it released and took. */
  private write<T>(work: (tx: WriteTx, released: string[], reserved: string[]) => Promise<T>): Promise<T> {
    const released: string[] = [];
    const reserved: string[] = [];
    return this.store
      .write((tx) => {
        released.length = 0; // a retried batch runs the work again
        reserved.length = 0;
        return work(tx, released, reserved);
      })
      .then((result) => {
        for (const id of released) this.options.onRelease?.(id);
        for (const id of reserved) this.options.onReserve?.(id);
        return result;
      });
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Writes the webhook event of a change to the outbox, in the change's transaction (order creation's
   * first status too). */
  notify(
    tx: WriteTx,
    order: OrdersTable,
    type: WebhookEventType,
    at: string,
    details: { previous_status: string | null; [key: string]: unknown },
  ): void {
    enqueueOrderEvent(tx, order, type, at, this.options.baseUrl ?? "http://localhost", details);
  }

  private record(
    tx: WriteTx,
    order: OrdersTable,
    kind: Parameters<typeof sealRecord>[0]["kind"],
    actor: Actor,
    at: string,
    data: Record<string, unknown>,
  ): void {
    tx.appendAudit(
      sealRecord({
        kind,
        at,
        accountId: order.account_id,
        livemode: order.livemode === 1,
        orderId: order.id,
        actor,
        data,
      }),
    );
  }

  /**
   * Settles a pending offer as declined or expired, gives the contractor's capacity back and offers the
   * job to the next contractor (or hands it to a dispatcher). Returns false when the offer was no longer
   * pending: another process or request settled it first. With `decliner` (a contractor declining), the
   * offer must be that contractor's and still pending, checked in the same transaction.
   */
  async moveOn(
    offerId: string,
    outcome: "declined" | "expired",
    actor: Actor,
    reason: string | null,
    decliner?: string,
  ): Promise<boolean> {
    const now = this.now();
    const at = now.toISOString();
    return this.write(async (tx, released, reserved) => {
      if (decliner !== undefined) {
        const mine = await tx.offerById(offerId);
        if (!mine || mine.contractor_id !== decliner)
          throw new ApiError("not_found", `You have no offer ${offerId}.`);
        if (mine.status !== "pending") throw notDeclinable(mine.status);
      }
      if (!(await tx.settleOffer(offerId, outcome, at, reason))) {
        if (decliner !== undefined) throw notDeclinable("settled");
        return false;
      }
      const offer = (await tx.offerById(offerId)) as OffersTable;
      await this.release(tx, offer.contractor_id, released);
      const order = await tx.orderById(offer.order_id);
      if (!order) return true;
      this.record(
        tx,
        order,
        outcome === "declined" ? "order.offer_declined" : "order.offer_expired",
        actor,
        at,
        {
          offer_id: offer.id,
          contractor_id: offer.contractor_id,
          attempt: offer.attempt,
          reason,
        },
      );
      // The order moved on meanwhile (cancelled, assigned by hand): nothing more to offer.
      if (order.status !== "offered" || order.contractor_id !== offer.contractor_id) return true;
      const offers = await tx.offersOfOrder(order.id);
      const next = await offerNext(
        tx,
        order,
        ranking(order),
        new Set(offers.map((o) => o.contractor_id)),
        offers.length + 1,
        now,
        this.options.sandbox !== false,
      );
      const status = transition("offered", next.status === "offered" ? "reoffer" : "exhaust", "system");
      const patch = {
        status,
        contractor_id: next.status === "offered" ? next.offer.contractor_id : null,
        updated_at: at,
      };
      await tx.updateOrder(order.id, "offered", patch);
      if (next.status === "offered") {
        tx.insertOffer(next.offer);
        reserved.push(next.offer.contractor_id);
        this.record(tx, order, "order.offered", "system:dispatch", at, {
          offer_id: next.offer.id,
          contractor_id: next.offer.contractor_id,
          attempt: next.offer.attempt,
          deadline_at: next.offer.deadline_at,
        });
      } else {
        this.record(tx, order, "order.needs_dispatcher", "system:dispatch", at, {
          offers_made: offers.length,
          max_offers: MAX_OFFERS,
        });
        // A re-offer keeps the order offered (no event); running out changes its status.
        this.notify(tx, { ...order, ...patch }, "order.needs_dispatcher", at, {
          previous_status: "offered",
          offers_made: offers.length,
        });
      }
      return true;
    });
  }

  /** A contractor accepts its pending offer: the order becomes accepted. */
  async accept(contractorId: string, offerId: string, actor: Actor): Promise<OrdersTable> {
    const at = this.now().toISOString();
    return this.write(async (tx) => {
      const offer = await tx.offerById(offerId);
      if (!offer || offer.contractor_id !== contractorId) {
        throw new ApiError("not_found", `You have no offer ${offerId}.`);
      }
      const order = (await tx.orderById(offer.order_id)) as OrdersTable;
      if (offer.status !== "pending" || offer.deadline_at <= at) {
        throw new ApiError(
          "invalid_transition",
          `The offer is ${offer.status === "pending" ? "expired" : offer.status}: it can no longer be accepted.`,
          {
            extra: { current_status: order.status },
          },
        );
      }
      const status = checkTransition(order.status, "accept", "contractor");
      if (!(await tx.settleOffer(offer.id, "accepted", at, null))) {
        throw changedMeanwhile(order.status, "The offer was settled meanwhile.");
      }
      const patch = { status, accepted_at: at, updated_at: at };
      if (!(await tx.updateOrder(order.id, "offered", patch))) {
        throw changedMeanwhile(order.status, "The order changed meanwhile.");
      }
      this.record(tx, order, "order.accepted", actor, at, {
        offer_id: offer.id,
        contractor_id: contractorId,
      });
      const after = { ...order, ...patch };
      this.notify(tx, after, "order.accepted", at, { previous_status: order.status, action: "accept" });
      return after;
    });
  }

  /** A contractor declines its pending offer: the job moves to the next contractor. */
  async decline(contractorId: string, offerId: string, reason: string | null, actor: Actor): Promise<void> {
    await this.moveOn(offerId, "declined", actor, reason, contractorId);
  }

  /** The contractor on the job reports its progress. */
  async report(
    contractorId: string,
    orderId: string,
    report: ProgressReport,
    actor: Actor,
  ): Promise<OrdersTable> {
    const at = this.now();
    const iso = at.toISOString();
    return this.write(async (tx, released) => {
      const order = await tx.orderById(orderId);
      if (!order || order.contractor_id !== contractorId)
        throw new ApiError("not_found", `You have no job ${orderId}.`);
      const status = checkTransition(order.status, REPORT_ACTION[report.status], "contractor");
      const patch: Partial<OrdersTable> = { status, updated_at: iso };
      if (report.status === "en_route")
        patch.eta_at = new Date(at.getTime() + report.eta_minutes * 60_000).toISOString();
      if (report.status === "completed") {
        patch.final_cost_cents = report.final_cost_cents;
        patch.completed_at = iso;
      }
      if (report.status === "cannot_complete") patch.status_reason = report.reason;
      if (!(await tx.updateOrder(order.id, order.status, patch))) {
        throw changedMeanwhile(order.status);
      }
      if (holdsContractor(order.status as OrderStatus) && !holdsContractor(status)) {
        await this.release(tx, contractorId, released);
      }
      this.record(tx, order, "order.status_changed", actor, iso, {
        from: order.status,
        ...report,
        to: status,
      });
      const after = { ...order, ...patch };
      this.notify(tx, after, statusEventType(status), iso, { previous_status: order.status });
      return after;
    });
  }

  /** The caller cancels its own order (before the contractor is on site). */
  async cancel(order: OrdersTable, reason: string | null, role: Role, actor: Actor): Promise<OrdersTable> {
    const at = this.now().toISOString();
    return this.write(async (tx, released) => {
      const current = (await tx.orderById(order.id)) as OrdersTable;
      const status = checkTransition(current.status, "cancel", role);
      const patch = { status, status_reason: reason, updated_at: at };
      if (!(await tx.updateOrder(current.id, current.status, patch))) {
        throw changedMeanwhile(current.status);
      }
      if (holdsContractor(current.status as OrderStatus) && current.contractor_id) {
        await this.release(tx, current.contractor_id, released);
      }
      for (const offer of await tx.offersOfOrder(current.id)) {
        if (offer.status === "pending") await tx.settleOffer(offer.id, "withdrawn", at, "order cancelled");
      }
      this.record(tx, current, "order.cancelled", actor, at, { from: current.status, reason });
      const after = { ...current, ...patch };
      this.notify(tx, after, "order.cancelled", at, { previous_status: current.status });
      return after;
    });
  }

  /**
   * A dispatcher gives the job to a contractor by hand (an override): from offered, needs_dispatcher or
   * cannot_complete (assign), or from accepted or en_route (reassign). The new contractor's capacity is
   * taken, the previous holder's given back, and a pending offer withdrawn.
   */
  async assign(
    orderId: string,
    livemode: boolean,
    contractorId: string,
    reason: string,
    actor: Actor,
  ): Promise<OrdersTable> {
    const at = this.now().toISOString();
    const state = await this.store.contractorState(contractorId);
    if (!state || state.pool !== (livemode ? "live" : "sandbox")) {
      throw new ApiError(
        "not_found",
        `No contractor ${contractorId} in the ${livemode ? "live" : "sandbox"} pool.`,
      );
    }
    if (!state.active || state.excluded) {
      throw new ApiError(
        "contractor_unavailable",
        `Contractor ${contractorId} is ${state.excluded ? "excluded" : "inactive"}.`,
      );
    }
    return this.write(async (tx, released, reserved) => {
      const order = await tx.orderById(orderId);
      if (!order || order.livemode !== (livemode ? 1 : 0))
        throw new ApiError("not_found", `No order ${orderId}.`);
      const action = order.status === "accepted" || order.status === "en_route" ? "reassign" : "assign";
      const status = checkTransition(order.status, action, "dispatcher");
      if (order.contractor_id === contractorId && order.status !== "offered") {
        throw new ApiError(
          "invalid_transition",
          `The order is ${order.status} with ${contractorId} already.`,
          {
            extra: { current_status: order.status },
          },
        );
      }
      if (!(await tx.reserveContractor(contractorId))) {
        throw new ApiError("contractor_unavailable", `Contractor ${contractorId} has no capacity left.`);
      }
      reserved.push(contractorId);
      const patch = {
        status,
        contractor_id: contractorId,
        // Every override counts in the human-override rate (evals).
        override_count: Number(order.override_count ?? 0) + 1,
        accepted_at: at,
        eta_at: null,
        status_reason: null,
        updated_at: at,
      };
      if (!(await tx.updateOrder(order.id, order.status, patch))) {
        throw changedMeanwhile(order.status);
      }
      if (holdsContractor(order.status as OrderStatus) && order.contractor_id) {
        await this.release(tx, order.contractor_id, released);
      }
      for (const offer of await tx.offersOfOrder(order.id)) {
        if (offer.status === "pending")
          await tx.settleOffer(offer.id, "withdrawn", at, "assigned by a dispatcher");
      }
      this.record(tx, order, "order.assigned", actor, at, {
        action,
        from_status: order.status,
        from_contractor: order.contractor_id,
        to_contractor: contractorId,
        reason,
      });
      const after = { ...order, ...patch };
      this.notify(tx, after, statusEventType(status), at, { previous_status: order.status, action });
      return after;
    });
  }

  /** The contractor on an active job asks for a higher NTE. */
  async requestNte(
    contractorId: string,
    orderId: string,
    cents: number,
    reason: string,
    actor: Actor,
  ): Promise<NteRequestsTable> {
    const at = this.now().toISOString();
    return this.write(async (tx) => {
      const order = await tx.orderById(orderId);
      if (!order || order.contractor_id !== contractorId)
        throw new ApiError("not_found", `You have no job ${orderId}.`);
      if (!["accepted", "en_route", "on_site", "completed"].includes(order.status)) {
        throw new ApiError(
          "invalid_transition",
          `The order is ${order.status}: an NTE increase is asked on an active job.`,
          {
            extra: { current_status: order.status },
          },
        );
      }
      const current = nteInForce(order);
      if (current === null) {
        throw new ApiError("invalid_transition", "This job has no NTE: there is nothing to raise.", {
          extra: { current_status: order.status },
        });
      }
      if (cents <= current) {
        throw validationError([
          { field: "requested_nte_cents", message: `must exceed the NTE in force (${current})` },
        ]);
      }
      if ((await tx.nteRequestsOfOrder(order.id)).some((r) => r.status === "pending")) {
        throw new ApiError(
          "invalid_transition",
          "An NTE increase is already waiting for the caller's decision.",
          {
            extra: { current_status: order.status },
          },
        );
      }
      const row: NteRequestsTable = {
        id: newSortableId("nte"),
        order_id: order.id,
        contractor_id: contractorId,
        requested_cents: cents,
        reason,
        status: "pending",
        created_at: at,
        decided_at: null,
        decision_reason: null,
      };
      await tx.insertNteRequest(row);
      this.record(tx, order, "order.nte_requested", actor, at, {
        request_id: row.id,
        from_cents: current,
        requested_cents: cents,
        reason,
      });
      this.notify(tx, order, "order.nte_requested", at, {
        previous_status: null,
        nte_request: { request_id: row.id, from_cents: current, requested_cents: cents, reason },
      });
      return row;
    });
  }

  /** The caller approves or rejects an NTE increase; an approval raises the NTE in force. */
  async decideNte(
    order: OrdersTable,
    requestId: string,
    decision: "approved" | "rejected",
    reason: string | null,
    actor: Actor,
  ): Promise<OrdersTable> {
    const at = this.now().toISOString();
    return this.write(async (tx) => {
      const request = await tx.nteRequestById(requestId);
      if (!request || request.order_id !== order.id)
        throw new ApiError("not_found", `No NTE request ${requestId} on this order.`);
      if (!(await tx.decideNteRequest(request.id, decision, at, reason))) {
        throw new ApiError("invalid_transition", `The NTE request was already ${request.status}.`, {
          extra: { current_status: order.status },
        });
      }
      const current = (await tx.orderById(order.id)) as OrdersTable;
      const patch: Partial<OrdersTable> =
        decision === "approved"
          ? { nte_approved_cents: request.requested_cents, updated_at: at }
          : { updated_at: at };
      await tx.updateOrder(current.id, current.status, patch);
      this.record(tx, current, "order.nte_decided", actor, at, {
        request_id: request.id,
        decision,
        requested_cents: request.requested_cents,
        reason,
      });
      const after = { ...current, ...patch };
      this.notify(tx, after, decision === "approved" ? "order.nte_approved" : "order.nte_rejected", at, {
        previous_status: null,
        nte_request: {
          request_id: request.id,
          requested_cents: Number(request.requested_cents),
          decision,
          reason,
        },
      });
      return after;
    });
  }

  /** The contractor invoices a completed job, within the NTE in force. */
  async invoice(contractorId: string, orderId: string, cents: number, actor: Actor): Promise<OrdersTable> {
    const at = this.now().toISOString();
    return this.write(async (tx) => {
      const order = await tx.orderById(orderId);
      if (!order || order.contractor_id !== contractorId)
        throw new ApiError("not_found", `You have no job ${orderId}.`);
      const status = checkTransition(order.status, "invoice", "contractor");
      const limit = nteInForce(order);
      if (limit !== null && cents > limit) {
        throw new ApiError(
          "nte_exceeded",
          `The invoice (${cents}) is over the NTE in force (${limit}): ask for an NTE increase first.`,
          { extra: { nte_in_force_cents: limit } },
        );
      }
      const patch = { status, invoice_cents: cents, invoiced_at: at, updated_at: at };
      if (!(await tx.updateOrder(order.id, order.status, patch))) {
        throw changedMeanwhile(order.status);
      }
      this.record(tx, order, "order.invoiced", actor, at, {
        invoice_cents: cents,
        nte_in_force_cents: limit,
      });
      const after = { ...order, ...patch };
      this.notify(tx, after, "order.invoiced", at, { previous_status: order.status });
      return after;
    });
  }

  /** Expires due offers, then plays the sandbox's simulated contractors. */
  async tick(): Promise<void> {
    const now = this.now();
    for (const offer of await this.store.dueOffers(now.toISOString(), 100)) {
      await this.moveOn(offer.id, "expired", "system:dispatch", null);
    }
    if (this.options.sandbox !== false) await this.playSandbox(now);
  }

  private async playSandbox(now: Date): Promise<void> {
    const cutoff = new Date(now.getTime() - SANDBOX_STEP_MS).toISOString();
    const offers = await this.store.sandboxOffers(cutoff, 100);
    const orders = new Map(
      (await this.store.ordersByIds(offers.map((o) => o.order_id))).map((o) => [o.id, o]),
    );
    const actor = "system:sandbox" as const;
    for (const offer of offers) {
      const description = orders.get(offer.order_id)?.description ?? "";
      if (description.includes(SANDBOX_MARKERS.noAnswer)) continue; // left to expire
      try {
        if (description.includes(SANDBOX_MARKERS.decline)) {
          await this.moveOn(
            offer.id,
            "declined",
            actor,
            "declined by the sandbox (as the description asked)",
          );
        } else {
          await this.accept(offer.contractor_id, offer.id, actor);
        }
      } catch (error) {
        if (!(error instanceof ApiError)) throw error; // settled meanwhile: nothing to do
      }
    }
    for (const order of await this.store.sandboxOrdersIn(
      ["accepted", "en_route", "on_site", "completed"],
      cutoff,
      100,
    )) {
      if (!order.contractor_id) continue;
      if (order.status === "completed") {
        const cost = Number(order.final_cost_cents ?? order.estimated_cost_cents);
        const limit = nteInForce(order);
        try {
          await this.invoice(
            order.contractor_id,
            order.id,
            limit === null ? cost : Math.min(cost, limit),
            actor,
          );
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
        }
        continue;
      }
      const report: ProgressReport =
        order.status === "accepted"
          ? { status: "en_route", eta_minutes: 20 }
          : order.status === "en_route"
            ? { status: "on_site" }
            : order.description.includes(SANDBOX_MARKERS.cannotComplete)
              ? { status: "cannot_complete", reason: "could not complete (as the description asked)" }
              : { status: "completed", final_cost_cents: Number(order.estimated_cost_cents) };
      try {
        await this.report(order.contractor_id, order.id, report, actor);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
      }
    }
  }

  start(intervalMs = OFFER_SWEEP_MS): void {
    this.sweep.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.sweep.stop();
  }
}
