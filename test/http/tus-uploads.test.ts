// Resumable uploads (issue 32): a real tus client (tus-js-client, in Node) against the server listening on
// 127.0.0.1, its upload interrupted after the first chunk and resumed from the stored upload URL; and the
// protocol's refusals, each a problem that stores and seals nothing. On SQLite, and on PostgreSQL in the
// postgres project (the partial uploads live in the database on both).

import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { type DetailedError, type HttpResponse, Upload } from "tus-js-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebhookDispatcher } from "../../src/services/create-services.js";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
};
const MAX_BYTES = 300_000;
const CHUNK = 32 * 1024;

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** A PDF of about `bytes` bytes (a long comment before the end marker): stored as sent. */
function pdfOf(bytes: number): Buffer {
  const head =
    "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n";
  const filler = `%${"x".repeat(78)}\n`.repeat(Math.ceil(bytes / 80));
  return Buffer.from(`${head}${filler}trailer<</Root 1 0 R>>\n%%EOF\n`, "latin1");
}

let h: Harness;
let base: string;
let caller: string;
let holderKey: string;
let otherContractorKey: string;
let orderId: string;

const newJob = () => acceptedJob(h, caller, holderKey, JOB);

const uploadsOf = (order: string) => `/api/orders/${order}/uploads`;

/** tus's creation request, as a client sends it. */
function create(key: string, order: string, length: number, metadata = "") {
  return h.app.inject({
    method: "POST",
    url: uploadsOf(order),
    headers: {
      "x-api-key": key,
      "tus-resumable": "1.0.0",
      "upload-length": String(length),
      ...(metadata ? { "upload-metadata": metadata } : {}),
    },
  });
}

function patch(key: string, url: string, offset: number, bytes: Buffer) {
  return h.app.inject({
    method: "PATCH",
    url,
    headers: {
      "x-api-key": key,
      "tus-resumable": "1.0.0",
      "upload-offset": String(offset),
      "content-type": "application/offset+octet-stream",
    },
    payload: bytes,
  });
}

/** The audit records of attachments on `order`, as the account reads them. */
async function sealedOn(order: string) {
  const res = await h.get(`/api/audit?order_id=${order}&limit=200`, { "x-api-key": caller });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().records as Array<{ kind: string; disclosed: Record<string, unknown> }>).filter(
    (r) => r.kind === "order.attachment_added",
  );
}

/** Runs a tus-js-client upload of `file` to its end (or its error), with the given hooks. */
function tusUpload(
  file: Buffer,
  key: string,
  order: string,
  options: {
    uploadUrl?: string;
    metadata?: Record<string, string>;
    onChunkComplete?: (upload: Upload, bytesAccepted: number) => void;
  } = {},
): { upload: Upload; done: Promise<{ response?: HttpResponse; error?: DetailedError; aborted?: true }> } {
  let upload: Upload;
  const done = new Promise<{ response?: HttpResponse; error?: DetailedError; aborted?: true }>((resolve) => {
    upload = new Upload(file, {
      endpoint: `${base}${uploadsOf(order)}`,
      ...(options.uploadUrl ? { uploadUrl: options.uploadUrl } : {}),
      headers: { "x-api-key": key },
      metadata: options.metadata ?? { filename: "report.pdf", caption: "Signed work order" },
      chunkSize: CHUNK,
      retryDelays: [],
      onChunkComplete: (_size, accepted) => {
        if (options.onChunkComplete) {
          options.onChunkComplete(upload, accepted);
        }
      },
      onSuccess: ({ lastResponse }) => resolve({ response: lastResponse }),
      onError: (error) => resolve({ error: error as DetailedError }),
    });
    upload.start();
  });
  // biome-ignore lint/style/noNonNullAssertion: assigned synchronously by the promise's executor.
  return { upload: upload!, done };
}

