// The web console's budgets (issue 17), measured in headless Chromium on this machine: the board's
// JavaScript gzipped (under 150 KB; the map's code and state shapes, loaded when the map is first shown,
// measured apart), the board with 2,000 open orders shown after sign-in (under 1 s), and
// a status change made through the API shown on the open board (end to end: request, commit, event stream,
// render). Builds the console with Vite into a temporary directory and serves it from an in-process server
// on a temporary SQLite store, with the dispatch team's key.
//
//   npm run bench:console     (BENCH_CONSOLE_ORDERS=2000, BENCH_CONSOLE_CHANGES=20 by default)

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { build } from "vite";
import { bootstrap } from "../src/bootstrap.js";
import { loadConfig } from "../src/config.js";
import { createServices, openStore } from "../src/services/create-services.js";
import { buildApp } from "../src/transports/http/app.js";
import { DIST } from "./lib.js";

const ORDERS = Number(process.env.BENCH_CONSOLE_ORDERS ?? 2000);
const CHANGES = Number(process.env.BENCH_CONSOLE_CHANGES ?? 20);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ROOT = join(DIST, "..");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1] ?? Number.NaN;

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "fd-bench-console-"));
  const out = join(work, "console");
  await build({
    configFile: join(ROOT, "console", "vite.config.ts"),
    logLevel: "error",
    build: { outDir: out, manifest: true },
  });
  // The board's JavaScript: the entry chunk and what it imports statically. The map's code and its state
  // shapes are dynamic imports, fetched the first time the map is shown, and measured apart.
  const manifest = JSON.parse(readFileSync(join(out, ".vite", "manifest.json"), "utf8")) as Record<
    string,
    { file: string; isEntry?: boolean; imports?: string[] }
  >;
  const gzipped = (file: string) => gzipSync(readFileSync(join(out, file))).length;
  const board = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || board.has(chunk.file)) return;
    board.add(chunk.file);
    for (const k of chunk.imports ?? []) visit(k);
  };
  for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry) visit(key);
  const js = Object.values(manifest).filter((c) => c.file.endsWith(".js"));
  const lazy = js.filter((c) => !board.has(c.file));
  const gz = [...board].filter((f) => f.endsWith(".js")).reduce((n, f) => n + gzipped(f), 0);
  const lazyOf = (name: RegExp) =>
    lazy.filter((c) => name.test(c.file)).reduce((n, c) => n + gzipped(c.file), 0);
  const mapCode = lazyOf(/map-view/);
  const mapShapes = lazyOf(/states-10m/);

  const config = loadConfig({
    ENV_FILE: "",
    DATA_DIR: join(work, "data"),
    CONSOLE_DIR: out,
    LOG_LEVEL: "error",
    KEY_RATE_LIMIT_PER_MINUTE: "100000000",
    KEY_RATE_LIMIT_BURST: "100000000",
  });
  const store = openStore(config);
  const services = createServices(config, store);
  await bootstrap(store, services.keys);
  await services.pool.load();
  const app = await buildApp(services);
  const issue = (kind: "account" | "dispatcher") =>
    services.keys.issue({
      accountName: kind === "account" ? "bench" : "ops",
      mode: "live",
      kind,
      actor: "operator:bench",
    });
  const account = (await issue("account")).key;
  const dispatcher = (await issue("dispatcher")).key;
  // The live pool is empty: every order waits in the dispatch team's tray.
  const ids: string[] = [];
  for (let i = 0; i < ORDERS; i += 50) {
    const batch = Array.from({ length: Math.min(50, ORDERS - i) }, (_, j) =>
      app.inject({
        method: "POST",
        url: "/api/dispatch/v1/order",
        headers: { "content-type": "application/json", "x-api-key": account },
        payload: JSON.stringify({
          trade: "locksmith",
          location: { state: "CA", zip: "94103", city: "San Francisco" },
          description: `Bench job ${i + j}`,
        }),
      }),
    );
    for (const res of await Promise.all(batch)) ids.push((res.json() as { order_id: string }).order_id);
  }
  await app.listen({ port: 0, host: "127.0.0.1" });
  const port = (app.server.address() as { port: number }).port;

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/console/`);
    await page.getByLabel("API key").fill(dispatcher);
    const t0 = performance.now();
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page
      .locator("[data-order-id]")
      .nth(ORDERS - 1)
      .waitFor({ timeout: 60_000 });
    const shown = performance.now() - t0;

    const changes: number[] = [];
    for (const id of ids.slice(0, CHANGES)) {
      const t = performance.now();
      await app.inject({
        method: "POST",
        url: "/api/dispatcher/v1/orders/cancel",
        headers: { "content-type": "application/json", "x-api-key": dispatcher },
        payload: JSON.stringify({ order_id: id, reason: "bench" }),
      });
      await page.locator(`[data-order-id="${id}"][data-status="cancelled"]`).waitFor();
      changes.push(performance.now() - t);
    }
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    process.stdout.write(
      [
        `board's JavaScript: ${board.size} file(s), ${kb(gz)} gzipped (budget 150 KB)`,
        `loaded with the map: its code ${kb(mapCode)}, the state shapes ${kb(mapShapes)} gzipped (${lazy.length} lazy file(s), ${kb(lazy.reduce((n, c) => n + gzipped(c.file), 0))} in all)`,
        `board with ${ORDERS} open orders shown ${shown.toFixed(0)} ms after Sign in (budget 1000 ms)`,
        `status change through the API to the open board (${CHANGES}): median ${median(changes).toFixed(1)} ms, p95 ${p95(changes).toFixed(1)} ms`,
        "",
      ].join("\n"),
    );
  } finally {
    await browser.close();
    await app.close();
    await services.audit.stop();
    await services.limiter.close();
    await services.fetcher.close();
    await store.close();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
