// Wires config -> store -> services. Used by the server, the CLI and the test harness alike.

import { join } from "node:path";
import { ApiKeyService } from "../auth/api-key-service.js";
import { MemoryRateLimiter, type RateLimiter } from "../auth/rate-limiter.js";
import type { Config } from "../config.js";
import type { Services } from "../operations/types.js";
import { openPostgresStore } from "../storage/postgres.js";
import { openSqliteStore } from "../storage/sqlite.js";
import type { Store } from "../storage/store.js";
import { ContractorPool } from "./contractor-pool.js";

/** The store the configuration selects: PostgreSQL with DATABASE_URL, else SQLite under DATA_DIR. */
export function openStore(config: Config): Store {
  if (config.DATABASE_URL)
    return openPostgresStore(config.DATABASE_URL, { poolSize: config.DATABASE_POOL_SIZE });
  return openSqliteStore(join(config.DATA_DIR, "field-dispatch.sqlite"));
}

export function createServices(
  config: Config,
  store: Store,
  options: { limiter?: RateLimiter; now?: () => Date } = {},
): Services {
  return {
    config,
    store,
    pool: new ContractorPool(store),
    keys: new ApiKeyService(store, config.API_KEY_CACHE_TTL_MS),
    limiter: options.limiter ?? new MemoryRateLimiter(),
    inflightIdempotency: new Set(),
    now: options.now ?? (() => new Date()),
  };
}
