// The simulator: realistic traffic over days of virtual time, through the real operations. Callers
// estimate and order, contractors answer offers, travel, finish over or under the NTE and invoice,
// dispatchers take over orders nobody took and override assignments. Every action is an operation of the
// registry run through the gate (key authentication, key kinds, input validation) with keys of the right
// kind; only offer deadlines are settled by the lifecycle's own sweep step, as the server's sweeper does.
//
// Each order plays as a lane of the virtual clock (order-play.ts on virtual-time.ts): its steps happen
// at virtual times, and the services are given the virtual clock, so every timestamp (received, accepted,
// completed, invoiced, the audit records) falls where the simulated day puts it. Lanes run concurrently,
// so writes share the store's group commits; each order draws its decisions from its own seeded
// generator, so a seed replays the same decisions whatever the interleaving. This module sets the run up
// (refusals, the pool, keys, services on the virtual clock), plays it and reports.

import { createHash, generateKeyPairSync } from "node:crypto";
import { sealRecord } from "../audit/record.js";
import { CheckpointSigner } from "../audit/signing.js";
import type { RateDecision, RateLimiter } from "../auth/rate-limiter.js";
import type { Config } from "../config.js";
import type { Contractor } from "../domain/contractor.js";
import { templatesFor } from "../domain/orders/checklist.js";
import { rngOf, seedOf } from "../domain/random.js";
import { generateSandboxPool } from "../domain/sandbox-pool.js";
import { TRADE_CODES } from "../domain/trades.js";
import { parseContractorFile } from "../operations/pool/contractor-file.js";
import { createServices } from "../services/create-services.js";
import type { Store } from "../storage/store.js";
import { Demand } from "./demand.js";
import { OrderPlay } from "./order-play.js";
import { VirtualTime } from "./virtual-time.js";
import { SIM_OPERATOR, type SimulationCounters, World } from "./world.js";

export const DEFAULT_SIM_ACCOUNT = "simulation";
/** The seed of the pool imported into an empty live pool (same seed, same contractors). */
export const SIMULATED_POOL_SEED = "field-dispatch-simulation-v1";
/** Lanes in flight at once, and how far (virtual) ahead of the earliest one a lane may start. */
export const DEFAULT_CONCURRENCY = 128;
const HORIZON_MS = 30 * 60_000;

const DAY_MS = 86_400_000;

export interface SimulationOptions {
  days: number;
  ordersPerDay: number;
  seed: number;
  /** The account the simulated callers order under (its live key). */
  account: string;
  /** Run even though other accounts have live orders in the store. */
  force: boolean;
  /** The virtual time the simulation ends at (default: now); it starts `days` earlier. */
  end: Date;
  /** Lanes in flight at once (1: strictly one step after another in virtual-time order). */
  concurrency: number;
  /** Told of progress, one line at a time (the CLI writes them to stderr). */
  progress?: (line: string) => void;
}

export interface SimulationReport {
  seed: number;
  account: string;
  window: { start: string; end: string };
  days: number;
  ordersPerDay: number;
  /** Order statuses at the end, read from the store. */
  statuses: Record<string, number>;
  counters: SimulationCounters;
  /** Operation calls by operation name, and refusals by `name code`. */
  operations: { total: number; byName: Record<string, number>; refused: Record<string, number> };
  /** Offer deadlines settled by the sweep step (a system action, not an operation). */
  sweeps: number;
  pool: { liveContractors: number; imported: number };
  keysIssued: number;
  wallMs: number;
}

/** The simulator will not run, and why (exit code 1 with the message). */
export class SimulationRefused extends Error {}

/**
 * Rate limits guard a server against its clients in wall-clock time; the simulator is its own only client
 * and replays days in minutes, so its gate runs with a limiter that admits everything.
 */
const UNLIMITED: RateLimiter = {
  consume: (_key, policy): RateDecision => ({
    allowed: true,
    limit: policy.burst,
    remaining: policy.burst,
    resetSeconds: 0,
    retryAfterSeconds: 0,
  }),
  close: async () => {},
};

/** Accounts other than `account` that have live orders: a store serving real traffic. */
async function otherAccountsWithLiveOrders(store: Store, account: string): Promise<string[]> {
  // Orders are made with callers' keys, so every account that has orders has keys.
  const names = new Set((await store.keys.list()).map((k) => k.account_name));
  names.delete(account);
  const found: string[] = [];
  for (const name of [...names].sort()) {
    const row = await store.keys.findAccountByName(name);
    if (!row) continue;
    const orders = await store.orders.list({ accountId: row.id, livemode: true, limit: 1 });
    if (orders.length > 0) found.push(name);
  }
  return found;
}

/** The generated pool as a pool file in the import format (JSON), for the `contractors import` path; its
 * verification dates relative to `now` (a few already expired, as in the sandbox). */
