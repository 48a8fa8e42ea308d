// Resumable uploads (issue 32): the tus protocol (1.0.0, with the creation, creation-with-upload,
// expiration and termination extensions) served by @tus/server at /api/orders/{order_id}/uploads, for
// phones on a bad signal. A protocol, not an operation: this file translates it, and a finished upload
// becomes an attachment through the operation a multipart upload calls (orderAttachmentUpload), every
// check of it run again (who may add, sniffing, sharp, EXIF claims, quota, the sealed record).
//
// Each request passes the same gate as that operation (x-api-key or the console's session, its rate
// limit), then the checks before tus sees it: POST (creation) the caller's right to add to the order,
// the declared Upload-Length against the file limit (413) and the order's quota (409), and the metadata
// fields (422); HEAD, PATCH and DELETE the upload's being this caller's, on this order (404 otherwise),
// and a PATCH's Upload-Offset (409). Errors are problem documents, tus's own (a missing Tus-Resumable
// header...) mapped to the closed set. The bytes go to the database (storage/uploads/). The last PATCH
// answers the attachment (its JSON, and its id in Attachment-Id); a later HEAD names it in Attachment-Id.

import { Readable } from "node:stream";
import { MemoryLocker, Metadata, Server } from "@tus/server";
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, type ErrorCode, toProblem } from "../../errors.js";
import { newId } from "../../ids.js";
import { executeForWire } from "../../operations/kernel/gate.js";
import { resultValue } from "../../operations/kernel/json-result.js";
import type { OperationContext, Services } from "../../operations/kernel/operation.js";
import { orderForUpload } from "../../operations/orders/attachment-access.js";
import { checkUploadStart } from "../../operations/orders/attachment-upload.js";
import { attachmentUploadOperation } from "../../operations/orders/attachments.js";
import type { PartialUploadStore } from "../../storage/uploads/partial-upload-store.js";
import { contextOf, gateHook } from "./operation-routes.js";

const UPLOADS_PATH = "/api/orders/:order_id/uploads";
const UPLOAD_PATH = `${UPLOADS_PATH}/:upload_id`;
/**
 * The attachment a finished upload became, on the last PATCH's answer and on every later HEAD: a client
 * whose last PATCH's answer was lost (the signal dropped as it came back) resumes with a HEAD, finds the
 * whole file there, and learns from this header what it became (not a tus header: this service's own).
 */
const ATTACHMENT_ID_HEADER = "Attachment-Id";

/** What a request brought to the tus server's hooks (keyed by the web Request handed to it). */
interface Pending {
  ctx: OperationContext;
  orderId: string;
  /** The upload a HEAD, PATCH or DELETE names, or the id a POST creates. */
  uploadId: string;
}

/** The Upload-Metadata fields the attachment takes (the others, e.g. Uppy's filetype, are ignored). */
function fieldsOf(metadata: Record<string, string | null>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const name of ["kind", "caption", "signer_name"]) {
    const value = metadata[name];
    if (typeof value === "string") fields[name] = value;
  }
  return fields;
}

