// Mixed-workload benchmark: the service under the flow real work follows, on the simulator's live pool
// and demand. Each of 50 simulated callers (BENCH_CONNECTIONS) repeats: quote a job; order it (70 % of
// quotes); read the order's status; the contractor offered it lists its offers, accepts, reports en
// route, on site and completed; the caller reads the status again; one flow in ten also reads the public
// evals. Two passes on one service:
//
// 1. The mix: the callers run their flows concurrently for BENCH_MIX_SECONDS (default 20), so every
//    operation shares the server (and its group commits) with the others. Printed: each operation's
//    latency (p50, p99, as the client saw it), the whole mix's throughput and server CPU per request.
// 2. CPU per operation: one batch of flows again, operation by operation (all the quotes, then all the
//    orders, ...), 50 at a time, so that the server's CPU during a stage is that operation's alone
//    (quote, order and the contractor's steps until the audit sequencer has sealed their records).
//    The sum of these costs in the mix's proportions is compared with the mix's measured CPU per request.
//
//   npm run bench:mix        (BENCH_MIX_SECONDS=20, BENCH_MIX_BATCH=1500 flows for pass 2)

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { auditSealed, CONNECTIONS, closeReaders, DIST, row, start, stop, us } from "./lib.js";
import { benchEnv, demandJobs, type Job, placedOf, prepareStore } from "./workload.js";

const MIX_SECONDS = Number(process.env.BENCH_MIX_SECONDS ?? 20);
const BATCH = Number(process.env.BENCH_MIX_BATCH ?? 1500);
/** Share of quotes followed by an order, and of flows that also read the evals. */
const ORDER_SHARE = 0.7;
const EVALS_SHARE = 0.1;

const OPS = [
  "quote",
  "order",
  "order status",
  "contractor offers",
  "accept offer",
  "en_route",
  "on_site",
  "completed",
  "evals",
] as const;
type Op = (typeof OPS)[number];

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number);
}

class Client {
  readonly latencies = new Map<Op, number[]>(OPS.map((op) => [op, []]));
  failures = 0;
  private readonly pool: Pool;

  constructor(url: string) {
    this.pool = new Pool(url, { connections: CONNECTIONS });
  }