beforeAll(async () => {
  h = await createHarness({
    ATTACHMENT_MAX_BYTES: String(MAX_BYTES),
    ATTACHMENT_ORDER_MAX_BYTES: "400000",
  });
  ({ caller, holderKey, otherContractorKey } = await crewOf(h));
  orderId = await newJob();
  await h.app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => h.close());

describe("a tus upload interrupted and resumed", () => {
  const file = pdfOf(120_000);
  let attachment: Record<string, unknown>;
  let uploadUrl: string;

  beforeAll(async () => {
    // The first run stops after its first chunk is acknowledged, as a phone losing its signal.
    let stopped: () => void = () => {};
    const aborted = new Promise<{ aborted: true }>((resolve) => {
      stopped = () => resolve({ aborted: true });
    });
    const first = tusUpload(file, holderKey, orderId, {
      onChunkComplete: (upload) => {
        void upload.abort().then(stopped);
      },
    });
    expect(await Promise.race([first.done, aborted])).toEqual({ aborted: true });
    uploadUrl = first.upload.url as string;
  });

  it("keeps what was acknowledged, and the resumed upload goes on from there to an attachment", async () => {
    // What the server holds: at least the acknowledged first chunk (committed before its 204), not the
    // whole file.
    const uploadId = uploadUrl.split("/").at(-1) as string;
    const held = await h.services.store.partialUploads.find(uploadId);
    expect(held?.offset).toBeGreaterThanOrEqual(CHUNK);
    expect(held?.offset).toBeLessThan(file.length);
    expect(held?.attachmentId).toBeNull();
    expect(await h.services.store.attachments.ofOrder(orderId)).toHaveLength(0);

    const head = await h.app.inject({
      method: "HEAD",
      url: new URL(uploadUrl).pathname,
      headers: { "x-api-key": holderKey, "tus-resumable": "1.0.0" },
    });
    expect(head.statusCode).toBe(200);
    expect(Number(head.headers["upload-offset"])).toBeGreaterThanOrEqual(CHUNK);
    expect(head.headers["upload-length"]).toBe(String(file.length));
    // Unfinished, it names no attachment.
    expect(head.headers["attachment-id"]).toBeUndefined();

    const accepted: number[] = [];
    const resumed = tusUpload(file, holderKey, orderId, {
      uploadUrl,
      onChunkComplete: (_upload, bytesAccepted) => accepted.push(bytesAccepted),
    });
    const { response, error } = await resumed.done;
    expect(error).toBeUndefined();
    // It resumed (a HEAD, then PATCHes from the server's offset): its first chunk ended a chunk past the
    // acknowledged one at least; starting over, it would have ended at CHUNK.
    expect(accepted[0]).toBeGreaterThanOrEqual(2 * CHUNK);
    expect(response?.getStatus()).toBe(200);
    attachment = JSON.parse(response?.getBody() ?? "{}");
    expect(attachment).toMatchObject({
      kind: "document",
      media_type: "application/pdf",
      size: file.length,
      sha256: sha(file),
      caption: "Signed work order",
      filename: "report.pdf",
      uploaded_by: "contractor",
    });
    expect(response?.getHeader("Attachment-Id")).toBe(attachment.attachment_id);
  });

  it("is listed with the file's SHA-256, its digest sealed, and the partial upload's bytes gone", async () => {
    const res = await h.get(`/api/orders/${orderId}/attachments`, { "x-api-key": caller });
    expect(res.statusCode).toBe(200);
    const [listed] = res.json().attachments;
    expect(listed).toMatchObject({ attachment_id: attachment.attachment_id, sha256: sha(file) });
    const content = await h.get(listed.content_url, { "x-api-key": caller });
    expect(sha(content.rawPayload)).toBe(sha(file));
    const [record] = await sealedOn(orderId);
    expect(record?.disclosed).toMatchObject({ sha256: sha(file), received_sha256: sha(file) });
    const uploadId = uploadUrl.split("/").at(-1) as string;
    expect(await h.services.store.partialUploads.read(uploadId)).toHaveLength(0);
    expect((await h.services.store.partialUploads.find(uploadId))?.attachmentId).toBe(
      attachment.attachment_id,
    );
  });

  it("names the attachment on a later HEAD, for a client whose last PATCH's answer was lost", async () => {
    // Resumed once more (as after a reload, or a retry whose PATCH's answer never came back): tus-js-client's
    // HEAD finds the whole file and ends there, its last answer that HEAD's; the header says what it became.
    const before = (await h.services.store.attachments.ofOrder(orderId)).length;
    const { response, error } = await tusUpload(file, holderKey, orderId, { uploadUrl }).done;
    expect(error).toBeUndefined();
    expect(response?.getStatus()).toBe(200);
    expect(response?.getHeader("Upload-Offset")).toBe(String(file.length));
    expect(response?.getHeader("Attachment-Id")).toBe(attachment.attachment_id);
    expect(await h.services.store.attachments.ofOrder(orderId)).toHaveLength(before);
  });
});

describe("refusals", () => {
  it("answers a PATCH at the wrong offset 409, storing nothing of it", async () => {
    const created = await create(holderKey, orderId, 1000);
    expect(created.statusCode, created.body).toBe(201);
    const path = new URL(created.headers.location as string).pathname;
    expect(path).toMatch(new RegExp(`^${uploadsOf(orderId)}/upl_`));
    // Unfinished, it expires a day after its creation (tus's expiration extension).
    const expires = Date.parse(created.headers["upload-expires"] as string);
    expect(expires - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);
    const first = await patch(holderKey, path, 0, Buffer.alloc(100, 1));
    expect(first.statusCode, first.body).toBe(204);
    expect(first.headers["upload-offset"]).toBe("100");
    const again = await patch(holderKey, path, 0, Buffer.alloc(100, 2));
    const problem = expectProblem(again, 409, "upload_offset_mismatch");
    expect(problem.upload_offset).toBe(100);
    const ahead = await patch(holderKey, path, 500, Buffer.alloc(100, 3));
    expectProblem(ahead, 409, "upload_offset_mismatch");
    const id = path.split("/").at(-1) as string;
    expect((await h.services.store.partialUploads.find(id))?.offset).toBe(100);
    expect((await h.services.store.partialUploads.read(id)).equals(Buffer.alloc(100, 1))).toBe(true);
  });

  it("answers a declared length over the file limit 413 before any byte, creating nothing", async () => {
    const res = await create(holderKey, orderId, MAX_BYTES + 1);
    const problem = expectProblem(res, 413, "payload_too_large");
    expect(problem.limit_bytes).toBe(MAX_BYTES);
    expect(res.headers.location).toBeUndefined();
  });

  it("answers a declared length past the order's quota 409", async () => {
    // 120,000 bytes are held already; 300,000 more pass the order's 400,000.
    const res = await create(holderKey, orderId, MAX_BYTES);
    const problem = expectProblem(res, 409, "attachment_quota_exceeded");
    expect(problem.limit).toBe("bytes_per_order");
  });

  it("answers another contractor 404, to create or to resume", async () => {
    expectProblem(await create(otherContractorKey, orderId, 1000), 404, "not_found");
    const created = await create(holderKey, orderId, 1000);
    const path = new URL(created.headers.location as string).pathname;
    expectProblem(await patch(otherContractorKey, path, 0, Buffer.alloc(10)), 404, "not_found");
    // Nor may another key of the order's own account resume the contractor's upload.
    expectProblem(await patch(caller, path, 0, Buffer.alloc(10)), 404, "not_found");
    const id = path.split("/").at(-1) as string;
    expect((await h.services.store.partialUploads.find(id))?.offset).toBe(0);
  });

  it("answers no key 401 and a bad metadata field 422", async () => {
    const none = await h.app.inject({
      method: "POST",
      url: uploadsOf(orderId),
      headers: { "tus-resumable": "1.0.0", "upload-length": "10" },
    });
    expectProblem(none, 401, "missing_api_key");
    const kind = Buffer.from("video").toString("base64");
    expectProblem(await create(holderKey, orderId, 10, `kind ${kind}`), 422, "validation_failed");
  });

  it("refuses a wrong type found at the end with 415, sealing nothing and keeping nothing", async () => {
    const before = await h.services.store.attachments.ofOrder(orderId);
    const sealedBefore = (await sealedOn(orderId)).length;
    const text = Buffer.from("just some text, not a photo\n".repeat(3000));
    const { upload, done } = tusUpload(text, holderKey, orderId);
    const { error, response } = await done;
    expect(response).toBeUndefined();
    const status = error?.originalResponse?.getStatus();
    expect(status).toBe(415);
    const body = JSON.parse(error?.originalResponse?.getBody() ?? "{}");
    expect(body).toMatchObject({ code: "unsupported_media_type", accepted_types: expect.any(Array) });
    expect(await h.services.store.attachments.ofOrder(orderId)).toHaveLength(before.length);
    expect(await sealedOn(orderId)).toHaveLength(sealedBefore);
    const id = (upload.url as string).split("/").at(-1) as string;
    expect(await h.services.store.partialUploads.find(id)).toBeUndefined();
  });
});

describe("a process stopping between the last byte and the attachment", () => {
  /** An upload whose every byte was committed by the store, its acceptance never run (as at a crash). */
  async function allBytesNoAttachment(bytes: Buffer): Promise<string> {
    const created = await create(holderKey, orderId, bytes.length);
    expect(created.statusCode, created.body).toBe(201);
    const path = new URL(created.headers.location as string).pathname;
    const id = path.split("/").at(-1) as string;
    await h.services.store.partialUploads.write(Readable.from([bytes]), id, 0);
    return `${base}${path}`;
  }

  it("leaves the upload for the client's resumption to finish: an attachment, once", async () => {
    const file = pdfOf(20_000);
    const url = await allBytesNoAttachment(file);
    const before = (await h.services.store.attachments.ofOrder(orderId)).length;
    const { response, error } = await tusUpload(file, holderKey, orderId, { uploadUrl: url }).done;
    expect(error).toBeUndefined();
    expect(response?.getStatus()).toBe(200);
    const after = await h.services.store.attachments.ofOrder(orderId);
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)?.sha256).toBe(sha(file));
    // The HEAD that made it (the client's last request) names it.
    expect(response?.getHeader("Attachment-Id")).toBe(after.at(-1)?.id);
    // Asked again, nothing more is added.
    const head = await h.app.inject({
      method: "HEAD",
      url: new URL(url).pathname,
      headers: { "x-api-key": holderKey, "tus-resumable": "1.0.0" },
    });
    expect(head.statusCode).toBe(200);
    expect(head.headers["upload-offset"]).toBe(String(file.length));
    expect(head.headers["attachment-id"]).toBe(after.at(-1)?.id);
    expect(await h.services.store.attachments.ofOrder(orderId)).toHaveLength(before + 1);
  });

  it("refuses such an upload of the wrong type when the client comes back, keeping nothing", async () => {
    const url = await allBytesNoAttachment(Buffer.from("plain text, not a photo\n".repeat(100)));
    const before = (await h.services.store.attachments.ofOrder(orderId)).length;
    const { error } = await tusUpload(
      Buffer.from("plain text, not a photo\n".repeat(100)),
      holderKey,
      orderId,
      {
        uploadUrl: url,
      },
    ).done;
    expect(error?.originalResponse?.getStatus()).toBe(415);
    expect(await h.services.store.attachments.ofOrder(orderId)).toHaveLength(before);
    const id = url.split("/").at(-1) as string;
    expect(await h.services.store.partialUploads.find(id)).toBeUndefined();
  });
});

