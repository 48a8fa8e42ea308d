// Idempotency over MCP and A2A, through the official SDK clients: dispatch.order's idempotency_key
// argument replays the first result for the same arguments, refuses other arguments, and makes one order
// however many concurrent calls share it; in process on SQLite, and across two server processes on one
// PostgreSQL (when TEST_DATABASE_URL is set).

import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Message, Message as MessageCodec } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyService } from "../../src/auth/api-key-service.js";
import { OPERATIONS } from "../../src/operations/registry.js";
import { openPostgresStore } from "../../src/storage/postgres.js";
import { type ChildServer, startChildServer } from "../helpers/child-server.js";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";
import { admin, postgresUrl, runSchemaPrefix } from "../helpers/test-store.js";

type Outcome =
  | { ok: true; order: Record<string, unknown>; replayed: boolean }
  | { ok: false; status: number; code: string; fields: string[] };

/** One way an agent calls dispatch.order: MCP's tools/call or A2A's SendMessage, with its own key. */
interface AgentClient {
  order(args: Record<string, unknown>): Promise<Outcome>;
  call(name: string, args: Record<string, unknown>): Promise<Outcome>;
  close(): Promise<void>;
}

async function mcpClient(base: string, apiKey: string): Promise<AgentClient> {
  const client = new Client({ name: "field-dispatch-idempotency-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), {
      requestInit: { headers: { "x-api-key": apiKey } },
    }),
  );
  await client.listTools(); // so the client checks every result against the tool's outputSchema
  const call = async (name: string, args: Record<string, unknown>): Promise<Outcome> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const text = result.content[0]?.type === "text" ? result.content[0].text : "";
    if (result.isError) {
      const problem = JSON.parse(text) as { status: number; code: string; errors?: Array<{ field: string }> };
      return {
        ok: false,
        status: problem.status,
        code: problem.code,
        fields: (problem.errors ?? []).map((e) => e.field),
      };
    }
    expect(JSON.parse(text)).toEqual(result.structuredContent);
    return {
      ok: true,
      order: result.structuredContent as Record<string, unknown>,
      replayed: result._meta?.["field-dispatch/idempotent-replayed"] === true,
    };
  };
  return { call, order: (args) => call("dispatch.order", args), close: () => client.close() };
}

async function a2aClient(base: string, apiKey: string): Promise<AgentClient> {
  const client = await new ClientFactory().createFromUrl(base);
  const call = async (skill: string, input: Record<string, unknown>): Promise<Outcome> => {
    const message = (await client.sendMessage(
      {
        tenant: "",
        configuration: undefined,
        metadata: undefined,
        message: MessageCodec.fromJSON({
          messageId: randomUUID(),
          role: "ROLE_USER",
          parts: [{ data: { skill, input }, mediaType: "application/json" }],
        }),
      },
      { serviceParameters: { "x-api-key": apiKey } },
    )) as Message;
    const part = message.parts?.[0]?.content;
    if (part?.$case === "data") {
      return {
        ok: true,
        order: part.value as Record<string, unknown>,
        replayed: message.metadata?.idempotent_replayed === true,
      };
    }
    // "Error running <skill>: <code> (<status>). <detail> Fields: <field>: <message>; ..."
    const text = part?.$case === "text" ? part.value : "";
    const m = /: ([a-z_]+) \((\d{3})\)\./.exec(text);
    expect(m, text).not.toBeNull();
    const fields = /Fields: (.*)\.$/.exec(text)?.[1]?.split("; ") ?? [];
    return {
      ok: false,
      code: m?.[1] ?? "",
      status: Number(m?.[2]),
      fields: fields.map((f) => f.slice(0, f.indexOf(":"))),
    };
  };
  return { call, order: (args) => call("dispatch.order", args), close: async () => {} };
}

const TRANSPORTS = [
  ["MCP", mcpClient],
  ["A2A", a2aClient],
] as const;

function orderOf(outcome: Outcome): Record<string, unknown> {
  expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
  return outcome.ok ? outcome.order : {};
}

/** An order's arguments with a description of its own, so the store can count that order's rows. */
function orderArgs(tag: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return validOrder({ description: `Idempotency ${tag} ${randomUUID()}`, ...overrides });
}