  async call(
    op: Op,
    key: string | null,
    method: "GET" | "POST",
    path: string,
    body?: string,
  ): Promise<string | null> {
    const t0 = performance.now();
    const res = await this.pool.request({
      method,
      path,
      headers: {
        ...(key ? { "x-api-key": key } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body,
    });
    const text = await res.body.text();
    this.latencies.get(op)?.push(performance.now() - t0);
    if (res.statusCode >= 300) {
      this.failures++;
      return null;
    }
    return text;
  }

  reset(): void {
    for (const list of this.latencies.values()) list.length = 0;
    this.failures = 0;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

interface Keys {
  caller: string;
  contractors: Map<string, string>;
  /** The caller's handles of the contractors, to their ids. */
  contractorOfRef: Map<string, string>;
}

/** One caller's flow for `job`, every step right after the previous one. */
async function flow(client: Client, keys: Keys, job: Job, draw: () => number): Promise<void> {
  await client.call("quote", keys.caller, "POST", "/api/dispatch/v1/quote", job.quote);
  if (draw() < ORDER_SHARE) {
    const created = await client.call("order", keys.caller, "POST", "/api/dispatch/v1/order", job.order);
    const placed = created ? placedOf(created, keys.contractorOfRef).placed : null;
    if (created && placed) {
      const status = `/api/dispatch/v1/orders/${placed.orderId}`;
      await client.call("order status", keys.caller, "GET", status);
      const key = keys.contractors.get(placed.contractorId) as string;
      const listed = await client.call("contractor offers", key, "GET", "/api/contractor/v1/offers");
      const offers = listed
        ? (
            JSON.parse(listed) as {
              offers: Array<{ offer_id: string; order_id: string; estimated_cost_cents: number }>;
            }
          ).offers
        : [];
      const offer = offers.find((o) => o.order_id === placed.orderId);
      if (offer) {
        const accepted = await client.call(
          "accept offer",
          key,
          "POST",
          "/api/contractor/v1/offers/accept",
          JSON.stringify({ offer_id: offer.offer_id }),
        );
        if (accepted) {
          const path = "/api/contractor/v1/jobs/status";
          const id = placed.orderId;
          await client.call(
            "en_route",
            key,
            "POST",
            path,
            JSON.stringify({ order_id: id, status: "en_route", eta_minutes: 20 }),
          );
          await client.call(
            "on_site",
            key,
            "POST",
            path,
            JSON.stringify({ order_id: id, status: "on_site" }),
          );
          await client.call(
            "completed",
            key,
            "POST",
            path,
            JSON.stringify({
              order_id: id,
              status: "completed",
              final_cost_cents: offer.estimated_cost_cents,
            }),
          );
        }
      }
      await client.call("order status", keys.caller, "GET", status);
    }
  }
  if (draw() < EVALS_SHARE) await client.call("evals", null, "GET", "/api/dispatch/analytics/evals");
}

/** A seeded draw, so both passes make the same choices. */
function drawOf(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `tasks` with at most `parallel` at once. */
async function inParallel<T>(
  items: readonly T[],
  parallel: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (;;) {
        const i = next++;
        if (i >= items.length) return;
        await task(items[i] as T);
      }
    }),
  );
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "fd-bench-mix-"));
  const env = benchEnv(dataDir);
  const prepared = await prepareStore(env);
  const jobs = demandJobs(prepared.byBucket, 20_000, 2);
  const keys: Keys = {
    caller: prepared.callerKey,
    contractors: prepared.contractorKeys,
    contractorOfRef: prepared.contractorOfRef,
  };
  const service = await start(join(DIST, "src/main.js"), env, "/readyz");
  const client = new Client(service.url);
  const pid = service.proc.pid as number;
  const storeFile = join(dataDir, "field-dispatch.sqlite");
  try {
    await auditSealed(storeFile);
    process.stdout.write(
      `node ${process.version}, ${CONNECTIONS} callers, ${prepared.contractorKeys.size} live contractors; ` +
        `flow: quote, order (${ORDER_SHARE * 100}%), status, offers, accept, en_route, on_site, completed, ` +
        `status; evals in ${EVALS_SHARE * 100}% of flows\n\n`,
    );
    // Warm-up: a few seconds of the mix, not counted.
    let jobIndex = 0;
    const runMix = async (seconds: number) => {
      const deadline = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async (_, caller) => {
          const draw = drawOf(1000 + caller);
          while (performance.now() < deadline)
            await flow(client, keys, jobs[jobIndex++ % jobs.length] as Job, draw);
        }),
      );
    };
    await runMix(3);
    await auditSealed(storeFile);
    client.reset();

    // Pass 1: the mix.
    const cpu0 = cpuSeconds(pid);
    const t0 = performance.now();
    await runMix(MIX_SECONDS);
    const wall = (performance.now() - t0) / 1000;
    await auditSealed(storeFile);
    const mixCpu = cpuSeconds(pid) - cpu0;
    const counts = new Map(OPS.map((op) => [op, client.latencies.get(op)?.length ?? 0]));
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const mixLatency = new Map(
      OPS.map((op) => [op, [...(client.latencies.get(op) ?? [])].sort((a, b) => a - b)] as const),
    );
    const mixFailures = client.failures;
    client.reset();

    // Pass 2: the same flows, stage by stage, each stage's server CPU its operation's alone.
    const batch = jobs.slice(0, BATCH).map((job, i) => {
      const draw = drawOf(5000 + i);
      return { job, ordered: draw() < ORDER_SHARE, evals: draw() < EVALS_SHARE };
    });
    const stageCpu = new Map<Op, { seconds: number; requests: number }>();
    const stage = async <T>(op: Op, items: readonly T[], task: (item: T) => Promise<void>) => {
      const before = cpuSeconds(pid);
      const n = client.latencies.get(op)?.length ?? 0;
      await inParallel(items, CONNECTIONS, task);
      await auditSealed(storeFile);
      stageCpu.set(op, {
        seconds: cpuSeconds(pid) - before,
        requests: (client.latencies.get(op)?.length ?? 0) - n,
      });
    };
    await stage("quote", batch, async (b) => {
      await client.call("quote", keys.caller, "POST", "/api/dispatch/v1/quote", b.job.quote);
    });
    const placed: Array<{ orderId: string; contractorId: string; offerId?: string; cents?: number }> = [];
    await stage(
      "order",
      batch.filter((b) => b.ordered),
      async (b) => {
        const created = await client.call(
          "order",
          keys.caller,
          "POST",
          "/api/dispatch/v1/order",
          b.job.order,
        );
        const p = created ? placedOf(created, prepared.contractorOfRef).placed : null;
        if (p) placed.push(p);
      },
    );
    await stage("order status", placed, async (p) => {
      await client.call("order status", keys.caller, "GET", `/api/dispatch/v1/orders/${p.orderId}`);
    });
    await stage("contractor offers", placed, async (p) => {
      const listed = await client.call(
        "contractor offers",
        keys.contractors.get(p.contractorId) as string,
        "GET",
        "/api/contractor/v1/offers",
      );
      const offer = listed
        ? (
            JSON.parse(listed) as {
              offers: Array<{ offer_id: string; order_id: string; estimated_cost_cents: number }>;
            }
          ).offers.find((o) => o.order_id === p.orderId)
        : undefined;
      p.offerId = offer?.offer_id;
      p.cents = offer?.estimated_cost_cents;
    });
    const offered = placed.filter((p) => p.offerId !== undefined);
    await stage("accept offer", offered, async (p) => {
      await client.call(
        "accept offer",
        keys.contractors.get(p.contractorId) as string,
        "POST",
        "/api/contractor/v1/offers/accept",
        JSON.stringify({ offer_id: p.offerId }),
      );
    });
    for (const step of ["en_route", "on_site", "completed"] as const) {
      await stage(step, offered, async (p) => {
        const body =
          step === "en_route"
            ? { order_id: p.orderId, status: step, eta_minutes: 20 }
            : step === "on_site"
              ? { order_id: p.orderId, status: step }
              : { order_id: p.orderId, status: step, final_cost_cents: p.cents };
        await client.call(
          step,
          keys.contractors.get(p.contractorId) as string,
          "POST",
          "/api/contractor/v1/jobs/status",
          JSON.stringify(body),
        );
      });
    }
    await stage(
      "evals",
      batch.filter((b) => b.evals),
      async () => {
        await client.call("evals", null, "GET", "/api/dispatch/analytics/evals");
      },
    );

    process.stdout.write(
      `pass 1, the mix (${MIX_SECONDS} s): ${total} requests, ${(total / wall).toFixed(0)} req/s, ` +
        `${((counts.get("quote") ?? 0) / wall).toFixed(0)} flows/s, ${((counts.get("order") ?? 0) / wall).toFixed(0)} orders/s; ` +
        `server CPU ${((mixCpu / total) * 1e6).toFixed(1)} us/req (audit sealed); ${mixFailures} refused\n` +
        `pass 2, CPU per operation: ${BATCH} flows stage by stage; ${client.failures} refused\n\n`,
    );
    const widths = [19, 8, 10, 10, 12];
    process.stdout.write(
      `${row(["operation", "share", "p50 ms", "p99 ms", "cpu us/req", "cpu share"], widths)}\n`,
    );
    let predicted = 0;
    for (const op of OPS) {
      const s = stageCpu.get(op);
      const cpu = s && s.requests > 0 ? (s.seconds / s.requests) * 1e6 : null;
      if (cpu !== null) predicted += cpu * (counts.get(op) ?? 0);
    }
    for (const op of OPS) {
      const s = stageCpu.get(op);
      const cpu = s && s.requests > 0 ? (s.seconds / s.requests) * 1e6 : null;
      const lat = mixLatency.get(op) ?? [];
      const n = counts.get(op) ?? 0;
      process.stdout.write(
        `${row(
          [
            op,
            `${((100 * n) / Math.max(1, total)).toFixed(1)}%`,
            percentile(lat, 0.5).toFixed(2),
            percentile(lat, 0.99).toFixed(2),
            us(cpu),
            cpu === null || predicted === 0 ? "" : `${((100 * cpu * n) / predicted).toFixed(1)}%`,
          ],
          widths,
        )}\n`,
      );
    }
    process.stdout.write(
      `\nper-operation CPU in the mix's proportions: ${(predicted / Math.max(1, total)).toFixed(1)} us/req; ` +
        `measured in the mix: ${((mixCpu / total) * 1e6).toFixed(1)} us/req\n`,
    );
    if (mixFailures > 0) process.exitCode = 1;
  } finally {
    await client.close();
    closeReaders();
    await stop(service);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
