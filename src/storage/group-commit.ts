// Group commit: writes submitted while a commit is in flight are gathered into the next transaction, so
// one durable commit (one fsync) acknowledges many requests. A batch that fails is retried one write per
// transaction, so one bad write cannot fail its neighbours.

export type RunInTransaction<Tx> = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

interface Pending<Tx> {
  work: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommitter<Tx> {
  private queue: Pending<Tx>[] = [];
  private running = false;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};

  constructor(
    private readonly transaction: RunInTransaction<Tx>,
    private readonly maxBatch = 256,
  ) {}

  submit<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) {
        this.running = true;
        this.idle = new Promise((r) => {
          this.markIdle = r;
        });
        // Let the requests that are already being processed in this tick join the first batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  /** Writes waiting for a commit (not counting the batch being committed). */
  get depth(): number {
    return this.queue.length;
  }

  /** Resolves once every submitted write has settled. */
  flushed(): Promise<void> {
    return this.running ? this.idle : Promise.resolve();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      await this.commitBatch(batch);
    }
    this.running = false;
    this.markIdle();
  }

  private async commitBatch(batch: Pending<Tx>[]): Promise<void> {
    const results: unknown[] = [];
    try {
      await this.transaction(async (tx) => {
        results.length = 0;
        for (const item of batch) results.push(await item.work(tx));
      });
    } catch (batchError) {
      if (batch.length === 1) {
        batch[0]?.reject(batchError);
        return;
      }
      for (const item of batch) {
        try {
          item.resolve(await this.transaction((tx) => item.work(tx)));
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
