// The day optimiser's proposals also keep a fingerprint of each contractor they route (its standing,
// calendar, compliance dates and time off), so that apply refuses a proposal whose contractors changed
// since, as it does one whose orders changed. Null on proposals made before: their contractors are not
// checked (a proposal lives an hour). Numbered 0023: 0022 is reserved for work landing alongside.

import type { Kysely, Migration } from "kysely";

export const migration0023: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("schedule_proposals").addColumn("contractor_basis", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("schedule_proposals").dropColumn("contractor_basis").execute();
  },
};
