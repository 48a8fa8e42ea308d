// One simulated order's life: its caller estimates, orders, maybe cancels or decides an NTE increase; the
// contractors offered it answer or stay silent; the one holding it travels, works, completes and invoices;
// the dispatch team takes over what nobody took and overrides some assignments. Every decision comes
// from the order's own seeded generator, so the interleaving of lanes cannot change it.

import { allowedActions, type OrderStatus } from "../domain/orders/transitions.js";
import { type Rng, rngOf, seedOf } from "../domain/random.js";
import { TRADES } from "../domain/trades.js";
import type { ReceivedUpload } from "../operations/kernel/operation.js";
import { estimateOperation } from "../operations/matching/estimate.js";
import { attachmentUploadOperation } from "../operations/orders/attachments.js";
import { nteDecisionOperation, orderCancelOperation } from "../operations/orders/caller-actions.js";
import {
  contractorChecklistAnswerOperation,
  orderChecklistOperation,
} from "../operations/orders/checklists.js";
import {
  contractorAcceptOperation,
  contractorDeclineOperation,
  contractorInvoiceOperation,
  contractorJobsOperation,
  contractorNteRequestOperation,
  contractorOffersOperation,
  contractorReportOperation,
} from "../operations/orders/contractor-actions.js";
import { orderOperation } from "../operations/orders/create-order.js";
import {
  dispatcherAssignOperation,
  dispatcherCancelOperation,
  dispatcherOrdersOperation,
} from "../operations/orders/dispatcher-actions.js";
import { orderStatusOperation } from "../operations/orders/order-status.js";
import { OFFER_SWEEP_MS } from "../workers/offer-sweeper.js";
import {
  answerShare,
  DESCRIPTIONS,
  departDelayMs,
  dispatcherDelayMs,
  etaMinutes,
  MIX,
  pick,
  REASONS,
  uniform,
  weighted,
} from "./behaviour.js";
import { simulatedAnswers } from "./checklist-answers.js";
import type { OrderPlan } from "./demand.js";
import { phonePosition } from "./phone-position.js";
import { sandboxPhoto, sandboxSignature, sandboxSigner } from "./proof-images.js";
import type { Result, World } from "./world.js";

const HOUR_MS = 3_600_000;
/** An order whose play has not ended after this many steps is a simulator bug. */
const MAX_STEPS = 40;
/** The simulated contractors' photos: smaller than the sandbox's, so a month's run stays quick. */
const PHOTO_SIZE = { width: 400, height: 300 };

/** Orders a caller may still cancel itself, from the transition table. */
const CALLER_CANCELLABLE = (status: OrderStatus | "none") =>
  status !== "none" && allowedActions(status, "caller").includes("cancel");

/** One order's life, played by its caller, the contractors offered it, and the dispatch team. */
export class OrderPlay {
  private status: OrderStatus | "none" = "none";
  private id = "";
  private contractor: string | null = null;
  private readonly tried = new Set<string>();
  /** The NTE in force (the caller's, or the last increase it approved); null without one. */
  private nte: number | null = null;
  private estimate = 0;
  private finalCost = 0;
  private cancelAt = Number.POSITIVE_INFINITY;
  private reassigned = false;
  private stuck = false;
  private readonly rng: Rng;
  /** Dispatchers' picks draw from their own stream, so a retry cannot shift the order's other decisions. */
  private readonly pickRng: Rng;
  /** Whether the contractor leaves proof draws from its own stream too: the other decisions stay as they
   * were before the simulator left proof. */
  private readonly proofRng: Rng;

  constructor(
    private readonly world: World,
    private readonly plan: OrderPlan,
  ) {
    this.rng = rngOf(seedOf(world.seed, plan.index));
    this.pickRng = rngOf(seedOf(world.seed, plan.index, "pick"));
    this.proofRng = rngOf(seedOf(world.seed, plan.index, "proof"));
  }

  private get now(): number {
    return this.world.clock.now().getTime();
  }

  async play(): Promise<void> {
    if (!(await this.create())) return;
    for (let step = 0; step < MAX_STEPS && !this.stuck; step++) {
      if (this.status === "offered") await this.answerOffer();
      else if (this.status === "needs_dispatcher" || this.status === "cannot_complete")
        await this.dispatcherTakesOver(this.status);
      else if (this.status === "accepted") await this.doJob();
      else if (this.status === "completed") await this.invoice();
      else return;
    }
    if (!this.stuck) throw new Error(`order ${this.id} did not settle within ${MAX_STEPS} steps`);
  }

