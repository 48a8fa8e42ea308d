// The sandbox's simulated contractors: with SANDBOX_SIMULATION on, they answer sandbox offers and move
// sandbox jobs on, one step every SANDBOX_STEP_MS, so an integrator with a test key sees an order's whole
// life in seconds. A windowed job (scheduled work, or a service_window) is the exception: its contractor
// accepts at once but sets off when the sandbox's clock reaches the window's start, as a real one would,
// so the board shows a real day (SANDBOX_CLOCK_SPEED runs that clock faster, for tests and demos). They act through the order's commands (operations/orders/command-runner.ts) as
// `system:sandbox`, like any contractor would. Markers in an order's description force an outcome.
// A contractor with a key of its own (unrevoked, `keys create --contractor`) is not played: its integrator
// plays it. The store's queries leave it out at each round, so every process agrees as soon as the key is
// issued or revoked.

import { unansweredRequired } from "../domain/orders/checklist.js";
import type { ProgressReport } from "../domain/orders/commands.js";
import { itemise } from "../domain/orders/invoice.js";
import type { Order } from "../domain/orders/order.js";
import { TRADES } from "../domain/trades.js";
import { ApiError } from "../errors.js";
import type { Services } from "../operations/kernel/operation.js";
import { storeAttachment } from "../operations/orders/attachment-upload.js";
import { checklistOf, saveAnswers } from "../operations/orders/checklist-state.js";
import {
  acceptOffer,
  counterOffer,
  invoice,
  type OrderServices,
  reportProgress,
  settleOffer,
} from "../operations/orders/command-runner.js";
import { applyInvoicePolicy } from "../operations/orders/invoices.js";
import { Periodic } from "../workers/periodic.js";
import { simulatedAnswers } from "./checklist-answers.js";
import { phonePosition } from "./phone-position.js";
import { sandboxPhoto, sandboxSignature, sandboxSigner } from "./proof-images.js";
import { sandboxCounterPrice } from "./sandbox-counter.js";
import { sandboxInvoiceLines } from "./sandbox-invoice.js";

/** The sandbox's simulated contractors answer an offer, and move a job on, after this long. */
export const SANDBOX_STEP_MS = 3_000;
const SANDBOX_PLAY_MS = 1_000;

/** Values in a sandbox order's description that force an outcome. */
export const SANDBOX_MARKERS = {
  decline: "[sandbox:decline]",
  noAnswer: "[sandbox:no_answer]",
  cannotComplete: "[sandbox:cannot_complete]",
} as const;

const actor = "system:sandbox" as const;

/** A sandbox contractor as its (simulated) key presents it. */
const sandbox = (contractorId: string) => ({ contractorId, livemode: false });

/** Runs a step; one that lost to a change made meanwhile (a refusal) is simply not taken. */
async function step(work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
  }
}

export class SandboxPlayer {
  private readonly periodic = new Periodic(
    () => this.tick(),
    (err) => this.logger?.error({ err }, "sandbox play failed"),
  );

  /** When the sandbox's clock started: the services' time when this player was made. */
  private readonly origin: number;

  constructor(
    private readonly services: OrderServices & Pick<Services, "blobs">,
    private readonly logger?: { error(obj: object, msg: string): void },
  ) {
    this.origin = services.now().getTime();
  }

  /** The sandbox's clock: the services' clock, run SANDBOX_CLOCK_SPEED times as fast since this player
   * started (at the default, 1, the services' clock itself). */
  sandboxNow(): Date {
    const elapsed = this.services.now().getTime() - this.origin;
    return new Date(this.origin + elapsed * this.services.config.SANDBOX_CLOCK_SPEED);
  }

  /** Answers the sandbox offers and moves on the sandbox jobs that waited a step; an accepted windowed
   * job waits for its window. */
  async tick(): Promise<void> {
    const { store } = this.services;
    const cutoff = new Date(this.services.now().getTime() - SANDBOX_STEP_MS).toISOString();
    const offers = await store.orders.sandboxOffers(cutoff, 100);
    const orders = new Map((await store.orders.byIds(offers.map((o) => o.order_id))).map((o) => [o.id, o]));
    for (const offer of offers) await this.answer(offer, orders.get(offer.order_id));
    for (const order of await store.orders.sandboxOrdersIn(
      ["accepted", "en_route", "on_site", "completed"],
      cutoff,
      100,
      this.sandboxNow().toISOString(),
    )) {
      const contractorId = order.contractor_id;
      if (!contractorId) continue;
      if (order.status === "completed") {
        await step(() => this.invoice(order, contractorId));
        continue;
      }
      let report: ProgressReport =
        order.status === "accepted"
          ? { status: "en_route", eta_minutes: 20 }
          : order.status === "en_route"
            ? { status: "on_site", position: phonePosition(order, "on_site") }
            : order.description.includes(SANDBOX_MARKERS.cannotComplete)
              ? { status: "cannot_complete", reason: "could not complete (as the description asked)" }
              : {
                  status: "completed",
                  final_cost_cents: Number(order.agreed_price_cents ?? order.estimated_cost_cents),
                  position: phonePosition(order, "completed"),
                };
      if (report.status === "completed") {
        // The proof a real contractor leaves: a photo of the work and the site contact's signature, then
        // the job's checklist (a photo item answered with that photo).
        const photo = await this.addProof(order, contractorId).catch((error: unknown) => {
          if (error instanceof ApiError) return null;
          throw error;
        });
        const checklist = await this.answerChecklist(contractorId, order, photo);
        // The job changed meanwhile (its checklist refused the answers): the next round sees it as it is.
        if (checklist === "refused") continue;
        if (checklist === "photo_missing") {
          report = {
            status: "cannot_complete",
            reason: "the checklist asks for a photo the sandbox's contractor could not add",
          };
        }
      }
      await step(() => reportProgress(this.services, sandbox(contractorId), order.id, report, actor));
    }
  }

