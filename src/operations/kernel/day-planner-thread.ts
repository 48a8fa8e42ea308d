// The optimiser's worker thread: plans the days day-planner.ts sends it, one at a time, off the server's
// event loop. A task is plain data (structured clone): the day's jobs and contractors, the travel model
// (rebuilt here), the seed, the budget and the deadline in epoch milliseconds. It imports only the pure
// planner (no ZIP data), so the thread starts in a few tens of milliseconds.

import { parentPort } from "node:worker_threads";
import {
  canServe,
  type DayContractor,
  type DayJob,
  type DayPlan,
  planDay,
} from "../../domain/schedule/day.js";
import { type TravelModel, travelOf } from "../../domain/travel-time.js";

export interface PlanTask {
  readonly id: number;
  readonly jobs: readonly DayJob[];
  /** Every contractor who works the day; those who could take none of the jobs are left out here. */
  readonly contractors: readonly DayContractor[];
  readonly travel: TravelModel;
  readonly seed: number;
  readonly iterations: number;
  /** performance.timeOrigin + performance.now() at which to stop (the same instant in every thread). */
  readonly deadline: number;
  /** Tests only: the thread waits until `gate[0]` is not 0 before planning (day-planner.ts). */
  readonly gate?: Int32Array;
}

export type PlanReply =
  | { readonly id: 0; readonly kind: "ready" }
  | { readonly id: number; readonly kind: "started" }
  | { readonly id: number; readonly kind: "planned"; readonly plan: DayPlan };

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

function plan(task: PlanTask): DayPlan {
  const clock = () => performance.timeOrigin + performance.now();
  return planDay(task.jobs, usefulFor(task.contractors, task.jobs), {
    travel: travelOf(task.travel),
    seed: task.seed,
    iterations: task.iterations,
    now: clock,
    deadline: task.deadline,
  });
}

parentPort?.postMessage({ id: 0, kind: "ready" } satisfies PlanReply);
parentPort?.on("message", (task: PlanTask) => {
  parentPort?.postMessage({ id: task.id, kind: "started" } satisfies PlanReply);
  if (task.gate) Atomics.wait(task.gate, 0, 0);
  parentPort?.postMessage({ id: task.id, kind: "planned", plan: plan(task) } satisfies PlanReply);
});
