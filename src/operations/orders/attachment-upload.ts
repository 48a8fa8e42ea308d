// Adding an attachment to an order (issue 32): the caller is checked first (its body unread if refused),
// then the file is read within its size limit, sniffed and processed (attachment-media.ts), its bytes
// and thumbnail put in the blob store (durable), and only then, in one write transaction, the order's
// quota checked again, the audit record sealed and the row written. A refusal at any step stores nothing
// and seals nothing; a blob put for an upload refused afterwards (a quota filled meanwhile) is named by no
// row, and the orphan collector (workers/orphan-blobs.ts) removes it after a day.

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import type { Config } from "../../config.js";
import { ApiError, validationError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import { sha256Hex as sha256Of } from "../../storage/blobs/blob-store.js";
import type { Attachment } from "../../storage/store.js";
import { fieldErrors } from "../kernel/gate.js";
import type { OperationContext, ReceivedUpload, Services } from "../kernel/operation.js";
import { type OrderAccess, orderForUpload } from "./attachment-access.js";
import { type ProcessedMedia, processMedia } from "./attachment-media.js";

export const uploadFields = z.strictObject({
  kind: z
    .enum(["photo", "document", "signature"], { error: "kind must be photo, document or signature" })
    .optional()
    .describe(
      "photo (an image), document (a PDF) or signature (the site contact's, an image drawn on the " +
        "contractor's phone: PNG from a signature pad); by default photo or document, what the file is.",
    ),
  caption: z.string().max(500).optional().describe("What the file shows, up to 500 characters."),
  signer_name: z
    .string()
    .trim()
    .min(1, "signer_name must not be empty")
    .max(200)
    .optional()
    .describe("With kind signature (and only then): the signer's name, as they print it."),
});

type Limits = Pick<
  Config,
  "ATTACHMENT_MAX_BYTES" | "ATTACHMENT_ORDER_MAX_BYTES" | "ATTACHMENT_ORDER_MAX_FILES"
>;

/** 409 attachment_quota_exceeded when the order already holds its most attachments (or bytes). */
function quotaRefusal(existing: readonly Attachment[], size: number, limits: Limits): ApiError | null {
  if (existing.length >= limits.ATTACHMENT_ORDER_MAX_FILES) {
    return new ApiError(
      "attachment_quota_exceeded",
      `An order holds at most ${limits.ATTACHMENT_ORDER_MAX_FILES} attachments (ATTACHMENT_ORDER_MAX_FILES); this one has ${existing.length}.`,
      { extra: { field: "file", limit: "files_per_order", limit_files: limits.ATTACHMENT_ORDER_MAX_FILES } },
    );
  }
  const used = existing.reduce((sum, a) => sum + a.size, 0);
  if (used + size > limits.ATTACHMENT_ORDER_MAX_BYTES) {
    return new ApiError(
      "attachment_quota_exceeded",
      `An order's attachments hold at most ${limits.ATTACHMENT_ORDER_MAX_BYTES} bytes (ATTACHMENT_ORDER_MAX_BYTES); ${used} are used and this file needs ${size}.`,
      {
        extra: {
          field: "file",
          limit: "bytes_per_order",
          limit_bytes: limits.ATTACHMENT_ORDER_MAX_BYTES,
          used_bytes: used,
        },
      },
    );
  }
  return null;
}

interface Form {
  bytes: Buffer;
  filename: string | null;
  fields: z.output<typeof uploadFields>;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
const UNSAFE_IN_NAME = /[\u0000-\u001f\u007f/\\]/g;

/** The name a client gave its file, kept for Content-Disposition: printable, at most 200 characters. */
function cleanName(name: string | null): string | null {
  if (name === null) return null;
  const clean = name.replace(UNSAFE_IN_NAME, "_").slice(0, 200).trim();
  return clean === "" ? null : clean;
}

function formOf(received: ReceivedUpload): Form {
  const parsed = uploadFields.safeParse(received.fields);
  const errors = parsed.success ? [] : fieldErrors(parsed.error);
  if (received.file === null) errors.push({ field: "file", message: "file is required (a part named file)" });
  if (errors.length > 0 || !parsed.success || received.file === null) throw validationError(errors);
  return { bytes: received.file.bytes, filename: cleanName(received.file.filename), fields: parsed.data };
}

type Kind = "photo" | "document" | "signature";

function kindOf(media: ProcessedMedia, asked: Kind | undefined): Kind {
  const kind = media.mediaType === "application/pdf" ? "document" : "photo";
  if (asked === "signature" && kind === "photo") return "signature";
  if (asked !== undefined && asked !== kind) {
    throw validationError([
      {
        field: "kind",
        message: `kind is ${kind} for a ${media.mediaType} (photo or signature: an image; document: a PDF)`,
      },
    ]);
  }
  return kind;
}

/**
 * A signature is the site contact's, drawn on the phone of the contractor holding the job while it is on
 * site, and names its signer; signer_name goes with a signature only.
 */
function checkSignature(access: OrderAccess, fields: z.output<typeof uploadFields>): void {
  if (fields.kind !== "signature") {
    if (fields.signer_name !== undefined)
      throw validationError([{ field: "signer_name", message: "signer_name goes with kind signature only" }]);
    return;
  }
  if (access.role !== "contractor") {
    throw new ApiError(
      "key_kind_not_allowed",
      "A signature is collected on the phone of the contractor on site: the account adds photos and documents.",
    );
  }
  if (access.order.status !== "on_site") {
    throw new ApiError(
      "invalid_transition",
      `A signature is collected on site: this job is ${access.order.status}; report on_site first.`,
      { extra: { current_status: access.order.status } },
    );
  }
  if (fields.signer_name === undefined)
    throw validationError([{ field: "signer_name", message: "signer_name is required with kind signature" }]);
}

/** The sealed record of an attachment: its digests, what it is, and what the photo claims. */
function attachmentRecord(
  access: Pick<OrderAccess, "order" | "actor" | "role">,
  a: Omit<Attachment, "seal">,
  media: ProcessedMedia,
  received: Buffer,
) {
  const { claims } = media;
  return sealRecord({
    kind: "order.attachment_added",
    at: a.createdAt,
    accountId: access.order.account_id,
    livemode: access.order.livemode,
    orderId: access.order.id,
    actor: access.actor,
    data: {
      attachment_id: a.id,
      kind: a.kind,
      media_type: a.mediaType,
      sha256: a.sha256,
      size: a.size,
      received_sha256: received.equals(media.bytes) ? a.sha256 : sha256Of(received),
      received_size: received.length,
      thumbnail_sha256: a.thumbnailSha256,
      caption: a.caption,
      ...(a.signerName !== null ? { signer_name: a.signerName } : {}),
      uploader_role: access.role,
      // The contractor on the job (a disclosure for it, its handle for the account): its records list
      // the proof of its job, whoever added it.
      ...(access.order.contractor_id ? { contractor_id: access.order.contractor_id } : {}),
      ...(claims.capturedAt ? { captured_at: claims.capturedAt } : {}),
      ...(claims.position ? { captured_position: claims.position } : {}),
    },
  });
}

/** 413 payload_too_large: a file over ATTACHMENT_MAX_BYTES (the multipart reader's words, too). */
export function fileTooLarge(maxBytes: number): ApiError {
  return new ApiError("payload_too_large", `file must be at most ${maxBytes} bytes (ATTACHMENT_MAX_BYTES).`, {
    extra: { field: "file", limit_bytes: maxBytes },
  });
}

/**
 * Whether a resumable upload of `declaredBytes` to `orderId` may start, before any byte of it is accepted:
 * the same caller rules as a whole upload (404, 403, 409 invalid_transition), its size against the file
 * limit (413) and the order's quota (409), and its fields (422). The finished upload then goes through
 * addAttachment like any other, every check again.
 */
export async function checkUploadStart(
  ctx: OperationContext,
  orderId: string,
  declaredBytes: number,
  fields: Record<string, string>,
): Promise<OrderAccess> {
  const { store, config } = ctx.services;
  const access = await orderForUpload(ctx, orderId);
  if (declaredBytes > config.ATTACHMENT_MAX_BYTES) throw fileTooLarge(config.ATTACHMENT_MAX_BYTES);
  const refused = quotaRefusal(await store.attachments.ofOrder(orderId), declaredBytes, config);
  if (refused) throw refused;
  const parsed = uploadFields.safeParse(fields);
  if (!parsed.success) throw validationError(fieldErrors(parsed.error));
  checkSignature(access, parsed.data);
  return access;
}

/** A file as received, with its form's fields. */
export interface ReceivedFile {
  bytes: Buffer;
  filename: string | null;
  fields: z.output<typeof uploadFields>;
}

/** Runs an upload to `orderId` through every check; the attachment as stored. */
export async function addAttachment(ctx: OperationContext, orderId: string): Promise<Attachment> {
  const { store, config } = ctx.services;
  const access = await orderForUpload(ctx, orderId);
  const early = quotaRefusal(await store.attachments.ofOrder(orderId), 0, config);
  if (early) throw early;
  if (!ctx.readUpload) throw new Error("an upload operation called without an upload");
  const file = formOf(await ctx.readUpload(config.ATTACHMENT_MAX_BYTES));
  checkSignature(access, file.fields);
  return storeAttachment(ctx.services, access, file);
}

/**
 * Stores a file the caller may add (its access and its fields checked): sniffed and processed, its blobs
 * put (durable), then its record sealed and its row written in one transaction, within the order's quota.
 * Also what the sandbox's simulated contractors add their photos and signatures with.
 */
export async function storeAttachment(
  services: Pick<Services, "store" | "blobs" | "config" | "now">,
  access: Pick<OrderAccess, "order" | "actor" | "role">,
  file: ReceivedFile,
): Promise<Attachment> {
  const { store, blobs, config } = services;
  const { bytes, filename, fields } = file;
  const orderId = access.order.id;
  const media = await processMedia(bytes);
  const kind = kindOf(media, fields.kind);
  const stored = await blobs.put(media.bytes);
  const thumbnail = media.thumbnail ? await blobs.put(media.thumbnail) : null;
  const draft: Omit<Attachment, "seal"> = {
    id: newSortableId("att"),
    orderId,
    livemode: access.order.livemode,
    sha256: stored.sha256,
    size: stored.size,
    mediaType: media.mediaType,
    kind,
    caption: fields.caption ?? null,
    filename,
    uploader: access.actor,
    createdAt: services.now().toISOString(),
    thumbnailSha256: thumbnail?.sha256 ?? null,
    signerName: kind === "signature" ? (fields.signer_name ?? null) : null,
  };
  const entry = attachmentRecord(access, draft, media, bytes);
  const attachment: Attachment = { ...draft, seal: entry.seal };
  const refusal = await store.write(async (tx) => {
    const refused = quotaRefusal(await store.attachments.ofOrder(orderId, tx), attachment.size, config);
    if (refused) return refused;
    tx.appendAudit(entry);
    await store.attachments.insert(attachment, tx);
    return null;
  });
  if (refusal) throw refusal;
  return attachment;
}
