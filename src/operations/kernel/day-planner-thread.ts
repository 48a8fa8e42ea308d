// The optimiser's worker thread: plans the days day-planner.ts sends it, one at a time, off the server's
// event loop. A task is plain data (structured clone): the day's jobs and contractors, the travel model
// (rebuilt here), the seed, the budget, the deadline in epoch milliseconds and the proposal's frame. It
// answers the proposal's body built from the plan and its hash (SHA-256 of its canonical JSON): for a
// 3,000-job day, building and hashing it held the event loop for tens of milliseconds. It imports only
// the pure planner (no ZIP data), so the thread starts in a few tens of milliseconds.

import { createHash } from "node:crypto";
import { parentPort } from "node:worker_threads";
import { canonicalJson } from "../../canonical-json.js";
import {
  canServe,
  type DayContractor,
  type DayJob,
  type DayPlan,
  planDay,
  untriedDay,
} from "../../domain/schedule/day.js";
import { type ProposalBody, type ProposalFrame, proposalBody } from "../../domain/schedule/proposal.js";
import { type TravelModel, travelOf } from "../../domain/travel-time.js";

/** What a run plans and the frame of the proposal it answers: plain data, sent to the thread as it is. */
export interface DayPlanRequest {
  readonly jobs: readonly DayJob[];
  /** Every contractor who works the day; those who could take none of the jobs are left out here. */
  readonly contractors: readonly DayContractor[];
  readonly travel: TravelModel;
  readonly seed: number;
  readonly iterations: number;
  /** performance.timeOrigin + performance.now() at which to stop (the same instant in every thread). */
  readonly deadline: number;
  /** What the proposal says besides the plan. */
  readonly frame: ProposalFrame;
}

/** A request as the thread receives it. */
export interface PlanTask extends DayPlanRequest {
  readonly id: number;
  /** Tests only: the thread waits until `gate[0]` is not 0 before planning (day-planner.ts). */
  readonly gate?: Int32Array;
}

export type PlanReply =
  | { readonly id: 0; readonly kind: "ready" }
  | { readonly id: number; readonly kind: "started" }
  | { readonly id: number; readonly kind: "planned"; readonly proposal: PlannedProposal };

/** The proposal's body and its hash: SHA-256 (hex) of the body's canonical JSON. */
export interface PlannedProposal {
  readonly body: ProposalBody;
  readonly hash: string;
}

/** The contractors who could take any of the jobs: the others would only grow the travel matrix (a
 * sandbox pool has thousands of contractors, a state's day a few of them). Each looks only at the jobs
 * of its trades and states. */
function usefulFor(contractors: readonly DayContractor[], jobs: readonly DayJob[]): DayContractor[] {
  const pinnedTo = new Set<string | null>();
  const byKind = new Map<string, DayJob[]>();
  for (const job of jobs) {
    if (job.pinned) pinnedTo.add(job.contractorId);
    else {
      const kind = `${job.trade}|${job.state}`;
      const list = byKind.get(kind);
      if (list) list.push(job);
      else byKind.set(kind, [job]);
    }
  }
  return contractors.filter(
    (c) =>
      pinnedTo.has(c.id) ||
      c.trades.some((t) => c.states.some((s) => byKind.get(`${t}|${s}`)?.some((job) => canServe(c, job)))),
  );
}

function plan(task: PlanTask): PlannedProposal {
  const clock = () => performance.timeOrigin + performance.now();
  // Already past its deadline when it arrives (the day's reading and preparation spent the limit):
  // answered at once, nothing tried.
  const expired = clock() >= task.deadline;
  const contractors = expired ? [] : usefulFor(task.contractors, task.jobs);
  const plan: DayPlan = expired
    ? untriedDay(task.jobs)
    : planDay(task.jobs, contractors, {
        travel: travelOf(task.travel),
        seed: task.seed,
        iterations: task.iterations,
        now: clock,
        deadline: task.deadline,
      });
  const body = proposalBody(plan, task.jobs, contractors, task.frame);
  return { body, hash: createHash("sha256").update(canonicalJson(body)).digest("hex") };
}

parentPort?.postMessage({ id: 0, kind: "ready" } satisfies PlanReply);
parentPort?.on("message", (task: PlanTask) => {
  parentPort?.postMessage({ id: task.id, kind: "started" } satisfies PlanReply);
  if (task.gate) Atomics.wait(task.gate, 0, 0);
  parentPort?.postMessage({ id: task.id, kind: "planned", proposal: plan(task) } satisfies PlanReply);
});
