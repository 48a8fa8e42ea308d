// Blobs as chunked rows of the SQL store (migration 0029: `blobs`, and `blob_chunks` of 256 KiB each):
// the adapter for deployments of several processes sharing PostgreSQL, where no one process's disk is
// everyone's. A put writes the blob's row and its chunks in one transaction of its own (committed, so
// durable, before the attachment's record is written); a range reads only the chunks it covers.

import type { Kysely } from "kysely";
import type { Database } from "../schema.js";
import type { BlobStore, ByteRange, StoredBlob } from "./blob-store.js";
import { checkSha256, readAll, sha256Hex } from "./blob-store.js";

export const CHUNK_BYTES = 256 * 1024;

export class SqlBlobStore implements BlobStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async put(content: Uint8Array | AsyncIterable<Uint8Array>): Promise<StoredBlob> {
    const bytes = await readAll(content);
    const sha256 = sha256Hex(bytes);
    const at = this.now().toISOString();
    await this.db.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom("blobs")
        .select("sha256")
        .where("sha256", "=", sha256)
        .executeTakeFirst();
      // Stored already: made young again (see the orphan collector), its chunks kept.
      await trx
        .insertInto("blobs")
        .values({ sha256, size: bytes.length, created_at: at })
        .onConflict((oc) => oc.column("sha256").doUpdateSet({ created_at: at }))
        .execute();
      if (existing !== undefined || bytes.length === 0) return;
      const rows = [];
      for (let idx = 0; idx * CHUNK_BYTES < bytes.length; idx++) {
        rows.push({ sha256, idx, data: bytes.subarray(idx * CHUNK_BYTES, (idx + 1) * CHUNK_BYTES) });
      }
      // A few chunks per statement: a 20 MB photo is 80 of them.
      for (let i = 0; i < rows.length; i += 8) {
        // Another process putting the same new blob at once writes the same chunks: either's will do.
        await trx
          .insertInto("blob_chunks")
          .values(rows.slice(i, i + 8))
          .onConflict((oc) => oc.columns(["sha256", "idx"]).doNothing())
          .execute();
      }
    });
    return { sha256, size: bytes.length };
  }

  async get(sha256: string, range?: ByteRange): Promise<Buffer | undefined> {
    const size = await this.size(sha256);
    if (size === undefined) return undefined;
    const start = range?.start ?? 0;
    const end = Math.min(range?.end ?? size - 1, size - 1);
    if (end < start) return Buffer.alloc(0);
    const first = Math.floor(start / CHUNK_BYTES);
    const last = Math.floor(end / CHUNK_BYTES);
    const rows = await this.db
      .selectFrom("blob_chunks")
      .select(["idx", "data"])
      .where("sha256", "=", sha256)
      .where("idx", ">=", first)
      .where("idx", "<=", last)
      .orderBy("idx")
      .execute();
    const joined = Buffer.concat(rows.map((r) => Buffer.from(r.data)));
    const offset = first * CHUNK_BYTES;
    return joined.subarray(start - offset, end - offset + 1);
  }

  async size(sha256: string): Promise<number | undefined> {
    checkSha256(sha256);
    const row = await this.db
      .selectFrom("blobs")
      .select("size")
      .where("sha256", "=", sha256)
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.size);
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.size(sha256)) !== undefined;
  }

  async delete(sha256: string): Promise<boolean> {
    checkSha256(sha256);
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom("blob_chunks").where("sha256", "=", sha256).execute();
      const deleted = await trx.deleteFrom("blobs").where("sha256", "=", sha256).executeTakeFirst();
      return Number(deleted.numDeletedRows) > 0;
    });
  }

  async *storedBefore(cutoff: Date): AsyncIterable<string> {
    let after = "";
    for (;;) {
      const rows = await this.db
        .selectFrom("blobs")
        .select("sha256")
        .where("created_at", "<", cutoff.toISOString())
        .where("sha256", ">", after)
        .orderBy("sha256")
        .limit(500)
        .execute();
      for (const row of rows) yield row.sha256;
      if (rows.length < 500) return;
      after = (rows.at(-1) as { sha256: string }).sha256;
    }
  }
}
