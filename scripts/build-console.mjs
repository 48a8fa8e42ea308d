// Builds the web console into dist/console with Vite, unless it was built from the same inputs: the
// files under console/ (sources, index.html, the Vite config, its tsconfig), the service's files they
// import (the lists of src/domain: order statuses, urgencies, trades) and theirs in turn, and
// package-lock.json (Vite's and Preact's versions). A SHA-256 of them is kept in dist/console beside the build, so `npm run cli`,
// `npm start` and `npm run bench`, which build first, skip the console when nothing in it changed; a
// changed input rebuilds it. Like `tsc -b`, it does not notice a file deleted inside dist/ by hand.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Where the stamp is kept: not served (the service serves index.html and assets/ only). */
export const STAMP = ".inputs-sha256";

/** Relative import specifiers of a module's source: `from "./x"`, `import "./x"`, `import("./x")`. */
const RELATIVE_IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;
const SOURCE = /\.(?:[cm]?[jt]sx?)$/;

/** The file an import of `specifier` from `file` loads, the way Vite finds it ("./x.js" may be x.ts), or
 * null when there is none (a word in a comment, say: the build itself fails on a real missing import). */
function resolveImport(file, specifier) {
  const target = resolve(dirname(file), specifier);
  const stem = target.replace(/\.[cm]?jsx?$/, "");
  const candidates = [target, ...[".ts", ".tsx", "/index.ts", "/index.tsx"].map((ext) => stem + ext)];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile()) ?? null;
}

/** The console's input files under `root`, as sorted paths relative to it with "/" separators: every file
 * under console/, the files outside it that its sources import (and those import, transitively), and
 * package-lock.json. */
export function consoleInputs(root) {
  const files = new Set();
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.add(path);
    }
  };
  walk(join(root, "console"));
  const pending = [...files].filter((path) => SOURCE.test(path));
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(RELATIVE_IMPORT)) {
      const target = resolveImport(file, specifier);
      if (target && !files.has(target)) {
        files.add(target);
        pending.push(target);
      }
    }
  }
  files.add(join(root, "package-lock.json"));
  return [...files].map((path) => relative(root, path).split(sep).join("/")).sort();
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
