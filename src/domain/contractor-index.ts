// An in-memory index of the contractor pools by (pool, trade, state), each bucket a CandidateSet ready for
// matching, and per contractor slot, shared by every bucket (a contractor working several trades or
// states sits in several buckets but has one count and one time): its active-job count and the time its
// jobs hold (commitments.ts). Both are this process's view, kept by what it commits and refreshed from
// the store; the store decides at commit.

import { type CandidateSet, candidateSet } from "./candidate-set.js";
import { type Commitment, withCommitment, withoutCommitment } from "./commitments.js";
import type { Contractor, Pool } from "./contractor.js";
import type { TradeCode } from "./trades.js";
import type { StateCode } from "./us-regions.js";

const EMPTY = candidateSet([]);

function bucketKey(pool: Pool, trade: TradeCode, state: StateCode): string {
  return `${pool}|${trade}|${state}`;
}

export class ContractorIndex {
  private buckets = new Map<string, CandidateSet>();
  private slots = new Map<string, number>();
  private bySlot: Contractor[] = [];
  /** Active jobs per contractor slot. */
  jobs: Int32Array = new Int32Array(0);
  /** The time each contractor slot's jobs hold, in start order (undefined: none). */
  held: Array<Commitment[] | undefined> = [];

  /** Replaces the whole pool content (contractors, active-job counts, held time) at once. */
  replace(
    contractors: Iterable<Contractor>,
    activeJobs: Iterable<[string, number]>,
    commitments: Iterable<[string, Commitment]> = [],
  ): void {
    const lists = new Map<
      string,
      { contractors: Contractor[]; slots: number[]; trade: TradeCode; state: StateCode }
    >();
    const slots = new Map<string, number>();
    const bySlot: Contractor[] = [];
    for (const c of contractors) {
      const slot = slots.size;
      slots.set(c.id, slot);
      bySlot.push(c);
      for (const trade of c.trades) {
        for (const state of c.states) {
          const key = bucketKey(c.pool, trade, state);
          let list = lists.get(key);
          if (!list) {
            list = { contractors: [], slots: [], trade, state };
            lists.set(key, list);
          }
          list.contractors.push(c);
          list.slots.push(slot);
        }
      }
    }
    const jobs = new Int32Array(slots.size);
    for (const [id, n] of activeJobs) {
      const slot = slots.get(id);
      if (slot !== undefined) jobs[slot] = n;
    }
    const buckets = new Map<string, CandidateSet>();
    for (const [key, list] of lists) {
      buckets.set(key, candidateSet(list.contractors, list.slots, { trade: list.trade, state: list.state }));
    }
    this.buckets = buckets;
    this.slots = slots;
    this.bySlot = bySlot;
    this.jobs = jobs;
    this.syncCommitments(commitments);
  }

  /** Every contractor loaded, in load order. */
  all(): readonly Contractor[] {
    return this.bySlot;
  }

  /** The contractor of an id in the pools (undefined when not loaded). */
  contractorOf(contractorId: string): Contractor | undefined {
    const slot = this.slots.get(contractorId);
    return slot === undefined ? undefined : this.bySlot[slot];
  }

  /** The time a contractor's jobs hold, in start order. */
  heldBy(contractorId: string): readonly Commitment[] | undefined {
    const slot = this.slots.get(contractorId);
    return slot === undefined ? undefined : this.held[slot];
  }

  /** Counts the time of a job as held by the contractor (a block of the same order replaces its last). */
  hold(contractorId: string, c: Commitment): void {
    const slot = this.slots.get(contractorId);
    if (slot !== undefined) this.held[slot] = withCommitment(this.held[slot], c);
  }

  /** Forgets the time the order held of the contractor's. */
  unhold(contractorId: string, orderId: string): void {
    const slot = this.slots.get(contractorId);
    if (slot !== undefined) this.held[slot] = withoutCommitment(this.held[slot], orderId);
  }

  /** Takes the store's commitments of the contractors `ids` (the others' are kept as they are). */
  syncCommitmentsOf(ids: readonly string[], commitments: Iterable<[string, Commitment]>): void {
    const fresh = new Map<number, Commitment[]>();
    for (const id of ids) {
      const slot = this.slots.get(id);
      if (slot !== undefined) fresh.set(slot, []);
    }
    for (const [id, c] of commitments) {
      const slot = this.slots.get(id);
      if (slot !== undefined) fresh.get(slot)?.push(c);
    }
    for (const [slot, list] of fresh) {
      list.sort((a, b) => a.start - b.start);
      this.held[slot] = list.length > 0 ? list : undefined;
    }
  }

  /** Takes the store's commitments (others then hold no time). */
  syncCommitments(commitments: Iterable<[string, Commitment]>): void {
    const held: Array<Commitment[] | undefined> = new Array(this.slots.size);
    for (const [id, c] of commitments) {
      const slot = this.slots.get(id);
      if (slot === undefined) continue;
      const list = held[slot];
      if (list) list.push(c);
      else held[slot] = [c];
    }
    for (const list of held) list?.sort((a, b) => a.start - b.start);
    this.held = held;
  }

  candidates(pool: Pool, trade: TradeCode, state: StateCode): CandidateSet {
    return this.buckets.get(bucketKey(pool, trade, state)) ?? EMPTY;
  }

  jobsOf(contractorId: string): number {
    const slot = this.slots.get(contractorId);
    return slot === undefined ? 0 : (this.jobs[slot] ?? 0);
  }

  addJob(contractorId: string): void {
    const slot = this.slots.get(contractorId);
    if (slot !== undefined) this.jobs[slot] = (this.jobs[slot] ?? 0) + 1;
  }

  /** Takes the store's counts of the jobs each contractor holds (others then hold none). */
  syncJobs(activeJobs: Iterable<[string, number]>): void {
    const jobs = new Int32Array(this.jobs.length);
    for (const [id, n] of activeJobs) {
      const slot = this.slots.get(id);
      if (slot !== undefined) jobs[slot] = n;
    }
    this.jobs = jobs;
  }

  /** Gives back a job taken with addJob whose order was not written after all. */
  releaseJob(contractorId: string): void {
    const slot = this.slots.get(contractorId);
    if (slot !== undefined) this.jobs[slot] = Math.max(0, (this.jobs[slot] ?? 0) - 1);
  }
}
