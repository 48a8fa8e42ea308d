// The offer-deadline sweeper. Deadlines live in the store: every process sweeps due offers (and
// counter-offers, which have deadlines of their own) every
// OFFER_SWEEP_MS and settles each as expired through the order's command (operations/orders/command-runner.ts),
// whose conditional write lets exactly one sweeper settle it, so a restart neither loses a deadline nor
// fires one twice.

import { endCounter, type OrderServices, settleOffer } from "../operations/orders/command-runner.js";
import { Periodic } from "./periodic.js";

export const OFFER_SWEEP_MS = 1_000;
/** Due offers settled per sweep; the next sweep takes the rest. */
const SWEEP_BATCH = 100;

export class OfferSweeper {
  private readonly periodic = new Periodic(
    () => this.tick(),
    (err) => this.logger?.error({ err }, "offer sweep failed"),
  );

  constructor(
    private readonly services: OrderServices,
    private readonly logger?: { error(obj: object, msg: string): void },
  ) {}

  /** Expires the offers and the counter-offers due now; returns how many this sweep settled. */
  async tick(): Promise<number> {
    const now = this.services.now().toISOString();
    let settled = 0;
    for (const offer of await this.services.store.orders.dueOffers(now, SWEEP_BATCH)) {
      if (await settleOffer(this.services, offer.id, "expired", "system:dispatch")) settled++;
    }
    // A counter unanswered by its deadline moves the cascade on as a decline does.
    for (const counter of await this.services.store.counters.due(now, SWEEP_BATCH)) {
      const outcome = await endCounter(this.services, counter.order_id, "expired", "system:dispatch", null);
      if (outcome.kind === "committed") settled++;
    }
    return settled;
  }

  start(intervalMs = OFFER_SWEEP_MS): void {
    this.periodic.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
