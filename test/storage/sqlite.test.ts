import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely } from "kysely";
import { afterAll, describe, expect, it, vi } from "vitest";
import { KyselyStore } from "../../src/storage/kysely-store.js";
import { PreparedInsert } from "../../src/storage/prepared-insert.js";
import type { Database } from "../../src/storage/schema.js";
import { openSqliteStore } from "../../src/storage/sqlite.js";
import { DurableSqliteDialect, WalSync } from "../../src/storage/wal-sync.js";
import { testRecord } from "../helpers/fixtures.js";
import { runNotificationStoreContract } from "./notification-store-contract.js";
import { runRequestStoreContract } from "./request-store-contract.js";
import { runSiteStoreContract } from "./site-store-contract.js";
import { runStoreContract } from "./store-contract.js";
import { runTrackingLinkStoreContract } from "./tracking-link-store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "fd-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runStoreContract("sqlite", async (clock) => openSqliteStore(join(dir, "contract.sqlite"), clock));
runSiteStoreContract("sqlite", async (clock) => openSqliteStore(join(dir, "sites.sqlite"), clock));
runTrackingLinkStoreContract("sqlite", async (clock) => openSqliteStore(join(dir, "tracking.sqlite"), clock));
runRequestStoreContract("sqlite", async (clock) => openSqliteStore(join(dir, "requests.sqlite"), clock));
runNotificationStoreContract("sqlite", async (clock) => openSqliteStore(join(dir, "notify.sqlite"), clock));

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

describe("SQLite durable commits", () => {
  /** WAL syncs the test releases by hand, or (while `passThrough`) at once. */
  function deferredSyncs() {
    const waiting: Array<() => void> = [];
    const syncs = {
      waiting,
      passThrough: false,
      sync: () =>
        syncs.passThrough ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve)),
      releaseAll: () => {
        for (const r of waiting.splice(0)) r();
      },
    };
    return syncs;
  }

  function storeWith(file: string, sync: () => Promise<void>) {
    const database = new SQLite(file);
    database.pragma("journal_mode = WAL");
    database.pragma("synchronous = NORMAL");
    return new KyselyStore(
      new Kysely<Database>({ dialect: new DurableSqliteDialect({ database }, sync) }),
      "sqlite",
      { clock: () => new Date() },
    );
  }

  it("reports a write only after the WAL sync that follows its commit; reads wait for none", async () => {
    const syncs = deferredSyncs();
    const store = storeWith(join(dir, "durable.sqlite"), syncs.sync);
    const migrated = store.migrate();
    // The migrations' writes wait for their syncs too; let them through, then hold syncs again.
    await vi.waitFor(() => expect(syncs.waiting.length).toBeGreaterThan(0));
    syncs.passThrough = true;
    syncs.releaseAll();
    await migrated;
    syncs.passThrough = false;

    let acknowledged = false;
    const write = store
      .write(async (tx) => tx.appendAudit(testRecord()))
      .then(() => {
        acknowledged = true;
      });
    await vi.waitFor(() => expect(syncs.waiting.length).toBe(1));
    // Committed, its sync asked for and held: a read goes through on the free connection meanwhile. Then one
    // turn of the event loop, which drains every promise chain that waits for no I/O: an acknowledgement
    // that did not wait for the held sync would have run by then.
    expect(await store.contractors.count("sandbox")).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(acknowledged).toBe(false);
    expect(syncs.waiting.length).toBe(1); // the read asked for no sync
    syncs.releaseAll();
    await write;
    expect(acknowledged).toBe(true);
    await store.close();
  });

  it("makes the store's own writes durable with fdatasync on its WAL file", async () => {
    const file = join(dir, "fdatasync.sqlite");
    const probe = await open(file, "w");
    const datasync = vi.spyOn(Object.getPrototypeOf(probe), "datasync");
    await probe.close();
    const store = openSqliteStore(file);
    await store.migrate();
    datasync.mockClear();
    await store.write(async (tx) => tx.appendAudit(testRecord()));
    expect(datasync).toHaveBeenCalled();
    datasync.mockClear();
    await store.contractors.count("live");
    expect(datasync).not.toHaveBeenCalled();
    datasync.mockRestore();
    await store.close();
  });

  it("syncs the WAL file itself: one sync per wave of commits, the ones arriving mid-sync share the next", async () => {
    const file = join(dir, "walsync.sqlite");
    const store = openSqliteStore(file);
    await store.migrate();
    const walSync = new WalSync(file);
    const first = walSync.sync();
    const during = [walSync.sync(), walSync.sync(), walSync.sync()];
    await Promise.all([first, ...during]);
    expect(walSync.count).toBe(2); // the running sync, then one shared by the three that came during it
    await walSync.sync();
    expect(walSync.count).toBe(3);
    await walSync.close();
    await expect(walSync.sync()).rejects.toThrow(/closed/);
    await store.close();
  });
});

