// Verification and proofs against a large audit log: builds a log of 2,000,000 sealed records (and a fresh
// one of 10,000) on the embedded SQLite store, then serves each from the service and measures, per
// request, the server's CPU, req/s and p99 of
//   - verify, one seal over and over (the verification cache's answer),
//   - verify, distinct recent seals and distinct old ones (each asked once: the proof is read and checked),
//   - a consistency proof from a distinct old tree size, and from a recent one, to the latest checkpoint;
// and prints the ratio large/fresh (target: at most 2).
//
// The log is built in bulk: records sealed as the service seals them (audit/record.ts), their leaves and
// the tree's perfect-subtree nodes and tiles computed with the log's own arithmetic (audit/merkle.ts appendLeaves)
// and inserted in large transactions, a signed checkpoint every 65,536 leaves and at the end. Each
// verification the benchmark spot-checks is proven against the checkpoint's root here, so a tree built
// wrong fails the run.
//
//   npm run bench:proofs    (BENCH_PROOFS_LEAVES=2000000, BENCH_PROOFS_FRESH=10000, BENCH_PROOFS_SAMPLE=5000)
//   BENCH_PROOFS_DIR=/path  keeps the large log there and reuses it on the next run (built if absent)

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import SQLite from "better-sqlite3";
import { verifyConsistency, verifyInclusion } from "../src/audit/merkle.js";
import { sealRecord } from "../src/audit/record.js";
import { loadSigningKey } from "../src/audit/signing.js";
import { openSqliteStore } from "../src/storage/sqlite.js";
import { LogWriter } from "./history-store.js";
import {
  DIST,
  drive,
  type Figures,
  type Load,
  row,
  SECONDS,
  type Server,
  sampleIndices,
  start,
  stop,
  us,
} from "./lib.js";
import { benchEnv } from "./workload.js";

const LARGE = Number(process.env.BENCH_PROOFS_LEAVES ?? 2_000_000);
const FRESH = Number(process.env.BENCH_PROOFS_FRESH ?? 10_000);
const SAMPLE = Number(process.env.BENCH_PROOFS_SAMPLE ?? 5_000);
const BATCH = 10_000;
const CHECKPOINT_EVERY = 65_536;
const TARGET_RATIO = 2;

/** The log's size if `dataDir` holds one already. */
function storedSize(file: string): number {
  if (!existsSync(file)) return 0;
  const db = new SQLite(file, { readonly: true });
  try {
    const r = db.prepare("select max(tree_size) as n from audit_checkpoints").get() as { n: number | null };
    return r.n ?? 0;
  } finally {
    db.close();
  }
}

