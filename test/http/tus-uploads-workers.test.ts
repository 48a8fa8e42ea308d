// Resumable uploads across the processes of a PostgreSQL deployment: two apps, each with a store (a pool)
// and a tus server of its own, sharing one database as two workers do. An upload created on one is
// resumed on the other, and two PATCHes at one offset on the two (no lock spans them) store one of the
// two, never both. PostgreSQL only (the postgres project); the embedded store is one process.

import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap } from "../../src/bootstrap.js";
import { createServices } from "../../src/services/create-services.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { openPostgresStore } from "../../src/storage/postgres.js";
import { buildApp } from "../../src/transports/http/app.js";
import { closeServices } from "../helpers/close-services.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";
import { postgresUrl, testStoreKind } from "../helpers/test-store.js";

const onPostgres = testStoreKind() === "postgres";

let h: Harness;
let other: { app: FastifyInstance; store: KyselyStore; close(): Promise<void> };
let key: string;
let orderId: string;

function tus(
  app: FastifyInstance,
  method: "POST" | "PATCH" | "HEAD",
  url: string,
  headers = {},
  body?: Buffer,
) {
  return app.inject({
    method,
    url,
    headers: { "x-api-key": key, "tus-resumable": "1.0.0", ...headers },
    ...(body ? { payload: body } : {}),
  });
}

const octets = { "content-type": "application/offset+octet-stream" };

describe.skipIf(!onPostgres)("a tus upload across two workers on one PostgreSQL", () => {
  beforeAll(async () => {
    h = await createHarness();
    const schema = (h.services.store as KyselyStore).schema;
    const store = openPostgresStore(postgresUrl(schema), { poolSize: 2, schema });
    const services = createServices(h.config, store);
    await bootstrap(store, services.keys);
    await services.pool.load();
    const app = await buildApp(services);
    await app.ready();
    other = {
      app,
      store,
      async close() {
        await app.close();
        await closeServices(services);
        await store.close();
      },
    };
    key = await h.key("acme", "test");
    const placed = await h.post(
      "/api/dispatch/v1/order",
      { trade: "plumbing", location: { state: "CA", zip: "94103" }, description: "Leak" },
      { "x-api-key": key },
    );
    expect(placed.statusCode, placed.body).toBe(200);
    orderId = placed.json().order_id;
  });

  afterAll(async () => {
    await other?.close();
    await h?.close();
  });

  it("is created on one, resumed on the other, and finished on the first", async () => {
    const pdf = Buffer.from(`%PDF-1.4\n${"%filler\n".repeat(500)}trailer<</Root 1 0 R>>\n%%EOF\n`, "latin1");
    const created = await tus(h.app, "POST", `/api/orders/${orderId}/uploads`, {
      "upload-length": String(pdf.length),
    });
    expect(created.statusCode, created.body).toBe(201);
    const path = new URL(created.headers.location as string).pathname;
    const half = 2000;
    const first = await tus(
      other.app,
      "PATCH",
      path,
      { ...octets, "upload-offset": "0" },
      pdf.subarray(0, half),
    );
    expect(first.statusCode, first.body).toBe(204);
    const head = await tus(h.app, "HEAD", path);
    expect(head.headers["upload-offset"]).toBe(String(half));
    const rest = await tus(
      h.app,
      "PATCH",
      path,
      { ...octets, "upload-offset": String(half) },
      pdf.subarray(half),
    );
    expect(rest.statusCode, rest.body).toBe(200);
    expect(rest.json()).toMatchObject({ media_type: "application/pdf", size: pdf.length });
  });

  it("stores one of two PATCHes at one offset sent to the two at once, answering the other 409", async () => {
    const created = await tus(h.app, "POST", `/api/orders/${orderId}/uploads`, { "upload-length": "100000" });
    const path = new URL(created.headers.location as string).pathname;
    const a = Buffer.alloc(3000, 0x61);
    const b = Buffer.alloc(3000, 0x62);
    const [ra, rb] = await Promise.all([
      tus(h.app, "PATCH", path, { ...octets, "upload-offset": "0" }, a),
      tus(other.app, "PATCH", path, { ...octets, "upload-offset": "0" }, b),
    ]);
    const statuses = [ra.statusCode, rb.statusCode].sort();
    expect(statuses).toEqual([204, 409]);
    const loser = ra.statusCode === 409 ? ra : rb;
    expectProblem(loser, 409, "upload_offset_mismatch");
    const id = path.split("/").at(-1) as string;
    const stored = await h.services.store.partialUploads.read(id);
    expect(stored.equals(ra.statusCode === 204 ? a : b)).toBe(true);
    expect((await h.services.store.partialUploads.find(id))?.offset).toBe(3000);
  });

  it("commits one of two writes at one offset in the two workers' stores, the other refused with tus's 409", async () => {
    // The stores themselves, below the routes' checks: what keeps an upload whole when both PATCHes
    // passed their HEAD-time offset check at once.
    const created = await tus(h.app, "POST", `/api/orders/${orderId}/uploads`, { "upload-length": "100000" });
    const id = (created.headers.location as string).split("/").at(-1) as string;
    const a = Buffer.alloc(5000, 0x61);
    const b = Buffer.alloc(5000, 0x62);
    const [wa, wb] = await Promise.allSettled([
      h.services.store.partialUploads.write(Readable.from([a]), id, 0),
      other.store.partialUploads.write(Readable.from([b]), id, 0),
    ]);
    const outcomes = [wa, wb].map((w) =>
      w.status === "fulfilled" ? w.value : (w.reason as { status_code: number }).status_code,
    );
    expect(outcomes.sort()).toEqual([409, 5000]);
    const stored = await other.store.partialUploads.read(id);
    expect(stored.equals(wa.status === "fulfilled" ? a : b)).toBe(true);
  });
});
