// Builds the web console into dist/console with Vite, unless it was built from the same inputs: the
// files under console/ (sources, index.html, the Vite config, its tsconfig) and package-lock.json (Vite's
// and Preact's versions). A SHA-256 of them is kept in dist/console beside the build, so `npm run cli`,
// `npm start` and `npm run bench`, which build first, skip the console when nothing in it changed; a
// changed input rebuilds it. Like `tsc -b`, it does not notice a file deleted inside dist/ by hand.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Where the stamp is kept: not served (the service serves index.html and assets/ only). */
export const STAMP = ".inputs-sha256";

/** The console's input files under `root`, as sorted paths relative to it with "/" separators. */
export function consoleInputs(root) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(relative(root, path).split(sep).join("/"));
    }
  };
  walk(join(root, "console"));
  files.push("package-lock.json");
  return files.sort();
}

/** SHA-256 (hex) over each input's path and bytes, in order. */
export function consoleInputsHash(root) {
  const hash = createHash("sha256");
  for (const file of consoleInputs(root)) {
    const body = readFileSync(join(root, file));
    hash.update(`${file}\0${body.length}\0`);
    hash.update(body);
  }
  return hash.digest("hex");
}

/** Whether dist/console is missing, or was built from other inputs than those under `root` now. */
export function consoleBuildState(root) {
  const hash = consoleInputsHash(root);
  const out = join(root, "dist", "console");
  const stampPath = join(out, STAMP);
  const built = existsSync(join(out, "index.html")) && existsSync(stampPath);
  const stale = !built || readFileSync(stampPath, "utf8").trim() !== hash;
  return { stale, hash };
}

/** Builds the console under `root` when its inputs changed; returns whether it built. */
export async function buildConsole(root, { force = false } = {}) {
  const { stale, hash } = consoleBuildState(root);
  if (!stale && !force) return false;
  const { build } = await import("vite");
  await build({ configFile: join(root, "console", "vite.config.ts") });
  // Written after the build (which empties dist/console first), so a failed build leaves no stamp.
  writeFileSync(join(root, "dist", "console", STAMP), `${hash}\n`);
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  // Silent when up to date, as `tsc -b` is: the CLI's output (often piped) follows this step.
  await buildConsole(root, { force: process.argv.includes("--force") });
}
