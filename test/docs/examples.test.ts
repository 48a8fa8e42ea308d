// The documentation's shell examples, run: every ```sh block of README.md and docs/*.md whose first line is
// `# example: run` runs in its own `bash -euo pipefail` against one freshly started server, with $BASE, $KEY
// and $OPS_KEY set to that server and the keys its first start printed; its exit status must be 0, and its
// `# expect: <jq filter>` and `# expect-text: <text>` lines must hold. The convention is written down in
// docs/development.md ("Runnable examples"). Also: every ```sh block that calls the service carries a marker,
// and every relative link between the pages leads to a file and heading that exist.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildServer, startChildServer } from "../helpers/child-server.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BLOCK_TIMEOUT_MS = 60_000;
const TOOLS = ["curl", "jq", "node", "openssl", "basenc", "sqlite3"];

/** README first, then the pages in name order: the order the blocks run in. */
const FILES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];

interface Block {
  file: string;
  line: number;
  marker: "run" | "not-run" | null;
  expects: string[];
  expectTexts: string[];
  script: string;
}

/** The ```sh blocks of a Markdown file (fences may be indented, inside a list item). */
function shBlocks(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i] ?? "");
    if (!open) continue;
    const indent = open[1]?.length ?? 0;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j] ?? "")) {
      body.push((lines[j] ?? "").slice(indent));
      j++;
    }
    if (open[2] === "sh") {
      const first = body[0] ?? "";
      const marker = /^# example: run\s*$/.test(first)
        ? "run"
        : /^# example: not run: \S/.test(first)
          ? "not-run"
          : null;
      const header: string[] = [];
      for (const l of body.slice(1)) {
        if (!/^# expect(-text)?: /.test(l)) break;
        header.push(l);
      }
      blocks.push({
        file,
        line: i + 1,
        marker,
        expects: header.filter((l) => l.startsWith("# expect: ")).map((l) => l.slice("# expect: ".length)),
        expectTexts: header
          .filter((l) => l.startsWith("# expect-text: "))
          .map((l) => l.slice("# expect-text: ".length)),
        script: body.join("\n"),
      });
    }
    i = j;
  }
  return blocks;
}

const BLOCKS = FILES.flatMap(shBlocks);
const RUNNABLE = BLOCKS.filter((b) => b.marker === "run");

/** The last JSON value printed on stdout: of a stdout that is all JSON values (curl's bodies run together,
 * jq's output), else of the lines from the last one where a value starts to the end. */
