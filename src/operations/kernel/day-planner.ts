// Runs the optimised day's planning (domain/schedule/day.ts) on worker threads, off the event loop: one
// thread per mode (live, test), started on first use and kept (unreferenced, so it never holds the
// process open), and one run per mode at a time in this process. A second call of a mode while one runs
// is refused (409 optimizer_busy, Retry-After: the running call's time left) rather than queued: a run
// holds a core for up to its time limit, so a queue would turn 200 concurrent calls into minutes of
// waiting and every caller's time limit into a fiction. With several server processes (cluster,
// PostgreSQL), each process runs one per mode. The thread reads the day's orders on a connection of its
// own (storage/day-reader.ts) where the store has a read source, and answers the proposal as JSON text;
// this side sends it the day's contractors and answers its questions for more.
//
// The thread's module is day-planner-thread.ts: compiled JavaScript beside this file in dist/, and the
// TypeScript source under vitest or `node --import tsx`, which a worker loads through tsx's loader
// (registered in the thread itself: a worker does not inherit the parent's loader hooks).

import { Worker } from "node:worker_threads";
import type { DayContractor } from "../../domain/schedule/day.js";
import { ApiError } from "../../errors.js";
import type {
  ContractorsMessage,
  DayPlanRequest,
  PlannedProposal,
  PlanReply,
  PlanTask,
} from "./day-planner-thread.js";

type Mode = "live" | "test";

export interface DayPlannerOptions {
  /** Tests: the thread waits at this gate (an Int32Array on a SharedArrayBuffer) until `gate[0]` is not
   * 0, after saying it started (`onStarted`): a run held in flight on purpose. */
  readonly gate?: Int32Array;
  readonly onStarted?: (mode: Mode) => void;
}

/** The same instant in every thread: what deadlines are given in. */
export function plannerClock(): number {
  return performance.timeOrigin + performance.now();
}

/** A run that outlives its deadline by this much is a bug: its thread is ended and the call fails. */
const OVERRUN_MS = 10_000;

interface Pending {
  readonly resolve: (proposal: PlannedProposal) => void;
  readonly reject: (error: Error) => void;
  /** Answers the thread's `holders`. */
  readonly holders: Holders;
}

/** The day's contractors: those of its state (all of the mode's without one), sent to the thread as soon
 * as they are prepared, and `holders`, asked for by the thread for those of the jobs' holders (by id)
 * who are not among them. */
export interface DayContractors {
  readonly ofState: Promise<readonly DayContractor[]>;
  readonly holders: Holders;
}

type Holders = (ids: readonly string[]) => Promise<readonly DayContractor[]>;

export class DayPlanner {
  private readonly running = new Map<Mode, number>();
  private readonly threads = new Map<Mode, Worker>();
  private readonly ready = new Map<Mode, Promise<void>>();
  private readonly pending = new Map<number, Pending & { mode: Mode }>();
  private nextId = 1;

  constructor(private readonly options: DayPlannerOptions = {}) {}

  /**
   * Runs `work` as the mode's one run until `deadline` (plannerClock), or refuses with 409 optimizer_busy
   * while another of the mode runs. `work` reads the day and plans it with `plan`.
   */
  async exclusive<T>(livemode: boolean, deadline: number, work: (plan: Planning) => Promise<T>): Promise<T> {
    const mode: Mode = livemode ? "live" : "test";
    const other = this.running.get(mode);
    if (other !== undefined) {
      const seconds = Math.max(1, Math.ceil((other - plannerClock()) / 1000));
      throw new ApiError(
        "optimizer_busy",
        `Another optimisation of this mode's day is running; retry in ${seconds} s.`,
        { headers: { "Retry-After": String(seconds) }, extra: { retry_after_seconds: seconds } },
      );
    }
    this.running.set(mode, deadline);
    try {
      return await work((request, contractors) => this.plan(mode, request, contractors));
    } finally {
      this.running.delete(mode);
    }
  }

  /** Starts both modes' threads and waits until they can plan: a cold thread loads its modules (tens of
   * milliseconds compiled, seconds from the TypeScript source) inside the first call's time limit. */
  async warm(): Promise<void> {
    for (const mode of ["live", "test"] as const) this.threadOf(mode);
    await Promise.all(this.ready.values());
  }