/** Builds a signed log of `leaves` records in `dataDir`'s store; returns the seconds it took. */
async function buildLog(dataDir: string, leaves: number): Promise<number> {
  const began = performance.now();
  const file = join(dataDir, "field-dispatch.sqlite");
  const store = openSqliteStore(file);
  await store.migrate();
  await store.close();
  const db = new SQLite(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const log = new LogWriter(db, loadSigningKey(undefined, dataDir), CHECKPOINT_EVERY);
  const t0 = Date.now() - leaves * 1_000;
  while (log.size < leaves) {
    const size = log.size;
    const count = Math.min(BATCH, leaves - size);
    const at = new Date(t0 + size * 1_000).toISOString();
    const entries = Array.from({ length: count }, (_, i) => ({
      e: sealRecord({
        kind: "quote.issued",
        at,
        accountId: "acct_bench",
        livemode: false,
        actor: "key:key_bench",
        data: { n: size + i, trade: "plumbing", state: "TX", price_cents: 41_000 + (i % 97) },
      }),
      at,
    }));
    db.transaction(() => log.append(entries, size + count === leaves))();
    if (log.size % 200_000 === 0) process.stdout.write(`  built ${log.size} leaves\n`);
  }
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return (performance.now() - began) / 1000;
}

function sealsAt(file: string, indices: number[]): string[] {
  const db = new SQLite(file, { readonly: true });
  try {
    const get = db.prepare("select seal from audit_leaves where leaf_index = ?").pluck();
    return indices.map((i) => get.get(i) as string);
  } finally {
    db.close();
  }
}

interface Spot {
  status: string;
  leaf_index: number;
  leaf_hash: string;
  inclusion_proof: { tree_size: number; hashes: string[] };
  checkpoint: { root_hash: string };
}

/** Verifies a few seals and one consistency proof through the service, and checks the proofs here. */
async function spotCheck(url: string, seals: string[], size: number): Promise<void> {
  for (const seal of seals) {
    const v = (await (await fetch(`${url}/api/attest/verify/${seal}`)).json()) as Spot;
    const proof = v.inclusion_proof.hashes.map((h) => Buffer.from(h, "hex"));
    const root = Buffer.from(v.checkpoint.root_hash, "hex");
    const ok = verifyInclusion(
      Buffer.from(v.leaf_hash, "hex"),
      v.leaf_index,
      v.inclusion_proof.tree_size,
      proof,
      root,
    );
    if (v.status !== "verified" || !ok) throw new Error(`seal ${seal} did not verify: ${JSON.stringify(v)}`);
  }
  const first = Math.max(1, Math.floor(size / 3));
  const firstRoot = (
    (await (await fetch(`${url}/api/attest/checkpoints/${CHECKPOINT_EVERY}`)).json()) as {
      root_hash?: string;
    }
  ).root_hash;
  const c = (await (await fetch(`${url}/api/attest/consistency?first=${first}`)).json()) as {
    hashes: string[];
  };
  if (c.hashes.length === 0 && first < size) throw new Error("empty consistency proof");
  if (firstRoot && size > CHECKPOINT_EVERY) {
    const latest = (await (await fetch(`${url}/api/attest/checkpoint`)).json()) as { root_hash: string };
    const p = (await (await fetch(`${url}/api/attest/consistency?first=${CHECKPOINT_EVERY}`)).json()) as {
      hashes: string[];
    };
    const ok = verifyConsistency(
      CHECKPOINT_EVERY,
      size,
      p.hashes.map((h) => Buffer.from(h, "hex")),
      Buffer.from(firstRoot, "hex"),
      Buffer.from(latest.root_hash, "hex"),
    );
    if (!ok) throw new Error("the consistency proof does not verify");
  }
}

const NAMES = [
  "verify, one seal (cached)",
  "verify, recent seals",
  "verify, old seals",
  "consistency, from old",
  "consistency, from recent",
] as const;
type Name = (typeof NAMES)[number];

/** The loads against a log of `size` leaves, each distinct path requested once. */
function loads(file: string, size: number): Load[] {
  const n = Math.min(SAMPLE, Math.floor(size / 2));
  const recent = sealsAt(file, sampleIndices(size - n, size, n, 1));
  const old = sealsAt(file, sampleIndices(0, Math.floor(size / 2), n, 2));
  const verify = (seals: string[]) => seals.map((s) => `/api/attest/verify/${s}`);
  const consistency = (firsts: number[]) => firsts.map((f) => `/api/attest/consistency?first=${f + 1}`);
  const paths = (name: Name, list: string[]): Load => ({
    name,
    method: "GET",
    path: list[0] as string,
    paths: list,
    maxRequests: list.length,
  });
  return [
    { name: NAMES[0], method: "GET", path: `/api/attest/verify/${recent[0]}` },
    paths(NAMES[1], verify(recent)),
    paths(NAMES[2], verify(old)),
    paths(NAMES[3], consistency(sampleIndices(0, Math.floor(size / 2), n, 3))),
    paths(NAMES[4], consistency(sampleIndices(size - n - 1, size - 1, n, 4))),
  ];
}

async function measure(dataDir: string, size: number): Promise<Map<Name, Figures>> {
  const file = join(dataDir, "field-dispatch.sqlite");
  const server: Server = await start(
    join(DIST, "src/main.js"),
    { ...benchEnv(dataDir), METRICS_PORT: "off", LOG_LEVEL: "warn" },
    "/readyz",
  );
  const out = new Map<Name, Figures>();
  try {
    const all = loads(file, size);
    await spotCheck(server.url, sealsAt(file, sampleIndices(0, size, 20, 5)), size);
    // Warm-up on seals and sizes none of the measured loads asks for.
    const warm = sealsAt(file, sampleIndices(0, size, 500, 6)).map((s) => `/api/attest/verify/${s}`);
    await drive(server, { name: "warm-up", method: "GET", path: warm[0] as string, paths: warm }, 2);
    for (const load of all) out.set(load.name as Name, await drive(server, load, SECONDS));
  } finally {
    await stop(server);
  }
  return out;
}

function print(label: string, size: number, figures: Map<Name, Figures>): void {
  process.stdout.write(`\n${label}: ${size} leaves\n`);
  process.stdout.write(
    `${row(["load", "requests/s", "p50 ms", "p99 ms", "cpu us/req", "non-2xx"], [28, 12])}\n`,
  );
  for (const [name, f] of figures) {
    process.stdout.write(
      `${row([name, f.rps.toFixed(0), f.p50, f.p99, us(f.cpuUsPerRequest), f.non2xx + f.errors], [28, 12])}\n`,
    );
  }
}

async function main(): Promise<void> {
  const kept = process.env.BENCH_PROOFS_DIR;
  const largeDir = kept ?? mkdtempSync(join(tmpdir(), "fd-bench-proofs-large-"));
  const freshDir = mkdtempSync(join(tmpdir(), "fd-bench-proofs-fresh-"));
  mkdirSync(largeDir, { recursive: true });
  process.stdout.write(
    `node ${process.version}; SQLite store; ${SECONDS} s or the sample's requests per load\n`,
  );
  try {
    const largeFile = join(largeDir, "field-dispatch.sqlite");
    if (storedSize(largeFile) >= LARGE) process.stdout.write(`reusing the log in ${largeDir}\n`);
    else {
      rmSync(largeFile, { force: true });
      const seconds = await buildLog(largeDir, LARGE);
      process.stdout.write(`built ${LARGE} leaves in ${seconds.toFixed(0)} s (${largeDir})\n`);
    }
    await buildLog(freshDir, FRESH);
    const large = storedSize(largeFile);
    const fresh = await measure(freshDir, FRESH);
    print("fresh", FRESH, fresh);
    const big = await measure(largeDir, large);
    print("large", large, big);
    process.stdout.write(`\nlarge / fresh (target <= ${TARGET_RATIO}x CPU per request)\n`);
    process.stdout.write(`${row(["load", "cpu ratio", "req/s ratio", "target"], [28, 12])}\n`);
    for (const name of NAMES) {
      const a = fresh.get(name);
      const b = big.get(name);
      if (!a || !b || a.cpuUsPerRequest === null || b.cpuUsPerRequest === null) continue;
      const ratio = b.cpuUsPerRequest / a.cpuUsPerRequest;
      process.stdout.write(
        `${row([name, ratio.toFixed(2), (b.rps / a.rps).toFixed(2), ratio <= TARGET_RATIO ? "met" : "MISSED"], [28, 12])}\n`,
      );
    }
  } finally {
    rmSync(freshDir, { recursive: true, force: true });
    if (!kept) rmSync(largeDir, { recursive: true, force: true });
  }
}

await main();
