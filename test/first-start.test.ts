// The first start's one-time keys (the sandbox key and the sandbox dispatch-team key) are never used up
// by a start that fails: a listener that cannot be bound either stops the start before the keys exist
// (the metrics port, bound first), or the keys are printed before it fails (the API's port).

import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ALL_ACCOUNTS } from "../src/audit/persistence.js";
import { bootstrap } from "../src/bootstrap.js";
import { STARTER_CHECKLISTS } from "../src/domain/orders/starter-checklists.js";
import { TRADE_CODES } from "../src/domain/trades.js";
import { startChildServer } from "./helpers/child-server.js";
import { createHarness } from "./helpers/harness.js";

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

describe("the sandbox's starter checklists", () => {
  const TEMPLATES = "/api/checklist-templates";

  it("are created once, one per trade in test mode by system:bootstrap: a second start adds none, live mode has none", async () => {
    const h = await createHarness(); // the first start
    const { store } = h.services;
    const again = await bootstrap(store, h.services.keys); // the second
    expect(again.seededChecklists).toBe(0);
    const sandbox = await store.checklists.templates({ livemode: false, includeRetired: true });
    expect(sandbox.map((t) => t.trade).sort()).toEqual([...TRADE_CODES].sort());
    for (const t of sandbox) {
      const starter = STARTER_CHECKLISTS[t.trade as keyof typeof STARTER_CHECKLISTS];
      expect(t).toMatchObject({ accountId: null, createdBy: "system:bootstrap", retiredAt: null });
      expect(t.name).toBe(starter.name);
      expect(t.items.map((i) => [i.kind, i.label])).toEqual(starter.items.map((i) => [i.kind, i.label]));
      expect(t.items.filter((i) => i.required).map((i) => i.kind)).toEqual(["yes_no"]);
    }
    expect(await store.checklists.templates({ livemode: true, includeRetired: true })).toEqual([]);
    // Sealed once, naming them.
    const seeded = await store.audit.listAudit({
      accountId: ALL_ACCOUNTS,
      livemode: false,
      kind: "pool.seeded",
      limit: 10,
    });
    const sealed = seeded.filter((r) => r.record.includes("checklist_templates"));
    expect(sealed).toHaveLength(1);
    for (const t of sandbox) expect(sealed[0]?.record).toContain(t.id);
    // As the dispatch team sees them, through the API.
    const ops = await h.dispatcherKey("test");
    const listed = (await h.get(TEMPLATES, { "x-api-key": ops })).json().templates;
    expect(listed).toHaveLength(TRADE_CODES.length);
    expect((await h.get(TEMPLATES, { "x-api-key": await h.dispatcherKey("live") })).json().templates).toEqual(
      [],
    );
  });

  it("stay retired when the dispatch team retired them: a restart brings none back", async () => {
    const h = await createHarness();
    const ops = await h.dispatcherKey("test");
    const plumbing = (await h.get(`${TEMPLATES}?trade=plumbing`, { "x-api-key": ops })).json().templates;
    expect(plumbing).toHaveLength(1);
    const retired = await h.post(`${TEMPLATES}/${plumbing[0].template_id}/retire`, {}, { "x-api-key": ops });
    expect(retired.statusCode, retired.body).toBe(200);
    expect((await bootstrap(h.services.store, h.services.keys)).seededChecklists).toBe(0);
    expect((await h.get(`${TEMPLATES}?trade=plumbing`, { "x-api-key": ops })).json().templates).toEqual([]);
    const all = (await h.get(`${TEMPLATES}?status=all`, { "x-api-key": ops })).json().templates;
    expect(all).toHaveLength(TRADE_CODES.length);
  });
});
