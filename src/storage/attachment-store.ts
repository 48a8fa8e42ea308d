// An order's attachments (migration 0029): the row of each, mapped to and from its value here. The row is
// written inside the write transaction that seals its audit record, after its blob was put.

import type { Kysely } from "kysely";
import type { AttachmentsTable, Database } from "./schema.js";
import type { Attachment, AttachmentStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

function fromRow(row: AttachmentsTable): Attachment {
  return {
    id: row.id,
    orderId: row.order_id,
    livemode: row.livemode === 1,
    sha256: row.sha256,
    size: Number(row.size),
    mediaType: row.media_type,
    kind: row.kind as Attachment["kind"],
    caption: row.caption,
    filename: row.filename,
    uploader: row.uploader,
    createdAt: row.created_at,
    thumbnailSha256: row.thumbnail_sha256,
    seal: row.seal,
  };
}

function toRow(a: Attachment): AttachmentsTable {
  return {
    id: a.id,
    order_id: a.orderId,
    livemode: a.livemode ? 1 : 0,
    sha256: a.sha256,
    size: a.size,
    media_type: a.mediaType,
    kind: a.kind,
    caption: a.caption,
    filename: a.filename,
    uploader: a.uploader,
    created_at: a.createdAt,
    thumbnail_sha256: a.thumbnailSha256,
    seal: a.seal,
  };
}

export class KyselyAttachmentStore implements AttachmentStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(attachment: Attachment, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db).insertInto("attachments").values(toRow(attachment)).execute();
  }

  async ofOrder(orderId: string, tx?: WriteTx): Promise<Attachment[]> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("attachments")
      .selectAll()
      .where("order_id", "=", orderId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(fromRow);
  }

  async byId(id: string): Promise<Attachment | undefined> {
    const row = await this.db.selectFrom("attachments").selectAll().where("id", "=", id).executeTakeFirst();
    return row === undefined ? undefined : fromRow(row);
  }

  async purgeUnsealed(before: string): Promise<number> {
    const result = await this.db
      .deleteFrom("attachments")
      .where("created_at", "<", before)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("audit_records as r").select("r.seal").whereRef("r.seal", "=", "attachments.seal"),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async referenced(sha256s: readonly string[]): Promise<Set<string>> {
    if (sha256s.length === 0) return new Set();
    const rows = await this.db
      .selectFrom("attachments")
      .select(["sha256", "thumbnail_sha256"])
      .where((eb) => eb.or([eb("sha256", "in", sha256s), eb("thumbnail_sha256", "in", sha256s)]))
      .execute();
    const named = new Set<string>();
    for (const row of rows) {
      named.add(row.sha256);
      if (row.thumbnail_sha256 !== null) named.add(row.thumbnail_sha256);
    }
    return new Set(sha256s.filter((s) => named.has(s)));
  }
}
