// Blobs as files under a directory (DATA_DIR/blobs): the embedded store's adapter. A put streams the
// bytes to a temporary file while hashing them, fsyncs it, renames it to its digest's path and fsyncs
// the directory: once `put` resolves the blob survives a crash, before the record naming it commits.

import { createHash, randomBytes } from "node:crypto";
import { constants, createReadStream } from "node:fs";
import { mkdir, open, readdir, rename, rm, stat, unlink, utimes } from "node:fs/promises";
import { join } from "node:path";
import type { BlobStore, ByteRange, StoredBlob } from "./blob-store.js";
import { checkSha256, SHA256_PATTERN } from "./blob-store.js";

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class FsBlobStore implements BlobStore {
  private readonly tmp: string;

  constructor(private readonly dir: string) {
    this.tmp = join(dir, "tmp");
  }

  /** blobs/ab/abcdef...: 256 folders, so no folder grows past what listings handle well. */
  private pathOf(sha256: string): string {
    checkSha256(sha256);
    return join(this.dir, sha256.slice(0, 2), sha256);
  }

  async put(content: Uint8Array | AsyncIterable<Uint8Array>): Promise<StoredBlob> {
    await mkdir(this.tmp, { recursive: true });
    const temp = join(this.tmp, `${randomBytes(12).toString("hex")}.part`);
    const hash = createHash("sha256");
    let size = 0;
    const handle = await open(temp, "wx");
    try {
      const chunks = content instanceof Uint8Array ? [content] : content;
      for await (const chunk of chunks) {
        hash.update(chunk);
        size += chunk.length;
        await handle.write(chunk);
      }
      await handle.sync();
    } catch (error) {
      await handle.close();
      await rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    const sha256 = hash.digest("hex");
    const target = this.pathOf(sha256);
    if (await this.has(sha256)) {
      // Stored already: keep it, and make it young again, so the orphan collector does not take it
      // while the record that will name it is being written.
      await unlink(temp);
      const now = new Date();
      await utimes(target, now, now);
      return { sha256, size };
    }
    const folder = join(this.dir, sha256.slice(0, 2));
    await mkdir(folder, { recursive: true });
    await rename(temp, target);
    await fsyncDir(folder);
    return { sha256, size };
  }

  async get(sha256: string, range?: ByteRange): Promise<Buffer | undefined> {
    const path = this.pathOf(sha256);
    if (!(await this.has(sha256))) return undefined;
    const stream = createReadStream(path, range ? { start: range.start, end: range.end } : {});
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream) chunks.push(chunk as Buffer);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    return Buffer.concat(chunks);
  }

  async size(sha256: string): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(sha256))).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.size(sha256)) !== undefined;
  }

  async delete(sha256: string): Promise<boolean> {
    try {
      await unlink(this.pathOf(sha256));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
  }

  async *storedBefore(cutoff: Date): AsyncIterable<string> {
    let folders: string[];
    try {
      folders = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    for (const folder of folders) {
      if (!/^[0-9a-f]{2}$/.test(folder)) continue;
      for (const name of await readdir(join(this.dir, folder))) {
        if (!SHA256_PATTERN.test(name)) continue;
        const info = await stat(join(this.dir, folder, name)).catch(() => undefined);
        if (info && info.mtime < cutoff) yield name;
      }
    }
  }
}
