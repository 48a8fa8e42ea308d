// Builds the web console (Preact, no framework CSS) into dist/console with hashed asset names, served by
// the service at /console (src/transports/http/console-assets.ts). No inline script or style and no
// module-preload polyfill: the page runs under a strict Content-Security-Policy.

import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

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
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
});
