// Service report micro-benchmark (issue 32): how long a completed order's PDF takes to make, for an order
// with 0, 10 and 50 photos (50 is ATTACHMENT_ORDER_MAX_FILES): each photo's WebP thumbnail (320x240, as
// uploads store them) read from a blob store on disk and converted to JPEG with sharp, then the PDF laid
// out by pdf-lib; and a request served from the report already rendered (the model's digest found, the
// blob's size read).
//
//   npm run bench:report        (BENCH_ITERATIONS renders per size, default 20)

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { renderReport, reportBlob } from "../src/operations/orders/service-report.js";
import { serviceReportModel } from "../src/operations/orders/service-report-model.js";
import { FsBlobStore } from "../src/storage/blobs/fs-blob-store.js";
import type { Attachment } from "../src/storage/store.js";
import { orderFixture } from "../test/helpers/order-fixture.js";

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "fd-bench-report-"));
  const blobs = new FsBlobStore(dir);
  const order = orderFixture({
    status: "completed",
    on_site_at: new Date(Date.now() - 3_600_000).toISOString(),
    completed_at: new Date().toISOString(),
    final_cost_cents: 18_550,
    time_zone: "America/Chicago",
  });
  console.log(`service report: ${ITERATIONS} renders per size, ms`);
  console.log("photos  pdf bytes   p50     p95     cached p50");
  for (const count of [0, 10, 50]) {
    const attachments: Attachment[] = [];
    for (let i = 0; i < count; i++) {
      const thumb = await sharp({
        create: { width: 320, height: 240, channels: 3, background: { r: (i * 37) % 256, g: 120, b: 200 } },
      })
        .webp()
        .toBuffer();
      const stored = await blobs.put(thumb);
      attachments.push({
        id: `att_${String(i).padStart(20, "0")}`,
        orderId: order.id,
        livemode: true,
        sha256: stored.sha256.replace(/^./, "f"),
        size: 2_000_000,
        mediaType: "image/jpeg",
        kind: "photo",
        caption: `Photo ${i} of the work`,
        filename: `photo-${i}.jpg`,
        uploader: "contractor:ctr_1",
        createdAt: order.completed_at as string,
        thumbnailSha256: stored.sha256,
        signerName: null,
        seal: `seal_${String(i).padStart(22, "0")}`,
      });
    }
    const report = serviceReportModel({
      order,
      attachments,
      records: [],
      audience: "account",
      contractorRef: "cref-bench",
      baseUrl: "https://dispatch.example.com",
    });
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const start = performance.now();
      bytes = (await renderReport(blobs, report)).length;
      times.push(performance.now() - start);
    }
    await reportBlob(blobs, report, Date.now());
    const cached: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const start = performance.now();
      await reportBlob(blobs, report, Date.now());
      cached.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    cached.sort((a, b) => a - b);
    console.log(
      `${String(count).padStart(6)}  ${String(bytes).padStart(9)}  ${percentile(times, 50).toFixed(1).padStart(6)}  ${percentile(times, 95).toFixed(1).padStart(6)}  ${percentile(cached, 50).toFixed(2).padStart(10)}`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}

await main();
