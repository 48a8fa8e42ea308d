// What an account requires before completion (issue 32): a photo of the work and the site contact's
// signature. The requirements are set and sealed per account and mode; the contractor's completed is
// refused naming what is missing; a signature is an image the contractor on site uploads with the
// signer's name. On SQLite, and on PostgreSQL in the postgres project.

import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { multipart } from "../helpers/multipart.js";
import { expectProblem } from "../helpers/security-suite.js";

const REQUIREMENTS = "/api/dispatch/v1/proof-requirements";
const REPORT = "/api/contractor/v1/jobs/status";

let h: Harness;
let caller: string;
let otherAccount: string;
let dispatcher: string;
let crew: string;
let png: Buffer;

async function upload(key: string, order: string, file: Buffer, fields: Record<string, string> = {}) {
  const { body, type } = multipart([
    { name: "file", value: file, filename: "pad.png", type: "image/png" },
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
  ]);
  return h.app.inject({
    method: "POST",
    url: `/api/orders/${order}/attachments`,
    headers: { "content-type": type, "x-api-key": key },
    payload: body,
  });
}

async function jobFor(key: string, status: "accepted" | "on_site"): Promise<string> {
  const id = await acceptedJob(h, key, crew, {
    trade: "plumbing",
    location: { state: "CA", zip: "94103" },
    description: "Leak under the sink",
  });
  if (status === "on_site") {
    expect(
      (await h.post(REPORT, { order_id: id, status: "en_route", eta_minutes: 10 }, { "x-api-key": crew }))
        .statusCode,
    ).toBe(200);
    expect(
      (await h.post(REPORT, { order_id: id, status: "on_site" }, { "x-api-key": crew })).statusCode,
    ).toBe(200);
  }
  return id;
}

const complete = (order: string) =>
  h.post(REPORT, { order_id: order, status: "completed", final_cost_cents: 18_000 }, { "x-api-key": crew });

beforeAll(async () => {
  h = await createHarness();
  ({ caller, otherAccount, dispatcher, holderKey: crew } = await crewOf(h, { maxActiveJobs: 20 }));
  png = await sharp({ create: { width: 300, height: 120, channels: 4, background: "#ffffff" } })
    .png()
    .toBuffer();
});

afterAll(async () => h.close());

describe("the account's requirements", () => {
  it("are none until set", async () => {
    const res = await h.get(REQUIREMENTS, { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      signature_required: false,
      photo_required: false,
      updated_at: null,
      record: null,
    });
  });

  it("are set field by field, sealed with the previous values", async () => {
    const first = await h.post(REQUIREMENTS, { photo_required: true }, { "x-api-key": caller });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ signature_required: false, photo_required: true });
    const second = await h.post(REQUIREMENTS, { signature_required: true }, { "x-api-key": caller });
    expect(second.json()).toMatchObject({ signature_required: true, photo_required: true });
    expect((await h.get(REQUIREMENTS, { "x-api-key": caller })).json().updated_at).toBe(
      second.json().updated_at,
    );
    const audit = await h.get("/api/audit?kind=account.proof_requirements_set&limit=10", {
      "x-api-key": caller,
    });
    expect(audit.statusCode, audit.body).toBe(200);
    const records = audit.json().records as Array<{ disclosed: Record<string, unknown> }>;
    expect(records.map((r) => r.disclosed)).toContainEqual({
      signature_required: true,
      photo_required: true,
      previous: { signature_required: false, photo_required: true },
    });
  });

  it("are the account's own: another account's are untouched", async () => {
    expect((await h.get(REQUIREMENTS, { "x-api-key": otherAccount })).json().signature_required).toBe(false);
  });

  it.each([
    [{ signature_required: "yes" }, "signature_required"],
    [{ photo_required: null }, "photo_required"],
    [{ sign: true }, ""],
  ])("refuse %j", async (body, field) => {
    const res = await h.post(REQUIREMENTS, body, { "x-api-key": caller });
    expectProblem(res, 422, "validation_failed");
    if (field) expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it("are the account's to set: contractor and dispatcher keys are refused", async () => {
    for (const key of [crew, dispatcher]) {
      expectProblem(
        await h.post(REQUIREMENTS, { photo_required: false }, { "x-api-key": key }),
        403,
        "key_kind_not_allowed",
      );
    }
  });
});

