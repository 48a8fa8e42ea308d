// Tables kept for a period and then purged (the order event log, the webhook events with their deliveries
// and attempts): the storage side of retention, purged by workers/retention-purge.ts in small batches.

/** One batch of a purge. */
export interface PurgedBatch {
  /** Rows deleted (for the webhook events: events, their deliveries and attempts going with them). */
  rows: number;
  /** Where the next batch starts (the creation time of the newest row this one took), or null when no row
   * older than the cutoff was left to take. */
  next: string | null;
}

/** A table purged oldest first, a batch per statement, each as cheap on a large table as on a small one. */
export interface PurgeableTable {
  /**
   * Deletes up to `limit` rows created before `before`, oldest first, from `from` (inclusive: the `next`
   * of the previous batch) when given. The lower bound lets each batch start where the last ended, past
   * the index entries of rows just deleted (PostgreSQL keeps them until VACUUM).
   */
  purge(before: string, limit: number, from?: string): Promise<PurgedBatch>;
  /** An estimate of the rows created before `before`, read in a few index lookups whatever the table's
   * size (it never counts them). */
  backlog(before: string): Promise<number>;
}
