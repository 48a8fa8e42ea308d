// Contractor capacity becomes a counter in the store, reserved with a conditional update inside the
// order's transaction: the one authority every process shares (an in-memory count per process could
// overbook a contractor when several processes take orders at once). Initialised from the orders.

import { type Kysely, type Migration, sql } from "kysely";

export const migration0002: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("contractors")
      .addColumn("active_jobs", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`
      UPDATE contractors SET active_jobs = (
        SELECT count(*) FROM orders WHERE orders.contractor_id = contractors.id AND orders.status = 'assigned'
      )`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("contractors").dropColumn("active_jobs").execute();
  },
};
