// Issue 32, proof of work: what an account requires before its jobs are completed (a signature of the
// site contact, a photo of the work), one row per account and mode with the seal of the record that set it, absent until the account sets it; and
// the printed name of the person who signed a signature attachment.

import type { Kysely, Migration } from "kysely";

export const migration0033: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("proof_requirements")
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("signature_required", "integer", (c) => c.notNull())
      .addColumn("photo_required", "integer", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("updated_by", "text", (c) => c.notNull())
      .addColumn("seal", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("proof_requirements_pk", ["account_id", "livemode"])
      .execute();
    await db.schema.alterTable("attachments").addColumn("signer_name", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("attachments").dropColumn("signer_name").execute();
    await db.schema.dropTable("proof_requirements").execute();
  },
};
