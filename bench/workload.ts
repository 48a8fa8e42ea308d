// The realistic load of the HTTP benchmarks: a live pool (the simulator's generated one, imported through
// `contractors import`), a caller's key and one key per contractor; order and quote bodies drawn from the
// simulator's demand model (trade and state in proportion to the pool, urgency from its mix, the site
// near a contractor of that bucket); and the contractors' side (list offers, accept, en route, on site,
// completed), which gives their capacity back.

import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Pool } from "undici";
import { ContractorRefs } from "../src/auth/contractor-refs.js";
import type { Contractor } from "../src/domain/contractor.js";
import { estimateRange } from "../src/domain/pricing.js";
import { rngOf, seedOf } from "../src/domain/random.js";
import { DESCRIPTIONS, MIX, pick, uniform } from "../src/sim/behaviour.js";
import { Demand } from "../src/sim/demand.js";
import { generatedPoolFile } from "../src/sim/simulation.js";
import { DIST, driveRun, type Load, type Run, type Server } from "./lib.js";

const UNLIMITED = 100_000_000;

export interface Prepared {
  /** The caller's live key (with a per-key limit override, as the operator CLI issues it for large accounts). */
  callerKey: string;
  /** Each live contractor's own key. */
  contractorKeys: Map<string, string>;
  /** Active live contractors by `trade|state`, best-rated first (what the demand model draws from). */
  byBucket: Map<string, Contractor[]>;
  /** The jobs the pool can hold at once: the sum of its contractors' max_active_jobs. */
  capacity: number;
  /** The caller's handles (contractor_ref) of the contractors, to their ids: what the contractors' side of
   * the load needs to know whom an order was offered to (a caller cannot reverse a handle). */
  contractorOfRef: Map<string, string>;
}

/** The handle secret the benchmark's servers run with (CONTRACTOR_REF_SECRET), so the load can map handles. */
const BENCH_REF_SECRET = "bench-contractor-ref-secret-0123456789abcdef";

/** The service's settings under every benchmark driver: its own data, no .env, limits out of the way, the
 * handle secret the load maps handles with, and the sandbox's simulated contractors off (the load is live
 * and drives its contractors itself). */
export function benchEnv(dataDir: string): Record<string, string> {
  return {
    ENV_FILE: "", // the benchmark's settings only, never a .env in the working directory
    CONTRACTOR_REF_SECRET: BENCH_REF_SECRET,
    DATA_DIR: dataDir,
    PUBLIC_RATE_LIMIT_PER_MINUTE: "100000000",
    PUBLIC_RATE_LIMIT_BURST: "100000000",
    SANDBOX_SIMULATION: "false",
  };
}

/**
 * Imports the generated live pool into the store under `env.DATA_DIR` and issues the keys the load uses.
 * `dist` is the build whose CLI, store and key service do it (another build's, for bench/ab.ts, so that
 * its store has its own schema); by default this one.
 */
