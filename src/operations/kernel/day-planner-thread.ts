// The optimiser's worker thread: plans the days day-planner.ts sends it, one at a time, off the server's
// event loop. A task is plain data (structured clone): where the day's orders are (the store's read
// source, read here on a connection of the thread's own, and made into jobs here), or the jobs themselves
// (a store the thread cannot reach: in memory), the travel model (rebuilt here), the seed, the budget, the
// deadline in epoch milliseconds and the proposal's frame. The contractors come from the server's
// in-memory pool: those of the day's state, sent as soon as the server has prepared them (while the thread
// reads), then, asked for, any holder of one of the jobs not among them. It answers the proposal as JSON text (its id, hash and body; the hash is SHA-256 of
// the body's canonical JSON) and the versions of the orders planned, also as text: for a 3,000-job day,
// reading and preparing the orders, building, hashing and serialising the proposal held the server's
// event loop for 100-250 ms, and a structured clone of the proposal's 3,000 entries for tens more.

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
import {
  type DayJobs,
  DayJobsBuilder,
  type DayJobsOptions,
  inPlanningOrder,
} from "../../domain/schedule/day-jobs.js";
import { type ProposalFrame, proposalBody } from "../../domain/schedule/proposal.js";
import { type TravelModel, travelOf } from "../../domain/travel-time.js";
import { newSortableId } from "../../ids.js";
import { type DayReader, openDayReader } from "../../storage/day-reader.js";
import type { ReadSource, ScheduledCursor, ScheduledOrder } from "../../storage/store.js";

/** Where the thread reads the day: the store's read source and what the jobs are made with. */
interface DayRead extends DayJobsOptions {
  readonly source: ReadSource;
  readonly livemode: boolean;
  readonly state?: string | undefined;
}

/** What a run plans and the frame of the proposal it answers: plain data, sent to the thread as it is. */
export interface DayPlanRequest {
  /** The day's orders to read (`read`), or its jobs as made on the event loop (`jobs`). */
  readonly day: { readonly read: DayRead } | { readonly jobs: readonly DayJob[] };
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
  readonly kind: "plan";
  readonly id: number;
  /** Tests only: the thread waits until `gate[0]` is not 0 before planning (day-planner.ts). */
  readonly gate?: Int32Array;
}

/** Contractors who work the day: the state's (sent unasked), or those of the thread's `holders`. */
export interface ContractorsMessage {
  readonly kind: "contractors";
  readonly id: number;
  readonly contractors: readonly DayContractor[];
}

export type PlanReply =
  | { readonly id: 0; readonly kind: "ready" }
  | { readonly id: number; readonly kind: "started" }
  /** Those holding one of the day's jobs now who are not among the contractors sent: asked for. */
  | { readonly id: number; readonly kind: "holders"; readonly holders: readonly string[] }
  | { readonly id: number; readonly kind: "planned"; readonly proposal: PlannedProposal }
  /** The read failed (the store is down, busy, ...): its message and code, so that the server answers it
   * as it answers the same error of its own connection (503 when the store cannot serve). */
  | { readonly id: number; readonly kind: "failed"; readonly message: string; readonly code?: string };

/** The proposal as JSON text, and what the server keeps beside it. */
export interface PlannedProposal {
  readonly proposalId: string;
  /** SHA-256 (hex) of the body's canonical JSON. */
  readonly hash: string;
  /** The proposal ({ proposal_id, hash, ...body }) as JSON text: the response and the stored row. */
  readonly json: string;
  /** The version of each order planned, as JSON text (apply checks them); null when the jobs were sent. */
  readonly basisJson: string | null;
  /** The contractors routed (apply checks their standing too). */
  readonly routed: readonly string[];
}

/** Open orders read (of the state, or the mode): a day's work stays well under it. */
const SCHEDULED_ORDERS_READ = 20_000;
/** Open orders read a statement at a time. */
const SCHEDULED_PAGE = 1000;

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

/** One reader per source, opened on first use and kept while the thread lives. */
const readers = new Map<string, DayReader>();

function readerOf(source: ReadSource): DayReader {
  const key = JSON.stringify(source);
  let reader = readers.get(key);
  if (reader === undefined) {
    reader = openDayReader(source);
    readers.set(key, reader);
  }
  return reader;
}

