// The browser tests' Chromium and server: the machine's Chromium (Debian's `chromium`, or CHROMIUM_PATH)
// driven by playwright-core, headless with no background traffic, and a harness's app listening on
// 127.0.0.1 for it.

import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import axe from "axe-core";
import { type Browser, chromium, type Page } from "playwright-core";
import { build } from "vite";
import { expect } from "vitest";
import type { Harness } from "./harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];

/** Launches the machine's Chromium, each time with a fresh temporary profile (user-data-dir) of its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** Builds the console (Vite, its own config) into a fresh temporary directory; that directory. */
export async function buildConsole(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "fd-console-build-"));
  await build({
    configFile: join(ROOT, "console", "vite.config.ts"),
    logLevel: "error",
    build: { outDir: dir, emptyOutDir: true },
  });
  return dir;
}

/** Collects into `problems` what the page must never do: throw, or break its Content Security Policy. */
export function collectPageProblems(page: Page, problems: string[]): void {
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
}

/** Makes the harness's app listen on a free port of 127.0.0.1; its base URL. */
export async function listenLocally(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: "127.0.0.1" });
  const address = h.app.server.address();
  if (address === null || typeof address === "string") throw new Error("the server has no TCP address");
  return `http://127.0.0.1:${address.port}`;
}

/** Signs the console at `base` in with `key`, and waits until it is signed in. */
export async function signInConsole(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
}

/**
 * An axe-core scan of the page as it is: no serious or critical violation. The engine is evaluated through
 * the browser's debugging protocol, which the page's Content-Security-Policy does not govern.
 */
export async function expectAccessible(page: Page, view: string): Promise<void> {
  await page.evaluate(axe.source);
  const violations = await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) =>
    r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ")) })))`);
  expect(violations, `${view}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

/** The console tests' screenshots: `artifacts` (test-artifacts/console/, made if missing) and where a named
 * one goes: with UPDATE_SCREENSHOTS=1, those the docs show (`inDocs`) go to docs/screenshots/ instead. */
export function consoleShots(inDocs: Iterable<string>): {
  artifacts: string;
  shotPath: (name: string) => string;
} {
  const artifacts = join(ROOT, "test-artifacts", "console");
  mkdirSync(artifacts, { recursive: true });
  const docs = new Set(inDocs);
  return {
    artifacts,
    shotPath: (name) =>
      join(
        process.env.UPDATE_SCREENSHOTS && docs.has(name) ? join(ROOT, "docs", "screenshots") : artifacts,
        `${name}.png`,
      ),
  };
}