function lastJson(stdout: string): unknown {
  const all = spawnSync("jq", ["-c", "-s", "last"], { input: stdout, encoding: "utf8" });
  if (all.status === 0 && all.stdout.trim() !== "null") return JSON.parse(all.stdout);
  const lines = stdout.trimEnd().split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!/^[[{"]/.test(lines[i] ?? "")) continue;
    try {
      return JSON.parse(lines.slice(i).join("\n"));
    } catch {
      // not where the last value starts: look further up
    }
  }
  throw new Error(`no JSON value on stdout:\n${stdout}`);
}

/** jq's verdict on `filter` applied to `value`: its output, which the block's expectation wants "true". */
function jq(filter: string, value: unknown): string {
  const r = spawnSync("jq", ["-c", filter], { input: JSON.stringify(value), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`jq ${filter}: ${r.stderr}`);
  return r.stdout.trim();
}

// `npm run cli -- ...` runs the CLI from the sources: CI runs the tests without building dist/ first.
const PREAMBLE = `npm() {
  if [ "\${1:-}" = run ] && [ "\${2:-}" = cli ]; then
    shift 2; if [ "\${1:-}" = -- ]; then shift; fi
    node --import tsx "$FD_ROOT/src/cli/index.ts" "$@"
  else command npm "$@"; fi
}
`;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBlock(script: string, env: Record<string, string>, dir: string): Promise<Outcome> {
  const file = join(dir, `block-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(file, PREAMBLE + script);
  return new Promise((done, fail) => {
    // A process group of its own, so a block that overstays is stopped with everything it started.
    const child = spawn("bash", ["-euo", "pipefail", file], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
      fail(new Error(`still running after ${BLOCK_TIMEOUT_MS} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, BLOCK_TIMEOUT_MS);
    child.once("error", fail);
    child.once("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe("the documentation's shell examples", () => {
  let server: ChildServer | undefined;
  let dataDir = "";
  let scratch = "";
  const env: Record<string, string> = {};

  beforeAll(async () => {
    const missing = TOOLS.filter((t) => spawnSync("sh", ["-c", `command -v ${t}`]).status !== 0);
    if (missing.length > 0) throw new Error(`the examples need ${missing.join(", ")} on the PATH`);
    dataDir = mkdtempSync(join(tmpdir(), "fd-docs-"));
    scratch = mkdtempSync(join(tmpdir(), "fd-docs-blocks-"));
    server = await startChildServer({ DATA_DIR: dataDir });
    // Printed once the server listens: the sandbox key, then the dispatch team's.
    const key = (await server.waitFor(/Your sandbox API key[^\n]*\n\s*(fsd_test_\w+)/, 30_000))[1];
    const opsKey = (await server.waitFor(/sandbox dispatch-team key[^\n]*\n\s*(fsd_test_\w+)/, 30_000))[1];
    if (!key || !opsKey) throw new Error(`the first start printed no sandbox keys:\n${server.output()}`);
    Object.assign(env, {
      BASE: server.baseUrl,
      KEY: key,
      OPS_KEY: opsKey,
      DATA_DIR: dataDir,
      FD_ROOT: ROOT,
      ENV_FILE: "",
      HOST: "127.0.0.1",
      PORT: new URL(server.baseUrl).port,
    });
  }, 120_000);

  afterAll(async () => {
    await server?.kill();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("finds the blocks marked to run", () => {
    expect(RUNNABLE.length).toBeGreaterThan(20);
    expect(new Set(RUNNABLE.map((b) => b.file))).toContain("README.md");
  });

  for (const block of RUNNABLE) {
    it(`${block.file}:${block.line}`, { timeout: BLOCK_TIMEOUT_MS + 10_000 }, async () => {
      const { code, stdout, stderr } = await runBlock(block.script, env, scratch);
      const context = `${block.file}:${block.line} exited ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`;
      expect(code, context).toBe(0);
      for (const text of block.expectTexts) expect(stdout, `${context}\nwants: ${text}`).toContain(text);
      if (block.expects.length > 0) {
        const value = lastJson(stdout);
        for (const filter of block.expects)
          expect(jq(filter, value), `${context}\nwants: ${filter}`).toBe("true");
      }
    });
  }
});

describe("the documentation's shell blocks and links", () => {
  it("marks every shell block that calls the service: run, or not run with a reason", () => {
    const unmarked = BLOCKS.filter((b) => b.marker === null && /\bcurl\b|npm run cli\b/.test(b.script));
    expect(unmarked.map((b) => `${b.file}:${b.line}`)).toEqual([]);
  });

  it("leads every relative link to a page and a heading that exist", () => {
    const broken: string[] = [];
    for (const file of FILES) {
      const text = prose(readFileSync(join(ROOT, file), "utf8"));
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] ?? "";
        if (/^[a-z]+:/.test(target)) continue;
        const [path = "", anchor] = target.split("#");
        const resolved = path ? resolve(dirname(join(ROOT, file)), path) : join(ROOT, file);
        const where = `${file} -> ${target}`;
        if (!existsSync(resolved)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) {
          broken.push(`${where} (no such heading in ${relative(ROOT, resolved)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

/** A Markdown file without its fenced blocks. */
function prose(text: string): string {
  let fenced = false;
  return text
    .split("\n")
    .filter((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return false;
      }
      return !fenced;
    })
    .join("\n");
}

/** GitHub's heading anchors of a Markdown file, and its explicit `<a id>`s. */
function anchors(file: string): Set<string> {
  const text = prose(readFileSync(file, "utf8"));
  const ids = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    ids.add(
      (m[1] ?? "")
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-"),
    );
  }
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) ids.add(m[1] ?? "");
  return ids;
}