  /** Ends the threads (shutdown); a later run starts them again. */
  async close(): Promise<void> {
    const threads = [...this.threads.values()];
    this.threads.clear();
    this.ready.clear();
    await Promise.all(threads.map((t) => t.terminate()));
  }

  private plan(mode: Mode, request: DayPlanRequest, contractors: DayContractors): Promise<PlannedProposal> {
    const thread = this.threadOf(mode);
    const id = this.nextId++;
    const task: PlanTask = {
      kind: "plan",
      id,
      ...request,
      ...(this.options.gate ? { gate: this.options.gate } : {}),
    };
    return new Promise<PlannedProposal>((resolve, reject) => {
      const overrun = setTimeout(
        () => {
          this.fail(mode, new Error(`the day planner's thread overran its deadline by ${OVERRUN_MS} ms`));
          void thread.terminate();
        },
        Math.max(0, request.deadline - plannerClock()) + OVERRUN_MS,
      );
      overrun.unref();
      this.pending.set(id, {
        mode,
        holders: contractors.holders,
        resolve: (proposal) => {
          clearTimeout(overrun);
          resolve(proposal);
        },
        reject: (error) => {
          clearTimeout(overrun);
          reject(error);
        },
      });
      thread.postMessage(task);
      contractors.ofState.then(
        (list) => this.send(thread, id, list),
        (error: Error) => this.reject(id, error),
      );
    });
  }

  private threadOf(mode: Mode): Worker {
    const known = this.threads.get(mode);
    if (known) return known;
    const thread = startThread();
    thread.unref();
    let isReady: () => void = () => {};
    this.ready.set(
      mode,
      new Promise<void>((resolve) => {
        isReady = resolve;
      }),
    );
    thread.on("message", (reply: PlanReply) => {
      if (reply.kind === "ready") {
        isReady();
        return;
      }
      if (reply.kind === "started") {
        this.options.onStarted?.(mode);
        return;
      }
      const waiting = this.pending.get(reply.id);
      if (waiting === undefined) return;
      if (reply.kind === "holders") {
        waiting.holders(reply.holders).then(
          (list) => this.send(thread, reply.id, list),
          (error: Error) => this.reject(reply.id, error),
        );
        return;
      }
      this.pending.delete(reply.id);
      if (reply.kind === "failed") waiting.reject(threadFailure(reply.message, reply.code));
      else waiting.resolve(reply.proposal);
    });
    thread.on("error", (error) => this.fail(mode, error));
    thread.on("exit", (code) => this.fail(mode, new Error(`the day planner's thread exited (${code})`)));
    this.threads.set(mode, thread);
    return thread;
  }

  private send(thread: Worker, id: number, contractors: readonly DayContractor[]): void {
    if (this.pending.has(id))
      thread.postMessage({ kind: "contractors", id, contractors } satisfies ContractorsMessage);
  }

  private reject(id: number, error: Error): void {
    const waiting = this.pending.get(id);
    this.pending.delete(id);
    waiting?.reject(error);
  }

  /** Fails the mode's waiting run and forgets its thread (the next run starts another). */
  private fail(mode: Mode, error: Error): void {
    this.threads.delete(mode);
    this.ready.delete(mode);
    for (const [id, waiting] of this.pending) {
      if (waiting.mode !== mode) continue;
      this.pending.delete(id);
      waiting.reject(error);
    }
  }
}

/** Plans one day on the run's thread with `contractors`: the proposal as JSON text. */
export type Planning = (request: DayPlanRequest, contractors: DayContractors) => Promise<PlannedProposal>;

/** The thread's failure as an error of this side, with its code (store-errors.ts reads it: a store that
 * cannot serve answers 503, as on the server's own connection). */
function threadFailure(message: string, code: string | undefined): Error {
  const error = new Error(`the day planner's thread failed: ${message}`);
  return code === undefined ? error : Object.assign(error, { code });
}

/** The thread, from the compiled module beside this one, or from the TypeScript source through tsx. */
function startThread(): Worker {
  const here = import.meta.url;
  if (!here.endsWith(".ts")) return new Worker(new URL("./day-planner-thread.js", here));
  const source = new URL("./day-planner-thread.ts", here).href;
  return new Worker(
    `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`,
    { eval: true },
  );
}