  /** An operation that should have worked did not: the order's play stops here (and is counted). */
  private unexpected<T>(result: Result<T>): result is { ok: false; code: string; message: string } {
    if (result.ok) return false;
    this.stuck = true;
    this.world.counters.ordersStuck++;
    return true;
  }

  /**
   * Sleeps until `at`, unless the caller's cancellation falls first and the order can still be cancelled
   * by the caller: then the caller cancels, and this answers false.
   */
  private async wait(at: number): Promise<boolean> {
    const { world } = this;
    if (this.cancelAt <= at) {
      const cancelAt = this.cancelAt;
      this.cancelAt = Number.POSITIVE_INFINITY; // too late, if no longer possible: the caller lets it be
      if (CALLER_CANCELLABLE(this.status)) {
        await world.clock.until(cancelAt);
        const result = await world.call(orderCancelOperation, world.callerKey, {
          order_id: this.id,
          reason: pick(this.rng, REASONS.callerCancel),
        });
        if (this.unexpected(result)) return false;
        this.status = "cancelled";
        world.counters.callerCancels++;
        return false;
      }
    }
    await world.clock.until(at);
    return true;
  }

  private async create(): Promise<boolean> {
    const { world, plan, rng } = this;
    const location = { state: plan.state, ...(plan.zip ? { zip: plan.zip } : {}) };
    const estimate = await world.call(estimateOperation, undefined, {
      trade: plan.trade,
      location,
      urgency: plan.urgency,
    });
    if (this.unexpected(estimate)) return false;
    const withNte = rng() < MIX.nteShare;
    const markup = uniform(rng, ...MIX.nteOverEstimate);
    const nte = withNte ? Math.round((estimate.value.typical_cents * markup) / 2500) * 2500 : undefined;
    if (rng() < MIX.callerCancel) this.cancelAt = this.now + uniform(rng, ...MIX.callerCancelAfterMs);
    const created = await world.call(orderOperation, world.callerKey, {
      trade: plan.trade,
      location: {
        ...location,
        ...(plan.city ? { city: plan.city } : {}),
        address: plan.address,
        name: plan.site,
      },
      description: pick(rng, DESCRIPTIONS[plan.trade]),
      urgency: plan.urgency,
      ...(nte !== undefined ? { nte_cents: nte } : {}),
      reference_id: `SIM-${world.seed}-${plan.index + 1}`,
    });
    if (this.unexpected(created)) return false;
    const order = created.value;
    this.id = order.order_id;
    world.orderIds.push(order.order_id);
    this.status = order.status;
    this.contractor = await this.contractorOffered();
    this.estimate = order.estimated_cost_cents;
    this.nte = order.nte_cents ?? null;
    world.counters.ordersCreated++;
    if (order.status === "needs_dispatcher") world.counters.unmatchedAtCreation++;
    return true;
  }

  /**
   * The contractor the order is with. A caller only sees its handle (contractor_ref), which cannot be turned
   * back into an id; the simulator plays every contractor, so it reads the order's row.
   */
  private async contractorOffered(): Promise<string | null> {
    const row = await this.world.services.store.orders.byId(this.id);
    return row?.contractor_id ?? null;
  }

  /** The caller reads its order (after a decline or an expiry, to see where the job went). */
  private async refresh(): Promise<void> {
    const { world } = this;
    const view = await world.call(orderStatusOperation, world.callerKey, { order_id: this.id });
    if (this.unexpected(view)) return;
    this.status = view.value.status;
    this.contractor = await this.contractorOffered();
  }

  /** The contractor offered the job sees the offer, then accepts, declines, or never answers. */
  private async answerOffer(): Promise<void> {
    const { world, rng } = this;
    const contractor = this.contractor as string;
    this.tried.add(contractor);
    const key = await world.contractorKey(contractor);
    const offers = await world.call(contractorOffersOperation, key, {});
    if (this.unexpected(offers)) return;
    const offer = offers.value.offers.find((o) => o.order_id === this.id);
    if (!offer) {
      this.unexpected({ ok: false, code: "offer_not_listed", message: `no offer for ${this.id}` });
      return;
    }
    const deadline = Date.parse(offer.deadline_at);
    const answer = weighted(rng, MIX.offer);
    const answerAt = this.now + (deadline - this.now) * answerShare(rng);
    const reason = pick(rng, REASONS.decline);
    if (answer === "silent") {
      // The server's sweeper settles a due offer within OFFER_SWEEP_MS of its deadline.
      if (!(await this.wait(deadline + OFFER_SWEEP_MS))) return;
      await world.expire(offer.offer_id);
      world.counters.offersExpired++;
      await this.refresh();
      return;
    }
    if (!(await this.wait(answerAt))) return;
    if (answer === "accept") {
      const accepted = await world.call(contractorAcceptOperation, key, { offer_id: offer.offer_id });
      if (this.unexpected(accepted)) return;
      this.status = accepted.value.status;
      world.counters.offersAccepted++;
      return;
    }
    const declined = await world.call(contractorDeclineOperation, key, { offer_id: offer.offer_id, reason });
    if (this.unexpected(declined)) return;
    world.counters.offersDeclined++;
    await this.refresh();
  }

