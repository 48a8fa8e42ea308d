// Composition root: config -> store -> services -> HTTP transport, with graceful shutdown. With
// `--workers N` (or WORKERS=N) the primary process prepares the store once and forks N server processes
// that share the port; it replaces any that dies and stops them all on SIGTERM/SIGINT. Metrics are served on
// a listener of their own (METRICS_PORT, loopback by default): by the process, or under `--workers` by the
// primary, with every worker's counts summed.

import cluster from "node:cluster";
import { parseArgs } from "node:util";
import closeWithGrace from "close-with-grace";
import type { FastifyBaseLogger } from "fastify";
import { loadSigningKey } from "./audit/signing.js";
import { ApiKeyService } from "./auth/api-key-service.js";
import { type StoredSandboxKey, sandboxKeyOf } from "./auth/sandbox-key.js";
import { type BootstrapResult, bootstrap, issueSandboxDispatchKey } from "./bootstrap.js";
import { clusterMetricsSource, offerWorkerMetrics } from "./cluster-metrics.js";
import { type Config, loadConfig, loadEnvFile } from "./config.js";
import { createLogger } from "./logger.js";
import {
  createNotificationDispatcher,
  createServices,
  createWebhookDispatcher,
  openStore,
} from "./services/create-services.js";
import { seedSandboxMaintenance } from "./sim/sandbox-maintenance.js";
import { SandboxPlayer } from "./sim/sandbox-player.js";
import { buildApp } from "./transports/http/app.js";
import {
  closeMetrics,
  createMetricsServer,
  listenMetrics,
  type MetricsSource,
} from "./transports/http/metrics-server.js";
import { ComplianceWatch } from "./workers/compliance-watch.js";
import { MaintenanceGenerator } from "./workers/maintenance-generator.js";
import { OfferSweeper } from "./workers/offer-sweeper.js";
import { SlaWatch } from "./workers/sla-watch.js";

const IDEMPOTENCY_PURGE_MS = 60 * 60 * 1000;
const RESPAWN_DELAY_MS = 1000;

function workerCount(config: Config): number {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { workers: { type: "string" } },
    strict: false,
  });
  if (values.workers === undefined) return config.WORKERS;
  const n = Number(values.workers);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error("--workers must be an integer from 1 to 64");
  return n;
}

const QUOTE_EXAMPLE = {
  trade: "plumbing",
  location: { state: "TX", zip: "78701" },
  urgency: "urgent",
};

/** The first start's one-time secrets, printed as soon as they exist: before anything else at start
 * can fail (the API's port taken, say), so a start that dies after issuing them has shown them. */
function printFirstStart(first: BootstrapResult, dispatchKey: string | null): void {
  if (first.seededContractors > 0) {
    process.stdout.write(`Seeded the sandbox pool with ${first.seededContractors} contractors.\n`);
  }
  if (first.seededChecklists > 0) {
    process.stdout.write(
      `Gave the sandbox a starter checklist for each of its ${first.seededChecklists} trades (the dispatch team may retire them).\n`,
    );
  }
  if (!first.sandboxKey) return;
  process.stdout.write(
    [
      "",
      "Your sandbox API key (shown once; it matches only the sandbox contractor pool):",
      `  ${first.sandboxKey}`,
      "",
      ...(dispatchKey
        ? [
            "A sandbox dispatch-team key (shown once): sign in with it for the board of every sandbox order:",
            `  ${dispatchKey}`,
            "",
          ]
        : []),
      'Keep them: later starts print no key (README.md, "Lost one?", says how to issue another).',
      "",
    ].join("\n"),
  );
}

/** Once listening: the console's address, a first quote to try with the sandbox key the first start
 * printed, and on every start which key agents run under. */
