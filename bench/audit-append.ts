// Audit log append cost as the log grows: builds a log on the embedded SQLite store to 10k, 100k and 1M
// records and, at each size, times appending 1,000 more (the median of 5 rounds): writing the sealed records in a decision's
// transaction (on SQLite that transaction also appends their leaves and the tree nodes they complete),
// then the sequencer's turn (on SQLite it signs the new head; on PostgreSQL it also appends the queued
// leaves). Also counts the hashes and node writes per record, which RFC 9162's structure bounds by
// O(log n).
//
//   npm run bench:audit            (BENCH_AUDIT_SIZES=10000,100000,1000000 by default)

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { AuditLog } from "../src/audit/audit-log.js";
import { appendLeaves, compactRange, type Hash } from "../src/audit/merkle.js";
import { sealRecord } from "../src/audit/record.js";
import { loadSigningKey } from "../src/audit/signing.js";
import { openSqliteStore } from "../src/storage/sqlite.js";

const SIZES = (process.env.BENCH_AUDIT_SIZES ?? "10000,100000,1000000").split(",").map(Number);
const PROBE = 1_000;
const ROUNDS = 5;
const FILL_BATCH = 5_000;

function records(count: number, offset: number) {
  const at = new Date().toISOString();
  return Array.from({ length: count }, (_, i) =>
    sealRecord({
      kind: "quote.issued",
      at,
      accountId: "acct_bench",
      livemode: false,
      actor: "key:key_bench",
      data: { n: offset + i, trade: "plumbing", state: "TX", price_cents: 41_000 + (i % 97) },
    }),
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "fd-bench-audit-"));
  const store = openSqliteStore(join(dir, "audit.sqlite"));
  await store.migrate();
  const log = new AuditLog(store.audit, loadSigningKey(undefined, dir));
  let size = 0;
  const write = async (count: number) => {
    const entries = records(count, size);
    await store.write(async (tx) => {
      for (const e of entries) tx.appendAudit(e);
    });
    size += count;
  };
  process.stdout.write(
    `node ${process.version}; SQLite (WAL, each commit synced); appending ${PROBE} records at each size (median of ${ROUNDS} rounds)\n` +
      "write: the records with their leaves and tree nodes, in one transaction; sign: the sequencer signing the new head.\n\n" +
      "Each node written is one SHA-256 (the leaf's own hash, then one per merge).\n\n" +
      "log size   write us/rec  sign us/rec      total us/rec  nodes+hashes/rec  max per append\n",
  );
  try {
    for (const target of SIZES) {
      while (size < target - PROBE * ROUNDS) {
        await write(Math.min(FILL_BATCH, target - PROBE * ROUNDS - size));
        await log.sequence(true);
      }
      // Tree arithmetic alone for this batch: how many nodes and hashes each append costs here.
      const range = compactRange(size).map(() => Buffer.alloc(32) as Hash);
      let maxNodes = 0;
      let nodes = 0;
      let r = range;
      for (let i = 0; i < PROBE; i++) {
        const grown = appendLeaves(size + i, r, [Buffer.alloc(32)]);
        nodes += grown.nodes.length;
        maxNodes = Math.max(maxNodes, grown.nodes.length);
        r = grown.range;
      }
      // ROUNDS rounds of PROBE records (each one transaction, synced); the median round is reported, as one
      // round's time moves with the disk's fsync and the WAL checkpoint running beside it.
      const rounds: Array<{ write: number; sign: number }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const t0 = performance.now();
        await write(PROBE);
        const t1 = performance.now();
        await log.sequence(true);
        const t2 = performance.now();
        rounds.push({ write: ((t1 - t0) * 1000) / PROBE, sign: ((t2 - t1) * 1000) / PROBE });
      }
      rounds.sort((a, b) => a.write + a.sign - (b.write + b.sign));
      const { write: perWrite, sign: perSeq } = rounds[Math.floor(ROUNDS / 2)] as {
        write: number;
        sign: number;
      };
      process.stdout.write(
        `${String(target).padEnd(11)}${perWrite.toFixed(1).padEnd(14)}${perSeq.toFixed(1).padEnd(17)}${(
          perWrite + perSeq
        )
          .toFixed(1)
          .padEnd(
            14,
          )}${(nodes / PROBE).toFixed(2).padEnd(18)}${maxNodes} (log2 n = ${Math.log2(size).toFixed(1)})\n`,
      );
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
