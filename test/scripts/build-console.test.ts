// The console build's decision (scripts/build-console.mjs): it builds when dist/console is missing or was
// built from other inputs, and skips when nothing under console/ nor package-lock.json changed. Checked on
// a copy of the inputs in a temporary directory, without running Vite.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { consoleBuildState, consoleInputs, STAMP } from "../../scripts/build-console.mjs";

let root: string;

const write = (path: string, text: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), text);
};

/** What a finished build leaves: the page, and the stamp of the inputs it was built from. */
const built = () => {
  const { hash } = consoleBuildState(root);
  write("dist/console/index.html", "<!doctype html>");
  write(`dist/console/${STAMP}`, `${hash}\n`);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "console-build-"));
  write("console/index.html", "<!doctype html><div id=app></div>");
  write("console/vite.config.ts", "export default {};");
  write("console/src/main.tsx", "render(<App />);");
  write("console/src/views/orders.tsx", "export const Orders = () => null;");
  write("package-lock.json", '{"lockfileVersion":3}');
  write("src/main.ts", "// the service: not an input of the console");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("console build", () => {
  it("takes every file under console/ and the lockfile as its inputs", () => {
    expect(consoleInputs(root)).toEqual([
      "console/index.html",
      "console/src/main.tsx",
      "console/src/views/orders.tsx",
      "console/vite.config.ts",
      "package-lock.json",
    ]);
  });

  it("builds when nothing was built, and skips when the inputs are those of the last build", () => {
    expect(consoleBuildState(root).stale).toBe(true);
    built();
    expect(consoleBuildState(root).stale).toBe(false);
    // A change elsewhere (the service's sources, tsc's output) is not the console's.
    write("src/main.ts", "// changed");
    write("dist/src/main.js", "// compiled");
    expect(consoleBuildState(root).stale).toBe(false);
  });

  for (const [what, change] of [
    ["a changed source", () => write("console/src/views/orders.tsx", "export const Orders = () => 1;")],
    ["a new source", () => write("console/src/views/keys.tsx", "export const Keys = () => null;")],
    ["a changed Vite config", () => write("console/vite.config.ts", "export default { base: '/' };")],
    ["a changed lockfile", () => write("package-lock.json", '{"lockfileVersion":3,"packages":{}}')],
    [
      "a file renamed",
      () => {
        rmSync(join(root, "console/src/main.tsx"));
        write("console/src/index.tsx", "render(<App />);");
      },
    ],
    ["the stamp missing", () => rmSync(join(root, "dist/console", STAMP))],
    ["the page missing", () => rmSync(join(root, "dist/console/index.html"))],
  ] as const) {
    it(`builds again after ${what}`, () => {
      built();
      change();
      expect(consoleBuildState(root).stale).toBe(true);
    });
  }
});
