// The day optimiser's proposals (migration 0021): stored when proposed, read and claimed when applied.

import type { Kysely } from "kysely";
import type { Database, ScheduleProposalsTable } from "./schema.js";
import type { WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

export class ScheduleStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ScheduleProposalsTable): Promise<void> {
    await this.db.insertInto("schedule_proposals").values(row).execute();
  }

  async byId(id: string): Promise<ScheduleProposalsTable | undefined> {
    return this.db.selectFrom("schedule_proposals").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /** Marks a proposal applied unless it already was: true for the one caller that claims it. Inside a
   * write it commits (or rolls back) with the caller's other decisions. */
  async claim(id: string, at: string, tx?: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .updateTable("schedule_proposals")
      .set({ applied_at: at })
      .where("id", "=", id)
      .where("applied_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Drops proposals created before `cutoff` (they expire an hour after they are made). */
  async purge(cutoff: string): Promise<number> {
    const result = await this.db
      .deleteFrom("schedule_proposals")
      .where("created_at", "<", cutoff)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