describe("idempotency_key in the agents' documents", () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await createHarness();
    await h.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });

  it("lists idempotency_key, optional, only on dispatch.order's MCP inputSchema", async () => {
    const client = new Client({ name: "field-dispatch-idempotency-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
    const { tools } = await client.listTools();
    await client.close();
    const withKey = tools.filter((t) => t.inputSchema.properties?.idempotency_key !== undefined);
    expect(withKey.map((t) => t.name)).toEqual(["dispatch.order"]);
    expect(OPERATIONS.filter((o) => o.idempotent).map((o) => o.name)).toEqual(["dispatch.order"]);
    const schema = withKey[0]?.inputSchema;
    expect(schema?.properties?.idempotency_key).toMatchObject({
      type: "string",
      minLength: 1,
      maxLength: 255,
    });
    expect(schema?.required).not.toContain("idempotency_key");
    // The operation's own fields are all still there.
    expect(Object.keys(schema?.properties ?? {})).toEqual(
      expect.arrayContaining(["trade", "location", "description", "urgency", "callback_url"]),
    );
  });

  it("describes idempotency_key in dispatch.order's agent-card skill only", async () => {
    const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as {
      skills: Array<{ id: string; description: string }>;
    };
    const mentioning = card.skills.filter((s) => s.description.includes("idempotency_key"));
    expect(mentioning.map((s) => s.id)).toEqual(["dispatch.order"]);
    expect(mentioning[0]?.description).toMatch(/idempotency_key\? \(Optional retry key, 1-255 visible ASCII/);
  });

  it("documents the Idempotency-Key header in OpenAPI only on the idempotent operation", async () => {
    const doc = (await h.get("/openapi.json")).json() as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
    };
    const withHeader = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) =>
          (op.parameters ?? []).some((p) => p.in === "header" && p.name === "idempotency-key"),
        )
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(withHeader).toEqual([`POST ${ORDER_PATH}`]);
  });
});

describe.each(TRANSPORTS)("idempotency_key over %s (SQLite, in process)", (_name, connect) => {
  let h: Harness;
  let base: string;
  let key: string;
  let accountId: string;
  let agent: AgentClient;

  beforeAll(async () => {
    h = await createHarness({ AGENT_RATE_LIMIT_PER_MINUTE: "100000", AGENT_RATE_LIMIT_BURST: "100000" });
    await h.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    key = await h.key("idem-agent", "test", { ratePerMinute: 100_000, burst: 100_000 });
    accountId = (await h.services.keys.authenticate(key)).accountId;
    agent = await connect(base, key);
  });
  afterAll(() => agent.close());

  const ordersWith = async (description: unknown) =>
    (await h.services.store.orders.list({ accountId, livemode: false, limit: 1000 })).filter(
      (o) => o.description === description,
    );

  it("replays the first result for the same key and arguments (in any key order), and makes one order", async () => {
    const args = orderArgs("replay");
    const first = await agent.order({ ...args, idempotency_key: "agent-replay-1" });
    const order = orderOf(first);
    expect(first.ok && first.replayed).toBe(false);
    const reordered = Object.fromEntries(
      Object.entries({ idempotency_key: "agent-replay-1", ...args }).reverse(),
    );
    const second = await agent.order(reordered);
    expect(orderOf(second)).toEqual(order);
    expect(second.ok && second.replayed).toBe(true);
    expect(await ordersWith(args.description)).toHaveLength(1);
    // The fingerprint and the audit record cover the order's input, not the key beside it.
    const audit = await h.get(`/api/audit?order_id=${order.order_id}&kind=order.created`, {
      "x-api-key": key,
    });
    // The caller reads them as its own disclosures (a contractor is shown neither).
    const created = (audit.json() as { records: Array<{ disclosed: Record<string, unknown> }> }).records[0]
      ?.disclosed;
    expect(created?.idempotency_key).toBe("agent-replay-1");
    expect(created?.input).toEqual(args);
  });

  it("makes a new order for each call without a key", async () => {
    const args = orderArgs("no-key");
    const a = orderOf(await agent.order(args));
    const b = orderOf(await agent.order(args));
    expect(a.order_id).not.toBe(b.order_id);
    expect(await ordersWith(args.description)).toHaveLength(2);
  });

  it("answers 422 idempotency_key_reused, on the field idempotency_key, for other arguments", async () => {
    const args = orderArgs("reused");
    orderOf(await agent.order({ ...args, idempotency_key: "agent-reused-1" }));
    const other = await agent.order({ ...args, urgency: "urgent", idempotency_key: "agent-reused-1" });
    expect(other).toEqual({
      ok: false,
      status: 422,
      code: "idempotency_key_reused",
      fields: ["idempotency_key"],
    });
    expect(await ordersWith(args.description)).toHaveLength(1);
  });

  it("refuses a malformed idempotency_key with 400 on that field, and makes no order", async () => {
    const args = orderArgs("malformed");
    for (const bad of ["k".repeat(256), "", "has space", 42, null]) {
      expect(await agent.order({ ...args, idempotency_key: bad }), String(bad)).toEqual({
        ok: false,
        status: 400,
        code: "invalid_request",
        fields: ["idempotency_key"],
      });
    }
    expect(await ordersWith(args.description)).toHaveLength(0);
  });

  it("treats idempotency_key on an operation that is not idempotent as an unknown field", async () => {
    const quote = await agent.call("dispatch.quote", {
      trade: "plumbing",
      location: { state: "TX", zip: "78701" },
      idempotency_key: "not-here",
    });
    expect(quote).toMatchObject({
      ok: false,
      status: 422,
      code: "validation_failed",
      fields: ["idempotency_key"],
    });
  });

  it("makes exactly one order from 20 concurrent calls with one key: each answers it or 409", async () => {
    const args = orderArgs("concurrent");
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => agent.order({ ...args, idempotency_key: "agent-race-1" })),
    );
    const ids = new Set(outcomes.flatMap((o) => (o.ok ? [o.order.order_id] : [])));
    expect(ids.size).toBe(1);
    for (const o of outcomes) {
      if (!o.ok) expect(o).toMatchObject({ status: 409, code: "idempotency_request_in_progress" });
    }
    expect(await ordersWith(args.description)).toHaveLength(1);
    // Once it has finished, a retry replays that order.
    const retry = await agent.order({ ...args, idempotency_key: "agent-race-1" });
    expect(orderOf(retry).order_id).toBe([...ids][0]);
  });

  it("shares keys with REST: the Idempotency-Key header and the argument replay each other's orders", async () => {
    const args = orderArgs("rest");
    const order = orderOf(await agent.order({ ...args, idempotency_key: "agent-rest-1" }));
    const rest = await h.post(ORDER_PATH, args, { "x-api-key": key, "idempotency-key": "agent-rest-1" });
    expect(rest.statusCode).toBe(200);
    expect(rest.headers["idempotent-replayed"]).toBe("true");
    expect(rest.json()).toEqual(order);
    // And the other way round: an agent's retry replays an order made over REST.
    const restFirst = await h.post(ORDER_PATH, args, { "x-api-key": key, "idempotency-key": "rest-agent-1" });
    expect(restFirst.statusCode).toBe(200);
    const retried = await agent.order({ ...args, idempotency_key: "rest-agent-1" });
    expect(orderOf(retried)).toEqual(restFirst.json());
    expect(retried.ok && retried.replayed).toBe(true);
    expect(await ordersWith(args.description)).toHaveLength(2);
  });
});

