// Reads an application/json request body, for every route (REST, MCP, A2A): UTF-8 only (another charset
// is 415), decoded from gzip, deflate or br when Content-Encoding says so (another coding is 415; the body
// limit counts the decoded bytes, so a decompression bomb stops at the limit), then parsed as I-JSON.

import { promisify } from "node:util";
import zlib from "node:zlib";
import { ApiError } from "../../errors.js";
import { parseIJson } from "./i-json.js";

type Decoder = (body: Buffer, options: zlib.ZlibOptions | zlib.BrotliOptions) => Promise<Buffer>;

const gunzip: Decoder = promisify(zlib.gunzip);
const DECODERS = new Map<string, Decoder>([
  ["gzip", gunzip],
  ["x-gzip", gunzip],
  // HTTP's deflate is the zlib format (RFC 9110, 8.4.1.2).
  ["deflate", promisify(zlib.inflate)],
  ["br", promisify(zlib.brotliDecompress)],
]);

/** The content codings a request body may have, as a 415 names them in Accept-Encoding. */
const ACCEPTED_ENCODINGS = "gzip, deflate, br";

const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;

function checkCharset(contentType: string | undefined): void {
  if (contentType === undefined || !contentType.includes(";")) return;
  const match = CHARSET.exec(contentType);
  if (match === null) return;
  const charset = (match[1] ?? match[2] ?? "").toLowerCase();
  if (charset !== "utf-8") {
    throw new ApiError(
      "unsupported_media_type",
      `charset=${charset} is not supported: send JSON in UTF-8 (charset=utf-8, or no charset).`,
    );
  }
}

/** The decoder for a Content-Encoding header, null for none or identity; throws 415 for any other. */
function decoderFor(header: string | undefined): { name: string; decode: Decoder } | null {
  if (header === undefined) return null;
  const codings = header
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) return null;
  const [name = ""] = codings;
  const decode = codings.length === 1 ? DECODERS.get(name) : undefined;
  if (decode === undefined) {
    throw new ApiError(
      "unsupported_media_type",
      `Content-Encoding ${header} is not supported: send the body unencoded or encoded with one of ${ACCEPTED_ENCODINGS}.`,
      { headers: { "Accept-Encoding": ACCEPTED_ENCODINGS } },
    );
  }
  return { name, decode };
}

async function decodeThenParse(
  coding: { name: string; decode: Decoder },
  body: Buffer,
  limit: number,
): Promise<unknown> {
  let decoded: Buffer;
  try {
    // zlib stops inflating once the output passes the limit, instead of inflating all of it first.
    decoded = await coding.decode(body, { maxOutputLength: limit });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      throw new ApiError(
        "payload_too_large",
        `The request body exceeds ${limit / 1024 / 1024} MiB once decoded.`,
      );
    }
    throw new ApiError("invalid_request", `The request body is not valid ${coding.name} data.`);
  }
  return parseIJson(decoded);
}

/**
 * A JSON body's value: synchronous for an unencoded body (every ordinary call), a promise when it has to
 * be decoded first. Throws (or rejects with) ApiError: 400 invalid_json, 413, 415.
 */
export function readJsonBody(
  headers: { "content-type"?: string; "content-encoding"?: string },
  body: Buffer,
  limit: number,
): unknown {
  checkCharset(headers["content-type"]);
  const coding = decoderFor(headers["content-encoding"]);
  return coding === null ? parseIJson(body) : decodeThenParse(coding, body, limit);
}
