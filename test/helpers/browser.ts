// The browser tests' Chromium and server: the machine's Chromium (Debian's `chromium`, or CHROMIUM_PATH)
// driven by playwright-core, headless with no background traffic, and a harness's app listening on
// 127.0.0.1 for it.

import { type Browser, chromium } from "playwright-core";
import type { Harness } from "./harness.js";

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

/** Makes the harness's app listen on a free port of 127.0.0.1; its base URL. */
export async function listenLocally(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: "127.0.0.1" });
  const address = h.app.server.address();
  if (address === null || typeof address === "string") throw new Error("the server has no TCP address");
  return `http://127.0.0.1:${address.port}`;
}
