// One schema for every environment setting, parsed once at boot into a typed object.

import { existsSync } from "node:fs";
import { z } from "zod";

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((v) => v === "true" || v === "1" || v === "yes");

const positiveInt = z.coerce.number().int().positive();

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default("127.0.0.1"),
  /** The Prometheus /metrics listener, apart from the API: a port (0: any free one), or "off" (or empty)
   * for none. 9464 is the port Prometheus exporters and OpenTelemetry use by convention. */
  METRICS_PORT: z
    .string()
    .default("9464")
    .transform((v, ctx) => {
      const value = v.trim().toLowerCase();
      if (value === "off" || value === "") return null;
      const port = Number(value);
      if (!/^\d+$/.test(value) || port > 65535) {
        ctx.addIssue({ code: "custom", message: 'METRICS_PORT must be a port (0-65535) or "off"' });
        return z.NEVER;
      }
      return port;
    }),
  /** Where the metrics listener binds: loopback by default, so only this host (or a local agent) scrapes. */
  METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: z.string().min(1).default("./data"),
  /** postgres://... selects the PostgreSQL store; unset, the embedded SQLite store in DATA_DIR. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: "DATABASE_URL must be a postgres:// or postgresql:// URL" })
    .optional(),
  /** redis://... selects the shared rate limiter; unset, each process limits in memory. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, { error: "REDIS_URL must be a redis:// or rediss:// URL" })
    .optional(),
  /** Prefix of every Redis key this service writes (to share one Redis between deployments). */
  REDIS_KEY_PREFIX: z.string().max(100).default("fsd:rl:"),
  /** A limiter decision Redis has not answered within this time is made in memory instead. */
  REDIS_TIMEOUT_MS: positiveInt.default(100),
  /** Connections in the PostgreSQL pool of each process. */
  DATABASE_POOL_SIZE: positiveInt.default(10),
  /** Absolute base URL used in `status_url`; derived from the request's Host when unset. */
  PUBLIC_BASE_URL: z.url().optional(),
  /** When false, keyed dispatch operations answer 503 dispatch_not_configured. */
  DISPATCH_ENABLED: bool.default(true),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /**
   * One access-log line per request (method, path, status, duration, request id). Off by default: it
   * costs about a third of a light request's CPU, and a proxy or the metrics usually cover it. Errors
   * (5xx) are always logged with their stack.
   */
  LOG_REQUESTS: bool.default(false),
  /**
   * Check every operation's result against its output schema before it is sent (every transport): a
   * result that does not match is a bug, logged with the operation and the schema's issues and answered as
   * an internal error. On in the test suites; off by default, as it parses every response a second time.
   */
  VALIDATE_RESPONSES: bool.default(false),
  /**
   * A diagnostic for the benchmarks (docs/performance.md): on the embedded store, time every SQL statement
   * and write, when the store closes, a table of the time spent per statement text to this file ("%p"
   * in it stands for the process id). Off (unset) by default: it reads the clock twice per statement.
   */
  SQL_PROFILE_FILE: z.string().min(1).optional(),
  /** Trust X-Forwarded-* from a proxy in front (true, or a hop count / address list as Fastify accepts). */
  TRUST_PROXY: z.string().default("false"),
  KEY_RATE_LIMIT_PER_MINUTE: positiveInt.default(100),
  KEY_RATE_LIMIT_BURST: positiveInt.default(200),
  PUBLIC_RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
  PUBLIC_RATE_LIMIT_BURST: positiveInt.default(120),
  /** How long a verified API key is cached in memory; revocation takes effect within this time. */
  API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(2000),
  /** How often the in-memory contractor pool is reloaded from the store (picks up CLI imports). */
  POOL_REFRESH_MS: z.coerce.number().int().min(0).default(30_000),
  /** Server processes sharing the port (`npm start -- --workers N` overrides). More than one needs
   * DATABASE_URL and REDIS_URL: the embedded store and the in-memory limiter are per process. */
  WORKERS: positiveInt.max(64).default(1),
  /** The audit log's Ed25519 signing key as a PKCS#8 PEM (newlines may be written as \n). Unset: the
   * key in DATA_DIR/audit-signing-key.pem, created on first start. Hosts sharing a store share one key. */
  AUDIT_SIGNING_KEY: z.string().min(1).optional(),
  /** The secret behind the contractor handles (contractor_ref) accounts see, at least 32 characters.
   * Unset: derived from the audit signing key. Changing it changes every handle. */
  CONTRACTOR_REF_SECRET: z
    .string()
    .min(32, "CONTRACTOR_REF_SECRET must be at least 32 characters")
    .optional(),
  /** The secret behind tracking links' tokens (/t/<token>, docs/customer-side.md), at least 32 characters.
   * Unset: derived from the audit signing key. Changing it ends every tracking link. */
  TRACKING_LINK_SECRET: z.string().min(32, "TRACKING_LINK_SECRET must be at least 32 characters").optional(),
  /** Days a tracking link keeps opening its page after its order closed (completed or cancelled); while
   * the order is open the link lives. */
  TRACKING_LINK_DAYS_AFTER_CLOSE: positiveInt.max(365).default(7),
  /** The tracking pages' limits (GCRA): per token (every reader of one link together) and per client IP
   * (every link it opens). A page's first load spends three (page, status, stream). */
  TRACKING_TOKEN_RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
  TRACKING_TOKEN_RATE_LIMIT_BURST: positiveInt.default(30),
  TRACKING_IP_RATE_LIMIT_PER_MINUTE: positiveInt.default(120),
  TRACKING_IP_RATE_LIMIT_BURST: positiveInt.default(60),
  /** Live streams one tracking link may hold open at once in each process (429 beyond). */
  TRACKING_MAX_STREAMS_PER_LINK: positiveInt.max(1000).default(20),
  /** The secret behind sites' request links' tokens (/r/<token>, docs/customer-side.md), at least 32
   * characters. Unset: derived from the audit signing key. Changing it ends every request link. */
  REQUEST_LINK_SECRET: z.string().min(32, "REQUEST_LINK_SECRET must be at least 32 characters").optional(),
  /** The request form's limits (GCRA): every request to /r/ routes per client IP (the page, its site's
   * name, a submission); and submissions alone, per client IP and per link (every reporter of one site
   * together). */
  REQUEST_FORM_IP_RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
  REQUEST_FORM_IP_RATE_LIMIT_BURST: positiveInt.default(30),
  REQUEST_SUBMIT_IP_RATE_LIMIT_PER_MINUTE: positiveInt.default(5),
  REQUEST_SUBMIT_IP_RATE_LIMIT_BURST: positiveInt.default(10),
  REQUEST_SUBMIT_LINK_RATE_LIMIT_PER_MINUTE: positiveInt.default(10),
  REQUEST_SUBMIT_LINK_RATE_LIMIT_BURST: positiveInt.default(20),
  /** Notifications to the people at the site (docs/customer-side.md): the SMTP server that sends them
   * (smtp://user:pass@host:587, smtps://... for TLS from the start). Unset: messages are kept in the store,
   * listed by the API and the console, and nothing is sent. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, "SMTP_URL must be an smtp:// or smtps:// URL")
    .optional(),
  /** The From of every notification (its domain also names the messages' Message-IDs). */
  NOTIFY_FROM: z.string().min(3).max(254).default("Field Dispatch <notifications@localhost>"),
  /** How often each process fans out notification events and sends due messages; 0: this process does not. */
  NOTIFY_INTERVAL_MS: z.coerce.number().int().min(0).default(1000),
  /** Deadline of each wait of one SMTP attempt (connection, greeting, each answer). */
  NOTIFY_TIMEOUT_MS: positiveInt.max(120_000).default(10_000),
  /** Attempts of one message before it is failed, and the wait before the second (doubling each time, at
   * most an hour). */
  NOTIFY_MAX_ATTEMPTS: positiveInt.max(50).default(8),
  NOTIFY_RETRY_BASE_MS: positiveInt.max(3_600_000).default(60_000),
  /** How often each process sequences queued audit records into the tree and signs a checkpoint. */
  AUDIT_SEQUENCE_INTERVAL_MS: z.coerce.number().int().min(0).default(1000),
  /** The readiness probe (and every other outbound fetch) may reach private and loopback addresses.
   * For local fixtures and private deployments only: off, only public unicast addresses are fetched. */
  PROBE_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  /** Ports outbound fetches may use besides 80 and 443, comma-separated (e.g. "8443,8080"). */
  PROBE_ALLOWED_PORTS: z
    .string()
    .default("")
    .transform((v, ctx) => {
      const ports = v
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean)
        .map(Number);
      if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
        ctx.addIssue({
          code: "custom",
          message: "PROBE_ALLOWED_PORTS must list ports 1-65535, comma-separated",
        });
        return z.NEVER;
      }
      return new Set(ports);
    }),
  /** Deadline of one outbound request (connect, headers and body). */
  PROBE_TIMEOUT_MS: positiveInt.max(60_000).default(5_000),
  /** Largest body an outbound request reads, after decompression. */
  PROBE_MAX_BODY_BYTES: positiveInt.default(2 * 1024 * 1024),
  /** Outbound requests in flight at once in the process; more wait their turn. */
  PROBE_MAX_CONCURRENT_FETCHES: positiveInt.max(1024).default(16),
  /** The probe's own limit per client IP (it fetches a dozen URLs per call). */
  PROBE_RATE_LIMIT_PER_MINUTE: positiveInt.default(6),
  PROBE_RATE_LIMIT_BURST: positiveInt.default(3),
  /** Deadline of one webhook delivery attempt (connect, headers and body). */
  WEBHOOK_TIMEOUT_MS: positiveInt.max(60_000).default(10_000),
  /** Webhook deliveries in flight at once in each process. */
  WEBHOOK_CONCURRENCY: positiveInt.max(256).default(8),
  /** How often each process looks for webhook events to deliver; 0: this process delivers none. */
  WEBHOOK_INTERVAL_MS: z.coerce.number().int().min(0).default(1000),
  /** How often each process looks for service-level clocks due to fire (order.sla_at_risk,
   * order.sla_breached); 0: this process watches none. */
  SLA_WATCH_INTERVAL_MS: z.coerce.number().int().min(0).default(30_000),
  /** Maintenance plans (docs/sites-and-maintenance.md): how often each process generates the occurrences
   * that entered their horizon and settles those whose window ended; 0: this process does not. */
  MAINTENANCE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  /** Proof of work (docs/proof-of-work.md): the largest attachment one upload may send, bytes. */
  ATTACHMENT_MAX_BYTES: positiveInt.max(1024 * 1024 * 1024).default(20 * 1024 * 1024),
  /** The bytes of every attachment of one order together, at most. */
  ATTACHMENT_ORDER_MAX_BYTES: positiveInt.default(200 * 1024 * 1024),
  /** Attachments of one order, at most. */
  ATTACHMENT_ORDER_MAX_FILES: positiveInt.max(10_000).default(50),
  /** Miles a check-in or check-out position may be from the centroid of the order's ZIP before it is
   * flagged (three times this from a city's centroid), beyond the accuracy the phone reports. */
  CHECK_IN_TOLERANCE_MILES: z.coerce.number().min(0.1).max(500).default(3),
  /** Days webhook events, deliveries and attempts are kept once no delivery is pending. */
  WEBHOOK_RETENTION_DAYS: positiveInt.max(3650).default(30),
  /** How often an open event stream (GET /api/events) sends a comment line, so that proxies and
   * clients see the connection alive. */
  EVENTS_HEARTBEAT_MS: positiveInt.max(300_000).default(15_000),
  /** Event streams one key may hold open at once in each process (429 beyond). */
  EVENTS_MAX_STREAMS_PER_KEY: positiveInt.max(1000).default(5),
  /** Where the built web console is (`npm run build` writes it to dist/console under the package). */
  CONSOLE_DIR: z.string().min(1).optional(),
  /** A web console session (the cookie POST /console/session gives for an API key) ends after this many
   * minutes without a request; each request moves the expiry on. The key's revocation ends it sooner. */
  CONSOLE_SESSION_IDLE_MINUTES: positiveInt.max(7 * 24 * 60).default(30),
  /** Simulated contractors play sandbox (test-key) orders through their whole lifecycle, with 20 s offer
   * deadlines. Off: sandbox orders wait for contractor keys' answers with live deadlines (a load test of
   * order creation, say). */
  SANDBOX_SIMULATION: bool.default(true),
  /** How fast the sandbox's clock runs for its simulated contractors, who start a windowed job (scheduled
   * work, or a service_window) when that clock reaches the window: 1, real time, so a job booked for
   * tomorrow 08:00 starts then, as a real contractor's would. More, for tests and demos only: 3600 runs
   * an hour a second from the process's start. Offers and as-soon-as-possible work are played in seconds
   * whatever it is. */
  SANDBOX_CLOCK_SPEED: z.coerce
    .number({ error: "SANDBOX_CLOCK_SPEED must be a number" })
    .min(1, { error: "SANDBOX_CLOCK_SPEED must be at least 1 (real time)" })
    .max(1_000_000, { error: "SANDBOX_CLOCK_SPEED must be at most 1000000" })
    .default(1),
  /** The API key dispatch.quote, dispatch.order and dispatch.order_status run under over MCP and A2A, on
   * the behalf of a caller without a key of its own (an account's key, issued with the operator CLI); every
   * other keyed tool needs the caller's own x-api-key. Unset: the sandbox key (MCP_USE_SANDBOX_KEY). */
  MCP_API_KEY: z.string().min(1).optional(),
  /** With no MCP_API_KEY, those three run under the key the first start issued to the sandbox account
   * (a test key: the sandbox pool and sandbox orders only), as long as it is not revoked. false: they
   * answer dispatch_not_configured unless the caller sends its own x-api-key. */
  MCP_USE_SANDBOX_KEY: bool.default(true),
  /** Origins (scheme://host[:port], comma-separated) whose browsers may call /api/mcp and /api/a2a, besides
   * this service's own. A request with any other Origin header is refused (403). */
  MCP_ALLOWED_ORIGINS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((o) => o.trim().replace(/\/+$/, ""))
        .filter(Boolean),
    ),
  /** Per-client-IP limit of MCP tool calls and A2A messages, on top of the key's or operation's own. */
  AGENT_RATE_LIMIT_PER_MINUTE: positiveInt.default(120),
  AGENT_RATE_LIMIT_BURST: positiveInt.default(60),
  /** The trust posture /.well-known/vendor-trust.json publishes; each one not set reads not_published. */
  VENDOR_NAME: z.string().min(1).optional(),
  VENDOR_CONTACT_EMAIL: z.email().optional(),
  VENDOR_LICENSE: z.string().min(1).optional(),
  VENDOR_BOND: z.string().min(1).optional(),
  VENDOR_INSURANCE: z.string().min(1).optional(),
  VENDOR_SLA: z.string().min(1).optional(),
  /** The release in use, published in /.well-known/interface-index.json; default: the git commit checked
   * out, when there is one. */
  BUILD_HASH: z.string().min(1).max(128).optional(),
  REQUEST_TIMEOUT_MS: positiveInt.default(30_000),
  SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
});

