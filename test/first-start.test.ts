// The first start's one-time keys (the sandbox key and the sandbox dispatch-team key) are never used up
// by a start that fails: a listener that cannot be bound either stops the start before the keys exist
// (the metrics port, bound first), or the keys are printed before it fails (the API's port).

import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startChildServer } from "./helpers/child-server.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "fd-first-start-"));
  dirs.push(dir);
  return dir;
}

/** A loopback port held by this test until `close`. */
async function takenPort(): Promise<{ port: number; server: Server }> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  return { port: (server.address() as AddressInfo).port, server };
}

/** What a start that failed printed: startChildServer's refusal carries its stdout and stderr. */
async function failedStart(env: Record<string, string>): Promise<string> {
  const error = await startChildServer(env).then(
    async (server) => {
      await server.kill();
      throw new Error(`the start was expected to fail:\n${server.output()}`);
    },
    (e: unknown) => e as Error,
  );
  expect(error.message).toMatch(/server exited with 1 before listening/);
  return error.message;
}

const SANDBOX_KEY = /Your sandbox API key[^\n]*\n\s*(fsd_test_\w{36})/;
const DISPATCH_KEY = /sandbox dispatch-team key[^\n]*\n\s*(fsd_test_\w{36})/;

describe("the first start's one-time keys", () => {
  it("are not used up by a first start whose metrics port is in use: the next start prints both", async () => {
    const dir = dataDir();
    const held = await takenPort();
    try {
      const out = await failedStart({ DATA_DIR: dir, METRICS_PORT: String(held.port) });
      expect(out).toContain(`metrics listener: 127.0.0.1:${held.port} is in use`);
      expect(out).not.toMatch(/fsd_test_\w{36}/);
    } finally {
      held.server.close();
    }
    const second = await startChildServer({ DATA_DIR: dir });
    try {
      expect(second.output()).toMatch(SANDBOX_KEY);
      expect(second.output()).toMatch(DISPATCH_KEY);
    } finally {
      await second.kill();
    }
  }, 180_000);

  it("are printed by a first start whose API port is in use, before it stops, and work on the next", async () => {
    const dir = dataDir();
    const held = await takenPort();
    let out: string;
    try {
      out = await failedStart({ DATA_DIR: dir, PORT: String(held.port) });
    } finally {
      held.server.close();
    }
    expect(out).toMatch(/EADDRINUSE/);
    const key = SANDBOX_KEY.exec(out)?.[1];
    const opsKey = DISPATCH_KEY.exec(out)?.[1];
    expect(key && opsKey, out).toBeTruthy();
    const second = await startChildServer({ DATA_DIR: dir });
    try {
      expect(second.output()).not.toMatch(/fsd_test_\w{36}/);
      const quote = await fetch(`${second.baseUrl}/api/dispatch/v1/quote`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key as string },
        body: JSON.stringify({ trade: "plumbing", location: { state: "TX", zip: "78701" } }),
      });
      expect(quote.status).toBe(200);
      const session = await fetch(`${second.baseUrl}/console/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ api_key: opsKey }),
      });
      expect(await session.json()).toMatchObject({ kind: "dispatcher", livemode: false });
    } finally {
      await second.kill();
    }
  }, 180_000);
});
