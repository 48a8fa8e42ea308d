// What an order leaves behind (issue 30's docs/scaling.md): orders from the simulator's demand worked to
// completed over HTTP (order, accept, en route, on site, completed), on the embedded SQLite store and on
// PostgreSQL, then the growth of the store per order: bytes (tables and indexes), rows per table, audit
// records, and on PostgreSQL the WAL written. The figures scale a deployment: bytes per order x 365,000
// is a year at 1,000 orders a day.
//
//   npm run bench:footprint     (BENCH_FOOTPRINT_ORDERS=2000 orders per store; BENCH_DATABASE_URL,
//                                BENCH_REDIS_URL default to the local test services)
//
// The WAL figure is the cluster's (pg_current_wal_lsn before and after): other work on the same
// PostgreSQL during the run adds to it, so run it on a quiet machine. Sizes are read after the service
// has stopped (SQLite checkpointed into the main file; PostgreSQL after VACUUM, so dead row versions do not
// count).

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import pg from "pg";
import { DIST, type Server, start, stop } from "./lib.js";
import { benchEnv, demandJobs, type Placed, placedOf, prepareStore, Releaser } from "./workload.js";

const ORDERS = Number(process.env.BENCH_FOOTPRINT_ORDERS ?? 2000);
const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
/** Orders in flight at once: a burst the pool can hold (each contractor's time is its capacity). */
const BURST = 200;

interface Sizes {
  /** Table (with its indexes) -> [rows, bytes]. */
  tables: Map<string, [number, number]>;
  wal: number | null;
}

interface Outcome {
  sent: number;
  completed: number;
  before: Sizes;
  after: Sizes;
}

/** Sends the orders in bursts; the offered ones are worked to completed before the next burst. */
async function drive(server: Server, prepared: Awaited<ReturnType<typeof prepareStore>>): Promise<number> {
  const releaser = new Releaser(server.url, prepared.contractorKeys);
  const jobs = demandJobs(prepared.byBucket, ORDERS, 7);
  let completed = 0;
  for (let i = 0; i < jobs.length; i += BURST) {
    const placed: Placed[] = [];
    await Promise.all(
      jobs.slice(i, i + BURST).map(async (job) => {
        const reply = await releaser.call(
          prepared.callerKey,
          "POST",
          "/api/dispatch/v1/order",
          JSON.parse(job.order),
        );
        if (reply === null) return;
        const { placed: p } = placedOf(JSON.stringify(reply), prepared.contractorOfRef);
        if (p) placed.push(p);
      }),
    );
    await releaser.work(placed);
    completed += placed.length;
  }
  if (releaser.failures > 0)
    process.stdout.write(`  (${releaser.failures} requests refused along the way)\n`);
  return completed;
}

async function waitSealed(server: Server): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(server.metricsUrl)).text();
    if (/^fsd_audit_pending_records 0$/m.test(text)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("the audit log was not sequenced within 5 minutes");
}

/** Starts the service once and stops it when its log is sequenced: what a first start writes (the sandbox's
 * contractors, their audit records) is then in the "before" sizes, not counted against the orders. */
async function settle(env: Record<string, string>): Promise<void> {
  const server = await start(join(DIST, "src/main.js"), env, "/readyz");
  try {
    await waitSealed(server);
  } finally {
    await stop(server);
  }
}

function sqliteSizes(file: string): Sizes {
  const db = new SQLite(file);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
    const tables = new Map<string, [number, number]>();
    const names = db
      .prepare("select name from sqlite_schema where type = 'table' and name not like 'sqlite_%'")
      .pluck()
      .all() as string[];
    const bytes = new Map<string, number>();
    // dbstat: pages per table and per index; an index's pages count for its table.
    const owner = new Map(
      (
        db
          .prepare("select name, tbl_name from sqlite_schema where type in ('table','index')")
          .all() as Array<{
          name: string;
          tbl_name: string;
        }>
      ).map((r) => [r.name, r.tbl_name]),
    );
    for (const r of db.prepare("select name, sum(pgsize) as b from dbstat group by name").all() as Array<{
      name: string;
      b: number;
    }>) {
      const table = owner.get(r.name) ?? r.name;
      bytes.set(table, (bytes.get(table) ?? 0) + r.b);
    }
    for (const name of names) {
      const rows = db.prepare(`select count(*) from "${name}"`).pluck().get() as number;
      tables.set(name, [rows, bytes.get(name) ?? 0]);
    }
    return { tables, wal: null };
  } finally {
    db.close();
  }
}

