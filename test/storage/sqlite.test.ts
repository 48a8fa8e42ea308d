import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import { runStoreContract } from "./store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "fd-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runStoreContract("sqlite", async () => openSqliteStore(join(dir, "contract.sqlite")));
