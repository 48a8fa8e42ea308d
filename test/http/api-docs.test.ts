// The API reference at /docs: 200 under the console's Content-Security-Policy, every asset on this
// origin and served, no inline script, and the page pointed at /openapi.json.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_CSP } from "../../src/transports/http/console-assets.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

/** Every URL an HTML page refers to in src or href. */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1] ?? "");
}

describe("the API reference at /docs", () => {
  it("answers 200 with the console's CSP, no inline script, and only same-origin assets", async () => {
    for (const path of ["/docs", "/docs/"]) {
      const res = await h.get(path);
      expect(res.statusCode, path).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.headers["content-security-policy"]).toBe(CONSOLE_CSP);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      const urls = referencedUrls(res.body);
      expect(urls.length).toBeGreaterThan(2);
      for (const ref of urls) {
        const resolved = new URL(ref, `http://localhost${path}`);
        expect(resolved.origin, ref).toBe("http://localhost");
        expect(resolved.pathname, ref).toMatch(/^\/docs\/static\//);
        const url = resolved.pathname;
        const asset = await h.get(url);
        expect(asset.statusCode, url).toBe(200);
        expect(asset.headers["content-security-policy"], url).toBe(CONSOLE_CSP);
      }
      // Scripts only by src (script-src 'self' refuses inline ones), no style element or attribute.
      for (const script of res.body.match(/<script\b[^>]*>[\s\S]*?<\/script>/gi) ?? []) {
        expect(script).toMatch(/^<script src="(\/docs|\.)\/static\/[^"]+"[^>]*>\s*<\/script>$/);
      }
      expect(res.body).not.toMatch(/<style|\sstyle=/i);
    }
  });

  it("points the page at /openapi.json (the plugin's own document routes redirect there)", async () => {
    const init = await h.get("/docs/static/swagger-initializer.js");
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain("resolveUrl('./json')");
    expect(init.body).not.toMatch(/fsd_(test|live)_/);
    const json = await h.get("/docs/json");
    expect(json.statusCode).toBe(302);
    expect(json.headers.location).toBe("/openapi.json");
    expect((await h.get("/docs/yaml")).headers.location).toBe("/openapi.yaml");
  });
});
