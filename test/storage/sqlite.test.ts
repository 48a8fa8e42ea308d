import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import { testRecord } from "../helpers/fixtures.js";
import { runStoreContract } from "./store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "fd-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runStoreContract("sqlite", async () => openSqliteStore(join(dir, "contract.sqlite")));

describe("SQLite WAL checkpoints", () => {
  it("are run by the background thread, not by the commits on the serving connection", async () => {
    const file = join(dir, "checkpoint.sqlite");
    const store = openSqliteStore(file);
    await store.migrate();
    const sizeBefore = statSync(file).size;
    // About 2 MB of records: far below the serving connection's backstop, so only the thread checkpoints.
    for (let i = 0; i < 10; i++) {
      await store.write(async (tx) => {
        for (let j = 0; j < 200; j++) tx.appendAudit(testRecord());
      });
    }
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(1_000_000);
    await vi.waitFor(() => expect(statSync(file).size).toBeGreaterThan(sizeBefore + 1_000_000), {
      timeout: 5_000,
    });
    await store.close();
  });
});