function filenameOf(metadata: Record<string, string | null>): string | null {
  return metadata.filename ?? metadata.name ?? null;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function metadataOf(request: FastifyRequest): Record<string, string | null> {
  const sent = header(request, "upload-metadata");
  if (sent === undefined) return {};
  try {
    return Metadata.parse(sent);
  } catch {
    throw new ApiError(
      "invalid_request",
      "Upload-Metadata is not valid (key base64value pairs, comma-separated).",
    );
  }
}

function declaredLength(request: FastifyRequest): number {
  const sent = header(request, "upload-length");
  if (sent === undefined || !/^\d{1,15}$/.test(sent)) {
    throw new ApiError(
      "invalid_request",
      "Upload-Length is required: the file's size in bytes (Upload-Defer-Length is not supported).",
    );
  }
  return Number(sent);
}

function notFound(orderId: string, uploadId: string): ApiError {
  return new ApiError("not_found", `No upload ${uploadId} of this API key on order ${orderId}.`);
}

/** tus's own refusals (plain text) as problems of the closed set. */
function tusProblem(status: number, text: string): ApiError {
  const codes: Record<number, ErrorCode> = {
    404: "not_found",
    409: "upload_offset_mismatch",
    410: "not_found",
    413: "payload_too_large",
    415: "unsupported_media_type",
  };
  const code = codes[status] ?? (status >= 500 ? "internal_error" : "invalid_request");
  const detail = status === 410 ? "The upload expired (unfinished uploads are kept for a day)." : text.trim();
  return new ApiError(code, `tus: ${detail}`);
}

/** The web Request @tus/server reads: the same method, headers and (unread) body. */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const hasBody = request.method === "POST" || request.method === "PATCH";
  return new Request(`http://localhost${request.url}`, {
    method: request.method,
    headers,
    ...(hasBody ? { body: Readable.toWeb(request.raw) as ReadableStream, duplex: "half" } : {}),
  } as RequestInit);
}

