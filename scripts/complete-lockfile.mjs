// Adds lockfile entries for platform-specific optional packages that this machine's registry does not
// serve (e.g. @biomejs/cli-win32-x64). npm records only what it could fetch, and `npm ci` then refuses
// the lockfile as "out of sync". The added entries carry os/cpu/libc, so npm skips them on this platform
// exactly as it skips any optional package for another platform. Run after every `npm install` that
// changes dependencies: `node scripts/complete-lockfile.mjs`.

import { readFileSync, writeFileSync } from "node:fs";

const PLATFORM = /-(android|darwin|linux|win32|freebsd)-(arm64|x64|ia32|arm)(-(musl|gnu|msvc))?$/;
const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const packages = lock.packages;
let added = 0;

for (const [path, entry] of Object.entries({ ...packages })) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (packages[key] || packages[`${path}/${key}`]) continue;
    const m = PLATFORM.exec(name);
    if (!m) continue;
    const [, os, cpu, , libc] = m;
    packages[key] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(os === "linux" ? { libc: [libc === "musl" ? "musl" : "glibc"] } : {}),
      optional: true,
      os: [os],
    };
    added++;
  }
}

// In npm's own order (it sorts keys with localeCompare in the "en" locale, so "string_decoder" comes
// before "string-width"): a plain code-unit sort made the next `npm install` rewrite the lockfile.
const npmOrder = (a, b) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b, "en"));
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => npmOrder(a, b)));
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries`);
