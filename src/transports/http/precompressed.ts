// A document that never changes while the process runs (the OpenAPI document), answered with a strong
// ETag from its content hash (If-None-Match -> 304) and compressed once per encoding (br, gzip) on the
// first request that accepts it, so no request compresses it again.

import { createHash } from "node:crypto";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { FastifyReply, FastifyRequest } from "fastify";

type Encoding = "br" | "gzip";

export interface Precompressed {
  etag: string;
  send(request: FastifyRequest, reply: FastifyReply): FastifyReply;
}

/** The encoding to answer with, from Accept-Encoding: br before gzip, none when neither is acceptable. */
export function chooseEncoding(header: string | undefined): Encoding | null {
  if (!header) return null;
  const q = new Map<string, number>();
  for (const part of header.toLowerCase().split(",")) {
    const [name = "", ...params] = part.trim().split(";");
    const weight = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    q.set(name.trim(), weight ? Number(weight.slice(2)) : 1);
  }
  const accepts = (coding: Encoding) => {
    const weight = q.get(coding) ?? q.get("*");
    return weight !== undefined && Number.isFinite(weight) && weight > 0;
  };
  if (accepts("br")) return "br";
  if (accepts("gzip")) return "gzip";
  return null;
}

/** True when If-None-Match names one of `tags` (or is "*"); weak comparison, as RFC 9110 asks for GET. */
function matches(ifNoneMatch: string | undefined, tags: string[]): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((tag) => tags.includes(tag.trim().replace(/^W\//, "")));
}

export function precompressed(text: string, type: string, cacheControl: string): Precompressed {
  const identity = Buffer.from(text, "utf8");
  const hash = createHash("sha256").update(identity).digest("base64url").slice(0, 32);
  // One strong tag per representation (a compressed body is another byte sequence); any of them
  // revalidates, since all three stand for the same document.
  const tags = { identity: `"${hash}"`, gzip: `"${hash}-gzip"`, br: `"${hash}-br"` };
  const bodies = new Map<Encoding, Buffer>();
  const compressed = (encoding: Encoding): Buffer => {
    let body = bodies.get(encoding);
    if (body === undefined) {
      body =
        encoding === "br"
          ? brotliCompressSync(identity, {
              params: {
                [constants.BROTLI_PARAM_QUALITY]: 9,
                [constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
              },
            })
          : gzipSync(identity, { level: 9 });
      bodies.set(encoding, body);
    }
    return body;
  };
  return {
    etag: tags.identity,
    send(request, reply) {
      const encoding = chooseEncoding(request.headers["accept-encoding"]);
      reply
        .type(type)
        .header("cache-control", cacheControl)
        .header("vary", "Accept-Encoding")
        .header("etag", tags[encoding ?? "identity"]);
      if (matches(request.headers["if-none-match"], Object.values(tags))) {
        return reply.status(304).send();
      }
      if (encoding === null) return reply.send(identity);
      return reply.header("content-encoding", encoding).send(compressed(encoding));
    },
  };
}