describe("Prepared multi-row inserts", () => {
  it("insert every row, whatever the number, in the columns' order, and refuse rows of another shape", async () => {
    const store = openSqliteStore(join(dir, "prepared.sqlite"));
    await store.migrate();
    const insert = new PreparedInsert("audit_nodes", "sqlite");
    let idx = 0;
    // Sizes around the powers of two the statements are cut at, and one past a statement's 256 rows.
    for (const n of [1, 2, 3, 5, 8, 33, 70, 300]) {
      const rows = Array.from({ length: n }, () => {
        idx++;
        // Keys in another order than the first row's: each row's values follow the statement's columns.
        return idx % 2 === 0 ? { level: 7, idx, hash: `h${idx}` } : { hash: `h${idx}`, idx, level: 7 };
      });
      await insert.run(store.db, rows);
    }
    const stored = await store.db
      .selectFrom("audit_nodes")
      .select(["idx", "hash"])
      .where("level", "=", 7)
      .orderBy("idx")
      .execute();
    expect(stored).toHaveLength(idx);
    expect(stored.every((r) => r.hash === `h${Number(r.idx)}`)).toBe(true);
    await expect(insert.run(store.db, [{ level: 7, idx: idx + 1 } as never])).rejects.toThrow(
      "row for audit_nodes lacks column hash",
    );
    await expect(
      insert.run(store.db, [{ level: 7, idx: idx + 1, hash: "x", extra: 1 } as never]),
    ).rejects.toThrow("row for audit_nodes has extra columns");
    await store.close();
  });
});

describe("SQL profile (SQL_PROFILE_FILE)", () => {
  it("writes the time spent per statement when the store closes, one line for every multi-row size", async () => {
    const target = join(dir, "sql-%p.txt");
    const store = openSqliteStore(join(dir, "profiled.sqlite"), undefined, { sqlProfileFile: target });
    await store.migrate();
    for (const n of [1, 3, 5]) {
      await store.write(async (tx) => {
        for (let j = 0; j < n; j++) tx.appendAudit(testRecord());
      });
    }
    await store.close();
    const table = readFileSync(join(dir, `sql-${process.pid}.txt`), "utf8");
    const lines = table.split("\n");
    const records = lines.filter((l) => l.includes('insert into "audit_records"'));
    // One row at a time (three times: 1, then the 1 left of 3 and of 5), and the multi-row statements of
    // 2 and 4 rows, counted on one line.
    expect(records).toHaveLength(2);
    expect(records.find((l) => l.includes("(?...), ..."))).toMatch(/ms\s+2\s+[\d.]+ us/);
    expect(records.find((l) => !l.includes("(?...), ..."))).toMatch(/ms\s+3\s+[\d.]+ us/);
    expect(lines.find((l) => / us {2}commit$/.test(l))).toMatch(/ms\s+\d+\s+[\d.]+ us/);
    expect(table.split("\n")[0]).toMatch(/total\s+runs\s+per run\s+statement/);
  });
});