export function generatedPoolFile(now: Date): string {
  const rows = generateSandboxPool(now, SIMULATED_POOL_SEED).map((c) => ({
    external_ref: externalRefOf(c.id),
    name: c.name.replace(/^Sandbox /, "Simulated "),
    email: c.email.replace("sandbox+", "simulated+"),
    phone: c.phone,
    trades: c.trades,
    states: c.states,
    ...(c.homeZip ? { zip: c.homeZip } : {}),
    ...(c.lat !== null && c.lon !== null ? { lat: c.lat, lon: c.lon } : {}),
    ...(c.serviceRadiusMiles !== null ? { service_radius_miles: c.serviceRadiusMiles } : {}),
    hourly_rate_cents: c.hourlyRateCents,
    emergency_capable: c.emergencyCapable,
    max_active_jobs: c.maxActiveJobs,
    rating: c.rating,
    response_minutes: c.responseMinutes,
    active: true,
    insurance_verified_until: c.insuranceVerifiedUntil,
    license_verified_until: c.licenseVerifiedUntil,
  }));
  return JSON.stringify(rows);
}

function externalRefOf(generatedId: string): string {
  return `sim-${generatedId.slice(4)}`;
}

/**
 * Imports the generated pool as `contractors import <file>` would (same parser, same store call, same
 * audit record), except that each contractor keeps its generated id (the import draws random ones): the
 * same seed then replays the same run on any fresh store, since ids break ties in matching and ordering.
 */
async function importGeneratedPool(store: Store, now: Date): Promise<number> {
  const file = generatedPoolFile(now);
  const parsed = parseContractorFile(file, "json", "live");
  if (parsed.errors.length > 0) {
    throw new Error(`the generated pool does not parse: ${parsed.errors.slice(0, 3).join("; ")}`);
  }
  const ids = new Map(generateSandboxPool(now, SIMULATED_POOL_SEED).map((c) => [externalRefOf(c.id), c.id]));
  const rows = parsed.contractors.map((c) => ({ ...c, id: ids.get(c.externalRef ?? "") ?? c.id }));
  const digest = createHash("sha256").update(file).digest("hex");
  const { inserted } = await store.contractors.upsert(rows, (counts) =>
    sealRecord({
      kind: "pool.imported",
      at: new Date().toISOString(),
      accountId: null,
      livemode: true,
      actor: SIM_OPERATOR,
      data: {
        file: `simulate (generated, seed ${SIMULATED_POOL_SEED})`,
        file_sha256: digest,
        ...counts,
        external_refs: rows.map((c) => c.externalRef),
      },
    }),
  );
  return inserted;
}

/**
 * Runs the simulation on `store` (migrated). Refuses (SimulationRefused) a store where other accounts
 * have live orders unless `force`, and a live pool without an active contractor; imports the generated
 * pool when the live pool is empty. The keys it issues are revoked at the end.
 */
export async function runSimulation(
  store: Store,
  config: Config,
  options: SimulationOptions,
): Promise<SimulationReport> {
  await refuseUnsafeStore(store, config, options);
  const { active, imported } = await activePool(store, options);
  const byBucket = bucketsOf(active);
  const endMs = options.end.getTime();
  const startMs = endMs - options.days * DAY_MS;
  const clock = new VirtualTime(startMs, endMs, {
    concurrency: options.concurrency,
    horizonMs: HORIZON_MS,
  });
  const services = createServices(config, store, {
    now: clock.now,
    limiter: UNLIMITED,
    // The simulator never sequences the audit log (the CLI, or a server holding the log's key, does), so
    // its services get a signer that is never used rather than one that could create a key file.
    signer: new CheckpointSigner(generateKeyPairSync("ed25519").privateKey),
  });
  await services.pool.load();
  const world = new World(clock, services, options.seed, options.account, byBucket);
  const began = performance.now();
  try {
    world.callerKey = await world.issue("account");
    world.dispatcherKey = await world.issue("dispatcher");
    world.checklistTrades = await tradesWithChecklists(store, options.account);
    await play(world, clock, byBucket, startMs, options, began);
  } finally {
    await revokeAll(world);
    await services.limiter.close();
    await services.fetcher.close();
  }
  const wallMs = performance.now() - began;
  return {
    seed: options.seed,
    account: options.account,
    window: { start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString() },
    days: options.days,
    ordersPerDay: options.ordersPerDay,
    statuses: await statusesOf(store, world.orderIds),
    counters: world.counters,
    operations: operationsOf(world),
    sweeps: world.sweeps,
    pool: { liveContractors: active.length, imported },
    keysIssued: world.issuedKeyIds.length,
    wallMs,
  };
}

/** The trades whose live orders placed by `account` get a checklist from the templates in force now. */
async function tradesWithChecklists(store: Store, account: string): Promise<Set<string>> {
  const row = await store.keys.findAccountByName(account);
  const active = await store.checklists.templates({ livemode: true });
  if (!row || active.length === 0) return new Set();
  return new Set(
    TRADE_CODES.filter(
      (trade) => templatesFor(active, { trade, account_id: row.id, livemode: true }).length > 0,
    ),
  );
}

