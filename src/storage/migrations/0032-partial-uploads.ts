// Issue 32, resumable uploads (tus): an upload on its way, in the database so that every process of a
// PostgreSQL deployment can take its next PATCH (storage/uploads/partial-upload-store.ts), on SQLite too
// (one code path; its rows are gone once the upload is accepted, refused or a day old). `upload_offset`
// is what has been received and committed; `upload_chunks` hold those bytes, each row at its offset.

import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../dialect.js";

export function migration0032(dialect: Dialect): Migration {
  const bytes = dialect === "postgres" ? "bytea" : "blob";
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("partial_uploads")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("order_id", "text", (c) => c.notNull())
        .addColumn("uploader", "text", (c) => c.notNull())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("upload_offset", "bigint", (c) => c.notNull())
        .addColumn("metadata", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        // When a request began making the finished upload an attachment (one at a time: see claimFinish).
        .addColumn("finishing_at", "text")
        // Set once the finished upload became an attachment (its chunks are then gone).
        .addColumn("attachment_id", "text")
        .execute();
      await db.schema
        .createIndex("partial_uploads_created_idx")
        .on("partial_uploads")
        .column("created_at")
        .execute();
      await db.schema
        .createTable("upload_chunks")
        .addColumn("upload_id", "text", (c) => c.notNull())
        .addColumn("start", "bigint", (c) => c.notNull())
        .addColumn("data", bytes, (c) => c.notNull())
        .addPrimaryKeyConstraint("upload_chunks_pk", ["upload_id", "start"])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable("upload_chunks").execute();
      await db.schema.dropTable("partial_uploads").execute();
    },
  };
}
