// Resumable uploads on their way (the tus protocol, @tus/server): the DataStore @tus/server writes a PATCH's
// bytes to, as rows of the SQL store (migration 0032) on SQLite and PostgreSQL alike. In the database, not
// under one process's data directory, so that any process of a PostgreSQL deployment can take an upload's
// next PATCH (a phone's reconnection reaches whichever worker the balancer picks).
//
// Bytes are committed a piece (256 KiB) at a time, each in a transaction that moves the upload's offset
// on only if it still is where the piece starts: what a client was told is received is on disk, a PATCH
// cut off keeps what had arrived (the client resumes from there), and two PATCHes to one upload from two
// processes (no in-memory lock spans processes) can never both write at one offset: the later one's
// commit finds the offset moved and is answered 409, as tus answers a wrong offset. A finished upload is
// read whole, accepted or refused as an attachment (transports/http/tus-uploads.ts), and its chunks are
// removed; what is left of an upload a day old is removed by the hourly retention pass.

import type { Readable } from "node:stream";
import { DataStore, ERRORS, Upload } from "@tus/utils";
import type { Kysely } from "kysely";
import type { Database, PartialUploadsTable } from "../schema.js";

/** Bytes per chunk row, as the blob store's (storage/blobs/sql-blob-store.ts). */
const PIECE_BYTES = 256 * 1024;
/** A claim to finish an upload older than this was its process's last act: another request may take it. */
const FINISH_CLAIM_MS = 10 * 60_000;
/** An unfinished upload expires a day after it was created (tus's expiration extension). */
const UPLOAD_EXPIRY_MS = 24 * 3_600_000;

/** Who started an upload, and to which order: fixed at creation, checked on every later request. */
export interface UploadOwner {
  orderId: string;
  /** The actor the audit records name (key:..., contractor:...). */
  uploader: string;
}

export interface PartialUpload extends UploadOwner {
  id: string;
  size: number;
  offset: number;
  metadata: Record<string, string | null>;
  createdAt: string;
  /** Set once the finished upload became this attachment. */
  attachmentId: string | null;
}

function fromRow(row: PartialUploadsTable): PartialUpload {
  return {
    id: row.id,
    orderId: row.order_id,
    uploader: row.uploader,
    size: Number(row.size),
    offset: Number(row.upload_offset),
    metadata: JSON.parse(row.metadata) as Record<string, string | null>,
    createdAt: row.created_at,
    attachmentId: row.attachment_id,
  };
}

export class PartialUploadStore extends DataStore {
  /** The owner of each upload being created in this process, set just before @tus/server creates it. */
  private readonly owners = new Map<string, UploadOwner>();

  constructor(
    private readonly db: Kysely<Database>,
    // Wall-clock time: @tus/server compares an upload's creation date with Date.now() for its expiry.
    private readonly now: () => Date = () => new Date(),
  ) {
    super();
    this.extensions = ["creation", "creation-with-upload", "expiration", "termination"];
  }

  /** Names the owner of the upload `id` that @tus/server is about to create (create() takes it). */
  expect(id: string, owner: UploadOwner): void {
    this.owners.set(id, owner);
  }

  /** Forgets an expected upload that was never created (a request refused by @tus/server itself). */
  forget(id: string): void {
    this.owners.delete(id);
  }

  override async create(upload: Upload): Promise<Upload> {
    const owner = this.owners.get(upload.id);
    if (owner === undefined) throw new Error(`upload ${upload.id} created without an owner`);
    this.owners.delete(upload.id);
    if (upload.size === undefined) throw ERRORS.INVALID_LENGTH;
    upload.creation_date = this.now().toISOString();
    await this.db
      .insertInto("partial_uploads")
      .values({
        id: upload.id,
        order_id: owner.orderId,
        uploader: owner.uploader,
        size: upload.size,
        upload_offset: 0,
        metadata: JSON.stringify(upload.metadata ?? {}),
        created_at: upload.creation_date,
        finishing_at: null,
        attachment_id: null,
      })
      .execute();
    return upload;
  }

  /** The upload, or undefined. */
  async find(id: string): Promise<PartialUpload | undefined> {
    const row = await this.db
      .selectFrom("partial_uploads")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row === undefined ? undefined : fromRow(row);
  }

