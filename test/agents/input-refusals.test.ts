// What REST refuses, the agent transports refuse the same way, through the official SDK clients: a NUL
// in a string argument is the tool's / skill's 422 validation_failed naming the field; a lone surrogate
// never reaches the operation, since the JSON-RPC body carrying it is not I-JSON (HTTP 400, a JSON-RPC
// parse error -32700 whose message names invalid_json).

import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type Message, Message as MessageCodec, type SendMessageRequest } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, validOrder } from "../helpers/harness.js";

let h: Harness;
let base: string;

beforeAll(async () => {
  h = await createHarness();
  (h.services.config as { MCP_API_KEY?: string }).MCP_API_KEY = await h.key("agent-refusals", "test", {
    ratePerMinute: 100_000,
    burst: 100_000,
  });
  await h.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h.close();
});

const withNul = () => validOrder({ location: { state: "TX", city: "Aus\u0000tin" } });
const withLoneSurrogate = () => validOrder({ description: "x\ud800y" });

describe("MCP tools/call", () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: "field-dispatch-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
  });
  afterAll(async () => {
    await client.close();
  });

  it("answers a NUL in a string argument with the 422 problem naming the field", async () => {
    const result = (await client.callTool({
      name: "dispatch.order",
      arguments: withNul(),
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    const problem = JSON.parse(result.content[0]?.type === "text" ? result.content[0].text : "{}");
    expect(problem).toMatchObject({ status: 422, code: "validation_failed" });
    expect(problem.errors).toEqual([{ field: "location.city", message: expect.stringContaining("U+0000") }]);
  });

  it("answers a ZIP that exists nowhere with the 422 problem naming location.zip, as REST does", async () => {
    const result = (await client.callTool({
      name: "dispatch.quote",
      arguments: { trade: "plumbing", location: { state: "TX", zip: "00000" } },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    const problem = JSON.parse(result.content[0]?.type === "text" ? result.content[0].text : "{}");
    expect(problem).toMatchObject({ status: 422, code: "validation_failed" });
    expect(problem.errors).toEqual([expect.objectContaining({ field: "location.zip", code: "zip_unknown" })]);
  });

  it("refuses a lone surrogate in an argument with HTTP 400 invalid_json", async () => {
    const call = client.callTool({ name: "dispatch.order", arguments: withLoneSurrogate() });
    await expect(call).rejects.toMatchObject({ code: 400 });
    await expect(call).rejects.toThrow(/invalid_json.*lone surrogate.*params\/arguments\/description/);
  });
});

describe("A2A message/send", () => {
  const request = (input: unknown): SendMessageRequest => ({
    tenant: "",
    configuration: undefined,
    metadata: undefined,
    message: MessageCodec.fromJSON({
      messageId: randomUUID(),
      role: "ROLE_USER",
      parts: [{ data: { skill: "dispatch.order", input }, mediaType: "application/json" }],
    }),
  });
  const text = (result: unknown) => {
    const part = (result as Message).parts?.[0]?.content;
    return part?.$case === "text" ? part.value : "";
  };

  it("answers a NUL in a string input with the 422 problem naming the field", async () => {
    const client = await new ClientFactory().createFromUrl(base);
    const answer = text(await client.sendMessage(request(withNul())));
    expect(answer).toMatch(/^Error running dispatch\.order: validation_failed \(422\)/);
    expect(answer).toMatch(
      /Fields: location\.city: location\.city must not contain control characters.*U\+0000/,
    );
  });

  it("refuses a lone surrogate in an input with a JSON-RPC parse error naming invalid_json", async () => {
    const client = await new ClientFactory().createFromUrl(base);
    await expect(client.sendMessage(request(withLoneSurrogate()))).rejects.toThrow(
      /Parse error: invalid_json.*lone surrogate/,
    );
  });
});