async function pgSizes(client: pg.Client, schema: string): Promise<Sizes> {
  const wal = await client.query<{ lsn: string }>("select pg_current_wal_lsn() - '0/0' as lsn");
  await client.query("VACUUM");
  const tables = new Map<string, [number, number]>();
  const { rows } = await client.query<{ name: string; bytes: string }>(
    `select c.relname as name, pg_total_relation_size(c.oid) as bytes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relkind in ('r', 'p')`,
    [schema],
  );
  for (const r of rows) {
    const count = await client.query<{ n: string }>(`select count(*) as n from "${schema}"."${r.name}"`);
    tables.set(r.name, [Number(count.rows[0]?.n ?? 0), Number(r.bytes)]);
  }
  return { tables, wal: Number(wal.rows[0]?.lsn ?? 0) };
}

async function onSqlite(): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), "fd-footprint-"));
  try {
    const env = benchEnv(dir);
    const prepared = await prepareStore(env);
    const file = join(dir, "field-dispatch.sqlite");
    await settle(env);
    const before = sqliteSizes(file);
    const server = await start(join(DIST, "src/main.js"), env, "/readyz");
    let completed = 0;
    try {
      completed = await drive(server, prepared);
      await waitSealed(server);
    } finally {
      await stop(server);
    }
    const after = sqliteSizes(file);
    process.stdout.write(`  sqlite file after: ${(statSync(file).size / 1e6).toFixed(1)} MB\n`);
    return { sent: ORDERS, completed, before, after };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onPostgres(): Promise<Outcome> {
  const schema = `fd_footprint_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const dir = mkdtempSync(join(tmpdir(), "fd-footprint-"));
  try {
    const url = new URL(DATABASE_URL);
    url.searchParams.set("options", `-c search_path=${schema}`);
    const env = {
      ...benchEnv(dir),
      DATABASE_URL: url.toString(),
      REDIS_URL,
      REDIS_KEY_PREFIX: `fsd:footprint:${schema}:`,
    };
    const prepared = await prepareStore(env);
    await settle(env);
    const before = await pgSizes(admin, schema);
    const server = await start(join(DIST, "src/main.js"), env, "/readyz");
    let completed = 0;
    try {
      completed = await drive(server, prepared);
      await waitSealed(server);
    } finally {
      await stop(server);
    }
    const after = await pgSizes(admin, schema);
    return { sent: ORDERS, completed, before, after };
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(store: string, o: Outcome): void {
  const rows: Array<[string, number, number]> = [];
  let totalBytes = 0;
  for (const [name, [n, bytes]] of o.after.tables) {
    const [n0, b0] = o.before.tables.get(name) ?? [0, 0];
    const dn = n - n0;
    const db = bytes - b0;
    totalBytes += db;
    if (dn !== 0 || db > 0) rows.push([name, dn, db]);
  }
  rows.sort((a, b) => b[2] - a[2]);
  const per = (v: number) => v / o.sent;
  process.stdout.write(
    `\n${store}: ${o.sent} orders sent, ${o.completed} worked to completed\n` +
      `${"table".padEnd(28)}${"rows/order".padStart(12)}${"bytes/order".padStart(14)}\n`,
  );
  for (const [name, dn, db] of rows)
    process.stdout.write(
      `${name.padEnd(28)}${per(dn).toFixed(2).padStart(12)}${per(db).toFixed(0).padStart(14)}\n`,
    );
  const audit = rows.find((r) => r[0] === "audit_records")?.[1] ?? 0;
  process.stdout.write(
    `${"all tables and indexes".padEnd(28)}${"".padStart(12)}${per(totalBytes).toFixed(0).padStart(14)}\n` +
      `audit records per order: ${per(audit).toFixed(2)}; a year at 1,000 orders a day: ` +
      `${((per(totalBytes) * 365_000) / 1e9).toFixed(2)} GB\n`,
  );
  if (o.after.wal !== null && o.before.wal !== null) {
    const wal = o.after.wal - o.before.wal;
    process.stdout.write(
      `WAL written (the cluster's, over the run's orders and their work): ${(per(wal) / 1024).toFixed(1)} KiB per order\n`,
    );
  }
}

async function main(): Promise<void> {
  process.stdout.write(`node ${process.version}; ${ORDERS} orders per store, worked to completed\n`);
  report("sqlite", await onSqlite());
  report("postgresql", await onPostgres());
}

await main();