  override async getUpload(id: string): Promise<Upload> {
    const found = await this.find(id);
    if (found === undefined) throw ERRORS.FILE_NOT_FOUND;
    return new Upload({
      id,
      size: found.size,
      offset: found.offset,
      metadata: found.metadata,
      creation_date: found.createdAt,
    });
  }

  /** Commits `bytes` at `offset`, if the upload is still there; the offset after them. */
  private async commitPiece(id: string, offset: number, bytes: Buffer): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable("partial_uploads")
        .set((eb) => ({ upload_offset: eb("upload_offset", "+", bytes.length) }))
        .where("id", "=", id)
        .where("upload_offset", "=", offset)
        .where("attachment_id", "is", null)
        .executeTakeFirst();
      // Another request (maybe in another process) wrote here first: tus's answer to a wrong offset.
      if (Number(moved.numUpdatedRows) === 0) throw ERRORS.INVALID_OFFSET;
      await trx.insertInto("upload_chunks").values({ upload_id: id, start: offset, data: bytes }).execute();
      return offset + bytes.length;
    });
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    let at = offset;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const piece = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      at = await this.commitPiece(id, at, piece);
    };
    try {
      for await (const chunk of stream) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        pending.push(buffer);
        pendingBytes += buffer.length;
        if (pendingBytes >= PIECE_BYTES) await flush();
      }
    } catch (error) {
      // The body broke off: what had arrived is kept, so the client resumes after it.
      await flush();
      throw error;
    }
    await flush();
    return at;
  }

  /** The finished upload's bytes, in order. */
  async read(id: string): Promise<Buffer> {
    const rows = await this.db
      .selectFrom("upload_chunks")
      .select(["start", "data"])
      .where("upload_id", "=", id)
      .orderBy("start")
      .execute();
    return Buffer.concat(rows.map((r) => Buffer.from(r.data)));
  }

  /**
   * Claims the finished upload for the one request that makes it an attachment: false when it is not
   * finished, already an attachment, or another request is at it (a claim younger than FINISH_CLAIM_MS).
   */
  async claimFinish(id: string): Promise<boolean> {
    const now = this.now();
    const stale = new Date(now.getTime() - FINISH_CLAIM_MS).toISOString();
    const claimed = await this.db
      .updateTable("partial_uploads")
      .set({ finishing_at: now.toISOString() })
      .where("id", "=", id)
      .where("attachment_id", "is", null)
      .whereRef("upload_offset", "=", "size")
      .where((eb) => eb.or([eb("finishing_at", "is", null), eb("finishing_at", "<", stale)]))
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows) > 0;
  }

  /** Gives the claim up (the attempt failed on something other than the upload: a store down, a bug). */
  async releaseFinish(id: string): Promise<void> {
    await this.db.updateTable("partial_uploads").set({ finishing_at: null }).where("id", "=", id).execute();
  }

  /** The finished upload became `attachmentId`: its chunks go, its row stays (a HEAD says it is done). */
  async accepted(id: string, attachmentId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable("partial_uploads")
        .set({ attachment_id: attachmentId })
        .where("id", "=", id)
        .execute();
      await trx.deleteFrom("upload_chunks").where("upload_id", "=", id).execute();
    });
  }

  override async remove(id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom("upload_chunks").where("upload_id", "=", id).execute();
      await trx.deleteFrom("partial_uploads").where("id", "=", id).execute();
    });
  }

  override getExpiration(): number {
    return UPLOAD_EXPIRY_MS;
  }

  override deleteExpired(): Promise<number> {
    return this.removeExpired(this.now());
  }

  /** Removes the uploads created more than a day before `now` (finished or not); how many. */
  async removeExpired(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - UPLOAD_EXPIRY_MS).toISOString();
    let removed = 0;
    for (;;) {
      const rows = await this.db
        .selectFrom("partial_uploads")
        .select("id")
        .where("created_at", "<", cutoff)
        .limit(200)
        .execute();
      for (const row of rows) await this.remove(row.id);
      removed += rows.length;
      if (rows.length < 200) return removed;
    }
  }
}
