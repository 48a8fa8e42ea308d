// MCP through the official SDK client (Client + StreamableHTTPClientTransport) against the service
// listening on 127.0.0.1: every operation is a tool, listed with schemas from the registry, and calling
// each returns structuredContent that matches its outputSchema, plus the same JSON as text.

import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/operations/registry.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { exemplary, type Storefront, startStorefront } from "../helpers/storefronts.js";

let h: Harness;
let base: string;
let shop: Storefront;

async function listen(harness: Harness): Promise<string> {
  await harness.app.listen({ port: 0, host: "127.0.0.1" });
  return `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "field-dispatch-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const text = (r: CallToolResult) => (r.content[0]?.type === "text" ? r.content[0].text : "");

beforeAll(async () => {
  shop = await startStorefront(exemplary); // for agentic.readiness_probe
  h = await createHarness({
    PUBLIC_RATE_LIMIT_PER_MINUTE: "100000",
    PUBLIC_RATE_LIMIT_BURST: "100000",
    PROBE_ALLOW_PRIVATE_NETWORKS: "true",
    PROBE_ALLOWED_PORTS: String(shop.port),
  });
  // The server-side key keyed tools run under (MCP_API_KEY): an account's own key.
  (h.services.config as { MCP_API_KEY?: string }).MCP_API_KEY = await h.key("mcp-account", "test");
  base = await listen(h);
});
afterAll(async () => {
  await h.close();
  await shop.close();
});

describe("MCP tools", () => {
  it("lists every operation as a tool, with input and output schemas, under the contract's names", async () => {
    const client = await connect(`${base}/api/mcp`);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
    for (const name of ["dispatch.quote", "dispatch.order", "dispatch.evals", "dispatch.index"]) {
      expect(tools.some((t) => t.name === name)).toBe(true);
    }
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.description?.length ?? 0).toBeGreaterThan(40);
    }
    await client.close();
  });

  it("calls every tool; each result validates against the tool's outputSchema and repeats it as text", async () => {
    const client = await connect(`${base}/api/mcp`);
    const { tools } = await client.listTools(); // from here on the client itself checks outputs too
    const validator = new AjvJsonSchemaValidator();
    const called = new Set<string>();
    const call = async (name: string, args: Record<string, unknown>, as: Client = client) => {
      const result = (await as.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError, `${name}: ${text(result)}`).toBeFalsy();
      const tool = tools.find((t) => t.name === name);
      const check = validator.getValidator(tool?.outputSchema as never)(result.structuredContent);
      expect(check.valid, `${name}: ${check.errorMessage}`).toBe(true);
      expect(JSON.parse(text(result))).toEqual(result.structuredContent);
      called.add(name);
      return result.structuredContent as Record<string, unknown>;
    };
    const example = (name: string) =>
      OPERATIONS.find((o) => o.name === name)?.example as Record<string, unknown>;
    const order = await call("dispatch.order", example("dispatch.order"));
    const second = await call("dispatch.order", example("dispatch.order"));
    await h.services.audit.sequence(true);
    const size = ((await call("attest.checkpoint", {})) as { tree_size: number }).tree_size;

    // Contractor tools run under the contractor's own key, sent by its MCP client.
    const contractorClient = async (orderId: string) => {
      const [row] = await h.services.store.orders.byIds([orderId]);
      const key = await h.services.keys.issue({
        accountName: "crew",
        mode: "test",
        actor: "operator:test",
        kind: "contractor",
        contractorId: row?.contractor_id as string,
      });
      const c = await connect(`${base}/api/mcp`, { "x-api-key": key.key });
      await c.listTools();
      return c;
    };
    const first = await contractorClient(order.order_id as string);
    const offers = (await call("contractor.offers", {}, first)).offers as Array<{
      offer_id: string;
      order_id: string;
    }>;
    const offer = offers.find((o) => o.order_id === order.order_id);
    await call("contractor.accept_offer", { offer_id: offer?.offer_id }, first);
    await call("contractor.jobs", {}, first);
    await call(
      "contractor.report_status",
      { order_id: order.order_id, status: "en_route", eta_minutes: 15 },
      first,
    );
    const nte = await call(
      "contractor.request_nte",
      { order_id: order.order_id, requested_nte_cents: 60_000, reason: "corroded supply line" },
      first,
    );
    await call("dispatch.nte_decision", {
      order_id: order.order_id,
      request_id: nte.request_id,
      decision: "approve",
    });
    await call("contractor.report_status", { order_id: order.order_id, status: "on_site" }, first);
    await call(
      "contractor.report_status",
      { order_id: order.order_id, status: "completed", final_cost_cents: 52_000 },
      first,
    );
    await call("contractor.invoice", { order_id: order.order_id, amount_cents: 52_000 }, first);
    const other = await contractorClient(second.order_id as string);
    const theirs = (await call("contractor.offers", {}, other)).offers as Array<{
      offer_id: string;
      order_id: string;
    }>;
    await call(
      "contractor.decline_offer",
      { offer_id: theirs.find((o) => o.order_id === second.order_id)?.offer_id, reason: "booked" },
      other,
    );
    // Dispatcher tools run under the dispatch team's key.
    const dispatcherKey = await h.dispatcherKey("test");
    const ops = await connect(`${base}/api/mcp`, { "x-api-key": dispatcherKey });
    await ops.listTools();
    const [held] = await h.services.store.orders.byIds([order.order_id as string]);
    await call("dispatcher.orders", { limit: 5 }, ops);
    await call(
      "dispatcher.assign",
      { order_id: second.order_id, contractor_id: held?.contractor_id, reason: "asked for by name" },
      ops,
    );
    await call(
      "dispatcher.pool",
      { contractor_id: held?.contractor_id, action: "include", reason: "checked" },
      ops,
    );
    const third = await call("dispatch.order", example("dispatch.order"));
    await call("dispatcher.cancel", { order_id: third.order_id, reason: "duplicate" }, ops);
    await call("dispatch.order_cancel", { order_id: second.order_id, reason: "no longer needed" });
    // Webhooks: a secret, a default endpoint, and the deliveries of the events above.
    expect((await call("dispatch.webhooks_rotate_secret", {})).secret).toMatch(/^whsec_/);
    await call("dispatch.webhooks_set_endpoint", { url: "https://hooks.example.com/dispatch" });
    // An order placed with the endpoint set: its event has a recipient, so it is written.
    await call("dispatch.order", example("dispatch.order"));
    await h.services.store.webhooks.fanOut(1000, new Date().toISOString());
    const hooks = (await call("dispatch.webhooks_deliveries", { limit: 5 })).deliveries as Array<{
      delivery_id: string;
      endpoint_id: string;
    }>;
    expect(hooks.length).toBeGreaterThan(0);
    await call("dispatch.webhooks_redeliver", { delivery_id: hooks[0]?.delivery_id });
    await call("dispatch.webhooks_enable_endpoint", { endpoint_id: hooks[0]?.endpoint_id });
    await call("dispatch.webhooks", {});
    await first.close();
    await other.close();
    await ops.close();

    const dynamic: Record<string, Record<string, unknown>> = {
      "dispatch.order_status": { order_id: order.order_id },
      "attest.verify": { seal: order.seal },
      "attest.checkpoint_at": { tree_size: size },
      "attest.consistency": { first: 1, second: size },
      "audit.list": { order_id: order.order_id },
      "agentic.readiness_probe": { url: `${shop.origin}/` },
    };
    for (const op of OPERATIONS) {
      if (called.has(op.name)) continue;
      await call(op.name, dynamic[op.name] ?? example(op.name));
    }
    expect([...called].sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
    await client.close();
  });

  it("answers failures as isError results carrying the REST problem, with its code", async () => {
    const client = await connect(`${base}/api/mcp`);
    const bad = (await client.callTool({
      name: "dispatch.quote",
      arguments: { trade: "plumbing", location: { state: "Texas" } },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    const problem = JSON.parse(text(bad));
    expect(problem).toMatchObject({ status: 422, code: "validation_failed" });
    expect(problem.errors[0].field).toBe("location.state");
    const missing = (await client.callTool({
      name: "attest.verify",
      arguments: { seal: "seal_0000000000000000000000" },
    })) as CallToolResult;
    expect(JSON.parse(text(missing)).code).toBe("not_found");
    await expect(client.callTool({ name: "dispatch.nothing", arguments: {} })).rejects.toThrow(
      /Unknown tool/,
    );
    await client.close();
  });

  it("lists underscore names only on /api/mcp/compat, and accepts both spellings on either", async () => {
    const compat = await connect(`${base}/api/mcp/compat`);
    const { tools } = await compat.listTools();
    expect(tools.map((t) => t.name)).toContain("dispatch_quote");
    expect(tools.some((t) => t.name.includes("."))).toBe(false);
    const viaCompat = (await compat.callTool({ name: "dispatch_index", arguments: {} })) as CallToolResult;
    expect(viaCompat.isError).toBeFalsy();
    await compat.close();
    const main = await connect(`${base}/api/mcp`);
    expect((await main.listTools()).tools.some((t) => t.name.includes("_quote"))).toBe(false);
    const alias = (await main.callTool({ name: "dispatch_index", arguments: {} })) as CallToolResult;
    expect(alias.isError).toBeFalsy();
    await main.close();
  });

  it("answers GET and DELETE with 405, and refuses a foreign Origin", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${base}/api/mcp`, { method, headers: { accept: "text/event-stream" } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
    const foreign = await fetch(`${base}/api/mcp`, {
      method: "POST",
      headers: {
        origin: "http://evil.example",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { code: string }).code).toBe("forbidden_origin");
  });
});

