// Issue 32, proof of work: an order's attachments (photos and PDFs), and the chunked blob table the
// PostgreSQL blob store keeps their bytes in (storage/blobs/sql-blob-store.ts; the embedded store keeps
// them as files under DATA_DIR/blobs, so on SQLite the two blob tables stay empty). A blob is named by the
// SHA-256 of its bytes; an attachment names its blob (and its thumbnail's) and the seal of the audit record
// that holds its digest.

import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../dialect.js";

export function migration0029(dialect: Dialect): Migration {
  const bytes = dialect === "postgres" ? "bytea" : "blob";
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("attachments")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("order_id", "text", (c) => c.notNull())
        .addColumn("livemode", "integer", (c) => c.notNull())
        .addColumn("sha256", "text", (c) => c.notNull())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("media_type", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("caption", "text")
        .addColumn("filename", "text")
        .addColumn("uploader", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("thumbnail_sha256", "text")
        .addColumn("seal", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("attachments_order_idx")
        .on("attachments")
        .columns(["order_id", "created_at"])
        .execute();
      // The orphan collector asks whether any attachment names a blob, by either digest.
      await db.schema.createIndex("attachments_sha256_idx").on("attachments").column("sha256").execute();
      await db.schema
        .createIndex("attachments_thumbnail_idx")
        .on("attachments")
        .column("thumbnail_sha256")
        .execute();
      await db.schema
        .createTable("blobs")
        .addColumn("sha256", "text", (c) => c.primaryKey())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("blobs_created_idx").on("blobs").column("created_at").execute();
      await db.schema
        .createTable("blob_chunks")
        .addColumn("sha256", "text", (c) => c.notNull())
        .addColumn("idx", "integer", (c) => c.notNull())
        .addColumn("data", bytes, (c) => c.notNull())
        .addPrimaryKeyConstraint("blob_chunks_pk", ["sha256", "idx"])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable("blob_chunks").execute();
      await db.schema.dropTable("blobs").execute();
      await db.schema.dropTable("attachments").execute();
    },
  };
}