  /** The dispatch team picks the order up from its queue: assigns a contractor by hand, or cancels. */
  private async dispatcherTakesOver(status: "needs_dispatcher" | "cannot_complete"): Promise<void> {
    const { world, rng, plan } = this;
    const afterFailure = status === "cannot_complete";
    const at = this.now + dispatcherDelayMs(rng, plan.urgency);
    const cancels = rng() < (afterFailure ? MIX.dispatcherCancelAfterFailure : MIX.dispatcherCancelUnmatched);
    const reason = afterFailure ? pick(rng, REASONS.reassignAfterFailure) : pick(rng, REASONS.assign);
    const cancelReason = pick(
      rng,
      afterFailure ? REASONS.dispatcherCancelAfterFailure : REASONS.dispatcherCancelUnmatched,
    );
    if (!(await this.wait(at))) return;
    const queue = await world.call(dispatcherOrdersOperation, world.dispatcherKey, {
      status,
      limit: 20,
    });
    if (this.unexpected(queue)) return;
    if (!cancels && (await this.assign(afterFailure ? "afterFailure" : "assigned", reason))) return;
    if (this.stuck) return;
    const cancelled = await world.call(dispatcherCancelOperation, world.dispatcherKey, {
      order_id: this.id,
      reason: cancelReason,
    });
    if (this.unexpected(cancelled)) return;
    this.status = cancelled.value.status;
    world.counters.dispatcherCancels++;
  }

  /** A dispatcher's override: the job goes to a contractor of its choosing. False when none could take it. */
  private async assign(kind: "assigned" | "afterFailure" | "reassigned", reason: string): Promise<boolean> {
    const { world } = this;
    for (let attempt = 0; attempt < 3; attempt++) {
      const exclude = new Set(this.tried);
      if (this.contractor) exclude.add(this.contractor);
      const chosen = world.pickContractor(this.plan, exclude, this.pickRng);
      if (!chosen) return false;
      this.tried.add(chosen);
      const assigned = await world.call(dispatcherAssignOperation, world.dispatcherKey, {
        order_id: this.id,
        contractor_id: chosen,
        reason,
      });
      if (!assigned.ok && assigned.code === "contractor_unavailable") continue; // took other work meanwhile
      if (this.unexpected(assigned)) return false;
      this.status = assigned.value.status;
      this.contractor = chosen;
      if (kind === "assigned") world.counters.overridesAssigned++;
      else if (kind === "afterFailure") world.counters.overridesAfterFailure++;
      else world.counters.overridesReassigned++;
      return true;
    }
    return false;
  }

  /** The contractor holding the job sets off, arrives, works (maybe asks for more NTE) and completes. */
  private async doJob(): Promise<void> {
    const { world, rng, plan } = this;
    const departAt = this.now + departDelayMs(rng, plan.urgency);
    if (!(await this.reassignBeforeDeparting(departAt))) return;
    if (!(await this.wait(departAt))) return;
    const key = await world.contractorKey(this.contractor as string);
    const jobs = await world.call(contractorJobsOperation, key, {});
    if (this.unexpected(jobs)) return;
    if (!jobs.value.jobs.some((j) => j.order_id === this.id && j.address !== null)) {
      this.unexpected({ ok: false, code: "job_not_listed", message: `no job ${this.id} with its address` });
      return;
    }
    await this.travel(key);
  }

