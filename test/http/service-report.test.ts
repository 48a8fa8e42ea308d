// The service report over HTTP (issue 32): a completed order's PDF, read back with pdf-lib, whose printed
// digests are those of the bytes the attachment downloads serve and whose printed seals verify; its link
// in the order, the webhook's and the event stream's order; and who may not have it. On SQLite, and on
// PostgreSQL in the postgres project.

import { createHash } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crewOf } from "../helpers/crew.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { pdfImageCount, pdfText } from "../helpers/pdf-text.js";
import { expectProblem } from "../helpers/security-suite.js";

const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  callback_url: "https://hooks.example.com/field-dispatch",
  // Characters the PDF's standard fonts cannot encode: the report must still be made.
  description: "Leak under the sink 🔧🚰 — naïve “quotes”, 水漏れ, Ωmega",
};
const STATUS = "/api/contractor/v1/jobs/status";

const sha = (b: Buffer | Uint8Array) => createHash("sha256").update(b).digest("hex");

const MINIMAL_PDF = Buffer.from(
  "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
  "latin1",
);

function multipart(file: Buffer, filename: string, fields: Record<string, string> = {}) {
  const boundary = `----fd${Math.random().toString(36).slice(2)}`;
  const chunks: Buffer[] = [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n\r\n`,
    ),
    file,
    Buffer.from("\r\n"),
  ];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`));
    chunks.push(Buffer.from(value), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

let h: Harness;
let caller: string;
let otherAccount: string;
let dispatcher: string;
let holderKey: string;
let otherContractorKey: string;
let orderId: string;

async function upload(key: string, file: Buffer, name: string, fields: Record<string, string> = {}) {
  const { body, type } = multipart(file, name, fields);
  const res = await h.app.inject({
    method: "POST",
    url: `/api/orders/${orderId}/attachments`,
    headers: { "content-type": type, "x-api-key": key },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { attachment_id: string; content_url: string; sha256: string };
}

async function progress(report: Record<string, unknown>) {
  const res = await h.post(STATUS, { order_id: orderId, ...report }, { "x-api-key": holderKey });
  expect(res.statusCode, res.body).toBe(200);
}

const reportOf = (key: string, id = orderId): Promise<LightMyRequestResponse> =>
  h.get(`/api/orders/${id}/report`, { "x-api-key": key });

beforeAll(async () => {
  h = await createHarness();
  ({ caller, otherAccount, dispatcher, holderKey, otherContractorKey } = await crewOf(h));
  const placed = await h.post(ORDER_PATH, JOB, { "x-api-key": caller });
  expect(placed.statusCode, placed.body).toBe(200);
  orderId = placed.json().order_id;
  const offers = (await h.get("/api/contractor/v1/offers", { "x-api-key": holderKey })).json().offers;
  const offer = offers.find((o: { order_id: string }) => o.order_id === orderId);
  const accepted = await h.post(
    "/api/contractor/v1/offers/accept",
    { offer_id: offer.offer_id },
    { "x-api-key": holderKey },
  );
  expect(accepted.statusCode, accepted.body).toBe(200);
});

afterAll(async () => h.close());

describe("before the work is done", () => {
  it("answers 409 invalid_transition, and the order has no report_url", async () => {
    const body = expectProblem(await reportOf(caller), 409, "invalid_transition");
    expect(body.current_status).toBe("accepted");
    const order = (await h.get(`/api/dispatch/v1/orders/${orderId}`, { "x-api-key": caller })).json();
    expect(order.report_url).toBeNull();
  });
});

describe("a completed order's report", () => {
  let pdf: Buffer;
  let res: LightMyRequestResponse;
  let text: string;

  beforeAll(async () => {
    await progress({ status: "en_route", eta_minutes: 10 });
    await progress({ status: "on_site", position: { lat: 37.7731, lon: -122.4152, accuracy_m: 8 } });
    const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: "#2a6" } })
      .jpeg()
      .toBuffer();
    await upload(holderKey, photo, "after.jpg", { caption: "Trap replaced ✅ – joint dry" });
    await upload(caller, MINIMAL_PDF, "permit.pdf", { caption: "Permit" });
    const pad = await sharp({ create: { width: 300, height: 100, channels: 4, background: "#fff" } })
      .png()
      .toBuffer();
    await upload(holderKey, pad, "signature.png", { kind: "signature", signer_name: "Dana Reyes" });
    await progress({ status: "completed", final_cost_cents: 18_550 });
    res = await reportOf(caller);
    pdf = res.rawPayload;
    text = await pdfText(pdf);
  });

  it("is a PDF, served with its SHA-256 as ETag", () => {
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["content-type"]).toBe("application/pdf");
    expect(res.headers.etag).toBe(`"${sha(pdf)}"`);
    expect(res.headers["content-disposition"]).toContain(`service-report-${orderId}.pdf`);
    expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
  });

  it("prints the job, its times and the final cost, the description's unencodable characters replaced", () => {
    expect(text).toContain(orderId);
    expect(text).toContain("Plumbing");
    expect(text).toContain("$185.50");
    expect(text).toMatch(/Leak under the sink \?\?/);
    expect(text).toContain("naïve");
    for (const label of ["Accepted", "On site", "Completed"]) expect(text).toContain(label);
  });

  it("prints the check-in with its position and the site contact's signature with the signer's name", () => {
    expect(text).toContain("Check-in");
    expect(text).toContain("37.7731");
    expect(text).toContain("Signed by");
    expect(text).toContain("Dana Reyes");
  });

  it("prints for every attachment the SHA-256 of the bytes its download serves", async () => {
    const list = await h.get(`/api/orders/${orderId}/attachments`, { "x-api-key": caller });
    const attachments = list.json().attachments as Array<{ attachment_id: string; content_url: string }>;
    expect(attachments).toHaveLength(3);
    const served: string[] = [];
    for (const a of attachments) {
      const bytes = await h.get(a.content_url, { "x-api-key": caller });
      expect(bytes.statusCode).toBe(200);
      served.push(sha(bytes.rawPayload));
      expect(text).toContain(a.attachment_id);
    }
    const printed = [...text.matchAll(/\b[0-9a-f]{64}\b/g)].map((m) => m[0]);
    expect(new Set(printed)).toEqual(new Set(served));
  });

  it("prints seals that verify: the attachments' records and the times'", async () => {
    const seals = [...new Set([...text.matchAll(/\bseal_[0-9A-Za-z]{22}\b/g)].map((m) => m[0]))];
    const records = (await h.get(`/api/audit?order_id=${orderId}&limit=200`, { "x-api-key": caller })).json()
      .records as Array<{ kind: string; seal: string }>;
    const added = records.filter((r) => r.kind === "order.attachment_added").map((r) => r.seal);
    expect(added).toHaveLength(3);
    for (const seal of added) expect(seals).toContain(seal);
    expect(seals.length).toBeGreaterThan(added.length);
    for (const seal of seals) {
      const verify = await h.get(`/api/attest/verify/${seal}`);
      expect(verify.statusCode, verify.body).toBe(200);
      expect(verify.json().status, seal).toBe("verified");
    }
    for (const seal of added) expect(text).toContain(`/api/attest/verify/${seal}`);
  });

  it("embeds the photo's and the signature's thumbnails as images", async () => {
    expect(await pdfImageCount(pdf)).toBe(2);
  });

  it("is the same bytes when asked again, and 304 to its ETag", async () => {
    const again = await reportOf(caller);
    expect(sha(again.rawPayload)).toBe(sha(pdf));
    const cached = await h.get(`/api/orders/${orderId}/report`, {
      "x-api-key": caller,
      "if-none-match": res.headers.etag as string,
    });
    expect(cached.statusCode).toBe(304);
  });

  it("is linked from the order, the webhook's order and the event stream's order.completed event", async () => {
    const url = `http://localhost:80/api/orders/${orderId}/report`;
    const order = (await h.get(`/api/dispatch/v1/orders/${orderId}`, { "x-api-key": caller })).json();
    expect(order.report_url).toBe(url);
    const webhooks = await h.services.store.webhooks.eventsOfOrder(orderId);
    const delivered = webhooks.find((e) => e.type === "order.completed");
    // Made without a request: on the webhooks' base URL (PUBLIC_BASE_URL, else localhost and PORT).
    const hooked = JSON.parse(delivered?.payload ?? "{}").data.order;
    expect(hooked.report_url).toBe(`${new URL(hooked.status_url).origin}/api/orders/${orderId}/report`);
    const page = await h.get("/api/events?limit=500", { "x-api-key": caller, accept: "application/json" });
    const events = page.json().events as Array<{
      type: string;
      data: { order: { order_id: string; report_url: string | null } };
    }>;
    const completed = events.find((e) => e.type === "order.completed" && e.data.order.order_id === orderId);
    expect(completed?.data.order.report_url).toBe(url);
    const onSite = events.find((e) => e.type === "order.on_site" && e.data.order.order_id === orderId);
    expect(onSite?.data.order.report_url).toBeNull();
  });

  it("is the dispatch team's too, naming the account and the contractor by id", async () => {
    const team = await reportOf(dispatcher);
    expect(team.statusCode, team.body).toBe(200);
    const teamText = await pdfText(team.rawPayload);
    const order = await h.services.store.orders.byId(orderId);
    expect(teamText).toContain(order?.account_id);
    expect(teamText).toContain(order?.contractor_id);
    expect(text).not.toContain(order?.contractor_id);
  });

  it("is refused to contractors (403 on the job, 404 elsewhere) and to another account (404)", async () => {
    expectProblem(await reportOf(holderKey), 403, "key_kind_not_allowed");
    expectProblem(await reportOf(otherContractorKey), 404, "not_found");
    expectProblem(await reportOf(otherAccount), 404, "not_found");
    expectProblem(await reportOf(await h.key("acme", "test")), 404, "not_found");
  });
});
