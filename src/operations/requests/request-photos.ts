// Photos with a request (issue 35): up to REQUEST_LIMITS.photos, sent by the form's page after the report,
// each within REQUEST_LIMITS.photoBytes, its type read from its content (attachment-media.ts: JPEG, PNG or
// WebP; metadata stripped, a thumbnail made), its bytes in the blob store like an attachment's. A photo
// goes to a request made through the same link within REQUEST_LIMITS.photoMinutes; any other reference
// reads as not found. Photos survive the request: when it becomes an order, or is linked to one, they are
// attached to that order (order.attachment_added, uploaded by system:request:<id>), in the same
// transaction, within the order's attachment limit.

import { sealRecord } from "../../audit/record.js";
import { REQUEST_LIMITS } from "../../domain/requests/request.js";
import { ApiError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import type { RequestLinksTable, RequestPhotosTable, RequestsTable } from "../../storage/schema.js";
import type { Attachment, WriteTx } from "../../storage/store.js";
import type { Services } from "../kernel/operation.js";
import { processMedia } from "../orders/attachment-media.js";

/** 413: a photo over the limit. */
function photoTooLarge(): ApiError {
  return new ApiError("payload_too_large", `A photo must be at most ${REQUEST_LIMITS.photoBytes} bytes.`, {
    extra: { field: "photo", limit_bytes: REQUEST_LIMITS.photoBytes },
  });
}

/**
 * Attaches `photos` of request `r` to its order (r.order_id), each sealed, in `tx`; those past the order's
 * attachment limit stay with the request only. How many were attached.
 */
export async function attachPhotos(
  services: Pick<Services, "store" | "config">,
  r: Pick<RequestsTable, "id" | "account_id" | "livemode">,
  orderId: string,
  photos: readonly RequestPhotosTable[],
  at: string,
  tx: WriteTx,
): Promise<number> {
  const { store, config } = services;
  let held = (await store.attachments.ofOrder(orderId, tx)).length;
  let attached = 0;
  for (const p of photos) {
    if (held >= config.ATTACHMENT_ORDER_MAX_FILES) break;
    const draft: Omit<Attachment, "seal"> = {
      id: newSortableId("att"),
      orderId,
      livemode: r.livemode === 1,
      sha256: p.sha256,
      size: p.size,
      mediaType: p.media_type,
      kind: "photo",
      caption: `Sent with request ${r.id}`,
      filename: null,
      uploader: `system:request:${r.id}`,
      createdAt: at,
      thumbnailSha256: p.thumbnail_sha256,
      signerName: null,
    };
    const record = sealRecord({
      kind: "order.attachment_added",
      at,
      accountId: r.account_id,
      livemode: r.livemode === 1,
      orderId,
      actor: `system:request:${r.id}`,
      data: {
        attachment_id: draft.id,
        kind: "photo",
        media_type: p.media_type,
        sha256: p.sha256,
        size: p.size,
        thumbnail_sha256: p.thumbnail_sha256,
        caption: draft.caption,
        uploader_role: "request",
        request_id: r.id,
      },
    });
    tx.appendAudit(record);
    await store.attachments.insert({ ...draft, seal: record.seal }, tx);
    held++;
    attached++;
  }
  return attached;
}

/**
 * Adds a photo to the request `reference` made through `link`: 404 (the form's one answer) for a request
 * not made through it or older than the window, 409 past the photos a request takes, 415/422 for a file
 * that is not a readable JPEG, PNG or WebP. The photo's position, and whether it went to an order too.
 */
export async function addRequestPhoto(
  services: Services,
  link: RequestLinksTable,
  reference: string,
  bytes: Buffer,
  gone: () => ApiError,
): Promise<{ position: number; attached: boolean }> {
  const { store, blobs } = services;
  const r = await store.requests.byId(reference);
  const now = services.now();
  const windowMs = REQUEST_LIMITS.photoMinutes * 60_000;
  if (!r || r.link_id !== link.id || now.getTime() - Date.parse(r.created_at) > windowMs) throw gone();
  if (bytes.length > REQUEST_LIMITS.photoBytes) throw photoTooLarge();
  const media = await processMedia(bytes);
  if (!media.mediaType.startsWith("image/"))
    throw new ApiError("unsupported_media_type", "A photo is a JPEG, PNG or WebP image.");
  const stored = await blobs.put(media.bytes);
  const thumbnail = media.thumbnail ? await blobs.put(media.thumbnail) : null;
  const at = now.toISOString();
  const outcome = await store.write(async (tx) => {
    let row: RequestPhotosTable;
    // Two photos sent at once: the one that loses a position takes the next, or is over the quota.
    for (;;) {
      const photos = await store.requests.photosOf(r.id, tx);
      if (photos.length >= REQUEST_LIMITS.photos) return null;
      row = {
        request_id: r.id,
        position: Math.max(0, ...photos.map((p) => p.position)) + 1,
        sha256: stored.sha256,
        size: stored.size,
        media_type: media.mediaType,
        thumbnail_sha256: thumbnail?.sha256 ?? null,
        created_at: at,
      };
      if (await store.requests.addPhoto(row, tx)) break;
    }
    // Sent after the request was already made an order (the create policy) or linked: attached now.
    const current = await store.requests.byId(r.id, tx);
    const orderId = current?.order_id ?? null;
    const attached = orderId !== null && (await attachPhotos(services, r, orderId, [row], at, tx)) > 0;
    return { position: row.position, attached };
  });
  if (outcome === null) {
    throw new ApiError(
      "attachment_quota_exceeded",
      `A request takes at most ${REQUEST_LIMITS.photos} photos.`,
      { extra: { field: "photo", limit: REQUEST_LIMITS.photos } },
    );
  }
  return outcome;
}
