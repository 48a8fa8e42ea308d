// Audit record format v2: the disclosures of a record's private parts, stored beside the sealed text
// (audit/redaction.ts). Null for version 1 records and for records with nothing private. No index: they
// are read with their record, never searched.

import type { Kysely, Migration } from "kysely";

export const migration0014: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("audit_records").addColumn("disclosures", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("audit_records").dropColumn("disclosures").execute();
  },
};
