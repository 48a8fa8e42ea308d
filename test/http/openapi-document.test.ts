// /openapi.json: compact, with a strong ETag (304 on If-None-Match), gzip or br when asked, and one
// component per named schema (no `Input` twins, none unused). What a generated client relies on: every
// error declared as application/problem+json, no `$id` a JSON Schema 2020-12 validator refuses, both media
// types of the event stream, the response headers the server sends, a length bound on every request
// string, and the tags it uses defined.

import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rateLimitHeaders } from "../../src/auth/rate-limit-headers.js";
import { OPERATIONS } from "../../src/operations/registry.js";
import { chooseEncoding } from "../../src/transports/http/precompressed.js";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

// biome-ignore lint/suspicious/noExplicitAny: the document is JSON read by path.
type Json = any;

interface Operation {
  operationId: string;
  tags: string[];
  parameters?: Array<{ name: string; in: string; schema: Json }>;
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<
    string,
    { description: string; headers?: Record<string, Json>; content?: Record<string, Json> }
  >;
}

/** The document, and its operations with each answer's reference (components.responses) resolved. */
async function documentOf(harness: Harness): Promise<{ doc: Json; operations: Operation[] }> {
  const doc = (await harness.get("/openapi.json")).json();
  const operations = Object.values(doc.paths as Record<string, Record<string, Operation>>).flatMap((p) =>
    Object.values(p).map((op) => ({
      ...op,
      responses: Object.fromEntries(
        Object.entries(op.responses).map(([status, r]: [string, Json]) => [
          status,
          r.$ref ? doc.components.responses[r.$ref.split("/").pop()] : r,
        ]),
      ),
    })),
  );
  return { doc, operations };
}

const opOf = (id: string) => {
  const op = OPERATIONS.find((o) => o.id === id);
  if (!op) throw new Error(`no operation ${id}`);
  return op;
};

/** The header names a response declares, each resolved from components.headers. */
function headerNames(doc: Json, response: { headers?: Record<string, Json> }): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(response.headers ?? {}).map(([name, header]) => [
      name,
      header.$ref ? doc.components.headers[header.$ref.split("/").pop()] : header,
    ]),
  );
}

