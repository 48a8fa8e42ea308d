// Proof of work (issue 32): an order's attachments, photos and PDFs, each sealed in the audit log. Upload
// (multipart, REST only; resumable with tus through the same handler: transports/http/tus-uploads.ts),
// list, and download of the bytes or an image's thumbnail (REST serves those with ETag and Range). Who
// may do what: attachment-access.ts.

import { z } from "zod";
import { ApiError } from "../../errors.js";
import type { Attachment } from "../../storage/store.js";
import { defineOperation, type OperationContext } from "../kernel/operation.js";
import { sealRef, sealRefSchema } from "../matching/decision-records.js";
import { orderFor } from "./attachment-access.js";
import { ACCEPTED_MEDIA_TYPES } from "./attachment-media.js";
import { addAttachment, uploadFields } from "./attachment-upload.js";

export const orderIdParam = z.string().min(1).max(64).describe("The order's id.");
const attachmentIdParam = z.string().min(1).max(64).describe("The attachment's id (att_...).");

const attachmentSchema = z
  .object({
    attachment_id: z.string(),
    order_id: z.string(),
    kind: z.enum(["photo", "document", "signature"]),
    media_type: z
      .enum(ACCEPTED_MEDIA_TYPES)
      .describe("Sniffed from the content, never taken from the client."),
    size: z.number().int().nonnegative().describe("Bytes of the stored file (what the content URL serves)."),
    sha256: z
      .string()
      .describe("SHA-256 (hex) of the stored file: its ETag, and the digest its audit record seals."),
    caption: z.string().nullable(),
    signer_name: z.string().nullable().describe("A signature's signer, as printed; null for other kinds."),
    filename: z.string().nullable().describe("The name the uploader's file had, if it sent one."),
    uploaded_by: z.enum(["account", "contractor"]),
    created_at: z.iso.datetime(),
    content_url: z.string().describe("The file: a PDF as sent, an image with its metadata (EXIF) removed."),
    thumbnail_url: z
      .string()
      .nullable()
      .describe("A WebP at most 320 px on its longest side; null for a PDF."),
    record: sealRefSchema.describe("The audit record that seals this attachment's digest."),
  })
  .meta({ id: "Attachment" });

function attachmentView(a: Attachment, ctx: OperationContext): z.input<typeof attachmentSchema> {
  const base = `${ctx.baseUrl}/api/orders/${a.orderId}/attachments/${a.id}`;
  return {
    attachment_id: a.id,
    order_id: a.orderId,
    kind: a.kind,
    media_type: a.mediaType as (typeof ACCEPTED_MEDIA_TYPES)[number],
    size: a.size,
    sha256: a.sha256,
    caption: a.caption,
    signer_name: a.signerName,
    filename: a.filename,
    uploaded_by: a.uploader.startsWith("contractor:") ? "contractor" : "account",
    created_at: a.createdAt,
    content_url: base,
    thumbnail_url: a.thumbnailSha256 ? `${base}/thumbnail` : null,
    record: sealRef(ctx.baseUrl, a.seal, "order.attachment_added", a.createdAt),
  };
}

export const attachmentUploadOperation = defineOperation({
  id: "orderAttachmentUpload",
  name: "order.attachment_upload",
  summary: "Add a photo or PDF to an order",
  description:
    "multipart/form-data: one part `file` (JPEG, PNG or WebP image, or PDF; judged from its content; HEIC " +
    "is refused: send JPEG) and optional `kind` and `caption`. The account that owns the order may add " +
    "files at any time; the contractor holding the job while it is accepted, en route, on site or " +
    "completed. An image is stored without its metadata, after its capture time and GPS position are read " +
    "from its EXIF as claims of the sealed record (order.attachment_added; the position is shown to the " +
    "account and the dispatch team only). 413 payload_too_large over ATTACHMENT_MAX_BYTES, 415 " +
    "unsupported_media_type for another type, 422 unreadable_file for a truncated or damaged file, 409 " +
    "attachment_quota_exceeded past the order's limits. For phones on a bad signal the same upload is " +
    "resumable with the tus protocol at /api/orders/{order_id}/uploads (docs/proof-of-work.md).",
  access: "any_key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/orders/:order_id/attachments", input: "params" },
  problems: [404, 409, 413, 415],
  upload: { fields: uploadFields },
  input: z.strictObject({ order_id: orderIdParam }),
  output: attachmentSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    return attachmentView(await addAttachment(ctx, input.order_id), ctx);
  },
});

