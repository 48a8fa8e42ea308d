// Composition root: config -> store -> services -> HTTP transport, with graceful shutdown.

import closeWithGrace from "close-with-grace";
import { bootstrap } from "./bootstrap.js";
import { loadConfig } from "./config.js";
import { createLogger } from "./logger.js";
import { createServices, openStore } from "./services/create-services.js";
import { buildApp } from "./transports/http/app.js";

const IDEMPOTENCY_PURGE_MS = 60 * 60 * 1000;

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config);
  const store = openStore(config);
  const services = createServices(config, store, { logger });
  const first = await bootstrap(store, services.keys);
  await services.pool.load();

  const app = await buildApp(services, { logger });
  services.pool.startRefresh(config.POOL_REFRESH_MS, (err) => app.log.error({ err }, "pool refresh failed"));
  const purge = setInterval(() => {
    store
      .purgeExpiredIdempotency(new Date().toISOString())
      .catch((err) => app.log.error({ err }, "idempotency purge failed"));
  }, IDEMPOTENCY_PURGE_MS);
  purge.unref();

  const address = await app.listen({ port: config.PORT, host: config.HOST });
  const base = config.PUBLIC_BASE_URL ?? address;
  if (first.seededContractors > 0) {
    process.stdout.write(`Seeded the sandbox pool with ${first.seededContractors} contractors.\n`);
  }
  if (first.sandboxKey) {
    process.stdout.write(
      [
        "",
        "Your sandbox API key (shown once; it matches only the sandbox contractor pool):",
        `  ${first.sandboxKey}`,
        "",
        "Try a quote:",
        `  curl -s ${base}/api/dispatch/v1/quote \\`,
        "    -H 'content-type: application/json' \\",
        `    -H 'x-api-key: ${first.sandboxKey}' \\`,
        `    -d '{"trade":"plumbing","location":{"state":"TX","zip":"78701"},"urgency":"urgent"}'`,
        "",
      ].join("\n"),
    );
  }

  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ err, signal }) => {
    if (err) app.log.error({ err }, "shutting down after an error");
    else app.log.info({ signal }, "shutting down");
    clearInterval(purge);
    services.pool.stop();
    await app.close(); // stops accepting, drains in-flight requests
    await services.limiter.close();
    await store.close(); // flushes pending group commits
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `field-dispatch failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
