// The web console's files at /console: index.html never cached, hashed assets cached for good, all under a
// strict Content-Security-Policy; a server without a built console says how to build it.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createHarness } from "../helpers/harness.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function consoleDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "fd-console-"));
  dirs.push(dir);
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), body);
  }
  return dir;
}

describe("the console's files", () => {
  it("serves index.html uncached and hashed assets immutable, under a CSP with no inline script", async () => {
    const dir = consoleDir({
      "index.html": '<!doctype html><script type="module" src="/console/assets/index-abc123.js"></script>',
      "assets/index-abc123.js": "console.log(1)",
      "assets/index-abc123.css": "body{}",
    });
    const h = await createHarness({ CONSOLE_DIR: dir });
    const page = await h.get("/console/");
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("no-cache");
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.body).toContain("/console/assets/index-abc123.js");
    // Any other path under /console is the same page; /console itself redirects to it.
    expect((await h.get("/console/board")).body).toBe(page.body);
    const bare = await h.get("/console");
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe("/console/");

    const js = await h.get("/console/assets/index-abc123.js");
    expect(js.statusCode).toBe(200);
    expect(js.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(js.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(js.body).toBe("console.log(1)");
    expect((await h.get("/console/assets/index-abc123.css")).headers["content-type"]).toBe(
      "text/css; charset=utf-8",
    );
    const missing = await h.get("/console/assets/nope.js");
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe("not_found");
    expect((await h.get("/console/assets/..%2Findex.html")).statusCode).toBe(404);
  });

  it("says to run npm run build when the console is not built, and serves it once it is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fd-console-"));
    dirs.push(dir);
    const h = await createHarness({ CONSOLE_DIR: dir });
    const page = await h.get("/console/");
    expect(page.statusCode).toBe(503);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toContain("npm run build");
    writeFileSync(join(dir, "index.html"), "<!doctype html><title>built</title>");
    const later = await h.get("/console/");
    expect(later.statusCode).toBe(200);
    expect(later.body).toContain("built");
  });
});