export const attachmentListOperation = defineOperation({
  id: "orderAttachments",
  name: "order.attachments",
  summary: "List an order's attachments",
  description:
    "The photos and PDFs of an order, oldest first, each with its digest and the audit record sealing it. " +
    "The account that owns the order, the contractor holding the job, and the dispatch team may read them.",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/orders/:order_id/attachments", input: "params" },
  input: z.strictObject({ order_id: orderIdParam }),
  output: z.object({ attachments: z.array(attachmentSchema) }).meta({ id: "AttachmentList" }),
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const { order } = await orderFor(ctx, input.order_id);
    const attachments = await ctx.services.store.attachments.ofOrder(order.id);
    return { attachments: attachments.map((a) => attachmentView(a, ctx)) };
  },
});

/** What a download names: the blob REST serves (transports/http/blob-reply.ts). */
export const blobDescriptorSchema = z
  .object({
    sha256: z.string(),
    media_type: z.string(),
    size: z.number().int().nonnegative(),
    filename: z.string(),
  })
  .describe("What REST serves the bytes of (the OpenAPI document shows the bytes, not this).");

const attachmentParams = z.strictObject({ order_id: orderIdParam, attachment_id: attachmentIdParam });

async function attachmentOf(ctx: OperationContext, input: z.output<typeof attachmentParams>) {
  const { order } = await orderFor(ctx, input.order_id);
  const attachment = await ctx.services.store.attachments.byId(input.attachment_id);
  if (!attachment || attachment.orderId !== order.id) {
    throw new ApiError("not_found", `No attachment ${input.attachment_id} on order ${input.order_id}.`);
  }
  return attachment;
}

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "application/pdf": "pdf",
};

export const attachmentContentOperation = defineOperation({
  id: "orderAttachmentContent",
  name: "order.attachment_content",
  summary: "Download an attachment",
  description:
    "The file's bytes: a PDF as sent; an image re-encoded without its metadata (no EXIF position or " +
    "device), its orientation applied. ETag is the SHA-256 of these bytes (If-None-Match answers 304); " +
    "Range: bytes=... answers 206 with one range (416 range_not_satisfiable when it lies past the end).",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/orders/:order_id/attachments/:attachment_id", input: "params" },
  download: { mediaTypes: ACCEPTED_MEDIA_TYPES },
  input: attachmentParams,
  output: blobDescriptorSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", attachment_id: "att_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const a = await attachmentOf(ctx, input);
    const filename = a.filename ?? `${a.id}.${EXTENSIONS[a.mediaType] ?? "bin"}`;
    return { sha256: a.sha256, media_type: a.mediaType, size: a.size, filename };
  },
});

export const attachmentThumbnailOperation = defineOperation({
  id: "orderAttachmentThumbnail",
  name: "order.attachment_thumbnail",
  summary: "Download an image attachment's thumbnail",
  description:
    "A WebP of the image at most 320 px on its longest side, without metadata (404 for a PDF). ETag and " +
    "Range as for the file.",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: {
    method: "GET",
    path: "/api/orders/:order_id/attachments/:attachment_id/thumbnail",
    input: "params",
  },
  download: { mediaTypes: ["image/webp"] },
  input: attachmentParams,
  output: blobDescriptorSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", attachment_id: "att_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const a = await attachmentOf(ctx, input);
    if (a.thumbnailSha256 === null)
      throw new ApiError("not_found", `Attachment ${a.id} is a PDF: it has no thumbnail.`);
    const size = await ctx.services.blobs.size(a.thumbnailSha256);
    if (size === undefined) throw new Error(`attachment ${a.id}: its thumbnail's blob is missing`);
    return { sha256: a.thumbnailSha256, media_type: "image/webp", size, filename: `${a.id}-thumbnail.webp` };
  },
});
