// The service report's model and its PDF, without a server: the sections the check-in, checklist and
// signature features fill are printed when present, text the standard fonts cannot encode is replaced
// (never thrown on), a long report runs onto more pages, and the same model gives the same bytes.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { reportBlob } from "../../../src/operations/orders/service-report.js";
import {
  type ServiceReport,
  serviceReportModel,
} from "../../../src/operations/orders/service-report-model.js";
import { encodable, renderServiceReport } from "../../../src/operations/orders/service-report-pdf.js";
import { FsBlobStore } from "../../../src/storage/blobs/fs-blob-store.js";
import type { Attachment } from "../../../src/storage/store.js";
import { orderFixture } from "../../helpers/order-fixture.js";
import { pdfImageCount, pdfText } from "../../helpers/pdf-text.js";

const BASE = "https://dispatch.example.com";
const HEX = (c: string) => c.repeat(64);

function attachment(i: number, overrides: Partial<Attachment> = {}): Attachment {
  return {
    id: `att_${String(i).padStart(20, "0")}`,
    orderId: "ord_1",
    livemode: true,
    sha256: HEX(String(i % 10)),
    size: 1000 + i,
    mediaType: "image/jpeg",
    kind: "photo",
    caption: `Photo ${i}`,
    filename: `p${i}.jpg`,
    uploader: "contractor:ctr_1",
    createdAt: "2026-11-28T10:00:00.000Z",
    thumbnailSha256: "t".repeat(64),
    signerName: null,
    seal: `seal_${String(i).padStart(22, "0")}`,
    ...overrides,
  };
}

function model(overrides: Partial<ServiceReport> = {}, attachments: Attachment[] = [attachment(1)]) {
  const order = orderFixture({
    id: "ord_1",
    status: "completed",
    description: "Pipe burst 💧 under the “kitchen” sink – ça coule",
    accepted_at: "2026-11-28T09:00:00.000Z",
    on_site_at: "2026-11-28T09:30:00.000Z",
    completed_at: "2026-11-28T11:00:00.000Z",
    final_cost_cents: 123_456,
    time_zone: "America/Chicago",
  });
  const records = [
    {
      seal: "seal_onsite0000000000000000",
      kind: "order.status_changed",
      created_at: "2026-11-28T09:30:00.000Z",
    },
    {
      seal: "seal_done000000000000000000",
      kind: "order.status_changed",
      created_at: "2026-11-28T11:00:00.000Z",
    },
  ];
  return {
    ...serviceReportModel({
      order,
      attachments,
      records,
      audience: "account",
      contractorRef: "cref-abc",
      baseUrl: BASE,
    }),
    ...overrides,
  };
}

async function thumbnail() {
  const { data, info } = await sharp({ create: { width: 320, height: 240, channels: 3, background: "#48c" } })
    .jpeg()
    .toBuffer({ resolveWithObject: true });
  return new Map([["t".repeat(64), { jpeg: data, width: info.width, height: info.height }]]);
}

describe("the service report's model", () => {
  it("finds the seals of the times from the records written at them, and names the contractor by its handle", () => {
    const m = model();
    expect(m.times.find((t) => t.label === "On site")?.seal?.seal).toBe("seal_onsite0000000000000000");
    expect(m.times.find((t) => t.label === "Completed")?.seal?.verify_url).toBe(
      `${BASE}/api/attest/verify/seal_done000000000000000000`,
    );
    expect(m.times.find((t) => t.label === "Accepted")?.seal).toBeNull();
    expect(m.job.contractor).toBe("cref-abc");
    expect(m.job.account_id).toBeNull();
    expect(m.artifacts[0]?.seal.verify_url).toBe(`${BASE}/api/attest/verify/seal_0000000000000000000001`);
  });
});

