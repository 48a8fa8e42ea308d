// Retention that never competes with requests (issue 30). A pass deletes what is older than its cutoff
// from each table, in small batches (one cheap statement each, oldest first on the table's created_at
// index, each starting where the last ended), taking turns between the tables. Before each batch it
// yields to the event loop (setImmediate), so requests waiting to run go first: on SQLite every statement
// runs on this thread. A tick spends at most `budgetMs` in purge batches (measured on `clock` from a
// batch's start to its end; the waits between batches are the requests' time, not the purge's) and leaves
// the rest of a backlog to the next ticks; a stop ends the pass's work after the batch in progress.
//
// The backlog gauge is an estimate: each table's own estimate when the pass starts (a few index lookups,
// storage/retention.ts), less what the pass has purged since, and 0 once the table has nothing left.

import type { PurgeableTable } from "../storage/retention.js";

export interface RetainedTable {
  /** The table's name, as the gauge labels it. */
  name: string;
  table: PurgeableTable;
  /** Rows per statement. */
  batch: number;
}

export interface RetentionPurgeOptions {
  /** Time one tick may spend in purge batches, milliseconds (the last batch may end past it). */
  budgetMs: number;
  /** A monotonic clock in milliseconds (performance.now). */
  clock: () => number;
  /** Called with a table's estimated backlog whenever it changes. */
  onBacklog?: (table: string, rows: number) => void;
}

interface Progress extends RetainedTable {
  estimate: number;
  purged: number;
  /** Where the table's next batch starts. */
  from?: string;
}

export class RetentionPurge {
  private pass: { before: string; tables: Progress[]; turn: number } | null = null;

  constructor(
    private readonly tables: readonly RetainedTable[],
    private readonly options: RetentionPurgeOptions,
  ) {}

  /** Whether a pass is under way. */
  get purging(): boolean {
    return this.pass !== null;
  }

  /** Starts a pass deleting what was created before `before`, with each table's backlog estimated. */
  async begin(before: string): Promise<void> {
    const tables: Progress[] = [];
    for (const t of this.tables) {
      const estimate = await t.table.backlog(before);
      this.options.onBacklog?.(t.name, estimate);
      tables.push({ ...t, estimate, purged: 0 });
    }
    this.pass = { before, tables, turn: 0 };
  }

  /**
   * Purges batch after batch, yielding to the event loop before each, until the pass is done, the tick's
   * budget is spent in batches, or `stopped()` (checked before each batch). Returns the rows purged.
   */
  async step(stopped: () => boolean): Promise<number> {
    const pass = this.pass;
    if (!pass) return 0;
    let spent = 0;
    let purged = 0;
    while (pass.tables.length > 0 && spent < this.options.budgetMs) {
      await new Promise((resolve) => setImmediate(resolve));
      if (stopped()) break;
      const index = pass.turn % pass.tables.length;
      const t = pass.tables[index] as Progress;
      const started = this.options.clock();
      const batch = await t.table.purge(pass.before, t.batch, t.from);
      spent += this.options.clock() - started;
      purged += batch.rows;
      t.purged += batch.rows;
      if (batch.next === null) {
        pass.tables.splice(index, 1);
        this.options.onBacklog?.(t.name, 0);
      } else {
        t.from = batch.next;
        this.options.onBacklog?.(t.name, Math.max(0, t.estimate - t.purged));
        pass.turn = index + 1;
      }
    }
    if (pass.tables.length === 0) this.pass = null;
    return purged;
  }
}
