// orderReport: a completed order's service report as a PDF (issue 32): the job, its times, the final
// cost, and every photo and document with its digest and the seal that holds it. For the account that
// owns the order and the dispatch team; REST serves the bytes (ETag, Range) as it serves attachments, and
// agents get them in their answer (agent-call.ts).
//
// The PDF is rendered on demand and put in the blob store, named by its SHA-256 like every blob, so its
// download is served the one way blobs are. A map in this process, from the report's content (the model:
// the order's version, its attachments, the audience, the base URL) to the blob, spares rendering it
// again for half a day; a report's blob is named by no attachment, so the orphan collector removes it a
// day after it was last put, and a request after the half day renders and puts it again (the same
// content gives the same bytes), so a blob this map names is never one the collector is about to take.

import { createHash } from "node:crypto";
import sharp from "sharp";
import { z } from "zod";
import { ApiError } from "../../errors.js";
import type { BlobStore } from "../../storage/blobs/blob-store.js";
import { defineOperation, type OperationContext } from "../kernel/operation.js";
import { orderFor } from "./attachment-access.js";
import { blobDescriptorSchema, orderIdParam } from "./attachments.js";
import {
  hasReport,
  REPORTED_STATUSES,
  type ServiceReport,
  serviceReportModel,
} from "./service-report-model.js";
import { type ReportImage, renderServiceReport } from "./service-report-pdf.js";

/** A report rendered by this process: its blob, and when it was put. */
interface Rendered {
  sha256: string;
  size: number;
  at: number;
}

/** Reports rendered by this process, per blob store: the model's digest to the PDF's blob. */
const rendered = new WeakMap<BlobStore, Map<string, Rendered>>();
const KEPT_PER_STORE = 500;
/** How long a rendered report's blob is served again: well within the orphan collector's day. */
const REUSE_MS = 12 * 3_600_000;

function renderedIn(blobs: BlobStore): Map<string, Rendered> {
  let map = rendered.get(blobs);
  if (!map) {
    map = new Map();
    rendered.set(blobs, map);
  }
  return map;
}

/** The model of `orderId`'s report for the caller (404, 403 or 409 when it may not have one). */
async function reportModelFor(ctx: OperationContext, orderId: string): Promise<ServiceReport> {
  const { order, role } = await orderFor(ctx, orderId);
  if (role === "contractor") {
    throw new ApiError(
      "key_kind_not_allowed",
      "The service report is for the account that placed the order and the dispatch team.",
    );
  }
  if (!hasReport(order)) {
    throw new ApiError(
      "invalid_transition",
      `An order has a service report once it is ${REPORTED_STATUSES.join(" or ")}; this one is ${order.status}.`,
      { extra: { current_status: order.status } },
    );
  }
  const { store, refs } = ctx.services;
  const [attachments, records, checklist, answers] = await Promise.all([
    store.attachments.ofOrder(order.id),
    store.audit.orderSeals(order.id),
    store.checklists.orderChecklist(order.id),
    store.checklists.answers(order.id),
  ]);
  const answered = new Map(answers.map((a) => [a.itemId, a.value]));
  return serviceReportModel({
    order,
    attachments,
    records,
    // The checklist as it was fixed for the job, each item with its answer (a photo item: the photo's id).
    checklist: checklist
      ? checklist.items.map((item) => {
          const value = answered.get(item.item_id);
          return {
            label: item.label,
            answer:
              value === undefined
                ? null
                : typeof value === "boolean"
                  ? value
                    ? "Yes"
                    : "No"
                  : String(value),
            unit: item.kind === "number" ? (item.unit ?? null) : null,
          };
        })
      : null,
    audience: role,
    contractorRef: order.contractor_id ? refs.of(order.account_id, order.contractor_id) : null,
    baseUrl: ctx.baseUrl,
  });
}

/** The thumbnails as JPEG (what a PDF can hold; they are stored as WebP), by their blob's SHA-256;
 * converted at once (sharp works on libuv's threads). */
async function thumbnails(blobs: BlobStore, report: ServiceReport): Promise<Map<string, ReportImage>> {
  const shas = new Set(
    report.artifacts.flatMap((a) => (a.thumbnail_sha256 === null ? [] : [a.thumbnail_sha256])),
  );
  const converted = await Promise.all(
    [...shas].map(async (sha) => {
      const webp = await blobs.get(sha);
      if (webp === undefined) return null;
      const { data, info } = await sharp(webp)
        .flatten({ background: "#ffffff" })
        .jpeg({ quality: 80 })
        .toBuffer({ resolveWithObject: true });
      return [sha, { jpeg: data, width: info.width, height: info.height }] as const;
    }),
  );
  return new Map(converted.filter((entry) => entry !== null));
}

/** The report's PDF, its thumbnails read from `blobs`. */
export async function renderReport(blobs: BlobStore, report: ServiceReport): Promise<Uint8Array> {
  return renderServiceReport(report, await thumbnails(blobs, report));
}

/** The report's PDF in the blob store (rendered now unless this process put it lately): its blob. */
export async function reportBlob(
  blobs: BlobStore,
  report: ServiceReport,
  now: number,
): Promise<{ sha256: string; size: number }> {
  const key = createHash("sha256").update(JSON.stringify(report)).digest("hex");
  const known = renderedIn(blobs);
  const hit = known.get(key);
  if (hit !== undefined && now - hit.at < REUSE_MS) return { sha256: hit.sha256, size: hit.size };
  const stored = await blobs.put(await renderReport(blobs, report));
  known.delete(key);
  if (known.size >= KEPT_PER_STORE) known.delete(known.keys().next().value as string);
  known.set(key, { sha256: stored.sha256, size: stored.size, at: now });
  return stored;
}

export const serviceReportOperation = defineOperation({
  id: "orderReport",
  name: "order.report",
  summary: "Download a completed order's service report (PDF)",
  description:
    "application/pdf: the job, its times (each with the seal of the record that wrote it), the final " +
    "cost, and every photo and document with its SHA-256, the seal of the audit record holding the " +
    "digest and the verify URL. For the account that owns the order and the dispatch team (a " +
    "contractor's key: 403 key_kind_not_allowed); 409 invalid_transition until the order is completed. " +
    "ETag is the PDF's SHA-256 (If-None-Match answers 304). Its URL is the order's report_url. An " +
    "agent's answer carries the PDF itself (MCP: an embedded resource; A2A: a file part) beside its " +
    "digest and URL.",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/orders/:order_id/report", input: "params" },
  problems: [409],
  download: { mediaTypes: ["application/pdf"] },
  input: z.strictObject({ order_id: orderIdParam }),
  output: blobDescriptorSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const report = await reportModelFor(ctx, input.order_id);
    const blob = await reportBlob(ctx.services.blobs, report, ctx.services.now().getTime());
    return {
      sha256: blob.sha256,
      media_type: "application/pdf",
      size: blob.size,
      filename: `service-report-${report.order_id}.pdf`,
    };
  },
});
