// `npm run lint` step: builds the app in process (a migrated SQLite store in a temporary directory, no
// port), writes the OpenAPI document /openapi.json serves to a temporary file, and lints it with Redocly
// CLI's recommended rules (redocly.yaml says which are relaxed and why). Exits with the linter's status.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../src/config.js";
import { createServices, openStore } from "../src/services/create-services.js";
import { buildApp } from "../src/transports/http/app.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "fd-openapi-lint-"));
let status = 1;
try {
  // Only what the document depends on: the routes. The store needs its schema (the app looks up the
  // sandbox key at build), nothing seeded; the environment's database settings are ignored.
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "error", METRICS_PORT: "off" });
  const store = openStore(config);
  await store.migrate();
  const services = createServices(config, store);
  const app = await buildApp(services);
  await app.ready();
  const res = await app.inject({ method: "GET", url: "/openapi.json" });
  if (res.statusCode !== 200) throw new Error(`/openapi.json answered ${res.statusCode}`);
  const file = join(dir, "openapi.json");
  writeFileSync(file, res.body);
  await app.close();
  await services.audit.stop();
  await services.limiter.close();
  await services.fetcher.close();
  await store.close();

  const redocly = join(root, "node_modules", "@redocly", "cli", "bin", "cli.js");
  const lint = spawnSync(
    process.execPath,
    [redocly, "lint", "--config", join(root, "redocly.yaml"), "--format", "json", file],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    },
  );
  // JSON, to fail on warnings too (Redocly exits 0 on them): every rule is fixed or relaxed with a reason.
  if (lint.status !== 0 && !lint.stdout.trim().startsWith("{")) {
    throw new Error(`redocly lint failed (${lint.status}): ${lint.stderr || lint.error}`);
  }
  const report = JSON.parse(lint.stdout) as {
    totals: { errors: number; warnings: number };
    problems: Array<{
      ruleId: string;
      severity: string;
      message: string;
      location: Array<{ pointer: string }>;
    }>;
  };
  for (const p of report.problems) {
    console.error(`${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? "?"}`);
  }
  const { errors, warnings } = report.totals;
  console.log(`OpenAPI lint (Redocly, redocly.yaml): ${errors} errors, ${warnings} warnings`);
  status = lint.status === 0 && errors + warnings === 0 ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
