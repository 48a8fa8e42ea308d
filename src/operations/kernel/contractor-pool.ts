// Keeps the in-memory contractor index in step with the store: loaded at start, reloaded periodically
// (so CLI imports reach running servers), and told about the jobs this process assigns.

import { ContractorIndex } from "../../domain/contractor-index.js";
import type { Booked } from "../../domain/matching.js";
import { greatCircleTravel, type TravelTime } from "../../domain/travel-time.js";
import type { Store } from "../../storage/store.js";

export class ContractorPool {
  readonly index = new ContractorIndex();
  private timer: NodeJS.Timeout | undefined;
  private version: string | null = null;

  constructor(
    private readonly store: Store,
    /** The service's one travel time (matching, availability, the optimised day, the writer's fit). */
    readonly travel: TravelTime = greatCircleTravel,
  ) {}

  /** The time the contractors' jobs hold, as the matcher reads it. */
  booked(): Booked {
    return { held: this.index.held, travel: this.travel };
  }

  async load(): Promise<void> {
    const [version, contractors, jobs, held] = await Promise.all([
      this.store.contractors.version(),
      this.store.contractors.load(),
      this.store.contractors.activeJobCounts(),
      this.store.contractors.commitments(),
    ]);
    this.index.replace(contractors, jobs, held);
    this.version = version;
  }

  /**
   * Reloads the pool when the stored pool changed since the last load (a cheap count/max query), and the
   * jobs each contractor holds and their time in any case: jobs end (completed, cancelled, declined) in
   * other processes too, and the store's ledger is the authority.
   */
  async refresh(): Promise<boolean> {
    if ((await this.store.contractors.version()) === this.version) {
      const [jobs, held] = await Promise.all([
        this.store.contractors.activeJobCounts(),
        this.store.contractors.commitments(),
      ]);
      this.index.syncJobs(jobs);
      this.index.syncCommitments(held);
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
