// Wires config -> store -> services. Used by the server, the CLI and the test harness alike.

import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { AuditLog } from "../audit/audit-log.js";
import { type CheckpointSigner, loadSigningKey } from "../audit/signing.js";
import { ApiKeyService } from "../auth/api-key-service.js";
import { ConsoleSessions } from "../auth/console-sessions.js";
import { ContractorRefs } from "../auth/contractor-refs.js";
import { MemoryRateLimiter, type RateLimiter } from "../auth/rate-limiter.js";
import { RedisRateLimiter } from "../auth/redis-rate-limiter.js";
import { TrackingTokens } from "../auth/tracking-tokens.js";
import { UnsubscribeTokens } from "../auth/unsubscribe-tokens.js";
import { systemClock } from "../clock.js";
import type { Config } from "../config.js";
import { Metrics } from "../metrics.js";
import { keptMailer, smtpMailer } from "../net/mailer.js";
import { type FetcherOptions, SafeFetcher } from "../net/safe-fetch.js";
import { ContractorPool } from "../operations/kernel/contractor-pool.js";
import { DayPlanner } from "../operations/kernel/day-planner.js";
import { DoNotDispatchLists } from "../operations/kernel/do-not-dispatch-lists.js";
import { EventFeed } from "../operations/kernel/event-feed.js";
import type { Services } from "../operations/kernel/operation.js";
import { PROBE_CACHE_TTL_MS, ProbeService } from "../probe/probe.js";
import { openPostgresStore } from "../storage/postgres.js";
import { openSqliteStore } from "../storage/sqlite.js";
import type { Store } from "../storage/store.js";
import { webhookBaseUrl } from "../webhooks/outbox.js";
import { NotificationDispatcher } from "../workers/notification-dispatcher.js";
import { collectOrphanBlobs } from "../workers/orphan-blobs.js";
import { WebhookDispatcher } from "../workers/webhook-dispatcher.js";

/** The store the configuration selects: PostgreSQL with DATABASE_URL, else SQLite under DATA_DIR. */
export function openStore(config: Config): Store {
  if (config.DATABASE_URL)
    return openPostgresStore(config.DATABASE_URL, { poolSize: config.DATABASE_POOL_SIZE });
  return openSqliteStore(
    join(config.DATA_DIR, "field-dispatch.sqlite"),
    undefined,
    config.SQL_PROFILE_FILE ? { sqlProfileFile: config.SQL_PROFILE_FILE } : {},
  );
}

/** The limiter the configuration selects: shared on Redis with REDIS_URL, else in memory. */
function createLimiter(config: Config, logger?: FastifyBaseLogger, metrics?: Metrics): RateLimiter {
  // In memory, on the wall clock: a limit is a rate of real requests, whatever time the services' clock
  // says (a test moving that clock back must not find its buckets filled from the future). A test that
  // refills buckets by moving time passes a limiter on its own clock (createServices' `limiter`).
  if (!config.REDIS_URL) {
    return new MemoryRateLimiter(Date.now, (allowed) =>
      metrics?.limiterDecisions.inc({ source: "memory", outcome: allowed ? "allowed" : "limited" }),
    );
  }
  return new RedisRateLimiter(config.REDIS_URL, {
    timeoutMs: config.REDIS_TIMEOUT_MS,
    keyPrefix: config.REDIS_KEY_PREFIX,
    events: {
      onFallback: (err) => {
        metrics?.limiterFallback.set(1);
        logger?.warn(
          { err },
          "rate limiter: Redis unavailable, limiting in memory per process until it returns",
        );
      },
      onRecovered: () => {
        metrics?.limiterFallback.set(0);
        logger?.info("rate limiter: Redis answers again, limits are shared again");
      },
      onDecision: (source, allowed) =>
        metrics?.limiterDecisions.inc({ source, outcome: allowed ? "allowed" : "limited" }),
    },
  });
}

/** The outbound fetcher the configuration describes. */
export function createFetcher(config: Config, overrides: Partial<FetcherOptions> = {}): SafeFetcher {
  return new SafeFetcher({
    allowPrivateNetworks: config.PROBE_ALLOW_PRIVATE_NETWORKS,
    extraPorts: config.PROBE_ALLOWED_PORTS,
    timeoutMs: config.PROBE_TIMEOUT_MS,
    maxBodyBytes: config.PROBE_MAX_BODY_BYTES,
    maxRedirects: 5,
    maxConcurrent: config.PROBE_MAX_CONCURRENT_FETCHES,
    userAgent: `field-dispatch-probe/1.0 (readiness probe; ${config.PUBLIC_BASE_URL ?? "self-hosted"})`,
    ...overrides,
  });
}

