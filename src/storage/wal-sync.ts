// Durable commits without blocking the event loop.
//
// With synchronous=FULL, SQLite fsyncs the write-ahead log inside every COMMIT, and better-sqlite3 runs
// that COMMIT on the event loop: every request in the process waits ~1.5 ms per group commit for the disk.
// Instead the connection runs with synchronous=NORMAL (a COMMIT writes its WAL frames but does not sync
// them) and this module syncs the WAL file itself, on libuv's thread pool, before a write is reported
// done. The guarantee is FULL's: nothing is acknowledged before its WAL frames are on disk.
//
// - fdatasync on any descriptor of a file flushes all of its dirty pages, whoever wrote them, so one sync
//   started after a COMMIT covers that commit (and any before it).
// - The WAL file is never replaced while a connection holds the database open (SQLite deletes it only
//   when the last connection closes); a WAL restart after a checkpoint rewrites the same file, and the
//   checkpoint itself syncs the WAL before copying it back and the database file after.
// - A new WAL's directory entry is synced once, when the descriptor is first opened.
//
// Syncs are coalesced: a caller that arrives while a sync is running waits for the next one (which starts
// after its commit); everyone arriving meanwhile shares that next sync.

import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import { dirname } from "node:path";
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from "kysely";

export class WalSync {
  private handle: Promise<FileHandle> | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private closed = false;
  /** Syncs started (for tests and metrics). */
  count = 0;

  constructor(private readonly databaseFile: string) {}

  /** Resolves once every commit made before the call is on disk. */
  sync(): Promise<void> {
    if (this.queued) return this.queued; // starts after the running one, so after this caller's commit
    if (!this.running) return this.start();
    const after = this.running;
    this.queued = after
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.start();
      });
    return this.queued;
  }

  private start(): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the store is closed"));
    this.count++;
    const run = this.fdatasync().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }

  private async fdatasync(): Promise<void> {
    this.handle ??= this.openWal();
    let handle: FileHandle;
    try {
      handle = await this.handle;
    } catch (error) {
      this.handle = null; // retried by the next sync
      throw error;
    }
    await handle.datasync();
  }

  private async openWal(): Promise<FileHandle> {
    // After a commit in WAL mode the file exists; if it does not, the commit was not made in WAL mode
    // and nothing here could make it durable: fail loudly rather than acknowledge.
    const handle = await open(`${this.databaseFile}-wal`, "r+");
    const dir = await open(dirname(this.databaseFile), "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    return handle;
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.running, this.queued]);
    this.closed = true;
    const handle = this.handle;
    this.handle = null;
    if (handle) await (await handle).close();
  }
}

/** The SQLite dialect, with every write made durable (through `sync`) before the query that made it returns. */
export class DurableSqliteDialect extends SqliteDialect {
  constructor(
    config: SqliteDialectConfig,
    private readonly sync: () => Promise<void>,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new DurableDriver(super.createDriver(), this.sync);
  }
}

/**
 * Wraps Kysely's SQLite driver: notes whether anything was written while the connection was held, and
 * after releasing the connection (so other queries run during the sync) waits for the sync.
 */
class DurableDriver implements Driver {
  private wrote = false;
  private readonly connections = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly sync: () => Promise<void>,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapped = this.connections.get(connection);
    if (!wrapped) {
      wrapped = {
        executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
          const result = await connection.executeQuery<R>(query);
          // Kysely's SQLite connection reports affected rows exactly for statements that are not readers.
          if (result.numAffectedRows !== undefined) this.wrote = true;
          return result;
        },
        streamQuery: <R>(query: CompiledQuery, chunkSize?: number) =>
          connection.streamQuery<R>(query, chunkSize),
      };
      this.connections.set(connection, wrapped);
    }
    return wrapped;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const wrote = this.wrote;
    this.wrote = false;
    await this.inner.releaseConnection(connection);
    if (wrote) await this.sync();
  }

  savepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: Parameters<NonNullable<Driver["savepoint"]>>[2],
  ): Promise<void> {
    if (!this.inner.savepoint) throw new Error("savepoints are not supported");
    return this.inner.savepoint(connection, name, compileQuery);
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: Parameters<NonNullable<Driver["rollbackToSavepoint"]>>[2],
  ): Promise<void> {
    if (!this.inner.rollbackToSavepoint) throw new Error("savepoints are not supported");
    return this.inner.rollbackToSavepoint(connection, name, compileQuery);
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: Parameters<NonNullable<Driver["releaseSavepoint"]>>[2],
  ): Promise<void> {
    if (!this.inner.releaseSavepoint) throw new Error("savepoints are not supported");
    return this.inner.releaseSavepoint(connection, name, compileQuery);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
