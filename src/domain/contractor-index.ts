// An in-memory index of the contractor pools by (pool, trade, state), so matching scans only the
// contractors that can possibly take a job, and a count of each contractor's active jobs.

import type { Contractor, Pool } from "./contractor.js";
import type { StateCode } from "./states.js";
import type { TradeCode } from "./trades.js";

const EMPTY: readonly Contractor[] = Object.freeze([]);

function bucketKey(pool: Pool, trade: TradeCode, state: StateCode): string {
  return `${pool}|${trade}|${state}`;
}

export class ContractorIndex {
  private buckets = new Map<string, Contractor[]>();
  private byId = new Map<string, Contractor>();
  private activeJobs = new Map<string, number>();

  /** Replaces the whole pool content (contractors and active-job counts) at once. */
  replace(contractors: Iterable<Contractor>, activeJobs: Iterable<[string, number]>): void {
    const buckets = new Map<string, Contractor[]>();
    const byId = new Map<string, Contractor>();
    for (const c of contractors) {
      byId.set(c.id, c);
      for (const trade of c.trades) {
        for (const state of c.states) {
          const key = bucketKey(c.pool, trade, state);
          const list = buckets.get(key);
          if (list) list.push(c);
          else buckets.set(key, [c]);
        }
      }
    }
    this.buckets = buckets;
    this.byId = byId;
    this.activeJobs = new Map(activeJobs);
  }

  candidates(pool: Pool, trade: TradeCode, state: StateCode): readonly Contractor[] {
    return this.buckets.get(bucketKey(pool, trade, state)) ?? EMPTY;
  }

  get(id: string): Contractor | undefined {
    return this.byId.get(id);
  }

  size(pool?: Pool): number {
    if (!pool) return this.byId.size;
    let n = 0;
    for (const c of this.byId.values()) if (c.pool === pool) n++;
    return n;
  }

  readonly jobsOf = (contractorId: string): number => this.activeJobs.get(contractorId) ?? 0;

  addJob(contractorId: string): void {
    this.activeJobs.set(contractorId, this.jobsOf(contractorId) + 1);
  }
}