// Two server processes on one PostgreSQL: the in-process in-flight set cannot see the other process, so
// one order per key rests on the claim in the order's own transaction.
describe.skipIf(!process.env.TEST_DATABASE_URL)("idempotency_key across two processes on PostgreSQL", () => {
  const servers: ChildServer[] = [];
  let schema: string;
  let key: string;

  beforeAll(async () => {
    schema = `${runSchemaPrefix()}idem${Math.random().toString(36).slice(2, 10)}`;
    await admin(postgresUrl(), (c) => c.query(`CREATE SCHEMA ${schema}`));
    const url = new URL(postgresUrl());
    url.searchParams.set("options", `-c search_path=${schema}`);
    const env = {
      DATABASE_URL: url.toString(),
      DATABASE_POOL_SIZE: "4",
      LOG_LEVEL: "info",
      AGENT_RATE_LIMIT_PER_MINUTE: "100000",
      AGENT_RATE_LIMIT_BURST: "100000",
      DATA_DIR: mkdtempSync(join(tmpdir(), "fd-idem-")),
    };
    const first = await startChildServer(env);
    servers.push(first);
    await first.waitFor(/fsd_test_[0-9A-Za-z]{36}/); // migrated and bootstrapped
    servers.push(await startChildServer(env));
    const store = openPostgresStore(url.toString(), { poolSize: 1, schema });
    try {
      key = (
        await new ApiKeyService(store, 0).issue({
          actor: "operator:test",
          accountName: "idem-race",
          mode: "test",
          ratePerMinute: 100_000,
          burst: 100_000,
        })
      ).key;
    } finally {
      await store.close();
    }
  }, 120_000);
  afterAll(async () => {
    for (const s of servers) await s.kill();
  });

  const countOrders = async (description: unknown) =>
    (
      await admin(postgresUrl(), (c) =>
        c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.orders WHERE description = $1`, [
          description,
        ]),
      )
    ).rows[0]?.n;

  it.each(TRANSPORTS)(
    "%s: 20 concurrent calls over both processes make one order; retries replay it, other arguments 422",
    async (name, connect) => {
      const agents = await Promise.all(servers.map((s) => connect(s.baseUrl, key)));
      try {
        const args = orderArgs(`pg-${name}`);
        const idem = `pg-race-${name}`;
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (agents[i % 2] as AgentClient).order({ ...args, idempotency_key: idem }),
          ),
        );
        const ids = new Set(outcomes.flatMap((o) => (o.ok ? [o.order.order_id] : [])));
        expect(ids.size, JSON.stringify(outcomes)).toBe(1);
        for (const o of outcomes) {
          if (!o.ok) expect(o).toMatchObject({ status: 409, code: "idempotency_request_in_progress" });
        }
        expect(await countOrders(args.description)).toBe(1);
        for (const agent of agents) {
          const retry = await agent.order({ ...args, idempotency_key: idem });
          expect(orderOf(retry).order_id).toBe([...ids][0]);
          expect(retry.ok && retry.replayed).toBe(true);
          expect(await agent.order({ ...args, urgency: "urgent", idempotency_key: idem })).toEqual({
            ok: false,
            status: 422,
            code: "idempotency_key_reused",
            fields: ["idempotency_key"],
          });
        }
        expect(await countOrders(args.description)).toBe(1);
      } finally {
        for (const agent of agents) await agent.close();
      }
    },
    60_000,
  );
});
