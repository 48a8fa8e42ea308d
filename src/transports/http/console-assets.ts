// Serves the built web console at /console: index.html (never cached, so a new build is picked up at once)
// and the hashed assets under /console/assets (cached for a year, immutable), every response under a
// strict Content-Security-Policy: scripts, styles and connections from this origin only, nothing inline.
// The files are read once, on the first request after they exist: a console built after the server
// started is served without a restart, and a missing build answers a page saying how to make it.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";
import { ApiError } from "../../errors.js";
import type { Services } from "../../operations/kernel/operation.js";
import { sendProblem } from "./problem-reply.js";

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".woff2": "font/woff2",
};

interface Built {
  index: Buffer;
  assets: Map<string, { body: Buffer; type: string }>;
}

/** dist/console of the package this module belongs to (found from src/ under tsx and from dist/src/). */
function defaultConsoleDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return join(dir, "dist", "console");
}

function readBuild(dir: string): Built | null {
  const indexPath = join(dir, "index.html");
  if (!existsSync(indexPath)) return null;
  const assets = new Map<string, { body: Buffer; type: string }>();
  const assetDir = join(dir, "assets");
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      const path = join(assetDir, name);
      if (!statSync(path).isFile()) continue;
      assets.set(name, {
        body: readFileSync(path),
        type: TYPES[extname(name)] ?? "application/octet-stream",
      });
    }
  }
  return { index: readFileSync(indexPath), assets };
}

/** The console's security headers (CSP above and the rest), shared with the API reference at /docs. */
export function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header("Content-Security-Policy", CONSOLE_CSP)
    .header("X-Content-Type-Options", "nosniff")
    .header("Referrer-Policy", "no-referrer")
    .header("X-Frame-Options", "DENY")
    .header("Cross-Origin-Opener-Policy", "same-origin");
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>The console is not built</h1>
<p>This server found no built console. Run <code>npm run build</code> (or <code>npm start</code>, which builds
first) in the service's directory, then reload this page.</p></body></html>
`;

export function registerConsoleAssets(app: FastifyInstance, services: Services): void {
  const dir = services.config.CONSOLE_DIR ?? defaultConsoleDir();
  let built: Built | null = null;
  const current = () => {
    built ??= readBuild(dir);
    return built;
  };

  const index = (reply: FastifyReply) => {
    const b = current();
    secure(reply).header("Cache-Control", "no-cache");
    if (!b) return reply.status(503).type("text/html; charset=utf-8").send(NOT_BUILT);
    return reply.type("text/html; charset=utf-8").send(b.index);
  };

  app.get("/console", { schema: { hide: true } }, (_request, reply) => reply.redirect("/console/", 301));
  app.get("/console/", { schema: { hide: true } }, (_request, reply) => index(reply));
  app.get("/console/assets/:name", { schema: { hide: true } }, (request, reply) => {
    const { name } = request.params as { name: string };
    const asset = current()?.assets.get(name);
    if (!asset) {
      return sendProblem(request, reply, new ApiError("not_found", `No console asset ${name}.`));
    }
    return secure(reply)
      .header("Cache-Control", "public, max-age=31536000, immutable")
      .type(asset.type)
      .send(asset.body);
  });
  // The console is one page: any other path under it (a bookmarked view) is that page.
  app.get("/console/*", { schema: { hide: true } }, (_request, reply) => index(reply));
}
