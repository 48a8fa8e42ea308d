// Test harness: a fresh store in a temporary directory, the real services and the Fastify app in process
// (app.inject), torn down automatically after each test file.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { afterAll } from "vitest";
import { MemoryRateLimiter } from "../../src/auth/rate-limiter.js";
import { bootstrap } from "../../src/bootstrap.js";
import type { Clock } from "../../src/clock.js";
import { type Config, loadConfig } from "../../src/config.js";
import type { Services } from "../../src/operations/kernel/operation.js";
import { createServices } from "../../src/services/create-services.js";
import { type AppOptions, buildApp } from "../../src/transports/http/app.js";
import { closeServices } from "./close-services.js";
import { openBootstrappedStore } from "./store-template.js";
import { openTestStore, redisUrl } from "./test-store.js";

export interface Harness {
  app: FastifyInstance;
  services: Services;
  config: Config;
  sandboxKey: string;
  /** Issues a key for an account (created on demand). */
  key(
    account: string,
    mode: "test" | "live",
    limits?: { ratePerMinute?: number; burst?: number },
  ): Promise<string>;
  /** The handle (contractor_ref) the account of `apiKey` sees for `contractorId`. */
  refOf(apiKey: string, contractorId: string): Promise<string>;
  /** Issues a dispatch-team key (account "ops") in `mode`. */
  dispatcherKey(mode: "test" | "live"): Promise<string>;
  /** A contractor's key (its phone's): `account` names the key's holder. */
  contractorKey(contractorId: string, account: string, mode?: "test" | "live"): Promise<string>;
  post(url: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

// Every response is checked against its operation's output schema (VALIDATE_RESPONSES): a mismatch is
// answered 500, which fails the test that made the request. The harness's log is otherwise discarded, so
// mismatches are printed here, and fail the file too, for tests that do not look at every response.
const mismatches: string[] = [];
function mismatchLog(): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split("\n")) {
        if (line.includes('"type":"ResponseMismatch"')) {
          process.stderr.write(`${line}\n`);
          const { err, request_id } = JSON.parse(line) as { err: { message: string }; request_id: string };
          mismatches.push(`${request_id}: ${err.message}`);
        }
      }
      done();
    },
  });
}

// Every harness a test file opens is closed after the file, wherever it was created (in a hook or
// inside a test): registered once here, at import time, in the file's root suite.
const open = new Set<Harness>();
afterAll(async () => {
  for (const h of open) await h.close();
  open.clear();
  if (mismatches.length > 0) {
    throw new Error(`responses that do not match their output schema:\n${mismatches.join("\n")}`);
  }
});

export async function createHarness(
  env: Record<string, string> = {},
  appOptions: AppOptions = {},
  /** The services' clock (default: the wall clock); tests move time with one of their own. With
   * `limitsOnClock`, the in-memory rate limiter runs on that clock too (it runs on the wall clock
   * otherwise), so moving time refills its buckets: only for a clock that never goes back. */
  options: { now?: Clock; limitsOnClock?: boolean } = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "fd-test-"));
  // TEST_LIMITER=redis: the shared limiter on TEST_REDIS_URL, with keys of this harness's own.
  const redis: Record<string, string> =
    process.env.TEST_LIMITER === "redis"
      ? {
          REDIS_URL: redisUrl(),
          REDIS_KEY_PREFIX: `fsd:test:${Math.random().toString(36).slice(2, 10)}:`,
          // Tests share two cores with PostgreSQL and Redis: allow a slow answer before falling back.
          REDIS_TIMEOUT_MS: "2000",
        }
      : {};
  const config = loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: "error",
    VALIDATE_RESPONSES: "true",
    API_KEY_CACHE_TTL_MS: "0",
    POOL_REFRESH_MS: "0",
    ...redis,
    ...env,
  });
  // A copy of a bootstrapped template (store-template.ts), unless the test brings its own signing key
  // (the template's goes with each copy): then a new store, bootstrapped here.
  const fromTemplate = config.AUDIT_SIGNING_KEY === undefined ? await openBootstrappedStore(dir) : null;
  const opened = fromTemplate?.opened ?? (await openTestStore(dir));
  const store = opened.store;
  const now = options.now;
  const services = createServices(config, store, {
    ...(now ? { now } : {}),
    ...(now && options.limitsOnClock && !config.REDIS_URL
      ? { limiter: new MemoryRateLimiter(() => now().getTime()) }
      : {}),
  });
  const sandboxKey = fromTemplate?.sandboxKey ?? (await bootstrap(store, services.keys)).sandboxKey ?? "";
  await services.pool.load();
  const app = await buildApp(services, { logDestination: mismatchLog(), ...appOptions });
  await app.ready();
  let closed = false;
  const h: Harness = {
    app,
    services,
    config,
    sandboxKey,
    async key(account, mode, limits = {}) {
      const issued = await services.keys.issue({
        accountName: account,
        mode,
        ratePerMinute: limits.ratePerMinute ?? null,
        burst: limits.burst ?? null,
        actor: "operator:test",
      });
      return issued.key;
    },
    async refOf(apiKey, contractorId) {
      const principal = await services.keys.authenticate(apiKey);
      return services.refs.of(principal.accountId, contractorId);
    },
    async dispatcherKey(mode) {
      const issued = await services.keys.issue({
        accountName: "ops",
        mode,
        actor: "operator:test",
        kind: "dispatcher",
      });
      return issued.key;
    },
    async contractorKey(contractorId, account, mode = "live") {
      const issued = await services.keys.issue({
        accountName: account,
        mode,
        actor: "operator:test",
        kind: "contractor",
        contractorId,
      });
      return issued.key;
    },
    post(url, body, headers = {}) {
      return app.inject({
        method: "POST",
        url,
        headers: { "content-type": "application/json", ...headers },
        payload: typeof body === "string" ? body : JSON.stringify(body),
      });
    },
    get(url, headers = {}) {
      return app.inject({ method: "GET", url, headers });
    },
    async close() {
      if (closed) return;
      closed = true;
      open.delete(h);
      await app.close();
      await closeServices(services);
      await store.close();
      await opened.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  open.add(h);
  return h;
}

export const QUOTE_PATH = "/api/dispatch/v1/quote";
export const ORDER_PATH = "/api/dispatch/v1/order";
export const ESTIMATE_PATH = "/api/dispatch/v1/estimate";

export function validQuote(overrides: Record<string, unknown> = {}) {
  return { trade: "plumbing", location: { state: "TX", zip: "78701" }, urgency: "urgent", ...overrides };
}

export function validOrder(overrides: Record<string, unknown> = {}) {
  return {
    trade: "hvac",
    location: { state: "CA", zip: "94103", city: "San Francisco", address: "1 Market St", name: "Store 12" },
    description: "Rooftop unit not cooling",
    urgency: "routine",
    ...overrides,
  };
}
