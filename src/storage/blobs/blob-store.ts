// The blob store port: bytes named by their SHA-256 (content-addressed, so the same photo sent twice is
// stored once), for attachments. Two adapters: files under the data directory (fs-blob-store.ts, the
// embedded store's) and chunked rows in the SQL store (sql-blob-store.ts, for PostgreSQL deployments of
// several processes). A blob is durable when `put` resolves, so the record naming it can commit after.

import { createHash } from "node:crypto";

export const SHA256_PATTERN = /^[0-9a-f]{64}$/;

/** Bytes `start` to `end`, both included (as HTTP's Range counts them). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredBlob {
  sha256: string;
  size: number;
}

/** A blob as an operation names it for download (its `output`): REST serves its bytes, agents get them
 * in their answer (Operation.download). */
export interface BlobDescriptor {
  sha256: string;
  media_type: string;
  size: number;
  filename: string;
}

export interface BlobStore {
  /** Stores the bytes (again: a blob stored already is kept, its age reset) and names them. */
  put(content: Uint8Array | AsyncIterable<Uint8Array>): Promise<StoredBlob>;
  /** The blob's bytes, or the range of them; undefined when there is no such blob. */
  get(sha256: string, range?: ByteRange): Promise<Buffer | undefined>;
  /** The blob's size, or undefined when there is no such blob. */
  size(sha256: string): Promise<number | undefined>;
  has(sha256: string): Promise<boolean>;
  /** Removes the blob; false when there was none. */
  delete(sha256: string): Promise<boolean>;
  /** The blobs stored (or put again) before `cutoff`: candidates for the orphan collector. */
  storedBefore(cutoff: Date): AsyncIterable<string>;
}

/** The SHA-256 of the bytes (hex) and the bytes, read whole (uploads are bounded before they get here). */
export async function readAll(content: Uint8Array | AsyncIterable<Uint8Array>): Promise<Buffer> {
  if (content instanceof Uint8Array) return Buffer.from(content.buffer, content.byteOffset, content.length);
  const chunks: Buffer[] = [];
  for await (const chunk of content) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Refuses a name that is not a SHA-256 (it becomes a path or a key). */
export function checkSha256(sha256: string): void {
  if (!SHA256_PATTERN.test(sha256)) throw new Error(`not a SHA-256: ${sha256}`);
}
