// Group commit: writes submitted while a commit is in flight are gathered into the next transaction, so
// one durable commit (one fsync) acknowledges many requests. A batch that fails is retried one write per
// transaction, so one bad write cannot fail its neighbours. `lanes` batches may commit at once: 1 for
// SQLite (one connection, one writer), more for a pooled server database, where a batch's round trips
// would otherwise leave the pool idle. A transaction that fails in a way the store calls retryable (a
// deadlock, a serialization failure) is run again, a bounded number of times, before anyone sees it fail.
//
// A deferred write starts no batch: it rides along with the next one, or starts its own after a delay
// if none comes. It is for what need not be acknowledged at once (a measurement of a commit that already
// returned): on one lane a batch of its own would hold the next request behind one more sync.

/** Runs `work` in one transaction; `keys` are what the batch's writes declared they will lock. */
export type RunInTransaction<Tx, K> = <T>(work: (tx: Tx) => Promise<T>, keys: readonly K[]) => Promise<T>;

interface Pending<Tx, K> {
  work: (tx: Tx) => Promise<unknown>;
  keys?: K | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The keys a batch's writes declared. */
function keysOf<Tx, K>(batch: readonly Pending<Tx, K>[]): K[] {
  const keys: K[] = [];
  for (const item of batch) if (item.keys !== undefined) keys.push(item.keys);
  return keys;
}

export class GroupCommitter<Tx, K = never> {
  private queue: Pending<Tx, K>[] = [];
  /** Deferred writes waiting for the next batch. */
  private deferred: Pending<Tx, K>[] = [];
  private deferTimer: ReturnType<typeof setTimeout> | null = null;
  private active = 0;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};

  constructor(
    private readonly transaction: RunInTransaction<Tx, K>,
    private readonly maxBatch = 256,
    private readonly lanes = 1,
    /** Failures worth trying again at once, as they were (a deadlock, a serialization failure). */
    private readonly retryable: (error: unknown) => boolean = () => false,
    private readonly maxRetries = 3,
  ) {}

  /** Runs `work` in a transaction, again (a few times, after a short random pause) when it fails in a way
   * the store says is worth retrying. */
  private async attempt<T>(work: (tx: Tx) => Promise<T>, keys: readonly K[]): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        return await this.transaction(work, keys);
      } catch (error) {
        if (retry >= this.maxRetries || !this.retryable(error)) throw error;
        await new Promise((r) => setTimeout(r, 1 + Math.random() * 4 * (retry + 1)));
      }
    }
  }

  submit<T>(work: (tx: Tx) => Promise<T>, keys?: K): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, keys, resolve: resolve as (v: unknown) => void, reject });
      if (this.active < this.lanes) {
        if (this.active === 0) {
          this.idle = new Promise((r) => {
            this.markIdle = r;
          });
        }
        this.active++;
        // Let the requests that are already being processed in this tick join the batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  /**
   * Runs `work` in the next batch that commits anyway, or in a batch of its own `maxDelayMs` later if none
   * has come by then. Resolves once that batch has committed.
   */
  defer<T>(work: (tx: Tx) => Promise<T>, maxDelayMs: number, keys?: K): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.deferred.push({ work, keys, resolve: resolve as (v: unknown) => void, reject });
      if (this.deferTimer === null) {
        this.deferTimer = setTimeout(() => {
          this.deferTimer = null;
          void this.flushDeferred();
        }, maxDelayMs);
        // Closing the store flushes them: the timer alone must not keep a process alive.
        this.deferTimer.unref?.();
      }
    });
  }

  /** Commits the deferred writes now (in the next batch); resolves once they are committed. */
  flushDeferred(): Promise<void> {
    return this.deferred.length > 0 ? this.submit(async () => undefined) : Promise.resolve();
  }

  /** Writes waiting for a commit (not counting the batch being committed, nor deferred writes). */
  get depth(): number {
    return this.queue.length;
  }

  /** Resolves once every submitted write has settled. */
  flushed(): Promise<void> {
    return this.active > 0 ? this.idle : Promise.resolve();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      // Deferred writes ride along (after the batch's own, which callers are waiting for).
      batch.push(...this.deferred.splice(0));
      await this.commitBatch(batch);
    }
    this.active--;
    if (this.active === 0) this.markIdle();
  }

  private async commitBatch(batch: Pending<Tx, K>[]): Promise<void> {
    const results: unknown[] = [];
    try {
      await this.attempt(async (tx) => {
        results.length = 0;
        for (const item of batch) results.push(await item.work(tx));
      }, keysOf(batch));
    } catch (batchError) {
      if (batch.length === 1) {
        batch[0]?.reject(batchError);
        return;
      }
      for (const item of batch) {
        try {
          item.resolve(await this.attempt((tx) => item.work(tx), keysOf([item])));
        } catch (error) {
          item.reject(error);
        }
      }
      return;
    }
    batch.forEach((item, i) => {
      item.resolve(results[i]);
    });
  }
}