  /** Once per order, maybe, a dispatcher gives the job to another contractor before it sets off. False
   * when the job's contractor does not set off now (reassigned: the new one sets off in its own time). */
  private async reassignBeforeDeparting(departAt: number): Promise<boolean> {
    const { rng } = this;
    if (this.reassigned || rng() >= MIX.reassign) return true;
    this.reassigned = true;
    const at = this.now + (departAt - this.now) * uniform(rng, 0.2, 0.8);
    const reason = pick(rng, REASONS.reassign);
    if (!(await this.wait(at))) return false;
    if (await this.assign("reassigned", reason)) return false;
    return !this.stuck;
  }

  /** The order's place, as its contractor's phone is put near it. */
  private site() {
    return { id: this.id, zip: this.plan.zip ?? null, city: null, state: this.plan.state };
  }

  /** On the way (with an ETA), then on site, unless the contractor cannot complete the job on the way. */
  private async travel(key: string): Promise<void> {
    const { world, rng, plan } = this;
    const eta = etaMinutes(rng, plan.urgency);
    const enRoute = await world.call(contractorReportOperation, key, {
      order_id: this.id,
      status: "en_route",
      eta_minutes: eta,
    });
    if (this.unexpected(enRoute)) return;
    this.status = enRoute.value.status;
    const arriveAt = this.now + eta * 60_000 * uniform(rng, 0.8, 1.3);
    const failsOnTheWay = rng() < MIX.cannotCompleteEnRoute;
    const failsOnSite = rng() < MIX.cannotCompleteOnSite;
    const failure = pick(rng, REASONS.cannotComplete);
    if (!(await this.wait(arriveAt))) return;
    if (failsOnTheWay) {
      await this.cannotComplete(key, failure);
      return;
    }
    const onSite = await world.call(contractorReportOperation, key, {
      order_id: this.id,
      status: "on_site",
      position: phonePosition(this.site(), "on_site"),
    });
    if (this.unexpected(onSite)) return;
    this.status = onSite.value.status;
    await this.work(key, failsOnSite ? failure : null);
  }

  /** The work on site: it fails (`failure`), or is done at a final cost, maybe after asking for more NTE. */
  private async work(key: string, failure: string | null): Promise<void> {
    const { world, rng, plan } = this;
    const workMs = TRADES[plan.trade].typicalJobHours * HOUR_MS * uniform(rng, 0.5, 1.8);
    if (failure !== null) {
      await world.clock.until(this.now + workMs * 0.3);
      await this.cannotComplete(key, failure);
      return;
    }
    const over = rng() < MIX.costOverShare;
    const factor = over ? uniform(rng, ...MIX.costOver) : uniform(rng, ...MIX.costUnder);
    this.finalCost = Math.max(1, Math.round(this.estimate * factor));
    let doneAt = this.now + workMs;
    const asks = rng() < MIX.nteAsk;
    const ask = {
      at: this.now + workMs * uniform(rng, 0.2, 0.5),
      decideAfter: uniform(rng, ...MIX.nteDecisionAfterMs),
      approves: rng() < MIX.nteApprove,
      reason: pick(rng, REASONS.nte),
    };
    if (this.nte !== null && this.finalCost > this.nte && asks) {
      if (!(await this.askForMoreNte(key, ask))) return;
      doneAt = Math.max(doneAt, this.now + 15 * 60_000);
    }
    await world.clock.until(doneAt);
    if (!(await this.leaveProof(key))) return;
    const completed = await world.call(contractorReportOperation, key, {
      order_id: this.id,
      status: "completed",
      final_cost_cents: this.finalCost,
      position: phonePosition(this.site(), "completed"),
    });
    if (this.unexpected(completed)) return;
    this.status = completed.value.status;
    if (this.nte === null) world.counters.completedWithoutNte++;
    else if (this.finalCost > this.nte) world.counters.completedOverNte++;
    else world.counters.completedWithinNte++;
  }