export async function prepareStore(env: Record<string, string>, dist: string = DIST): Promise<Prepared> {
  const dataDir = env.DATA_DIR as string;
  const poolFile = join(dataDir, "generated-pool.json");
  writeFileSync(poolFile, generatedPoolFile(new Date()));
  // `--mode live` after the file: a build from before the flag (bench/ab.ts runs older builds' CLIs too)
  // reads the file as its first argument and ignores the rest.
  const cli = [join(dist, "src/cli/index.js"), "contractors", "import", poolFile, "--mode", "live"];
  execFileSync(process.execPath, cli, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const load = async <T>(path: string): Promise<T> =>
    (await import(pathToFileURL(join(dist, path)).href)) as T;
  const { openStore } = await load<typeof import("../src/services/create-services.js")>(
    "src/services/create-services.js",
  );
  const { loadConfig } = await load<typeof import("../src/config.js")>("src/config.js");
  const { ApiKeyService } = await load<typeof import("../src/auth/api-key-service.js")>(
    "src/auth/api-key-service.js",
  );
  const store = openStore(loadConfig({ ...process.env, ...env }));
  try {
    await store.migrate();
    const keys = new ApiKeyService(store, 0);
    const issue = (kind: "account" | "contractor", contractorId?: string) =>
      keys.issue({
        accountName: "bench",
        mode: "live",
        label: `bench ${kind}`,
        ratePerMinute: UNLIMITED,
        burst: UNLIMITED,
        actor: "operator:cli",
        kind,
        contractorId: contractorId ?? null,
      });
    const caller = await issue("account");
    const callerKey = caller.key;
    const active = (await store.contractors.load()).filter(
      (c) => c.pool === "live" && c.active && !c.excluded,
    );
    const contractorKeys = new Map<string, string>();
    for (let i = 0; i < active.length; i += 128) {
      await Promise.all(
        active.slice(i, i + 128).map(async (c) => {
          contractorKeys.set(c.id, (await issue("contractor", c.id)).key);
        }),
      );
    }
    const byBucket = new Map<string, Contractor[]>();
    for (const c of active) {
      for (const trade of c.trades)
        for (const state of c.states) {
          const key = `${trade}|${state}`;
          const list = byBucket.get(key) ?? [];
          list.push(c);
          byBucket.set(key, list);
        }
    }
    for (const list of byBucket.values()) list.sort((a, b) => b.rating - a.rating || (a.id < b.id ? -1 : 1));
    const capacity = active.reduce((sum, c) => sum + c.maxActiveJobs, 0);
    const refs = new ContractorRefs(Buffer.from(BENCH_REF_SECRET, "utf8"));
    const contractorOfRef = new Map(active.map((c) => [refs.of(caller.accountId, c.id), c.id]));
    return { callerKey, contractorKeys, byBucket, capacity, contractorOfRef };
  } finally {
    await store.close();
  }
}

export interface Job {
  order: string;
  quote: string;
}

/** `count` jobs from the simulator's demand model: each as an order body and as a quote body (JSON). */
export function demandJobs(byBucket: Map<string, Contractor[]>, count: number, seed = 1): Job[] {
  const demand = new Demand(byBucket);
  const rng = rngOf(seedOf(seed, "bench"));
  const jobs: Job[] = [];
  for (let i = 0; i < count; i++) {
    const plan = demand.plan(rng, i, 0);
    const location = { state: plan.state, ...(plan.zip ? { zip: plan.zip } : {}) };
    // The caller's NTE, as the simulator sets it: over the estimate's typical figure, in $25 steps.
    const typical = estimateRange(plan.trade, plan.state, plan.urgency).typical_cents;
    const nte =
      rng() < MIX.nteShare
        ? Math.round((typical * uniform(rng, ...MIX.nteOverEstimate)) / 2500) * 2500
        : undefined;
    const withNte = nte !== undefined ? { nte_cents: nte } : {};
    jobs.push({
      quote: JSON.stringify({ trade: plan.trade, location, urgency: plan.urgency, ...withNte }),
      order: JSON.stringify({
        trade: plan.trade,
        location: {
          ...location,
          ...(plan.city ? { city: plan.city } : {}),
          address: plan.address,
          name: plan.site,
        },
        description: pick(rng, DESCRIPTIONS[plan.trade]),
        urgency: plan.urgency,
        ...withNte,
        reference_id: `BENCH-${i + 1}`,
      }),
    });
  }
  return jobs;
}

export interface Placed {
  orderId: string;
  contractorId: string;
}

/** Reads an order response's status and, when offered, whom to: from the head of the JSON, cheaply. */
export function placedOf(
  body: string,
  contractorOfRef: Map<string, string>,
): { status: string; placed: Placed | null } {
  const status = /"status":"([a-z_]+)"/.exec(body)?.[1] ?? "unreadable";
  if (status !== "offered") return { status, placed: null };
  const orderId = /"order_id":"([^"]+)"/.exec(body)?.[1];
  const ref = /"contractor_ref":"([^"]+)"/.exec(body)?.[1];
  // Older builds' handles are read back too, so that bench/ab.ts and a "before" run can measure them:
  // builds before issue 28 answered `cref_<id>` for today's `cref-<id>`, and builds before per-account
  // handles (issue 16) `ctr-<hex>` for `ctr_<hex>`.
  const contractorId =
    ref === undefined
      ? undefined
      : (contractorOfRef.get(ref) ??
        (ref.startsWith("cref_") ? contractorOfRef.get(`cref-${ref.slice(5)}`) : undefined) ??
        (ref.startsWith("ctr-") ? `ctr_${ref.slice(4)}` : undefined));
  return { status, placed: orderId && contractorId ? { orderId, contractorId } : null };
}

/**
 * The matched order load: the jobs' order bodies posted with `headers`, `burst` at most per run (the
 * pool's capacity is worked back between runs); each answer's outcome (its status, `http <code>` when it
 * is not a 200/201, and the order offered, if it was) goes to `onAnswer`.
 */
