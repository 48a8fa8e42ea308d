// The accounts' do-not-dispatch lists as matching reads them: each account's entries of a mode, read from
// the store the first time a quote or an order of that account needs them and kept, so that a match costs
// no query. A change in this process drops the account's copy at once. Other processes (several servers
// on PostgreSQL) hear of it within the pool's refresh interval (POOL_REFRESH_MS): a cheap version query
// (count/max), and every copy is dropped when it moved. The embedded store has one writer, this process:
// its copies are always exact. An assignment by hand and the cascade's next offer read the list in their
// own transaction instead, so they are exact in every deployment.

import { barredFor, type DoNotDispatchEntry } from "../../domain/do-not-dispatch.js";
import type { Store } from "../../storage/store.js";

/** Copies kept at most (one per account and mode); all are dropped when the limit is reached. */
const CACHE_LIMIT = 20_000;

export class DoNotDispatchLists {
  private readonly cache = new Map<string, Promise<readonly DoNotDispatchEntry[]>>();
  private version: string | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly store: Store) {}

  /** An account's entries in force in a mode. */
  entries(accountId: string, livemode: boolean): Promise<readonly DoNotDispatchEntry[]> {
    const key = `${livemode ? "L" : "T"}${accountId}`;
    let hit = this.cache.get(key);
    if (hit === undefined) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      hit = this.store.doNotDispatch.ofAccount(accountId, livemode);
      // A failed read is not kept: the next request reads again.
      hit.catch(() => this.cache.delete(key));
      this.cache.set(key, hit);
    }
    return hit;
  }

  /** The contractors the account's work of `trade` is never offered to (empty for most accounts). */
  async barred(accountId: string, livemode: boolean, trade: string): Promise<ReadonlySet<string>> {
    return barredFor(await this.entries(accountId, livemode), trade);
  }

  /** Drops an account's copy (after a change in this process). */
  changed(accountId: string, livemode: boolean): void {
    this.cache.delete(`${livemode ? "L" : "T"}${accountId}`);
  }

  /** Drops every copy when the stored lists changed since the last look (another process wrote). */
  async refresh(): Promise<boolean> {
    const version = await this.store.doNotDispatch.version();
    if (version === this.version) return false;
    this.version = version;
    this.cache.clear();
    return true;
  }

  startRefresh(intervalMs: number, onError: (error: unknown) => void): void {
    if (intervalMs <= 0 || this.store.singleWriter) return;
    this.timer = setInterval(() => {
      this.refresh().catch(onError);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
