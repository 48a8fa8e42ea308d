// Capacity as time (domain/commitments.ts): each row of the capacity ledger keeps the block of time the
// unit holds of its contractor, where the job was placed when the unit was taken: on site from
// `starts_at` until `ends_at` (UTC text), at `lat`/`lon` (null when the job's place is unknown). Rows
// taken before this migration keep null times: they count against the contractor's maximum, not its time.

import type { Kysely, Migration } from "kysely";

const COLUMNS = [
  ["starts_at", "text"],
  ["ends_at", "text"],
  ["lat", "double precision"],
  ["lon", "double precision"],
] as const;

export const migration0022: Migration = {
  async up(db: Kysely<unknown>) {
    // One column a statement: SQLite adds one per ALTER TABLE.
    for (const [column, type] of COLUMNS) {
      await db.schema.alterTable("capacity_holds").addColumn(column, type).execute();
    }
  },
  async down(db: Kysely<unknown>) {
    for (const [column] of [...COLUMNS].reverse()) {
      await db.schema.alterTable("capacity_holds").dropColumn(column).execute();
    }
  },
};
