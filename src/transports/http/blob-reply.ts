// Serves a blob an operation named (its result a BlobDescriptor, attachments.ts) the way HTTP serves a
// file: a strong ETag (the SHA-256, which names the bytes), 304 to a matching If-None-Match, one byte
// range (206, Content-Range; 416 when it lies past the end), and headers that keep a browser from
// sniffing or rendering it as something else.

import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors.js";
import type { BlobDescriptor, BlobStore, ByteRange } from "../../storage/blobs/blob-store.js";
import { firstHeader } from "./headers.js";

export type { BlobDescriptor };

/** If-None-Match matches this ETag (a list, weak forms and `*` included, as RFC 9110 compares them). */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(",").some((t) => {
    const tag = t.trim();
    return tag === "*" || tag === etag || tag === `W/${etag}`;
  });
}

/** The one range a Range header asks for; null to serve it whole (no Range, another unit, or several
 * ranges, which a server may answer whole); "unsatisfiable" for 416. */
function rangeOf(header: string | undefined, size: number): ByteRange | null | "unsatisfiable" {
  if (header === undefined) return null;
  const m = /^bytes=(.*)$/i.exec(header.trim());
  if (!m) return null;
  const specs = (m[1] as string).split(",");
  if (specs.length > 1) return null;
  const spec = /^\s*(\d*)-(\d*)\s*$/.exec(specs[0] as string);
  if (!spec || (spec[1] === "" && spec[2] === "")) return "unsatisfiable";
  if (spec[1] === "") {
    const suffix = Number(spec[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(spec[1]);
  const end = spec[2] === "" ? size - 1 : Math.min(Number(spec[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}

/** RFC 6266's filename and filename* (UTF-8) forms. */
function disposition(media: string, filename: string): string {
  const kind = media.startsWith("image/") || media === "application/pdf" ? "inline" : "attachment";
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** Content-Disposition of a file to save rather than show (an export). */
export function attachmentDisposition(filename: string): string {
  return disposition("application/octet-stream", filename);
}

export async function sendBlob(
  request: FastifyRequest,
  reply: FastifyReply,
  blobs: BlobStore,
  blob: BlobDescriptor,
): Promise<FastifyReply> {
  const etag = `"${blob.sha256}"`;
  reply.header("ETag", etag);
  reply.header("Cache-Control", "private, no-cache");
  reply.header("Accept-Ranges", "bytes");
  reply.header("X-Content-Type-Options", "nosniff");
  reply.header("Content-Disposition", disposition(blob.media_type, blob.filename));
  if (matches(firstHeader(request.headers["if-none-match"]), etag)) return reply.status(304).send();
  // If-Range naming another version of the bytes: serve them whole.
  const ifRange = firstHeader(request.headers["if-range"]);
  const range =
    ifRange !== undefined && ifRange !== etag ? null : rangeOf(firstHeader(request.headers.range), blob.size);
  if (range === "unsatisfiable") {
    throw new ApiError("range_not_satisfiable", `Range must lie within the file's ${blob.size} bytes.`, {
      headers: { "Content-Range": `bytes */${blob.size}` },
      extra: { size: blob.size },
    });
  }
  const bytes = await blobs.get(blob.sha256, range ?? undefined);
  if (bytes === undefined) throw new Error(`blob ${blob.sha256} is missing from the blob store`);
  reply.type(blob.media_type);
  if (range === null) return reply.status(200).send(bytes);
  return reply
    .status(206)
    .header("Content-Range", `bytes ${range.start}-${range.end}/${blob.size}`)
    .send(bytes);
}
