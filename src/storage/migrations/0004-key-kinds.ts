// API keys get a kind: `account` (a caller's key, as before), `contractor` (a contractor's own
// credentials, for its offers and jobs) or `dispatcher` (the dispatch team's operator role). A
// contractor key names its contractor.

import type { Kysely, Migration } from "kysely";

export const migration0004: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("api_keys")
      .addColumn("kind", "text", (c) => c.notNull().defaultTo("account"))
      .execute();
    await db.schema.alterTable("api_keys").addColumn("contractor_id", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("api_keys").dropColumn("contractor_id").execute();
    await db.schema.alterTable("api_keys").dropColumn("kind").execute();
  },
};