function printWelcome(
  first: BootstrapResult,
  base: string,
  config: Config,
  agentKey: StoredSandboxKey | null,
): void {
  const root = base.replace(/\/+$/, "");
  // The web console, served by this process (docs/console.md); signed in with any API key.
  process.stdout.write(`Console: ${root}/console/ (sign in with an API key)\n`);
  // The API reference (api-docs.ts): "try it" with a key pasted under Authorize.
  process.stdout.write(`API reference: ${root}/docs (try it with an API key)\n`);
  if (first.sandboxKey) {
    process.stdout.write(
      [
        "",
        "Open the console and sign in with the sandbox API key to watch your sandbox orders live:",
        `  ${root}/console/`,
        "",
        "Try a quote:",
        `  curl -s ${base}/api/dispatch/v1/quote \\`,
        "    -H 'content-type: application/json' \\",
        `    -H 'x-api-key: ${first.sandboxKey}' \\`,
        `    -d '${JSON.stringify(QUOTE_EXAMPLE)}'`,
        "",
      ].join("\n"),
    );
  }
  // Agents' keyed tools run under a key nobody sent: say which, on every start.
  if (config.MCP_API_KEY !== undefined || !config.MCP_USE_SANDBOX_KEY) return;
  if (!agentKey) {
    process.stdout.write(
      "\nAgents: no MCP_API_KEY is set and the sandbox key is revoked, so MCP tools and A2A skills that need a key answer dispatch_not_configured unless the caller sends its own x-api-key.\n",
    );
    return;
  }
  const call = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "dispatch.quote", arguments: QUOTE_EXAMPLE },
  };
  process.stdout.write(
    [
      "",
      "Agents: no MCP_API_KEY is set, so quotes, orders and their status for agents without a key run in sandbox mode",
      `under the sandbox key ${agentKey.hint} (test mode: the sandbox pool only, never a live key).`,
      `  MCP: ${base}/api/mcp    A2A: ${base}/api/a2a (agent card ${base}/.well-known/agent-card.json)`,
      "Try a quote over MCP, with no key:",
      `  curl -s ${base}/api/mcp \\`,
      "    -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\",
      `    -d '${JSON.stringify(call)}'`,
      "Set MCP_API_KEY to an account's key to act under it instead, or MCP_USE_SANDBOX_KEY=false to refuse.",
      "",
    ].join("\n"),
  );
}

/** Starts the metrics listener unless METRICS_PORT is off; returns a function that stops it. */
async function serveMetrics(
  config: Config,
  source: MetricsSource,
  logger: FastifyBaseLogger,
): Promise<() => Promise<void>> {
  if (config.METRICS_PORT === null) return async () => {};
  const server = createMetricsServer(source, logger);
  const url = await listenMetrics(server, config.METRICS_PORT, config.METRICS_HOST);
  logger.info({ url }, `metrics listening at ${url}`);
  return () => closeMetrics(server);
}

/** Workers shut down when their primary says so (SIGTERM), once: a terminal's Ctrl-C reaches every process
 * of the group, and a worker that also took the SIGINT would take the primary's SIGTERM as a second signal
 * and exit at once, without draining ("second SIGTERM, exiting"). */
function ignoreTerminalInterrupt(): void {
  process.on("SIGINT", () => {});
}

/** One server process. `prepare`: this process prepares the store itself (not a worker). */
async function serve(config: Config, prepare: boolean): Promise<void> {
  if (cluster.isWorker) ignoreTerminalInterrupt();
  const logger = createLogger(config);
  const store = openStore(config);
  const services = createServices(config, store, { logger });
  const { registry } = services.metrics;
  if (cluster.isWorker) offerWorkerMetrics(registry);
  // The metrics listener is bound before the first start issues its one-time keys: a port in use stops
  // the start before anything is used up, and the next start prints the keys.
  const stopMetrics = cluster.isWorker
    ? async () => {}
    : await serveMetrics(
        config,
        { contentType: registry.contentType, scrape: () => registry.metrics() },
        logger,
      );
  const first = prepare ? await bootstrap(store, services.keys) : null;
  const dispatchKey = first?.sandboxKey ? await issueSandboxDispatchKey(services.keys) : null;
  if (first) printFirstStart(first, dispatchKey);
  const agentKey = first ? await sandboxKeyOf(store) : null;
  await services.pool.load();
  // The sandbox's sites and maintenance plans, once (sim/sandbox-maintenance.ts): by the process that
  // prepared the store, or under a multi-process server by its first worker (they are made by the
  // operations, which the primary does not run).
  if (prepare || cluster.worker?.id === 1) {
    await seedSandboxMaintenance(services).catch((err) =>
      logger.error({ err }, "seeding the sandbox's sites and plans failed"),
    );
  }

  const app = await buildApp(services, { logger });
  services.pool.startRefresh(config.POOL_REFRESH_MS, (err) => app.log.error({ err }, "pool refresh failed"));
  services.doNotDispatch.startRefresh(config.POOL_REFRESH_MS, (err) =>
    app.log.error({ err }, "do-not-dispatch refresh failed"),
  );
  services.audit.start(config.AUDIT_SEQUENCE_INTERVAL_MS);
  const sweeper = new OfferSweeper(services, logger);
  sweeper.start(); // offer deadlines
  const compliance = new ComplianceWatch(services, logger);
  compliance.start(); // the daily pool.compliance_expiring list, once a day across processes
  const slaWatch = new SlaWatch(services, logger);
  slaWatch.start(config.SLA_WATCH_INTERVAL_MS); // order.sla_at_risk / order.sla_breached, once per clock
  const maintenance = new MaintenanceGenerator(services, logger);
  maintenance.start(config.MAINTENANCE_INTERVAL_MS); // planned orders inside their horizon, overdue ones
  const sandbox = config.SANDBOX_SIMULATION ? new SandboxPlayer(services, logger) : null;
  sandbox?.start(); // the sandbox's simulated contractors
  const webhooks = createWebhookDispatcher(config, store, { logger, metrics: services.metrics });
  webhooks.start(config.WEBHOOK_INTERVAL_MS);
  const notifications = createNotificationDispatcher(services, { logger });
  notifications.start(config.NOTIFY_INTERVAL_MS); // messages to the people at the site
  const purge = setInterval(() => {
    store.idempotency
      .purgeExpired(services.now().toISOString())
      .catch((err) => app.log.error({ err }, "idempotency purge failed"));
  }, IDEMPOTENCY_PURGE_MS);
  purge.unref();

  const address = await app.listen({ port: config.PORT, host: config.HOST });
  let closing = false;
  if (cluster.isWorker) {
    // A worker whose primary is gone stops too (draining first) instead of serving unsupervised.
    process.once("disconnect", () => {
      if (!closing) process.kill(process.pid, "SIGTERM");
    });
  }
  // The optimiser's threads load now, not inside the first call's time limit.
  void services.planner.warm();
  if (first) printWelcome(first, config.PUBLIC_BASE_URL ?? address, config, agentKey);

  // A worker leaves the shutdown message to its primary ("stopping workers"), and SIGINT to it too.
  const skip: "SIGINT"[] = cluster.isWorker ? ["SIGINT"] : [];
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS, skip }, async ({ err, signal }) => {
    closing = true;
    if (err) app.log.error({ err }, "shutting down after an error");
    else if (cluster.isWorker) app.log.debug({ signal }, "worker shutting down");
    else app.log.info({ signal }, "shutting down");
    clearInterval(purge);
    services.pool.stop();
    services.doNotDispatch.stop();
    await app.close(); // stops accepting, drains in-flight requests
    await services.planner.close();
    await stopMetrics();
    await sweeper.stop();
    await compliance.stop();
    await slaWatch.stop();
    await maintenance.stop();
    await sandbox?.stop();
    await webhooks.close();
    await notifications.close();
    await services.audit.stop();
    await services.audit
      .sequence(true)
      .catch((err) => app.log.error({ err }, "final audit sequencing failed"));
    await services.limiter.close();
    await services.fetcher.close();
    await store.close(); // flushes pending group commits
  });
}

