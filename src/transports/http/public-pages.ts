// What the public pages have in common (no key, no cookie: the tracking page, tracking-page.ts; a site's
// request form, request-page.ts; a notification's unsubscribe page, unsubscribe-page.ts): their headers,
// their rate budgets, and their static script and style files.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";
import { rateLimitHeaders } from "../../auth/rate-limit-headers.js";
import type { RatePolicy } from "../../auth/rate-limiter.js";
import { ApiError } from "../../errors.js";
import type { Services } from "../../operations/kernel/operation.js";
import { secure } from "./console-assets.js";
import { sendProblem } from "./problem-reply.js";

/** A public page's headers: the console's CSP and the rest, never indexed, never cached. */
export function publicHeaders(reply: FastifyReply): FastifyReply {
  return secure(reply).header("X-Robots-Tag", "noindex, nofollow").header("Cache-Control", "no-store");
}

/** A static public page: `title` as its title and heading, then `body` (HTML, trusted), never indexed,
 * no referrer sent; `viewport` for pages read on a phone. */
export function staticPageHtml(page: {
  title: string;
  stylesheet: string;
  body: string;
  viewport: boolean;
}): string {
  const viewport = page.viewport
    ? '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${viewport}<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${page.title}</title>
<link rel="stylesheet" href="${page.stylesheet}">
</head>
<body><main><h1>${page.title}</h1>
${page.body}</main></body>
</html>
`;
}

/** The page every dead token of a public page answers (404): the same for every reason, saying `sentence`. */
export function goneHtml(stylesheet: string, sentence: string): string {
  return staticPageHtml({
    title: "Link not available",
    stylesheet,
    body: `<p>${sentence}</p>`,
    viewport: false,
  });
}

/** Spends one request of each budget named (its key and policy), in order; throws the 429 when one is out,
 * with the rate-limit headers of the budgets spent. */
export async function spendBudgets(
  services: Services,
  reply: FastifyReply,
  budgets: ReadonlyArray<readonly [string, RatePolicy]>,
): Promise<void> {
  for (const [key, policy] of budgets) {
    const decision = await services.limiter.consume(key, policy);
    reply.headers(rateLimitHeaders(policy, decision, Date.now()));
    if (!decision.allowed) {
      throw new ApiError("rate_limited", `Rate limit exceeded; retry in ${decision.retryAfterSeconds} s.`, {
        extra: { retry_after_seconds: decision.retryAfterSeconds },
      });
    }
  }
}

/** The static/ directory of the package this module belongs to (from src/ under tsx, and dist/src/). */
function staticDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return join(dir, "static");
}

/** Serves `assets` (file name -> media type) from static/ at `<prefix>/:name`, read once, cached 5 min. */
export function registerStaticAssets(
  app: FastifyInstance,
  prefix: string,
  assets: Record<string, string>,
): void {
  const dir = staticDir();
  const read = new Map<string, Buffer>();
  app.get(`${prefix}/:name`, { schema: { hide: true } }, (request, reply) => {
    const { name } = request.params as { name: string };
    const type = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (type === undefined)
      return sendProblem(request, reply, new ApiError("not_found", `No asset ${name}.`));
    let body = read.get(name);
    if (body === undefined) {
      body = readFileSync(join(dir, name));
      read.set(name, body);
    }
    return secure(reply).header("Cache-Control", "public, max-age=300").type(type).send(body);
  });
}
