// WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database file
// (a checkpoint, with its fsync) from inside whichever commit crosses the threshold; with better-sqlite3
// that commit runs on the event loop, so every request waits for it. Instead the serving connection
// only checkpoints as a backstop (at 20,000 pages) and a worker thread with a connection of its own runs a
// PASSIVE checkpoint every second: it never blocks the writer, and its I/O runs on another core.
// Durability is unchanged: a commit is durable once its WAL frames are synced, checkpoint or not.

import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
const db = new Database(workerData.file);
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = FULL");
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export const BACKSTOP_AUTOCHECKPOINT_PAGES = 20_000;

export class WalCheckpointer {
  private readonly worker: Worker;
  private stopped: Promise<void> | null = null;

  constructor(file: string, intervalMs = 1000, onError?: (message: string) => void) {
    const module = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, module, intervalMs } });
    this.worker.on("message", (m: { error?: string }) => {
      if (m.error) onError?.(m.error);
    });
    this.worker.on("error", (error) => onError?.(String(error)));
    this.worker.unref();
  }

  /** Runs a last checkpoint and stops the thread. */
  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      this.worker.once("exit", () => resolve());
      this.worker.ref(); // keep the process alive until the last checkpoint is done
      this.worker.postMessage("stop");
    });
    return this.stopped;
  }
}
