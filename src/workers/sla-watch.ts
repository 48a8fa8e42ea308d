// The service-level clocks' watch: every SLA_WATCH_INTERVAL_MS each process reads the orders whose clocks
// may still fire (storage: slaWatched), judges them with the clocks' rules (domain/orders/sla-clocks.ts)
// on its injectable clock, and fires each due clock through the order's command
// (operations/orders/command-runner.ts fireSlaClocks). The firing is stored on the order by its versioned write,
// so a clock fires once across every process sharing the store and across a restart.

import { dueFirings } from "../domain/orders/sla-clocks.js";
import { fireSlaClocks, type OrderServices } from "../operations/orders/command-runner.js";
import { Periodic } from "./periodic.js";

const SLA_WATCH_MS = 30_000;
/** Orders read per page of a round. */
const PAGE = 500;

export class SlaWatch {
  private readonly periodic = new Periodic(
    () => this.tick(),
    (err) => this.logger?.error({ err }, "service-level watch failed"),
  );

  constructor(
    private readonly services: OrderServices,
    private readonly logger?: { error(obj: object, msg: string): void },
  ) {}

  /** Fires the clocks due now; returns how many events this round fired. */
  async tick(): Promise<number> {
    let fired = 0;
    let after: string | null = null;
    for (;;) {
      const page = await this.services.store.orders.slaWatched(after, PAGE);
      const now = this.services.now();
      for (const order of page) {
        if (dueFirings(order, now).length > 0) fired += await fireSlaClocks(this.services, order.id);
      }
      const last = page[page.length - 1];
      if (!last || page.length < PAGE) return fired;
      after = last.id;
    }
  }

  start(intervalMs = SLA_WATCH_MS): void {
    this.periodic.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
