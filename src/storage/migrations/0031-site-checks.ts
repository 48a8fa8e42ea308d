// Issue 32, proof of work: the contractor's check-in ("on site") and check-out ("completed") at the site,
// each the JSON text of the domain's SiteCheck (domain/orders/site-check.ts): when, the phone's position
// and accuracy, the point it was measured to, the distance and whether it was flagged. The same check is
// sealed in the step's audit record; the columns let the views and the dispatch team's flag read it
// without the log. Null until reported, and for every order from before.

import type { Kysely, Migration } from "kysely";

export const migration0031: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("orders").addColumn("check_in", "text").execute();
    await db.schema.alterTable("orders").addColumn("check_out", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("orders").dropColumn("check_out").execute();
    await db.schema.alterTable("orders").dropColumn("check_in").execute();
  },
};
