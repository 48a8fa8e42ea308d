// The blob store contract, run against the filesystem adapter, the chunked SQL adapter on SQLite, and
// the chunked SQL adapter on PostgreSQL (TEST_DATABASE_URL; skipped without it, as the store contract is).

import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BlobStore } from "../../src/storage/blobs/blob-store.js";
import { FsBlobStore } from "../../src/storage/blobs/fs-blob-store.js";
import { CHUNK_BYTES, SqlBlobStore } from "../../src/storage/blobs/sql-blob-store.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { openPostgresTestStore, openTestStore, type TestStore } from "../helpers/test-store.js";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

async function* inPieces(bytes: Buffer, size: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

function runBlobContract(
  name: string,
  open: (
    now: () => Date,
  ) => Promise<{ blobs: BlobStore; close(): Promise<void>; age?(sha256: string, at: Date): Promise<void> }>,
) {
  describe(`blob store contract: ${name}`, () => {
    let blobs: BlobStore;
    let close: () => Promise<void>;
    let age: ((sha256: string, at: Date) => Promise<void>) | undefined;
    let clock = new Date();
    beforeAll(async () => {
      const opened = await open(() => clock);
      blobs = opened.blobs;
      close = opened.close;
      age = opened.age;
    });
    afterAll(async () => close());

    it("names bytes by their SHA-256 and gives them back whole", async () => {
      const bytes = randomBytes(CHUNK_BYTES * 2 + 1234);
      const stored = await blobs.put(bytes);
      expect(stored).toEqual({ sha256: sha(bytes), size: bytes.length });
      expect(await blobs.has(stored.sha256)).toBe(true);
      expect(await blobs.size(stored.sha256)).toBe(bytes.length);
      expect((await blobs.get(stored.sha256))?.equals(bytes)).toBe(true);
    });

    it("takes a stream and stores the same blob once", async () => {
      const bytes = randomBytes(100_000);
      const a = await blobs.put(inPieces(bytes, 7_001));
      const b = await blobs.put(bytes);
      expect(a).toEqual(b);
      expect((await blobs.get(a.sha256))?.equals(bytes)).toBe(true);
    });

    it("reads a range within a chunk and across chunks", async () => {
      const bytes = randomBytes(CHUNK_BYTES * 3);
      const { sha256 } = await blobs.put(bytes);
      expect((await blobs.get(sha256, { start: 10, end: 19 }))?.equals(bytes.subarray(10, 20))).toBe(true);
      const across = { start: CHUNK_BYTES - 5, end: 2 * CHUNK_BYTES + 5 };
      expect((await blobs.get(sha256, across))?.equals(bytes.subarray(across.start, across.end + 1))).toBe(
        true,
      );
      const last = { start: bytes.length - 1, end: bytes.length - 1 };
      expect((await blobs.get(sha256, last))?.equals(bytes.subarray(bytes.length - 1))).toBe(true);
    });

    it("stores an empty blob", async () => {
      const stored = await blobs.put(new Uint8Array(0));
      expect(stored.size).toBe(0);
      expect((await blobs.get(stored.sha256))?.length).toBe(0);
    });

    it("answers undefined and false for a blob it does not hold, and deletes once", async () => {
      const missing = sha(randomBytes(8));
      expect(await blobs.get(missing)).toBeUndefined();
      expect(await blobs.has(missing)).toBe(false);
      expect(await blobs.delete(missing)).toBe(false);
      const { sha256 } = await blobs.put(randomBytes(10));
      expect(await blobs.delete(sha256)).toBe(true);
      expect(await blobs.has(sha256)).toBe(false);
      expect(await blobs.delete(sha256)).toBe(false);
    });

    it("refuses a name that is not a SHA-256", async () => {
      await expect(blobs.get("../../etc/passwd")).rejects.toThrow(/not a SHA-256/);
    });

    it("lists the blobs stored before a time; putting one again makes it young", async () => {
      const old = await blobs.put(randomBytes(50));
      const dayAgo = new Date(Date.now() - 25 * 3600_000);
      if (age) await age(old.sha256, dayAgo);
      else {
        clock = dayAgo;
        await blobs.put(await blobs.get(old.sha256).then((b) => b as Buffer));
        clock = new Date();
      }
      const young = await blobs.put(randomBytes(50));
      const cutoff = new Date(Date.now() - 24 * 3600_000);
      const listed: string[] = [];
      for await (const s of blobs.storedBefore(cutoff)) listed.push(s);
      expect(listed).toContain(old.sha256);
      expect(listed).not.toContain(young.sha256);
      await blobs.put((await blobs.get(old.sha256)) as Buffer);
      const after: string[] = [];
      for await (const s of blobs.storedBefore(cutoff)) after.push(s);
      expect(after).not.toContain(old.sha256);
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "fd-blobs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runBlobContract("filesystem", async () => {
  const root = join(dir, "fs");
  return {
    blobs: new FsBlobStore(root),
    close: async () => {
      // No temporary file is left behind by the puts.
      expect(readdirSync(join(root, "tmp"))).toEqual([]);
    },
    age: async (sha256, at) => utimesSync(join(root, sha256.slice(0, 2), sha256), at, at),
  };
});

async function sqlBlobs(opened: TestStore, now: () => Date) {
  const store = opened.store as KyselyStore;
  await store.migrate();
  return {
    blobs: new SqlBlobStore(store.db, now),
    close: async () => {
      await sql`select 1`.execute(store.db);
      await store.close();
      await opened.cleanup();
    },
  };
}

runBlobContract("chunked rows on SQLite", async (now) =>
  sqlBlobs(await openTestStore(join(dir, "sqlite")), now),
);

describe.skipIf(!process.env.TEST_DATABASE_URL)("on TEST_DATABASE_URL", () => {
  runBlobContract("chunked rows on PostgreSQL", async (now) => sqlBlobs(await openPostgresTestStore(), now));
});
