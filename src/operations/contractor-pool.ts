// Keeps the in-memory contractor index in step with the store: loaded at start, reloaded periodically
// (so CLI imports reach running servers), and told about the jobs this process assigns.

import { ContractorIndex } from "../domain/contractor-index.js";
import type { Store } from "../storage/store.js";

export class ContractorPool {
  readonly index = new ContractorIndex();
  private timer: NodeJS.Timeout | undefined;
  private version: string | null = null;

  constructor(private readonly store: Store) {}

  async load(): Promise<void> {
    const [version, contractors, jobs] = await Promise.all([
      this.store.contractors.version(),
      this.store.contractors.load(),
      this.store.contractors.activeJobCounts(),
    ]);
    this.index.replace(contractors, jobs);
    this.version = version;
  }

  /**
   * Reloads the pool when the stored pool changed since the last load (a cheap count/max query), and the
   * jobs each contractor holds in any case: jobs end (completed, cancelled, declined) in other processes
   * too, and the store's counter is the authority.
   */
  async refresh(): Promise<boolean> {
    if ((await this.store.contractors.version()) === this.version) {
      this.index.syncJobs(await this.store.contractors.activeJobCounts());
      return false;
    }
    await this.load();
    return true;
  }

  startRefresh(intervalMs: number, onError: (error: unknown) => void): void {
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.refresh().catch(onError);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