describe("completing a job of an account that requires a photo and a signature", () => {
  let orderId: string;
  beforeAll(async () => {
    orderId = await jobFor(caller, "on_site");
  });

  it("is refused naming both, and the job stays on site", async () => {
    const res = await complete(orderId);
    expectProblem(res, 409, "completion_requirements_unmet");
    expect(res.json().current_status).toBe("on_site");
    expect(res.json().missing.map((m: { requirement: string }) => m.requirement)).toEqual([
      "photo",
      "signature",
    ]);
  });

  it("does not count the account's own photo as the contractor's", async () => {
    const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#357" } })
      .jpeg()
      .toBuffer();
    expect((await upload(caller, orderId, photo)).statusCode).toBe(200);
    expect(
      (await complete(orderId)).json().missing.map((m: { requirement: string }) => m.requirement),
    ).toEqual(["photo", "signature"]);
    expect((await upload(crew, orderId, photo, { caption: "Fixed" })).statusCode).toBe(200);
    expect(
      (await complete(orderId)).json().missing.map((m: { requirement: string }) => m.requirement),
    ).toEqual(["signature"]);
  });

  it("takes a signature from the contractor on site, with the signer's name sealed", async () => {
    const res = await upload(crew, orderId, png, { kind: "signature", signer_name: "  Dana Reyes " });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      kind: "signature",
      signer_name: "Dana Reyes",
      media_type: "image/png",
    });
    const records = (
      await h.get(`/api/audit?order_id=${orderId}&kind=order.attachment_added&limit=20`, {
        "x-api-key": caller,
      })
    ).json().records as Array<{ seal: string; disclosed: Record<string, unknown> }>;
    const sealed = records.find((r) => r.seal === res.json().record.seal);
    expect(sealed?.disclosed).toMatchObject({
      kind: "signature",
      signer_name: "Dana Reyes",
      sha256: res.json().sha256,
    });
  });

  it("is completed once both are there", async () => {
    const res = await complete(orderId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe("completed");
  });
});

describe("a signature", () => {
  let accepted: string;
  let onSite: string;
  beforeAll(async () => {
    accepted = await jobFor(caller, "accepted");
    onSite = await jobFor(caller, "on_site");
  });

  it("is refused before the contractor is on site", async () => {
    const res = await upload(crew, accepted, png, { kind: "signature", signer_name: "Dana" });
    expectProblem(res, 409, "invalid_transition");
    expect(res.json().current_status).toBe("accepted");
  });

  it("is the contractor's to collect: the account is refused", async () => {
    expectProblem(
      await upload(caller, onSite, png, { kind: "signature", signer_name: "Dana" }),
      403,
      "key_kind_not_allowed",
    );
  });

  it("needs the signer's name, and the name goes with a signature only", async () => {
    const unnamed = await upload(crew, onSite, png, { kind: "signature" });
    expectProblem(unnamed, 422, "validation_failed");
    expect(unnamed.json().errors[0].field).toBe("signer_name");
    const blank = await upload(crew, onSite, png, { kind: "signature", signer_name: "   " });
    expectProblem(blank, 422, "validation_failed");
    const onPhoto = await upload(crew, onSite, png, { signer_name: "Dana" });
    expectProblem(onPhoto, 422, "validation_failed");
    expect(onPhoto.json().errors[0].field).toBe("signer_name");
  });

  it("is an image: a PDF is refused naming kind", async () => {
    const pdf = Buffer.from(
      "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
      "latin1",
    );
    const res = await upload(crew, onSite, pdf, { kind: "signature", signer_name: "Dana" });
    expectProblem(res, 422, "validation_failed");
    expect(res.json().errors[0].field).toBe("kind");
    expect(await h.services.store.attachments.ofOrder(onSite)).toEqual([]);
  });
});