export function matchedOrderLoad(options: {
  name: string;
  headers: Record<string, string>;
  jobs: readonly Job[];
  burst: number;
  contractorOfRef: Map<string, string>;
  onAnswer: (outcome: { status: string; placed: Placed | null }) => void;
  settle?: Load["settle"];
}): Load {
  const { name, headers, jobs, burst, contractorOfRef, onAnswer, settle } = options;
  return {
    name,
    method: "POST",
    path: "/api/dispatch/v1/order",
    headers,
    bodies: jobs.map((j) => j.order),
    maxRequests: burst,
    onResponse: (status, body) =>
      onAnswer(
        status === 201 || status === 200
          ? placedOf(body, contractorOfRef)
          : { status: `http ${status}`, placed: null },
      ),
    ...(settle ? { settle } : {}),
  };
}

/**
 * What happens to offered orders after they are measured, over HTTP: their contractors accept and work
 * them to completed with their own keys (`work`), or their caller cancels them (`cancel`). Either gives
 * the contractor's capacity back.
 */
export class Releaser {
  private readonly pool: Pool;
  requests = 0;
  failures = 0;

  constructor(
    url: string,
    private readonly keys: Map<string, string>,
    connections = 32,
  ) {
    this.pool = new Pool(url, { connections });
  }

  async call(key: string, method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
    this.requests++;
    const res = await this.pool.request({
      method,
      path,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) {
      this.failures++;
      return null;
    }
    return JSON.parse(text) as unknown;
  }

  keyOf(contractorId: string): string {
    const key = this.keys.get(contractorId);
    if (!key) throw new Error(`no key for ${contractorId}`);
    return key;
  }

  /** The contractor's pending offers: offer id, order id and estimate. */
  async offers(contractorId: string): Promise<Array<{ offerId: string; orderId: string; cents: number }>> {
    const list = (await this.call(this.keyOf(contractorId), "GET", "/api/contractor/v1/offers")) as {
      offers: Array<{ offer_id: string; order_id: string; estimated_cost_cents: number }>;
    } | null;
    return (list?.offers ?? []).map((o) => ({
      offerId: o.offer_id,
      orderId: o.order_id,
      cents: o.estimated_cost_cents,
    }));
  }

  accept(contractorId: string, offerId: string): Promise<unknown> {
    return this.call(this.keyOf(contractorId), "POST", "/api/contractor/v1/offers/accept", {
      offer_id: offerId,
    });
  }

  /** en_route, on_site, completed: the job's steps after accepting, one request each. */
  async steps(contractorId: string, orderId: string, finalCents: number): Promise<void> {
    const key = this.keyOf(contractorId);
    const path = "/api/contractor/v1/jobs/status";
    await this.call(key, "POST", path, { order_id: orderId, status: "en_route", eta_minutes: 20 });
    await this.call(key, "POST", path, { order_id: orderId, status: "on_site" });
    await this.call(key, "POST", path, {
      order_id: orderId,
      status: "completed",
      final_cost_cents: finalCents,
    });
  }

  /**
   * Every contractor offered one of `placed` lists its offers, accepts them and works each job to
   * completed, which gives its capacity back; `parallel` contractors at a time.
   */
  async work(placed: readonly Placed[], parallel = 48): Promise<void> {
    const wanted = new Set(placed.map((p) => p.orderId));
    const contractors = [...new Set(placed.map((p) => p.contractorId))];
    let next = 0;
    const worker = async () => {
      for (;;) {
        const contractorId = contractors[next++];
        if (contractorId === undefined) return;
        for (const offer of await this.offers(contractorId)) {
          if (!wanted.has(offer.orderId)) continue;
          if ((await this.accept(contractorId, offer.offerId)) === null) continue;
          await this.steps(contractorId, offer.orderId, offer.cents);
        }
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
  }

  /** The caller cancels each of `placed`: one request per order. */
  async cancel(placed: readonly Placed[], callerKey: string, parallel = 48): Promise<void> {
    let next = 0;
    const worker = async () => {
      for (;;) {
        const p = placed[next++];
        if (p === undefined) return;
        await this.call(callerKey, "POST", "/api/dispatch/v1/orders/cancel", {
          order_id: p.orderId,
          reason: "benchmark: releasing the contractor's capacity",
        });
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * Runs `load` for about `seconds` in bursts: after each run, the orders it placed (`take` hands them over
 * and forgets them) are worked to completed by their contractors, so the pool never runs dry; that work
 * happens between runs, never during one. Stops early when a run sent nothing.
 */
export async function driveWorked(
  server: Server,
  load: Load,
  seconds: number,
  releaser: Releaser,
  take: () => Placed[],
): Promise<Run[]> {
  const runs: Run[] = [];
  let spent = 0;
  do {
    const run = await driveRun(server, load, seconds - spent);
    runs.push(run);
    spent += run.seconds;
    await releaser.work(take());
    if (run.requests === 0) break;
  } while (seconds - spent >= 1);
  return runs;
}