/** The day's open orders of the mode (of the state when given), made into jobs. */
async function readDay(read: DayRead): Promise<DayJobs> {
  const reader = readerOf(read.source);
  const orders: ScheduledOrder[] = [];
  let after: ScheduledCursor | null = null;
  for (;;) {
    const page = await reader.scheduledPage(read.livemode, read.state, after, SCHEDULED_PAGE);
    for (const order of page) orders.push(order);
    const last = page.at(-1);
    if (last === undefined || page.length < SCHEDULED_PAGE || orders.length >= SCHEDULED_ORDERS_READ) break;
    after = { state: last.state, status: last.status, id: last.id };
  }
  const builder = new DayJobsBuilder(read);
  for (const order of inPlanningOrder(orders.slice(0, SCHEDULED_ORDERS_READ))) builder.add(order);
  return builder.out;
}

/** The contractors the server sent for each task (the state's first, then the holders asked for), and
 * the task waiting for its next list. */
const arrived = new Map<number, Array<readonly DayContractor[]>>();
const waiting = new Map<number, (contractors: readonly DayContractor[]) => void>();

function nextContractors(id: number): Promise<readonly DayContractor[]> {
  const list = arrived.get(id)?.shift();
  if (list !== undefined) return Promise.resolve(list);
  return new Promise((resolve) => waiting.set(id, resolve));
}

function received(message: ContractorsMessage): void {
  const resolve = waiting.get(message.id);
  waiting.delete(message.id);
  if (resolve) resolve(message.contractors);
  else arrived.set(message.id, [...(arrived.get(message.id) ?? []), message.contractors]);
}

/** The state's contractors, and those holding one of the jobs who are not among them (asked for: the
 * server answers those of them who work the day). */
async function contractorsFor(id: number, jobs: readonly DayJob[]): Promise<readonly DayContractor[]> {
  const ofState = await nextContractors(id);
  const known = new Set(ofState.map((c) => c.id));
  const missing = new Set<string>();
  for (const job of jobs)
    if (job.contractorId !== null && !known.has(job.contractorId)) missing.add(job.contractorId);
  if (missing.size === 0) return ofState;
  parentPort?.postMessage({ id, kind: "holders", holders: [...missing] } satisfies PlanReply);
  return [...ofState, ...(await nextContractors(id))];
}

async function plan(task: PlanTask): Promise<PlannedProposal> {
  const clock = () => performance.timeOrigin + performance.now();
  const day = "read" in task.day ? await readDay(task.day.read) : null;
  const jobs = day === null ? (task.day as { jobs: readonly DayJob[] }).jobs : day.jobs;
  const pool = await contractorsFor(task.id, jobs);
  // Already past its deadline (the day's reading and preparation spent the limit): nothing tried.
  const expired = clock() >= task.deadline;
  const contractors = expired ? [] : usefulFor(pool, jobs);
  const plan: DayPlan = expired
    ? untriedDay(jobs)
    : planDay(jobs, contractors, {
        travel: travelOf(task.travel),
        seed: task.seed,
        iterations: task.iterations,
        now: clock,
        deadline: task.deadline,
      });
  const frame =
    day === null ? task.frame : { ...task.frame, unassigned: [...task.frame.unassigned, ...day.unassigned] };
  const body = proposalBody(plan, jobs, contractors, frame);
  const hash = createHash("sha256").update(canonicalJson(body)).digest("hex");
  const proposalId = newSortableId("prp");
  return {
    proposalId,
    hash,
    json: JSON.stringify({ proposal_id: proposalId, hash, ...body }),
    basisJson: day === null ? null : JSON.stringify(day.basis),
    routed: body.routes.map((r) => r.contractor_id),
  };
}

function run(task: PlanTask): void {
  parentPort?.postMessage({ id: task.id, kind: "started" } satisfies PlanReply);
  if (task.gate) Atomics.wait(task.gate, 0, 0);
  const done = () => {
    arrived.delete(task.id);
    waiting.delete(task.id);
  };
  plan(task).then(
    (proposal) => {
      done();
      parentPort?.postMessage({ id: task.id, kind: "planned", proposal } satisfies PlanReply);
    },
    (error: unknown) => {
      done();
      const message = error instanceof Error ? error.message : String(error);
      const code = (error as { code?: unknown } | null)?.code;
      parentPort?.postMessage({
        id: task.id,
        kind: "failed",
        message,
        ...(typeof code === "string" ? { code } : {}),
      } satisfies PlanReply);
    },
  );
}

parentPort?.postMessage({ id: 0, kind: "ready" } satisfies PlanReply);
parentPort?.on("message", (message: PlanTask | ContractorsMessage) => {
  if (message.kind === "plan") {
    run(message);
    return;
  }
  received(message);
});