describe("the service report's PDF", () => {
  it("prints the optional sections when present", async () => {
    const m = model({
      check_in: {
        at: "2026-11-28T09:30:00.000Z",
        position: { lat: 29.76, lon: -95.36, accuracy_m: 12 },
        distance_miles: 0.05,
        flagged: false,
      },
      check_out: { at: "2026-11-28T11:00:00.000Z", position: null, distance_miles: null, flagged: true },
      checklist: {
        items: [
          { label: "Water pressure", answer: "58", unit: "psi" },
          { label: "Leak fixed", answer: "yes", unit: null },
          { label: "Notes", answer: null, unit: null },
        ],
      },
      signature: {
        signer_name: "Zoë Ŝmith 🙂",
        attachment_id: "att_sig",
        sha256: HEX("a"),
        seal: {
          seal: "seal_sig00000000000000000",
          verify_url: `${BASE}/api/attest/verify/seal_sig00000000000000000`,
        },
      },
    });
    const pdf = await renderServiceReport(m, await thumbnail());
    const text = await pdfText(pdf);
    for (const expected of [
      "Check-in",
      "29.76000, -95.36000 (+/- 12 m), 0.05 mi from the site",
      "FLAGGED",
      "Water pressure: 58 psi",
      "Notes: (unanswered)",
      "Zoë Smith ?",
      HEX("a"),
      "seal_sig00000000000000000",
      "$1,234.56",
    ]) {
      expect(text).toContain(expected);
    }
    expect(await pdfImageCount(pdf)).toBe(1);
  });

  it("leaves the optional sections out when absent", async () => {
    const text = await pdfText(await renderServiceReport(model(), new Map()));
    for (const absent of ["Check-in", "Checklist", "Signature"]) expect(text).not.toContain(absent);
  });

  it("runs onto more pages for many attachments with long captions, every digest printed whole", async () => {
    const many = Array.from({ length: 30 }, (_, i) =>
      attachment(i, {
        caption: `${"a long caption ".repeat(30)}${i}`,
        sha256: `${String(i).padStart(2, "0")}${"e".repeat(62)}`,
      }),
    );
    const pdf = await renderServiceReport(model({}, many), await thumbnail());
    const text = await pdfText(pdf);
    for (const a of many) expect(text).toContain(a.sha256);
    expect(text).toMatch(/page 1 of ([2-9]|\d\d)/);
  });

  it("gives the same bytes for the same model", async () => {
    const images = await thumbnail();
    const a = await renderServiceReport(model(), images);
    const b = await renderServiceReport(model(), images);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });
});

describe("text for the standard fonts", () => {
  const charset = new Set([...Array.from({ length: 95 }, (_, i) => 32 + i), 0xe9, 0x201c, 0x201d, 0x2013]);

  it("keeps what the font encodes, uses a compatible form where there is one, and ? for the rest", () => {
    expect(encodable("café “ok” – 10\u202fAM", charset)).toBe("café “ok” – 10 AM");
    expect(encodable("Ŝ ﬁ", charset)).toBe("S fi");
    expect(encodable("水 🔧", charset)).toBe("? ?");
    expect(encodable("a\tb\u0000c\r\nd", charset)).toBe("a b c \nd");
  });
});

describe("the rendered report's blob", () => {
  it("is put once, served again for half a day, then put again (its age reset before the orphan collector's day)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fd-report-"));
    try {
      const store = new FsBlobStore(dir);
      const puts: string[] = [];
      const put = store.put.bind(store);
      store.put = async (content) => {
        const stored = await put(content);
        puts.push(stored.sha256);
        return stored;
      };
      const m = model({}, [attachment(1, { thumbnailSha256: null })]);
      const t0 = Date.parse("2026-11-28T12:00:00Z");
      const first = await reportBlob(store, m, t0);
      expect(await store.size(first.sha256)).toBe(first.size);
      expect(await reportBlob(store, m, t0 + 11 * 3_600_000)).toEqual(first);
      expect(puts).toEqual([first.sha256]);
      expect(await reportBlob(store, m, t0 + 13 * 3_600_000)).toEqual(first);
      expect(puts).toEqual([first.sha256, first.sha256]);
      // Another version of the order is another report, rendered (to the same bytes when nothing printed changed).
      expect(await reportBlob(store, { ...m, order_version: m.order_version + 1 }, t0)).toEqual(first);
      expect(puts).toHaveLength(3);
      const cost = { ...m.cost, final_cost_cents: 1 };
      expect((await reportBlob(store, { ...m, cost }, t0)).sha256).not.toBe(first.sha256);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