describe("the gate, as the multipart upload's (its operation's key rules and rate limit)", () => {
  it("answers a malformed key and a revoked one 401, another account 404, the dispatch team 403", async () => {
    expectProblem(await create("fsd_live_nope", orderId, 10), 401, "invalid_api_key");
    const issued = await h.services.keys.issue({ accountName: "acme", mode: "live", actor: "operator:test" });
    await h.services.keys.revoke(issued.id, "operator:test");
    expectProblem(await create(issued.key, orderId, 10), 401, "api_key_revoked");
    expectProblem(await create(await h.key("globex", "live"), orderId, 10), 404, "not_found");
    expectProblem(await create(await h.dispatcherKey("live"), orderId, 10), 403, "key_kind_not_allowed");
  });

  it("counts each tus request against the key's limit: 429 past its burst", async () => {
    const key = await h.key("acme", "live", { ratePerMinute: 1, burst: 2 });
    for (let i = 0; i < 2; i++) expect((await create(key, orderId, 10)).statusCode).toBe(201);
    const limited = expectProblem(await create(key, orderId, 10), 429, "rate_limited");
    expect(limited.retry_after_seconds).toBeGreaterThanOrEqual(1);
  });
});

describe("termination", () => {
  it("removes an upload its owner gives up (DELETE), and no one else may", async () => {
    const created = await create(holderKey, orderId, 1000);
    const path = new URL(created.headers.location as string).pathname;
    expect((await patch(holderKey, path, 0, Buffer.alloc(10))).statusCode).toBe(204);
    const del = (key: string) =>
      h.app.inject({ method: "DELETE", url: path, headers: { "x-api-key": key, "tus-resumable": "1.0.0" } });
    expectProblem(await del(otherContractorKey), 404, "not_found");
    const id = path.split("/").at(-1) as string;
    expect(await h.services.store.partialUploads.find(id)).toBeDefined();
    expect((await del(holderKey)).statusCode).toBe(204);
    expect(await h.services.store.partialUploads.find(id)).toBeUndefined();
    expect(await h.services.store.partialUploads.read(id)).toHaveLength(0);
  });
});

