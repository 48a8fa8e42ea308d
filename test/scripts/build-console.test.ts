// The console build's decision (scripts/build-console.mjs): it builds when dist/console is missing or was
// built from other inputs, and skips when nothing under console/, the service's files it imports, nor
// package-lock.json changed. Checked on a copy of the inputs in a temporary directory, without running Vite.

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

  describe("when the console imports the service's domain", () => {
    beforeEach(() => {
      write(
        "console/src/types.ts",
        'import type { OrderStatus } from "../../src/domain/orders/transitions";\nexport type { OrderStatus };',
      );
      write("console/src/views/board.tsx", 'import { URGENCIES } from "../../../src/domain/pricing";');
      write("src/domain/orders/transitions.ts", 'export const ORDER_STATUSES = ["received"] as const;');
      // Imported the service's way ("./trades.js" is trades.ts), and imported by the console only through it.
      write("src/domain/pricing.ts", 'import { TRADES } from "./trades.js";\nexport const URGENCIES = [];');
      write("src/domain/trades.ts", "export const TRADES = {};");
      write("src/domain/geo.ts", "// imported by the service only");
    });

    it("takes the files it imports, and theirs, as inputs too, and no other file of src/", () => {
      expect(consoleInputs(root)).toEqual([
        "console/index.html",
        "console/src/main.tsx",
        "console/src/types.ts",
        "console/src/views/board.tsx",
        "console/src/views/orders.tsx",
        "console/vite.config.ts",
        "package-lock.json",
        "src/domain/orders/transitions.ts",
        "src/domain/pricing.ts",
        "src/domain/trades.ts",
      ]);
    });

    for (const [what, path, text] of [
      [
        "a new order status",
        "src/domain/orders/transitions.ts",
        'export const ORDER_STATUSES = ["received", "x"];',
      ],
      [
        "a changed urgency list",
        "src/domain/pricing.ts",
        'import "./trades.js";\nexport const URGENCIES = ["a"];',
      ],
      [
        "a changed file imported by an imported one",
        "src/domain/trades.ts",
        "export const TRADES = { a: 1 };",
      ],
    ] as const) {
      it(`builds again after ${what}`, () => {
        built();
        write(path, text);
        expect(consoleBuildState(root).stale).toBe(true);
      });
    }

    it("skips after a change to a file of src/ it does not import", () => {
      built();
      write("src/domain/geo.ts", "// changed");
      expect(consoleBuildState(root).stale).toBe(false);
    });
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
