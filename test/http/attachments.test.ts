// Proof of work over HTTP (issue 32): attachments uploaded as multipart/form-data, sniffed, stripped of
// their EXIF while its claims are sealed, served with ETag and ranges, and every refusal a problem that
// stores and seals nothing. On SQLite, and on PostgreSQL in the postgres project.

import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { LightMyRequestResponse } from "fastify";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectOrphanBlobs, ORPHAN_AGE_MS } from "../../src/workers/orphan-blobs.js";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { multipart } from "../helpers/multipart.js";
import { expectProblem } from "../helpers/security-suite.js";

const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
};

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** A JPEG as a phone writes it: EXIF with the device, the capture time and a GPS position. */
async function phonePhoto(width = 800, height = 600): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: "#3a7" } })
    .jpeg({ quality: 80 })
    .withExif({
      IFD0: { Make: "TestPhone", Model: "X1" },
      IFD2: { DateTimeOriginal: "2026:11:28 09:15:30" },
      IFD3: {
        GPSLatitudeRef: "N",
        GPSLatitude: "37/1 46/1 3000/100",
        GPSLongitudeRef: "W",
        GPSLongitude: "122/1 25/1 1200/100",
      },
    })
    .toBuffer();
}

const MINIMAL_PDF = Buffer.from(
  "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
  "latin1",
);

let h: Harness;
let caller: string;
let otherAccount: string;
let dispatcher: string;
let holderKey: string;
let otherContractorKey: string;
let orderId: string;

async function upload(
  key: string | null,
  order: string,
  file: Buffer,
  extra: Record<string, string> = {},
  name = "site.jpg",
): Promise<LightMyRequestResponse> {
  const { body, type } = multipart([
    { name: "file", value: file, filename: name, type: "image/jpeg" },
    ...Object.entries(extra).map(([n, value]) => ({ name: n, value })),
  ]);
  return h.app.inject({
    method: "POST",
    url: `/api/orders/${order}/attachments`,
    headers: { "content-type": type, ...(key ? { "x-api-key": key } : {}) },
    payload: body,
  });
}

async function attachmentRows(order: string) {
  return h.services.store.attachments.ofOrder(order);
}