describe("expiry", () => {
  it("removes uploads a day old in the retention pass, and answers their URL 404", async () => {
    const created = await create(holderKey, orderId, 1000);
    const path = new URL(created.headers.location as string).pathname;
    expect((await patch(holderKey, path, 0, Buffer.alloc(10))).statusCode).toBe(204);
    const id = path.split("/").at(-1) as string;
    const partial = h.services.store.partialUploads;
    expect(await partial.removeExpired(new Date(Date.now() + 3_600_000))).toBe(0);
    expect(await partial.find(id)).toBeDefined();
    expect(await partial.removeExpired(new Date(Date.now() + 25 * 3_600_000))).toBeGreaterThan(0);
    expect(await partial.find(id)).toBeUndefined();
    expect(await partial.read(id)).toHaveLength(0);
    expectProblem(await patch(holderKey, path, 10, Buffer.alloc(10)), 404, "not_found");
  });

  it("is run by the hourly retention pass of the webhook worker", async () => {
    const created = await create(holderKey, orderId, 1000);
    const id = (created.headers.location as string).split("/").at(-1) as string;
    const later = new Date(Date.now() + 25 * 3_600_000);
    const worker = createWebhookDispatcher(h.config, h.services.store, { now: () => later });
    try {
      await worker.tick();
    } finally {
      await worker.close();
    }
    expect(await h.services.store.partialUploads.find(id)).toBeUndefined();
  });
});