interface FinishReply {
  status_code: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The finished upload, accepted as an attachment (200, its JSON) or refused (its problem; the upload then
 * removed). One request at a time does it (claimFinish); another finds 204 (nothing to add).
 */
async function finish(
  partial: PartialUploadStore,
  pending: Pending,
  metadata: Record<string, string | null>,
): Promise<FinishReply> {
  const id = pending.uploadId;
  if (!(await partial.claimFinish(id))) return { status_code: 204, headers: {}, body: "" };
  const bytes = await partial.read(id);
  const ctx: OperationContext = {
    ...pending.ctx,
    readUpload: async () => ({ fields: fieldsOf(metadata), file: { bytes, filename: filenameOf(metadata) } }),
  };
  try {
    const result = resultValue(
      await executeForWire(attachmentUploadOperation, ctx, { order_id: pending.orderId }),
    ) as { attachment_id: string };
    await partial.accepted(id, result.attachment_id);
    return {
      status_code: 200,
      headers: { "Content-Type": "application/json", [ATTACHMENT_ID_HEADER]: result.attachment_id },
      body: JSON.stringify(result),
    };
  } catch (error) {
    // A refusal (415, 422, 409...) ends the upload: nothing stored, nothing sealed. Anything else (a
    // store that is down, a bug) keeps it, unclaimed, for the client's next HEAD to finish.
    if (!(error instanceof ApiError) || error.status >= 500) {
      await partial.releaseFinish(id).catch(() => undefined);
      throw error;
    }
    await partial.remove(id);
    const path = `/api/orders/${pending.orderId}/uploads/${id}`;
    return {
      status_code: error.status,
      headers: { "Content-Type": "application/problem+json", ...(error.headers ?? {}) },
      body: JSON.stringify(toProblem(error, ctx.requestId, path)),
    };
  }
}

function tusServer(services: Services, pending: WeakMap<Request, Pending>): Server {
  const partial = services.store.partialUploads;
  const of = (req: Request): Pending => {
    const found = pending.get(req);
    if (!found) throw new Error("a tus request that did not come through the uploads route");
    return found;
  };
  return new Server({
    // The routes below decide the path; these name the upload and its URL.
    path: "/api/orders/uploads",
    datastore: partial,
    maxSize: services.config.ATTACHMENT_MAX_BYTES,
    // Locks per upload within this process (a new PATCH makes a stalled one give way). Across processes
    // the store's offset-checked commits keep an upload whole (storage/uploads/partial-upload-store.ts).
    locker: new MemoryLocker(),
    namingFunction: (req) => of(req).uploadId,
    getFileIdFromRequest: (req) => pending.get(req)?.uploadId,
    generateUrl: (req, { id }) => {
      const { ctx, orderId } = of(req);
      return `${ctx.baseUrl}/api/orders/${orderId}/uploads/${id}`;
    },
    onUploadFinish: (req, upload) => finish(partial, of(req), upload.metadata ?? {}),
  });
}

/** The tus routes, in a scope of their own whose bodies Fastify leaves unread (@tus/server reads them). */
export function registerTusUploads(app: FastifyInstance, services: Services): void {
  const op = attachmentUploadOperation;
  const partial = services.store.partialUploads;
  const pending = new WeakMap<Request, Pending>();
  const tus = tusServer(services, pending);
  const gate = gateHook(op, services);

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.rateHeaders) reply.headers(request.rateHeaders);
    reply.header("Tus-Resumable", "1.0.0");
    const params = request.params as { order_id: string; upload_id?: string };
    const ctx = contextOf(op, services, request, reply, { order_id: params.order_id });
    let uploadId = params.upload_id;
    let attachmentId: string | null = null;
    if (uploadId === undefined) {
      const length = declaredLength(request);
      const metadata = metadataOf(request);
      const access = await checkUploadStart(ctx, params.order_id, length, fieldsOf(metadata));
      uploadId = newId("upl", 24);
      partial.expect(uploadId, { orderId: params.order_id, uploader: access.actor });
    } else {
      const access = await orderForUpload(ctx, params.order_id);
      const found = await partial.find(uploadId);
      if (!found || found.orderId !== params.order_id || found.uploader !== access.actor) {
        throw notFound(params.order_id, uploadId);
      }
      if (found.offset === found.size && found.attachmentId === null && request.method !== "DELETE") {
        // Every byte arrived but no attachment was made: the process taking the last PATCH stopped before
        // (or its store failed). The client's HEAD (or PATCH) finishes it now; a refusal is its answer.
        const done = await finish(partial, { ctx, orderId: params.order_id, uploadId }, found.metadata);
        if (done.status_code >= 400) {
          return reply.status(done.status_code).headers(done.headers).send(done.body);
        }
        attachmentId = done.headers[ATTACHMENT_ID_HEADER] ?? null;
      } else {
        attachmentId = found.attachmentId;
      }
      const offset = header(request, "upload-offset");
      if (request.method === "PATCH" && offset !== undefined && Number(offset) !== found.offset) {
        throw new ApiError(
          "upload_offset_mismatch",
          `Upload-Offset is ${offset}, but the upload has ${found.offset} bytes: resume from there (HEAD tells where).`,
          { extra: { upload_offset: found.offset, upload_length: found.size } },
        );
      }
    }
    const web = webRequestOf(request);
    pending.set(web, { ctx, orderId: params.order_id, uploadId });
    let response: Response;
    try {
      response = await tus.handleWeb(web);
    } finally {
      if (params.upload_id === undefined) partial.forget(uploadId);
    }
    const body = Buffer.from(await response.arrayBuffer());
    for (const [name, value] of response.headers) {
      // No CORS beyond the app's own; the length is Fastify's to set.
      if (name.startsWith("access-control-") || name === "content-length") continue;
      reply.header(name, value);
    }
    if (attachmentId !== null && request.method === "HEAD") reply.header(ATTACHMENT_ID_HEADER, attachmentId);
    const type = response.headers.get("content-type") ?? "";
    if (response.status >= 400 && !type.startsWith("application/problem+json")) {
      throw tusProblem(response.status, body.toString("utf8"));
    }
    return reply.status(response.status).send(body.length > 0 ? body : undefined);
  };

  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null));
    const routes: Array<["POST" | "HEAD" | "PATCH" | "DELETE", string]> = [
      ["POST", UPLOADS_PATH],
      ["HEAD", UPLOAD_PATH],
      ["PATCH", UPLOAD_PATH],
      ["DELETE", UPLOAD_PATH],
    ];
    for (const [method, url] of routes) {
      scope.route({
        method,
        url,
        schema: { hide: true },
        // The metrics' label (request-hooks.ts).
        config: { operation: "orderAttachmentResumable" } as FastifyContextConfig,
        onRequest: (request, _reply, done) => gate(request, done),
        handler: handle,
      });
    }
  });
}