/** The primary of a multi-process server: prepares the store once, then forks and supervises. */
async function supervise(config: Config, workers: number): Promise<void> {
  if (!config.DATABASE_URL || !config.REDIS_URL) {
    throw new Error(
      `--workers ${workers} needs DATABASE_URL and REDIS_URL: several processes must share one store and one set of rate limits`,
    );
  }
  const logger = createLogger(config);
  // Bound before the first start issues its one-time keys (see serve).
  const stopMetrics = await serveMetrics(config, clusterMetricsSource(), logger);
  const store = openStore(config);
  const keys = new ApiKeyService(store, 0);
  const first = await bootstrap(store, keys);
  const dispatchKey = first.sandboxKey ? await issueSandboxDispatchKey(keys) : null;
  printFirstStart(first, dispatchKey);
  const agentKey = await sandboxKeyOf(store);
  await store.close();
  loadSigningKey(config.AUDIT_SIGNING_KEY, config.DATA_DIR); // created once here, before workers read it

  let stopping = false;
  let announced = false;
  const fork = () => cluster.fork();
  cluster.on("listening", (_worker, address) => {
    if (announced) return;
    announced = true;
    const host = address.address?.includes(":") ? `[${address.address}]` : (address.address ?? config.HOST);
    process.stdout.write(`Server listening at http://${host}:${address.port} with ${workers} workers\n`);
    printWelcome(first, config.PUBLIC_BASE_URL ?? `http://${host}:${address.port}`, config, agentKey);
  });
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) return;
    logger.error({ pid: worker.process.pid, code, signal }, "worker died; starting a replacement");
    setTimeout(fork, RESPAWN_DELAY_MS).unref();
  });
  for (let i = 0; i < workers; i++) fork();

  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS + 1000 }, async ({ signal }) => {
    stopping = true;
    logger.info({ signal }, "stopping workers");
    const exits = Object.values(cluster.workers ?? {}).map(
      (w) =>
        new Promise<void>((resolve) => {
          if (!w || w.isDead()) return resolve();
          w.once("exit", () => resolve());
          w.process.kill("SIGTERM"); // each worker drains its in-flight requests
        }),
    );
    await Promise.all(exits);
    await stopMetrics();
  });
}

async function main(): Promise<void> {
  loadEnvFile(); // workers inherit what the primary read
  const config = loadConfig();
  if (cluster.isWorker) return serve(config, false);
  const workers = workerCount(config);
  return workers > 1 ? supervise(config, workers) : serve(config, true);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `field-dispatch failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