  /** A sandbox contractor's answer to its offer: as the description asks, a counter now and then
   * (sandbox-counter.ts), else an acceptance. */
  private async answer(
    offer: { id: string; contractor_id: string },
    order: Order | undefined,
  ): Promise<void> {
    const description = order?.description ?? "";
    if (description.includes(SANDBOX_MARKERS.noAnswer)) return; // left to expire
    if (description.includes(SANDBOX_MARKERS.decline)) {
      await settleOffer(
        this.services,
        offer.id,
        "declined",
        actor,
        "declined by the sandbox (as the description asked)",
      );
      return;
    }
    const price = order ? await this.counterPrice(order) : null;
    const contractor = sandbox(offer.contractor_id);
    if (price === null) {
      await step(() => acceptOffer(this.services, contractor, offer.id, actor));
      return;
    }
    await step(() =>
      counterOffer(this.services, {
        offerId: offer.id,
        contractor,
        priceCents: price,
        window: null,
        note: "Parts cost more around here.",
        actor,
      }),
    );
  }

  /** The price this order's offer is countered with (sandbox-counter.ts), or null: accepted. */
  private async counterPrice(order: Order): Promise<number | null> {
    const policy = await this.services.store.counters.policy(order.account_id, order.livemode);
    return sandboxCounterPrice(order, policy ?? null);
  }

  /** The job's itemised invoice (sandbox-invoice.ts), then the account's auto-approval policy applied to
   * it, as when a contractor invoices through the API. */
  private async invoice(order: Order, contractorId: string): Promise<void> {
    const itemised = itemise(sandboxInvoiceLines(order));
    const bill = Array.isArray(itemised)
      ? Number(order.final_cost_cents ?? order.estimated_cost_cents)
      : itemised;
    const invoiced = await invoice(this.services, sandbox(contractorId), order.id, bill, actor);
    await applyInvoicePolicy(this.services, invoiced);
  }

  /** A generated photo and signature, added as the job's contractor would (once each); the photo's id. */
  private async addProof(order: Order, contractorId: string): Promise<string | null> {
    const uploader = `contractor:${contractorId}` as const;
    const held = await this.services.store.attachments.ofOrder(order.id);
    const access = { order, actor: uploader, role: "contractor" as const };
    let photo = held.find((a) => a.kind === "photo" && a.uploader === uploader)?.id ?? null;
    if (photo === null) {
      const added = await storeAttachment(this.services, access, {
        bytes: await sandboxPhoto(order.id, TRADES[order.trade]?.name ?? order.trade),
        filename: "sandbox-photo.jpg",
        fields: { kind: "photo", caption: "The work done (a generated sandbox photo)" },
      });
      photo = added.id;
    }
    if (!held.some((a) => a.kind === "signature")) {
      await storeAttachment(this.services, access, {
        bytes: await sandboxSignature(order.id),
        filename: "signature.png",
        fields: { kind: "signature", signer_name: sandboxSigner(order.id) },
      });
    }
    return photo;
  }

  /** Answers the job's checklist before completing it, as a contractor on site would: every item it
   * can, then whether a required one is left (a photo). Read first, so a job without a checklist (the
   * most) costs no write of its own: its completion writes none either. */
  private async answerChecklist(
    contractorId: string,
    order: Order,
    photo: string | null,
  ): Promise<"answered" | "photo_missing" | "refused"> {
    const { store, now } = this.services;
    const { checklist } = await checklistOf(store, order, now());
    const held = new Set((await store.checklists.answers(order.id)).map((a) => a.itemId));
    const answers = simulatedAnswers(checklist.items, held, photo, "Done (sandbox)");
    if (answers.length === 0) {
      return unansweredRequired(checklist, held).length === 0 ? "answered" : "photo_missing";
    }
    // Fixes the checklist, from the same templates unless one changed meanwhile (then an item is not
    // found, and the next round answers the checklist as fixed).
    const saved = await saveAnswers(this.services, sandbox(contractorId), order.id, answers);
    if (saved instanceof ApiError) return "refused";
    const answered = new Set(saved.answers.map((a) => a.itemId));
    return unansweredRequired(saved.checklist, answered).length === 0 ? "answered" : "photo_missing";
  }

  start(intervalMs = SANDBOX_PLAY_MS): void {
    this.periodic.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
