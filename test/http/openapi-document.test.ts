// /openapi.json: compact, with a strong ETag (304 on If-None-Match), gzip or br when asked, and one
// component per named schema (no `Input` twins, none unused).

import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseEncoding } from "../../src/transports/http/precompressed.js";
import { createHarness, type Harness } from "../helpers/harness.js";

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