async function records(key: string, path: string, order: string) {
  // The contractor's listing takes the order alone.
  const query = path.startsWith("/api/contractor/") ? "" : "&limit=200";
  const res = await h.get(`${path}?order_id=${order}${query}`, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  const all = res.json().records as Array<{ kind: string; seal: string; disclosed: Record<string, unknown> }>;
  return all.filter((r) => r.kind === "order.attachment_added");
}

/** Every blob the store holds. */
async function blobCount(): Promise<number> {
  let n = 0;
  for await (const _ of h.services.blobs.storedBefore(new Date(Date.now() + 3_600_000))) n++;
  return n;
}

const newJob = () => acceptedJob(h, caller, holderKey, JOB);

beforeAll(async () => {
  h = await createHarness({ ATTACHMENT_MAX_BYTES: "300000", ATTACHMENT_ORDER_MAX_FILES: "4" });
  ({ caller, otherAccount, dispatcher, holderKey, otherContractorKey } = await crewOf(h));
  orderId = await newJob();
});

afterAll(async () => h.close());

describe("a photo with EXIF", () => {
  let attachment: Record<string, unknown>;
  let photo: Buffer;

  beforeAll(async () => {
    photo = await phonePhoto();
    const res = await upload(holderKey, orderId, photo, { caption: "Leak fixed" });
    expect(res.statusCode, res.body).toBe(200);
    attachment = res.json();
  });

  it("is stored as a photo of the sniffed type, with its digest sealed", async () => {
    expect(attachment).toMatchObject({
      kind: "photo",
      media_type: "image/jpeg",
      caption: "Leak fixed",
      uploaded_by: "contractor",
    });
    const [record] = await records(caller, "/api/audit", orderId);
    expect(record?.seal).toBe((attachment.record as { seal: string }).seal);
    expect(record?.disclosed).toMatchObject({
      attachment_id: attachment.attachment_id,
      sha256: attachment.sha256,
      size: attachment.size,
      media_type: "image/jpeg",
      received_sha256: sha(photo),
      received_size: photo.length,
      captured_at: "2026-11-28T09:15:30",
    });
    const verify = await h.get(`/api/attest/verify/${record?.seal}`);
    expect(verify.statusCode).toBe(200);
  });

  it("is served without EXIF, while the sealed claims keep the position for the account and the dispatch team only", async () => {
    const served = await h.get(attachment.content_url as string, { "x-api-key": caller });
    expect(served.statusCode).toBe(200);
    expect(served.headers["content-type"]).toBe("image/jpeg");
    expect(served.headers["x-content-type-options"]).toBe("nosniff");
    expect(served.headers["content-disposition"]).toContain('filename="site.jpg"');
    expect(sha(served.rawPayload)).toBe(attachment.sha256);
    const meta = await sharp(served.rawPayload).metadata();
    expect(meta.exif).toBeUndefined();
    expect(served.rawPayload.includes(Buffer.from("TestPhone"))).toBe(false);
    expect(meta.width).toBe(800);
    const position = { lat: 37.775, lon: -122.42 }; // 37° 46′ 30″ N, 122° 25′ 12″ W
    expect((await records(caller, "/api/audit", orderId))[0]?.disclosed.captured_position).toEqual(position);
    expect(
      (await records(dispatcher, "/api/dispatcher/v1/audit", orderId))[0]?.disclosed.captured_position,
    ).toEqual(position);
    const own = await records(holderKey, "/api/contractor/v1/audit", orderId);
    expect(own[0]?.disclosed.captured_position).toBeUndefined();
    expect(own[0]?.disclosed.sha256).toBe(attachment.sha256);
  });

  it("has a thumbnail at most 320 px", async () => {
    const res = await h.get(attachment.thumbnail_url as string, { "x-api-key": dispatcher });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("image/webp");
    const meta = await sharp(res.rawPayload).metadata();
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBe(320);
    expect(meta.exif).toBeUndefined();
  });

  it("answers If-None-Match with 304 and a range with 206, an impossible range with 416", async () => {
    const url = attachment.content_url as string;
    const etag = `"${attachment.sha256}"`;
    const first = await h.get(url, { "x-api-key": caller });
    expect(first.headers.etag).toBe(etag);
    const again = await h.get(url, { "x-api-key": caller, "if-none-match": etag });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    const other = await h.get(url, { "x-api-key": caller, "if-none-match": '"abc"' });
    expect(other.statusCode).toBe(200);
    const part = await h.get(url, { "x-api-key": caller, range: "bytes=10-19" });
    expect(part.statusCode).toBe(206);
    expect(part.headers["content-range"]).toBe(`bytes 10-19/${attachment.size}`);
    expect(part.rawPayload.equals(first.rawPayload.subarray(10, 20))).toBe(true);
    const tail = await h.get(url, { "x-api-key": caller, range: "bytes=-5" });
    expect(tail.rawPayload.equals(first.rawPayload.subarray(-5))).toBe(true);
    const past = await h.get(url, { "x-api-key": caller, range: `bytes=${attachment.size}-` });
    expectProblem(past, 416, "range_not_satisfiable");
    expect(past.headers["content-range"]).toBe(`bytes */${attachment.size}`);
  });

  it("is listed for the account, the contractor on the job and the dispatch team, and for no one else", async () => {
    for (const key of [caller, holderKey, dispatcher]) {
      const res = await h.get(`/api/orders/${orderId}/attachments`, { "x-api-key": key });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().attachments.map((a: { attachment_id: string }) => a.attachment_id)).toContain(
        attachment.attachment_id,
      );
    }
    for (const key of [otherAccount, otherContractorKey]) {
      expectProblem(
        await h.get(`/api/orders/${orderId}/attachments`, { "x-api-key": key }),
        404,
        "not_found",
      );
      expectProblem(await h.get(attachment.content_url as string, { "x-api-key": key }), 404, "not_found");
    }
    expectProblem(await h.get(attachment.content_url as string), 401, "missing_api_key");
  });
});

describe("a PDF", () => {
  it("is stored and served as sent, without a thumbnail", async () => {
    const res = await upload(caller, orderId, MINIMAL_PDF, { kind: "document" }, "quote.pdf");
    expect(res.statusCode, res.body).toBe(200);
    const a = res.json();
    expect(a).toMatchObject({
      kind: "document",
      media_type: "application/pdf",
      sha256: sha(MINIMAL_PDF),
      thumbnail_url: null,
      uploaded_by: "account",
    });
    const served = await h.get(a.content_url, { "x-api-key": holderKey });
    expect(served.rawPayload.equals(MINIMAL_PDF)).toBe(true);
    expect(served.headers["content-type"]).toBe("application/pdf");
    expectProblem(await h.get(`${a.content_url}/thumbnail`, { "x-api-key": caller }), 404, "not_found");
  });
});