describe("MCP without a server-side key, and its per-IP limit", () => {
  let open: Harness;
  let openBase: string;
  beforeAll(async () => {
    open = await createHarness({ AGENT_RATE_LIMIT_PER_MINUTE: "1", AGENT_RATE_LIMIT_BURST: "3" });
    openBase = await listen(open);
  });
  afterAll(() => open.close());

  it("answers keyed tools with dispatch_not_configured, serves public ones, then limits the client", async () => {
    const client = await connect(`${openBase}/api/mcp`);
    const keyed = (await client.callTool({
      name: "dispatch.quote",
      arguments: { trade: "plumbing", location: { state: "TX" } },
    })) as CallToolResult;
    expect(keyed.isError).toBe(true);
    expect(JSON.parse(text(keyed)).code).toBe("dispatch_not_configured");
    const index = (await client.callTool({ name: "dispatch.index", arguments: {} })) as CallToolResult;
    expect(index.isError).toBeFalsy();
    await client.callTool({ name: "dispatch.index", arguments: {} });
    const limited = (await client.callTool({ name: "dispatch.index", arguments: {} })) as CallToolResult;
    expect(limited.isError).toBe(true);
    expect(JSON.parse(text(limited))).toMatchObject({ code: "rate_limited", status: 429 });
    await client.close();
  });
});