/** Every string schema under `schema` (following $refs into components) without a length bound. */
function unboundedStrings(doc: Json, schema: Json, where: string, out: string[], seen = new Set<string>()) {
  if (schema === null || typeof schema !== "object") return out;
  if (Array.isArray(schema)) {
    for (const s of schema) unboundedStrings(doc, s, where, out, seen);
    return out;
  }
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").pop();
    if (!seen.has(name)) {
      seen.add(name);
      unboundedStrings(doc, doc.components.schemas[name], `${where}(${name})`, out, seen);
    }
    return out;
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  // A file's bytes (contentMediaType) are bounded in bytes by the server's limit (413), not in characters.
  const bounded =
    schema.enum !== undefined ||
    schema.const !== undefined ||
    schema.maxLength !== undefined ||
    schema.contentMediaType !== undefined;
  if (types.includes("string") && !bounded) out.push(where);
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties") {
      for (const [name, s] of Object.entries(value as object))
        unboundedStrings(doc, s, `${where}.${name}`, out, seen);
    } else if (["items", "anyOf", "oneOf", "allOf", "additionalProperties", "propertyNames"].includes(key)) {
      unboundedStrings(doc, value, where, out, seen);
    }
  }
  return out;
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe("/openapi.json", () => {
  it("is compact, with a strong ETag from its content, and 304 on If-None-Match", async () => {
    const res = await h.get("/openapi.json");
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(JSON.stringify(JSON.parse(res.body)));
    const etag = String(res.headers.etag);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{16,}"$/);
    expect(res.headers.vary).toBe("Accept-Encoding");
    expect((await h.get("/openapi.json")).headers.etag).toBe(etag);

    const again = await h.get("/openapi.json", { "if-none-match": etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe("");
    expect(again.headers.etag).toBe(etag);
    expect((await h.get("/openapi.json", { "if-none-match": `"other", W/${etag}` })).statusCode).toBe(304);
    expect((await h.get("/openapi.json", { "if-none-match": '"other"' })).statusCode).toBe(200);
  });

  it("is gzip or br encoded when asked, with its own tag, and the same document decoded", async () => {
    const plain = await h.get("/openapi.json");
    const gzip = await h.get("/openapi.json", { "accept-encoding": "gzip, deflate" });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(gzip.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(gunzipSync(gzip.rawPayload).toString("utf8")).toBe(plain.body);
    expect(gzip.headers.etag).not.toBe(plain.headers.etag);
    const revalidated = await h.get("/openapi.json", {
      "accept-encoding": "gzip",
      "if-none-match": String(gzip.headers.etag),
    });
    expect(revalidated.statusCode).toBe(304);
    const br = await h.get("/openapi.json", { "accept-encoding": "gzip, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    const refused = await h.get("/openapi.json", { "accept-encoding": "gzip;q=0, br;q=0" });
    expect(refused.headers["content-encoding"]).toBeUndefined();
  });

  it("has one component per schema: no name with an Input or Output twin, none unused", async () => {
    const doc = (await h.get("/openapi.json")).json() as {
      components: { schemas: Record<string, unknown> };
    };
    const names = Object.keys(doc.components.schemas);
    expect(names).toContain("Order");
    expect(names).toContain("QuoteRequest");
    for (const name of names) {
      for (const twin of [`${name}Input`, `${name}Output`]) expect(names, name).not.toContain(twin);
      expect(name).not.toMatch(/(Input|Output)$/);
    }
    const text = JSON.stringify(doc);
    for (const name of names) expect(text, name).toContain(`"#/components/schemas/${name}"`);
  });

  it("chooses br before gzip, honours q=0 and a wildcard", () => {
    expect(chooseEncoding(undefined)).toBeNull();
    expect(chooseEncoding("gzip")).toBe("gzip");
    expect(chooseEncoding("gzip, br")).toBe("br");
    expect(chooseEncoding("br;q=0, gzip")).toBe("gzip");
    expect(chooseEncoding("identity")).toBeNull();
    expect(chooseEncoding("*")).toBe("br");
    expect(chooseEncoding("*, br;q=0")).toBe("gzip");
  });
});

describe("/openapi.json for a generated client: errors, schemas, media types", () => {
  it("declares every 4xx and 5xx as application/problem+json with the Problem schema, as it is served", async () => {
    const { operations } = await documentOf(h);
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const where = `${op.operationId} ${status}`;
        expect(Object.keys(response.content ?? {}), where).toEqual(["application/problem+json"]);
        expect(response.content?.["application/problem+json"].schema, where).toEqual({
          $ref: "#/components/schemas/Problem",
        });
        expect(response.description, where).not.toBe("Default Response");
      }
    }
    const refused = await h.post(ORDER_PATH, validOrder(), {});
    expectProblem(refused, 401, "missing_api_key");
  });

  it("has no $id in any schema (JSON Schema 2020-12 forbids a fragment there)", async () => {
    const { doc } = await documentOf(h);
    const withId: string[] = [];
    const visit = (value: Json, where: string) => {
      if (value === null || typeof value !== "object") return;
      if (!Array.isArray(value) && "$id" in value) withId.push(`${where}: ${value.$id}`);
      for (const [key, item] of Object.entries(value)) visit(item, `${where}/${key}`);
    };
    visit(doc, "#");
    expect(withId).toEqual([]);
  });

  it("documents the event stream as text/event-stream, with its event format, and as a JSON page", async () => {
    const { doc } = await documentOf(h);
    const ok = doc.paths["/api/events"].get.responses["200"];
    expect(Object.keys(ok.content).sort()).toEqual(["application/json", "text/event-stream"]);
    const stream = ok.content["text/event-stream"];
    expect(stream.schema.type).toBe("string");
    expect(stream.schema.description).toMatch(/id:.*event:.*data:/s);
    expect(stream.schema.description).toContain("StreamEvent");
    expect(stream.example).toMatch(/^id: \d+\nevent: order\.[a-z_]+\ndata: \{.*\}\n\n/);
  });

  it("bounds the Idempotency-Key header as the server does: 1-255 visible ASCII characters", async () => {
    const { doc } = await documentOf(h);
    const header = doc.paths[ORDER_PATH].post.parameters.find(
      (p: { name: string }) => p.name.toLowerCase() === "idempotency-key",
    );
    expect(header.schema).toMatchObject({ type: "string", minLength: 1, maxLength: 255 });
    const pattern = new RegExp(header.schema.pattern);
    expect(pattern.test("order-42_retry.1")).toBe(true);
    const key = await h.key("idem-doc", "test");
    for (const refused of ["with space", "caf\u00e9"]) {
      expect(pattern.test(refused), refused).toBe(false);
      const res = await h.post(ORDER_PATH, validOrder(), { "x-api-key": key, "idempotency-key": refused });
      expectProblem(res, 400, "invalid_request");
    }
  });
});

describe("/openapi.json for a generated client: headers, bounds and tags", () => {
  it("declares the response headers the server sends: Request-Id, the rate-limit fields, Retry-After, Idempotent-Replayed", async () => {
    const { doc, operations } = await documentOf(h);
    const sent = Object.keys(
      rateLimitHeaders(
        { name: "per-key", ratePerMinute: 1, burst: 1 },
        { allowed: false, limit: 1, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 },
        0,
      ),
    );
    for (const op of operations) {
      const limited = opOf(op.operationId).limit !== "none";
      for (const [status, response] of Object.entries(op.responses)) {
        const where = `${op.operationId} ${status}`;
        const headers = headerNames(doc, response);
        expect(headers["Request-Id"], where).toMatchObject({ required: true, schema: { type: "string" } });
        if (limited && (status === "200" || status === "429")) {
          for (const name of sent.filter((n) => n !== "Retry-After")) {
            expect(headers[name], `${where} ${name}`).toMatchObject({ required: true });
          }
        }
        if (status === "429") expect(headers["Retry-After"], where).toMatchObject({ required: true });
        if (status === "503") expect(headers["Retry-After"], where).toBeDefined();
      }
    }
    const order = headerNames(doc, doc.paths[ORDER_PATH].post.responses["200"]);
    expect(order["Idempotent-Replayed"]?.schema).toEqual({ type: "string", enum: ["true"] });
  });

  it("bounds every request string (maxLength), the probe's url at the contract's 255", async () => {
    const { doc, operations } = await documentOf(h);
    const unbounded: string[] = [];
    for (const op of operations) {
      for (const p of op.parameters ?? [])
        unboundedStrings(doc, p.schema, `${op.operationId} ${p.in} ${p.name}`, unbounded);
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        unboundedStrings(doc, media.schema, `${op.operationId} ${type}`, unbounded);
      }
    }
    expect(unbounded).toEqual([]);
    const probe =
      doc.paths["/api/agentic-commerce/probe"].post.requestBody.content["application/json"].schema;
    expect(probe.properties.url.maxLength).toBe(255);
  });

  it("requires a request body only where some member is required (no body reads as {})", async () => {
    const { doc } = await documentOf(h);
    expect(doc.paths["/api/dispatch/v1/webhooks/secret"].post.requestBody.required).toBe(false);
    expect(doc.paths[ORDER_PATH].post.requestBody.required).toBe(true);
    expect(doc.paths["/api/contractor/v1/jobs/status"].post.requestBody.required).toBe(true); // a union
  });

  it("defines at the top level, with a description, every tag its operations use", async () => {
    const { doc, operations } = await documentOf(h);
    const defined = new Map((doc.tags ?? []).map((t: { name: string; description?: string }) => [t.name, t]));
    const used = new Set(operations.flatMap((op) => op.tags));
    for (const tag of used) expect(defined.get(tag), tag).toMatchObject({ description: expect.any(String) });
    expect([...defined.keys()].sort()).toEqual([...used].sort());
  });
});