  /**
   * Before completing, on site: a share of contractors add a photo of the work and the site contact's
   * signature (MIX.proofShare), and a job whose trade has a checklist gets it read and answered as the
   * sandbox's contractors answer it (a photo item with the photo, taken for it if need be). False when
   * the order's play stops.
   */
  private async leaveProof(key: string): Promise<boolean> {
    const { world } = this;
    const withProof = this.proofRng() < MIX.proofShare;
    let checklist: Awaited<ReturnType<OrderPlay["readChecklist"]>> = null;
    if (world.checklistTrades.has(this.plan.trade)) {
      checklist = await this.readChecklist(key);
      if (this.stuck) return false;
    }
    const asksPhoto = checklist?.items.some((i) => i.kind === "photo" && i.answer === null) ?? false;
    let photo: string | null = null;
    if (withProof || asksPhoto) {
      const bytes = await sandboxPhoto(this.id, TRADES[this.plan.trade].name, PHOTO_SIZE);
      photo = await this.upload(key, bytes, "photo.jpg", { kind: "photo", caption: "The work done" });
      if (photo === null) return false;
      world.counters.proofPhotos++;
    }
    if (withProof) {
      const bytes = await sandboxSignature(this.id);
      const fields = { kind: "signature", signer_name: sandboxSigner(this.id) };
      if ((await this.upload(key, bytes, "signature.png", fields)) === null) return false;
      world.counters.proofSignatures++;
    }
    if (checklist === null || checklist.items.length === 0) return true;
    const held = new Set(checklist.items.filter((i) => i.answer !== null).map((i) => i.item_id));
    const answers = simulatedAnswers(checklist.items, held, photo, "Done");
    if (answers.length > 0) {
      const saved = await world.call(contractorChecklistAnswerOperation, key, {
        order_id: this.id,
        answers,
      });
      if (this.unexpected(saved)) return false;
    }
    world.counters.checklistsAnswered++;
    return true;
  }

  /** The job's checklist as the contractor's phone reads it (the read fixes it); null when it stops. */
  private async readChecklist(key: string) {
    const read = await this.world.call(orderChecklistOperation, key, { order_id: this.id });
    return this.unexpected(read) ? null : read.value;
  }

  /** Adds a file to the job as its contractor's phone does (the upload operation, multipart); its id. */
  private async upload(
    key: string,
    bytes: Buffer,
    filename: string,
    fields: Record<string, string>,
  ): Promise<string | null> {
    const form: ReceivedUpload = { fields, file: { bytes, filename } };
    const added = await this.world.call(attachmentUploadOperation, key, { order_id: this.id }, form);
    return this.unexpected(added) ? null : added.value.attachment_id;
  }

  /** The contractor asks for an NTE that covers its final cost; the caller reads its order and decides.
   * False when the order's play stops. */
  private async askForMoreNte(
    key: string,
    ask: { at: number; decideAfter: number; approves: boolean; reason: string },
  ): Promise<boolean> {
    const { world } = this;
    await world.clock.until(ask.at);
    const requested = Math.ceil(this.finalCost / 1000) * 1000;
    const request = await world.call(contractorNteRequestOperation, key, {
      order_id: this.id,
      requested_nte_cents: requested,
      reason: ask.reason,
    });
    if (this.unexpected(request)) return false;
    world.counters.nteRequests++;
    // The caller reads its order, finds the pending request and decides.
    await world.clock.until(this.now + ask.decideAfter);
    const view = await world.call(orderStatusOperation, world.callerKey, { order_id: this.id });
    if (this.unexpected(view)) return false;
    const pending = view.value.nte_requests.find((r) => r.status === "pending");
    if (!pending) {
      this.unexpected({ ok: false, code: "nte_request_not_listed", message: this.id });
      return false;
    }
    const decided = await world.call(nteDecisionOperation, world.callerKey, {
      order_id: this.id,
      request_id: pending.request_id,
      decision: ask.approves ? "approve" : "reject",
      ...(ask.approves ? {} : { reason: "over budget: finish within the original NTE" }),
    });
    if (this.unexpected(decided)) return false;
    if (ask.approves) {
      this.nte = requested;
      world.counters.nteApproved++;
    } else {
      world.counters.nteRejected++;
    }
    return true;
  }

  private async cannotComplete(key: string, reason: string): Promise<void> {
    const result = await this.world.call(contractorReportOperation, key, {
      order_id: this.id,
      status: "cannot_complete",
      reason,
    });
    if (this.unexpected(result)) return;
    this.status = result.value.status;
    this.world.counters.cannotComplete++;
  }

  /** The contractor invoices the completed job, within the NTE in force (it absorbs any overrun). */
  private async invoice(): Promise<void> {
    const { world } = this;
    await world.clock.until(this.now + uniform(this.rng, ...MIX.invoiceAfterMs));
    const key = await world.contractorKey(this.contractor as string);
    const amount = this.nte === null ? this.finalCost : Math.min(this.finalCost, this.nte);
    const invoiced = await world.call(contractorInvoiceOperation, key, {
      order_id: this.id,
      amount_cents: amount,
    });
    if (this.unexpected(invoiced)) return;
    this.status = invoiced.value.status;
    world.counters.invoices++;
  }
}