/** Refuses to run with dispatch off, or on a store where other accounts have live orders (unless forced). */
async function refuseUnsafeStore(store: Store, config: Config, options: SimulationOptions): Promise<void> {
  if (!config.DISPATCH_ENABLED) {
    throw new SimulationRefused(
      "DISPATCH_ENABLED is false: the dispatch operations the simulator drives are off",
    );
  }
  const others = await otherAccountsWithLiveOrders(store, options.account);
  if (others.length > 0 && !options.force) {
    throw new SimulationRefused(
      `other accounts have live orders in this store (${others.slice(0, 5).join(", ")}${others.length > 5 ? ", ..." : ""}): ` +
        `it looks like a store serving real traffic, whose evals the simulated orders would change. Point DATA_DIR ` +
        `(or DATABASE_URL) at another store, or pass --force to simulate here anyway.`,
    );
  }
}

/** The live pool's active contractors, the generated pool imported first when the live pool is empty. */
async function activePool(
  store: Store,
  options: SimulationOptions,
): Promise<{ active: Contractor[]; imported: number }> {
  let live = (await store.contractors.load()).filter((c) => c.pool === "live");
  let imported = 0;
  if (live.length === 0) {
    // Dated from the first simulated day, so the run sees what a pool imported then would.
    imported = await importGeneratedPool(store, new Date(options.end.getTime() - options.days * DAY_MS));
    options.progress?.(
      `the live pool was empty: imported ${imported} generated contractors (external_ref sim-...) through the ` +
        "contractor import path; they match real live orders too, so keep this store for demos",
    );
    live = (await store.contractors.load()).filter((c) => c.pool === "live");
  }
  const active = live.filter((c) => c.active && !c.excluded);
  if (active.length === 0) {
    throw new SimulationRefused(
      `the live pool has ${live.length} contractors and none is active: activate some (dispatcher pool operation) or import a pool`,
    );
  }
  return { active, imported };
}

/** The contractors by `trade|state`, best rated first (then by id). */
function bucketsOf(active: readonly Contractor[]): Map<string, Contractor[]> {
  const byBucket = new Map<string, Contractor[]>();
  for (const c of active) {
    for (const trade of c.trades) {
      for (const state of c.states) {
        const key = `${trade}|${state}`;
        const list = byBucket.get(key) ?? [];
        list.push(c);
        byBucket.set(key, list);
      }
    }
  }
  for (const list of byBucket.values()) list.sort((a, b) => b.rating - a.rating || (a.id < b.id ? -1 : 1));
  return byBucket;
}

/** Plans every order of every day as a lane of the clock and runs the clock, telling progress once a day
 * (with the wall-clock time since `began`, a performance.now()). */
async function play(
  world: World,
  clock: VirtualTime,
  byBucket: Map<string, Contractor[]>,
  startMs: number,
  options: SimulationOptions,
  began: number,
): Promise<void> {
  const progress = options.progress ?? (() => {});
  const demand = new Demand(byBucket);
  const planRng = rngOf(seedOf(options.seed, "plan"));
  let index = 0;
  for (let day = 0; day < options.days; day++) {
    for (let i = 0; i < options.ordersPerDay; i++) {
      const plan = demand.plan(planRng, index++, startMs + day * DAY_MS);
      clock.spawn(plan.at, () => new OrderPlay(world, plan).play());
    }
  }
  let nextDay = startMs + DAY_MS;
  await clock.run((virtualMs) => {
    if (virtualMs < nextDay) return;
    while (nextDay <= virtualMs) nextDay += DAY_MS;
    const day = Math.round((nextDay - startMs) / DAY_MS) - 1;
    const calls = [...world.calls.values()].reduce((a, b) => a + b, 0);
    progress(
      `day ${day}/${options.days}: ${world.counters.ordersCreated} orders, ${calls} operations, ` +
        `${((performance.now() - began) / 1000).toFixed(1)} s`,
    );
  });
}

/** The simulated orders' statuses at the end, read from the store a batch at a time. */
async function statusesOf(store: Store, orderIds: readonly string[]): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  for (let i = 0; i < orderIds.length; i += 500) {
    for (const row of await store.orders.byIds(orderIds.slice(i, i + 500))) {
      statuses[row.status] = (statuses[row.status] ?? 0) + 1;
    }
  }
  return statuses;
}

/** Operation calls by name (sorted), their total, and the refusals. */
function operationsOf(world: World): SimulationReport["operations"] {
  const byName = Object.fromEntries([...world.calls].sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    total: Object.values(byName).reduce((a, b) => a + b, 0),
    byName,
    refused: Object.fromEntries(world.refused),
  };
}

/** The simulator's keys act only during the run: revoked at the end, a few at a time. */
async function revokeAll(world: World): Promise<void> {
  const ids = world.issuedKeyIds;
  for (let i = 0; i < ids.length; i += 64) {
    await Promise.all(ids.slice(i, i + 64).map((id) => world.services.keys.revoke(id, SIM_OPERATOR)));
  }
}
