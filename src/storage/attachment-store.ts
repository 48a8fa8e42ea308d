// An order's attachments (migration 0029): the row of each, mapped to and from its value here. The row is
// written inside the write transaction that seals its audit record, after its blob was put. And what each
// account requires of its jobs' proof before completion (migration 0033).

import type { Kysely } from "kysely";
import type { AttachmentsTable, Database } from "./schema.js";
import type {
  Attachment,
  AttachmentStore,
  ProofRequirementsRow,
  ProofRequirementsStore,
  WriteTx,
} from "./store.js";
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
    signerName: row.signer_name,
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
    signer_name: a.signerName,
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

  async proofCounts(
    orderId: string,
    uploader: string,
    tx?: WriteTx,
  ): Promise<{ signatures: number; photos: number }> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("attachments")
      .select(["kind", "uploader"])
      .where("order_id", "=", orderId)
      .where("kind", "in", ["signature", "photo"])
      .execute();
    return {
      signatures: rows.filter((r) => r.kind === "signature").length,
      photos: rows.filter((r) => r.kind === "photo" && r.uploader === uploader).length,
    };
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
    // A request's photos (migration 0045) are kept too, until their request becomes an order and after.
    const photos = await this.db
      .selectFrom("request_photos")
      .select(["sha256", "thumbnail_sha256"])
      .where((eb) => eb.or([eb("sha256", "in", sha256s), eb("thumbnail_sha256", "in", sha256s)]))
      .execute();
    const named = new Set<string>();
    for (const row of [...rows, ...photos]) {
      named.add(row.sha256);
      if (row.thumbnail_sha256 !== null) named.add(row.thumbnail_sha256);
    }
    return new Set(sha256s.filter((s) => named.has(s)));
  }
}

export class KyselyProofRequirementsStore implements ProofRequirementsStore {
  constructor(private readonly db: Kysely<Database>) {}

  async get(accountId: string, livemode: boolean, tx?: WriteTx): Promise<ProofRequirementsRow | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("proof_requirements")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      account_id: row.account_id,
      livemode: row.livemode === 1,
      signature_required: row.signature_required === 1,
      photo_required: row.photo_required === 1,
      updated_at: row.updated_at,
      updated_by: row.updated_by,
      seal: row.seal,
    };
  }

  async set(row: ProofRequirementsRow, tx: WriteTx): Promise<void> {
    const values = {
      account_id: row.account_id,
      livemode: row.livemode ? 1 : 0,
      signature_required: row.signature_required ? 1 : 0,
      photo_required: row.photo_required ? 1 : 0,
      updated_at: row.updated_at,
      updated_by: row.updated_by,
      seal: row.seal,
    };
    await trxOf(tx, this.db)
      .insertInto("proof_requirements")
      .values(values)
      .onConflict((oc) =>
        oc.columns(["account_id", "livemode"]).doUpdateSet({
          signature_required: values.signature_required,
          photo_required: values.photo_required,
          updated_at: values.updated_at,
          updated_by: values.updated_by,
          seal: values.seal,
        }),
      )
      .execute();
  }
}