describe("refusals store nothing and seal nothing", () => {
  async function expectNothingStored(
    order: string,
    res: LightMyRequestResponse,
    status: number,
    code: string,
  ) {
    const before = {
      rows: (await attachmentRows(order)).length,
      records: (await records(caller, "/api/audit", order)).length,
    };
    return {
      before,
      check: async () => {
        const body = expectProblem(res, status, code);
        expect((await attachmentRows(order)).length).toBe(before.rows);
        expect((await records(caller, "/api/audit", order)).length).toBe(before.records);
        return body;
      },
    };
  }

  it("413 over ATTACHMENT_MAX_BYTES, naming the limit and the field", async () => {
    const blobsBefore = await blobCount();
    const rows = (await attachmentRows(orderId)).length;
    const res = await upload(holderKey, orderId, Buffer.alloc(300_001, 0xff));
    const body = expectProblem(res, 413, "payload_too_large");
    expect(body).toMatchObject({ field: "file", limit_bytes: 300_000 });
    expect((await attachmentRows(orderId)).length).toBe(rows);
    expect(await blobCount()).toBe(blobsBefore);
  });

  it("415 for a text file named .jpg, and for HEIC with a message saying to send JPEG", async () => {
    const blobsBefore = await blobCount();
    const { check } = await expectNothingStored(
      orderId,
      await upload(holderKey, orderId, Buffer.from("just some text, not a photo\n")),
      415,
      "unsupported_media_type",
    );
    expect(await check()).toMatchObject({ field: "file", detected_type: null });
    // The start of an HEIC file: an ISO BMFF ftyp box of brand heic.
    const heic = Buffer.concat([
      Buffer.from([0, 0, 0, 0x18]),
      Buffer.from("ftypheic\0\0\0\0mif1heic"),
      Buffer.alloc(64),
    ]);
    const refused = expectProblem(await upload(holderKey, orderId, heic), 415, "unsupported_media_type");
    expect(refused.detail).toMatch(/HEIC.*JPEG/);
    expect(await blobCount()).toBe(blobsBefore);
  });

  it("422 for a truncated JPEG", async () => {
    const photo = await phonePhoto();
    const rows = (await attachmentRows(orderId)).length;
    const res = await upload(holderKey, orderId, photo.subarray(0, Math.floor(photo.length / 2)));
    expectProblem(res, 422, "unreadable_file");
    expect((await attachmentRows(orderId)).length).toBe(rows);
  });

  it("404 on another contractor's job, 403 for the dispatch team, 401 without a key", async () => {
    const photo = await phonePhoto(40, 30);
    expectProblem(await upload(otherContractorKey, orderId, photo), 404, "not_found");
    expectProblem(await upload(otherAccount, orderId, photo), 404, "not_found");
    expectProblem(await upload(dispatcher, orderId, photo), 403, "key_kind_not_allowed");
    expectProblem(await upload(null, orderId, photo), 401, "missing_api_key");
  });

  it("415 for a body that is not multipart, 422 without a file part", async () => {
    const json = await h.post(`/api/orders/${orderId}/attachments`, { file: "x" }, { "x-api-key": caller });
    expectProblem(json, 415, "unsupported_media_type");
    const { body, type } = multipart([{ name: "caption", value: "no file" }]);
    const res = await h.app.inject({
      method: "POST",
      url: `/api/orders/${orderId}/attachments`,
      headers: { "content-type": type, "x-api-key": caller },
      payload: body,
    });
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual([
      expect.objectContaining({ field: "file" }),
    ]);
  });

  it("409 once the order holds ATTACHMENT_ORDER_MAX_FILES", async () => {
    const job = await newJob();
    for (let i = 0; i < 4; i++) {
      const res = await upload(holderKey, job, await phonePhoto(40 + i, 30));
      expect(res.statusCode, res.body).toBe(200);
    }
    const sealed = (await records(caller, "/api/audit", job)).length;
    const res = await upload(holderKey, job, await phonePhoto(60, 30));
    expect(expectProblem(res, 409, "attachment_quota_exceeded")).toMatchObject({
      field: "file",
      limit_files: 4,
    });
    expect((await attachmentRows(job)).length).toBe(4);
    expect((await records(caller, "/api/audit", job)).length).toBe(sealed);
  });
});

describe("orphan blobs", () => {
  it("are collected once a day old, while every blob an attachment names stays", async () => {
    const orphan = await h.services.blobs.put(Buffer.from(`left by an interrupted upload ${Math.random()}`));
    const named = (await attachmentRows(orderId)).flatMap((a) => [a.sha256, a.thumbnailSha256 ?? a.sha256]);
    // Not yet a day old: kept.
    expect(await collectOrphanBlobs(h.services.blobs, h.services.store.attachments, new Date())).toBe(0);
    expect(await h.services.blobs.has(orphan.sha256)).toBe(true);
    const dayLater = new Date(Date.now() + ORPHAN_AGE_MS + 60_000);
    expect(
      await collectOrphanBlobs(h.services.blobs, h.services.store.attachments, dayLater),
    ).toBeGreaterThanOrEqual(1);
    expect(await h.services.blobs.has(orphan.sha256)).toBe(false);
    for (const sha256 of named) expect(await h.services.blobs.has(sha256)).toBe(true);
    const listed = await h.get(`/api/orders/${orderId}/attachments`, { "x-api-key": caller });
    for (const a of listed.json().attachments) {
      expect((await h.get(a.content_url, { "x-api-key": caller })).statusCode).toBe(200);
    }
  });
});

describe("the blob store on the embedded store", () => {
  it("keeps blobs as files under DATA_DIR/blobs", async () => {
    if (h.services.store.dialect !== "sqlite") return;
    const [first] = await attachmentRows(orderId);
    const sha256 = first?.sha256 ?? "";
    const folder = join(h.config.DATA_DIR, "blobs", sha256.slice(0, 2));
    expect(readdirSync(folder)).toContain(sha256);
  });
});
