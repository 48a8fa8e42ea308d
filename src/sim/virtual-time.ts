// The simulator's virtual clock and event queue. Each simulated actor runs as a lane (an async function)
// that sleeps until a virtual time with `until`; the scheduler resumes lanes in virtual-time order. Every
// lane carries its own time (AsyncLocalStorage), so `now()` (given to the services as their clock)
// answers the time of the lane that is running, even while many lanes' operations are in flight at once.
//
// Lanes run concurrently so that their writes share group commits. Two bounds keep that faithful to
// virtual time: at most `concurrency` lanes are in flight, and a lane starts only when its time is within
// `horizonMs` of the earliest lane still in flight or queued. With concurrency 1 the lanes run strictly
// one after another in virtual-time order (ties in the order they were queued).

import { AsyncLocalStorage } from "node:async_hooks";

interface Lane {
  /** The lane's virtual time, ms since the epoch. */
  now: number;
}

interface Wake {
  at: number;
  seq: number;
  lane: Lane;
  resume: () => void;
}

/** A binary min-heap of wake-ups by (time, queue order). */
class WakeQueue {
  private readonly items: Wake[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Wake | undefined {
    return this.items[0];
  }

  push(item: Wake): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(item, items[parent] as Wake)) break;
      items[i] = items[parent] as Wake;
      i = parent;
    }
    items[i] = item;
  }

  pop(): Wake | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && before(items[right] as Wake, items[left] as Wake) ? right : left;
      if (!before(items[child] as Wake, last)) break;
      items[i] = items[child] as Wake;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

function before(a: Wake, b: Wake): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export class VirtualTime {
  private readonly lanes = new AsyncLocalStorage<Lane>();
  private readonly queue = new WakeQueue();
  private readonly inflight = new Set<Lane>();
  private seq = 0;
  private wake: (() => void) | null = null;
  private failure: { error: unknown } | null = null;
  /** The time outside any lane: the earliest lane's time while running, else the start. */
  private outside: number;

  constructor(
    readonly startMs: number,
    /** Lanes waiting for this time or later are never resumed: the simulation ends here. */
    readonly endMs: number,
    private readonly options: { concurrency: number; horizonMs: number },
  ) {
    this.outside = startMs;
  }

  /** The current virtual time: the running lane's (the clock the services are given). */
  readonly now = (): Date => new Date(this.lanes.getStore()?.now ?? this.outside);

  /** Starts `fn` as a lane of its own at virtual time `at`. */
  spawn(at: number, fn: () => Promise<void>): void {
    if (at >= this.endMs) return;
    const lane: Lane = { now: at };
    this.enqueue(at, lane, () => {
      this.lanes.run(lane, () => {
        fn().then(
          () => this.leave(lane),
          (error: unknown) => {
            this.failure ??= { error };
            this.leave(lane);
          },
        );
      });
    });
  }

  /** Sleeps the calling lane until virtual time `at` (never returns when that is past the end). */
  until(at: number): Promise<void> {
    const lane = this.lanes.getStore();
    if (!lane) throw new Error("until() is called from a lane");
    const when = Math.max(at, lane.now);
    this.leave(lane);
    if (when >= this.endMs) return new Promise<void>(() => {}); // the lane is dropped
    return new Promise<void>((resolve) => this.enqueue(when, lane, resolve));
  }

  /**
   * Runs the lanes until none is left before the end. Rejects with the first error a lane threw (after
   * the lanes in flight settled); `onProgress` is told the virtual time reached, now and then.
   */
  async run(onProgress?: (virtualMs: number) => void): Promise<void> {
    let reported = this.startMs;
    for (;;) {
      if (this.failure === null) this.startDue();
      if (this.inflight.size === 0 && (this.failure !== null || this.queue.size === 0)) break;
      if (onProgress && this.outside - reported >= 3_600_000) {
        reported = this.outside;
        onProgress(reported);
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    if (this.failure) throw this.failure.error;
    this.outside = this.endMs;
  }

  private enqueue(at: number, lane: Lane, resume: () => void): void {
    this.queue.push({ at, seq: this.seq++, lane, resume });
  }

  private startDue(): void {
    const { concurrency, horizonMs } = this.options;
    while (this.inflight.size < concurrency) {
      const next = this.queue.peek();
      if (!next) break;
      let earliest = next.at;
      for (const lane of this.inflight) if (lane.now < earliest) earliest = lane.now;
      this.outside = earliest;
      if (next.at > earliest + horizonMs) break;
      this.queue.pop();
      next.lane.now = next.at;
      this.inflight.add(next.lane);
      next.resume();
    }
  }

  private leave(lane: Lane): void {
    this.inflight.delete(lane);
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
