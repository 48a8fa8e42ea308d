// Builds the web console (Preact, no framework CSS) into dist/console with hashed asset names, served by
// the service at /console (src/transports/http/console-assets.ts). No inline script or style and no
// module-preload polyfill: the page runs under a strict Content-Security-Policy. The console imports a few
// lists of the service's pure domain (src/domain: the order statuses, urgencies, trades); those modules do
// nothing when loaded, so what the console does not use of them (pricing's rate tables, the regions) is
// left out of the bundle.

import { sep } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const DOMAIN = fileURLToPath(new URL("../src/domain/", import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    rollupOptions: { treeshake: { moduleSideEffects: (id) => !id.split(sep).join("/").startsWith(DOMAIN) } },
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
});
