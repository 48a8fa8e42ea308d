// This process's side of the live event stream: reads the order event log once for every open stream
// each time a commit is signalled (the store's signal: this process's commits, and on PostgreSQL every
// process's, storage/order-event-store.ts), and hands each stream the events of its scope in id order.
// A stream that resumes (Last-Event-ID) reads its backlog from the log first, its live events held back
// meanwhile, so it gets every event after the one it names exactly once.

import type { EventScope, OrderEventLog, StoredOrderEvent } from "../../storage/order-event-store.js";

const PAGE = 500;

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
    public lastId: number,
    private readonly deliver: (event: StoredOrderEvent) => void,
  ) {}

  send(event: StoredOrderEvent): void {
    if (event.id <= this.lastId) return;
    this.lastId = event.id;
    this.deliver(event);
  }

  offer(event: StoredOrderEvent): void {
    if (event.id <= this.lastId || !inScope(this.scope, event)) return;
    if (this.ready) this.send(event);
    else this.held.push(event);
  }
}

export class EventFeed {
  private cursor: number | null = null;
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
        this.cursor = await this.log.latestId();
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
        const latest = await this.log.latestId();
        if (this.subscribers.size === 0) this.cursor = Math.max(this.cursor, latest);
        else this.again = true;
        continue;
      }
      for (;;) {
        const rows = await this.log.after(this.cursor, PAGE);
        for (const row of rows) {
          this.cursor = row.id;
          for (const s of this.subscribers) s.offer(row);
        }
        if (rows.length < PAGE) break;
      }
    } while (this.again);
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
    const sub = new Subscriber(scope, afterId ?? (this.cursor as number), deliver);
    this.subscribers.add(sub);
    try {
      if (afterId !== null) {
        for (;;) {
          const rows = await this.log.after(sub.lastId, PAGE, scope);
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
    this.subscribers.clear();
  }
}
