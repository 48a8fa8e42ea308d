// Runs the real service entry point (src/main.ts through tsx) as a child process on a free port, for
// tests that need a separate process: crash recovery, and later several workers.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ChildServer {
  proc: ChildProcess;
  baseUrl: string;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Everything the process printed on stderr so far. */
  errors(): string;
  /** Resolves once the process has exited and its stdout and stderr are read to the end: after it,
   * output() is everything the process ever printed. */
  closed: Promise<void>;
  /** Waits until stdout matches `pattern` and returns the match. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startChildServer(
  env: Record<string, string>,
  // A bound, not a measurement: tsx compiles the sources at each start, which takes long on a loaded machine.
  timeoutMs = 90_000,
  args: string[] = [],
  /** detached: the process leads a process group of its own (its workers join it), so that a signal can
   * reach the whole group as a terminal's Ctrl-C does: `process.kill(-proc.pid, "SIGINT")`. */
  options: { detached?: boolean } = {},
): Promise<ChildServer> {
  const proc = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    detached: options.detached ?? false,
    // VALIDATE_RESPONSES: a response that does not match its operation's output schema answers 500.
    // ENV_FILE empty: a developer's .env in the checkout never reaches a test server.
    env: {
      ...process.env,
      ENV_FILE: "",
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      LOG_LEVEL: "info",
      VALIDATE_RESPONSES: "true",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const closed = new Promise<void>((resolve) => proc.once("close", () => resolve()));
  proc.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  proc.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running once the test gave up on it (it would go on holding its store and port).
      proc.kill("SIGKILL");
      reject(new Error(`server did not start in time:\n${out}\n${err}`));
    }, timeoutMs);
    const check = () => {
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        proc.stdout?.off("data", check);
        resolve(m[1]);
      }
    };
    proc.stdout?.on("data", check);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  return {
    proc,
    baseUrl,
    output: () => out,
    errors: () => err,
    closed,
    async waitFor(pattern, waitMs = 10_000) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const m = pattern.exec(out);
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`no ${pattern} in output:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async kill(signal: NodeJS.Signals = "SIGTERM") {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, "exit");
      proc.kill(signal);
      await exited;
    },
  };
}
