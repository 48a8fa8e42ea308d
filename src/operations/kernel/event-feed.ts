// This process's side of the live event stream: reads the order event log once for every open stream
// each time a commit is signalled (the store's signal: this process's commits, and on PostgreSQL every
// process's, storage/order-event-store.ts), and hands each stream the events of its scope in the log's
// order. A stream that resumes (Last-Event-ID) reads its backlog from the log first, its live events held
// back meanwhile, so it gets every event after the one it names exactly once. On PostgreSQL a read may
// find events not final yet (committed while an older transaction still runs: the log's order is by
// transaction, migration 0048): they are read again shortly, whether or not another commit is signalled.

import {
  type EventPosition,
  type EventScope,
  isAfter,
  type OrderEventLog,
  positionOf,
  type StoredOrderEvent,
} from "../../storage/order-event-store.js";

const PAGE = 500;
/** How soon events held back (not final yet) are read again. */
const HELD_BACK_RETRY_MS = 15;
/** The log is read this often anyway: a commit whose signal was lost (another process died between its
 * commit and its NOTIFY) reaches the streams within this time. */
const SAFETY_READ_MS = 5_000;

/** Whether a caller of `scope` may see `event` (the log's rows carry what it takes to say). */
function inScope(scope: EventScope, event: StoredOrderEvent): boolean {
  if (event.livemode !== (scope.livemode ? 1 : 0)) return false;
  if (scope.accountId !== undefined && event.account_id !== scope.accountId) return false;
  if (scope.contractorId !== undefined) {
    return event.contractor_id === scope.contractorId || event.previous_contractor_id === scope.contractorId;
  }
  return true;
}

class Subscriber {
  ready = false;
  held: StoredOrderEvent[] = [];

  constructor(
    readonly scope: EventScope,
    public last: EventPosition,
    private readonly deliver: (event: StoredOrderEvent) => void,
  ) {}

  /** Hands over `event` (at `at` in the log) unless it has had it already. */
  send(event: StoredOrderEvent, at: EventPosition = positionOf(event)): void {
    if (!isAfter(at, this.last)) return;
    this.last = at;
    this.deliver(event);
  }

  offer(event: StoredOrderEvent, at: EventPosition): void {
    if (!isAfter(at, this.last) || !inScope(this.scope, event)) return;
    if (this.ready) this.send(event, at);
    else this.held.push(event);
  }
}

export class EventFeed {
  private cursor: EventPosition | null = null;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private safety: ReturnType<typeof setInterval> | null = null;
  private starting: Promise<void> | null = null;
  private stopSignal: (() => void) | null = null;
  private readonly subscribers = new Set<Subscriber>();
  private pumping = false;
  private again = false;

  constructor(
    private readonly log: OrderEventLog,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Open streams in this process. */
  get size(): number {
    return this.subscribers.size;
  }

  private start(): Promise<void> {
    if (this.starting === null) {
      this.starting = (async () => {
        // Signals first: a commit between reading the newest id and listening is not missed.
        this.stopSignal = this.log.onCommitted(() => this.wake());
        this.cursor = await this.log.head();
        this.safety = setInterval(() => this.wake(), SAFETY_READ_MS);
        this.safety.unref();
        this.wake();
      })();
      this.starting.catch(() => {
        this.starting = null;
      });
    }
    return this.starting;
  }

  /** Reads what was committed since the last read, once for every stream of this process. */
  private wake(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.pump()
      .catch(this.onError)
      .finally(() => {
        this.pumping = false;
        if (this.again) this.wake();
      });
  }

  private async pump(): Promise<void> {
    do {
      this.again = false;
      if (this.cursor === null) continue;
      if (this.subscribers.size === 0) {
        // Nobody to hand events to: skip to the newest, unless a stream opened meanwhile (it starts from
        // the cursor as it was, so the events since must still be read for it).
        const latest = await this.log.head();
        if (this.subscribers.size === 0) {
          if (isAfter(latest, this.cursor)) this.cursor = latest;
        } else this.again = true;
        continue;
      }
      for (;;) {
        const { rows, heldBack } = await this.log.after(this.cursor, PAGE);
        for (const row of rows) {
          const at = positionOf(row);
          this.cursor = at;
          for (const s of this.subscribers) s.offer(row, at);
        }
        if (heldBack) this.readAgainSoon();
        if (rows.length < PAGE) break;
      }
    } while (this.again);
  }

  /** Reads again shortly: events are committed that are not final yet. */
  private readAgainSoon(): void {
    if (this.retry !== null) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.wake();
    }, HELD_BACK_RETRY_MS);
    this.retry.unref();
  }

  /**
   * Hands `deliver` every event of `scope` committed from now on, after those after `afterId` first
   * (null: only new ones). Resolves once the backlog is handed over; returns the function that stops.
   */
  async subscribe(
    scope: EventScope,
    afterId: number | null,
    deliver: (event: StoredOrderEvent) => void,
  ): Promise<() => void> {
    await this.start();
    const from = afterId === null ? (this.cursor as EventPosition) : await this.log.resume(afterId);
    const sub = new Subscriber(scope, from, deliver);
    this.subscribers.add(sub);
    try {
      if (afterId !== null) {
        // What is held back here reaches the stream through the feed's own reads (it is past the cursor).
        for (;;) {
          const { rows } = await this.log.after(sub.last, PAGE, scope);
          for (const row of rows) sub.send(row);
          if (rows.length < PAGE) break;
        }
      }
    } catch (error) {
      this.subscribers.delete(sub);
      throw error;
    }
    sub.ready = true;
    for (const row of sub.held) sub.send(row);
    sub.held = [];
    return () => {
      this.subscribers.delete(sub);
    };
  }

  close(): void {
    this.stopSignal?.();
    this.stopSignal = null;
    if (this.retry !== null) clearTimeout(this.retry);
    this.retry = null;
    if (this.safety !== null) clearInterval(this.safety);
    this.safety = null;
    this.subscribers.clear();
  }
}