export type Config = z.infer<typeof configSchema>;

/**
 * Reads a settings file into process.env before the config is parsed: `.env` in the working directory
 * when there is one, or the file ENV_FILE names (which must exist); ENV_FILE set empty reads none.
 * Variables already set in the environment win over the file's. Returns the file read, or null.
 */
export function loadEnvFile(): string | null {
  const named = process.env.ENV_FILE;
  if (named === "") return null;
  const file = named ?? ".env";
  if (named === undefined && !existsSync(file)) return null;
  if (!existsSync(file)) throw new Error(`ENV_FILE ${file} does not exist`);
  process.loadEnvFile(file);
  return file;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/**
 * The base URL a process on this host reaches the server at, from the server's own settings:
 * PUBLIC_BASE_URL, else http://HOST:PORT (loopback when HOST is a wildcard address). Null when PORT is 0,
 * as the port is then chosen at start.
 */
export function serverBaseUrl(config: Pick<Config, "PUBLIC_BASE_URL" | "HOST" | "PORT">): string | null {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, "");
  if (config.PORT === 0) return null;
  const host =
    config.HOST === "0.0.0.0"
      ? "127.0.0.1"
      : config.HOST === "::"
        ? "::1"
        : config.HOST.replace(/^\[|\]$/g, "");
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.PORT}`;
}

export function trustProxySetting(value: string): boolean | number | string {
  if (value === "true") return true;
  if (value === "false" || value === "") return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
