// Contractor verification: until when the dispatch team has verified a contractor's insurance and its
// license (ISO dates, from the pool file). Evals report the share of active live contractors verified on
// both counts today.

import type { Kysely, Migration } from "kysely";

export const migration0009: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("contractors").addColumn("insurance_verified_until", "text").execute();
    await db.schema.alterTable("contractors").addColumn("license_verified_until", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("contractors").dropColumn("license_verified_until").execute();
    await db.schema.alterTable("contractors").dropColumn("insurance_verified_until").execute();
  },
};
