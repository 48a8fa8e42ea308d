// Keeps the in-memory contractor index in step with the store: loaded at start, reloaded periodically
// (so CLI imports reach running servers), and told about the jobs this process assigns.

import { ContractorIndex } from "../domain/contractor-index.js";
import type { Store } from "../storage/store.js";

/** Order statuses in which an order occupies its contractor's capacity. */
export const ACTIVE_ORDER_STATUSES = ["assigned"] as const;

export class ContractorPool {
  readonly index = new ContractorIndex();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly store: Store) {}

  async load(): Promise<void> {
    const [contractors, jobs] = await Promise.all([
      this.store.loadContractors(),
      this.store.activeJobCounts(ACTIVE_ORDER_STATUSES),
    ]);
    this.index.replace(contractors, jobs);
  }

  startRefresh(intervalMs: number, onError: (error: unknown) => void): void {
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.load().catch(onError);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