export function createServices(
  config: Config,
  store: Store,
  options: {
    limiter?: RateLimiter;
    now?: () => Date;
    logger?: FastifyBaseLogger;
    metrics?: Metrics;
    signer?: CheckpointSigner;
    /** An outbound fetcher of the caller's (tests pass one with a stub resolver). */
    fetcher?: SafeFetcher;
  } = {},
): Services {
  // The one clock every part of the services reads (tests and the simulator pass their own).
  const now = options.now ?? systemClock;
  const metrics = options.metrics ?? new Metrics();
  metrics.watchStore(store);
  const signer = options.signer ?? loadSigningKey(config.AUDIT_SIGNING_KEY, config.DATA_DIR);
  const audit = new AuditLog(store.audit, signer, {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.now ? { now: options.now } : {}),
    onSequenced: (leaves) => metrics.auditSequenced.inc(leaves),
  });
  metrics.watchAudit(store.audit);
  const fetcher = options.fetcher ?? createFetcher(config);
  const pool = new ContractorPool(store);
  const keys = new ApiKeyService(store, config.API_KEY_CACHE_TTL_MS, now);
  return {
    audit,
    metrics,
    config,
    store,
    blobs: store.blobStore(join(config.DATA_DIR, "blobs")),
    pool,
    doNotDispatch: new DoNotDispatchLists(store),
    keys,
    sessions: new ConsoleSessions(store, keys, config.CONSOLE_SESSION_IDLE_MINUTES * 60_000, now),
    limiter: options.limiter ?? createLimiter(config, options.logger, metrics),
    fetcher,
    probe: new ProbeService(fetcher, {
      allowPrivateNetworks: config.PROBE_ALLOW_PRIVATE_NETWORKS,
      extraPorts: config.PROBE_ALLOWED_PORTS,
      cacheTtlMs: PROBE_CACHE_TTL_MS,
      ...(options.now ? { now: options.now } : {}),
    }),
    refs: new ContractorRefs(
      config.CONTRACTOR_REF_SECRET
        ? Buffer.from(config.CONTRACTOR_REF_SECRET, "utf8")
        : signer.deriveSecret("field-dispatch contractor_ref v1"),
    ),
    tracking: new TrackingTokens(
      config.TRACKING_LINK_SECRET
        ? Buffer.from(config.TRACKING_LINK_SECRET, "utf8")
        : signer.deriveSecret("field-dispatch tracking links v1"),
    ),
    requestLinks: new TrackingTokens(
      config.REQUEST_LINK_SECRET
        ? Buffer.from(config.REQUEST_LINK_SECRET, "utf8")
        : signer.deriveSecret("field-dispatch request links v1"),
      "request v1",
    ),
    unsubscribe: new UnsubscribeTokens(signer.deriveSecret("field-dispatch unsubscribe links v1")),
    planner: new DayPlanner(),
    events: new EventFeed(store.orderEvents, (err) =>
      options.logger?.error({ err }, "event stream: reading the order event log failed"),
    ),
    now,
  };
}

/** The webhook dispatcher the configuration describes, with an outbound fetcher of its own. */
export function createWebhookDispatcher(
  config: Config,
  store: Store,
  options: { now?: () => Date; logger?: FastifyBaseLogger; metrics?: Metrics } = {},
): WebhookDispatcher {
  return new WebhookDispatcher(store, {
    fetcher: createFetcher(config, {
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      maxConcurrent: config.WEBHOOK_CONCURRENCY,
      maxRedirects: 0,
      userAgent: "field-dispatch-webhooks/1.0 (Standard Webhooks)",
    }),
    ownsFetcher: true,
    concurrency: config.WEBHOOK_CONCURRENCY,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retentionDays: config.WEBHOOK_RETENTION_DAYS,
    collectOrphans: async (now) => {
      const blobs = store.blobStore(join(config.DATA_DIR, "blobs"));
      // Resumable uploads a day old, finished or not (storage/uploads/), then the blobs no attachment names.
      const expired = await store.partialUploads.removeExpired(now);
      return expired + (await collectOrphanBlobs(blobs, store.attachments, now));
    },
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

/** The notifications' worker the configuration describes: SMTP with SMTP_URL, else messages kept. */
export function createNotificationDispatcher(
  services: Services,
  options: { logger?: FastifyBaseLogger } = {},
): NotificationDispatcher {
  const { config } = services;
  return new NotificationDispatcher(services, {
    mailer: config.SMTP_URL ? smtpMailer(config.SMTP_URL, config.NOTIFY_TIMEOUT_MS) : keptMailer,
    baseUrl: webhookBaseUrl(config),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}
