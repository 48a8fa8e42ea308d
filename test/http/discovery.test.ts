// The published documents: each path, status and content type; OpenAPI valid as 3.1 with every
// operation and a valid example; YAML and JSON equal; and every operation of the registry present in
// OpenAPI, MCP, the agent card and llms-full.txt (so a new operation cannot be left out of one).

import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { servedToAgents } from "../../src/operations/kernel/operation.js";
import { OPERATIONS } from "../../src/operations/registry.js";
import { DOCUMENTS, SELF_REPORTED } from "../../src/transports/discovery/documents.js";
import { negotiate } from "../../src/transports/http/discovery-routes.js";
import { mcpTools } from "../../src/transports/mcp.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ VENDOR_LICENSE: "CSLB #1012345 (C-36 plumbing), verify at the state board" });
});
afterAll(() => h.close());

const get = (url: string, headers: Record<string, string> = {}) => h.get(url, headers);

describe("discovery documents", () => {
  it("answers every listed document with 200 and its content type, and an unknown path with 404", async () => {
    for (const doc of DOCUMENTS) {
      const res = await get(doc.path);
      expect(res.statusCode, doc.path).toBe(200);
      expect(res.headers["content-type"], doc.path).toContain(doc.type.split(";")[0]);
      expect(res.body.length, doc.path).toBeGreaterThan(50);
    }
    for (const path of ["/llms.txt", "/llms-full.txt", "/ai.txt"]) {
      expect(String((await get(path)).headers["content-type"])).toMatch(/^text\/plain/);
    }
    expect((await get("/.well-known/nothing-here.json")).statusCode).toBe(404);
    expect((await get("/llms-fuller.txt")).statusCode).toBe(404);
  });

  it("publishes a valid OpenAPI 3.1 document with the contract's operation ids, key scheme and problem errors", async () => {
    const doc = (await get("/openapi.json")).json();
    const result = await new Validator().validate(doc);
    expect(result.valid, JSON.stringify(result.errors)).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    expect(doc.components.securitySchemes["x-api-key"]).toEqual({
      type: "apiKey",
      in: "header",
      name: "x-api-key",
      description: expect.stringContaining("sandbox key"),
    });
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      (p) => Object.values(p).map((o) => o.operationId),
    );
    for (const id of [
      "dispatchQuote",
      "dispatchOrder",
      "dispatchEvals",
      "dispatchIndex",
      "agenticCommerceProbe",
    ]) {
      expect(ids).toContain(id);
    }
    type Response = { $ref?: string; content?: Record<string, { schema: unknown }> };
    for (const path of Object.values(
      doc.paths as Record<string, Record<string, { responses: Record<string, Response> }>>,
    )) {
      for (const op of Object.values(path)) {
        for (const [status, answer] of Object.entries(op.responses)) {
          // Successes, and a download's 304 Not Modified (no body), are not errors.
          if (Number(status) < 400) continue;
          // An error is one of the shared answers of components.responses.
          const response: Response = answer.$ref
            ? doc.components.responses[answer.$ref.replace("#/components/responses/", "")]
            : answer;
          expect(JSON.stringify(response.content)).toMatch(/Problem|problem/);
        }
      }
    }
  });

  it("gives every operation an example that validates against its own schema, in OpenAPI too", async () => {
    const doc = (await get("/openapi.json")).json();
    for (const op of OPERATIONS) {
      expect(op.input.safeParse(op.example).success, op.id).toBe(true);
      const entry = doc.paths[op.http.path.replace(/:([a-z_]+)/g, "{$1}")][op.http.method.toLowerCase()];
      const shown =
        op.http.input === "body"
          ? entry.requestBody.content["application/json"].example
          : Object.fromEntries(
              (entry.parameters ?? [])
                .filter((p: { example?: unknown }) => p.example !== undefined)
                .map((p: { name: string; example: unknown }) => [p.name, p.example]),
            );
      expect(shown, op.id).toEqual(op.example);
    }
  });

  it("serves the same OpenAPI document as YAML, its type negotiated from Accept", async () => {
    const json = (await get("/openapi.json")).json();
    for (const accept of ["text/yaml", "application/yaml", "application/x-yaml", "text/plain"]) {
      const res = await get("/openapi.yaml", { accept });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(new RegExp(`^${accept}`));
      expect(parseYaml(res.body)).toEqual(json);
    }
    expect((await get("/openapi.yaml")).headers["content-type"]).toMatch(/^application\/yaml/);
    expect(
      (await get("/openapi.yaml", { accept: "text/html, text/*;q=0.5" })).headers["content-type"],
    ).toMatch(/^text\/yaml/);
    const refused = await get("/openapi.yaml", { accept: "application/json" });
    expect(refused.statusCode).toBe(406);
    expect(refused.json().code).toBe("not_acceptable");
    expect(
      negotiate("application/x-yaml;q=0.9, text/plain", [
        "application/yaml",
        "text/plain",
        "application/x-yaml",
      ]),
    ).toBe("text/plain");
  });

  it("lists every operation of the registry in OpenAPI, MCP, the agent card and llms-full.txt", async () => {
    const openapi = JSON.stringify((await get("/openapi.json")).json());
    const card = (await get("/.well-known/agent-card.json")).json() as { skills: Array<{ id: string }> };
    const full = (await get("/llms-full.txt")).body;
    const mcpCard = (await get("/mcp.json")).json() as { tools: Array<{ name: string }> };
    const tools = mcpTools().map((t) => t.name);
    for (const op of OPERATIONS) {
      expect(openapi, op.id).toContain(`"operationId":"${op.id}"`);
      expect(full, op.name).toContain(`## ${op.name}\n`);
      // A stream or an upload (REST only) is no agent's tool or skill; a download is.
      if (!servedToAgents(op)) {
        expect(tools, op.name).not.toContain(op.name);
        expect(card.skills.map((s) => s.id)).not.toContain(op.name);
        continue;
      }
      expect(tools, op.name).toContain(op.name);
      expect(
        mcpCard.tools.map((t) => t.name),
        op.name,
      ).toContain(op.name);
      expect(
        card.skills.map((s) => s.id),
        op.name,
      ).toContain(op.name);
      expect(full, op.name).toContain(`## ${op.name}\n`);
      expect(full, op.name).toContain(JSON.stringify(op.example, null, 2));
    }
  });

  it("writes llms.txt in the llms.txt format, and labels the contract's figures as self-reported", async () => {
    const llms = (await get("/llms.txt")).body;
    const lines = llms.split("\n");
    expect(lines[0]).toMatch(/^# \S/);
    expect(lines.find((l) => l.startsWith("> "))).toBeTruthy();
    expect(llms).toMatch(/^## Operations$/m);
    expect(llms).toMatch(/^- \[dispatch\.quote\]\(http[^)]+\): /m);
    for (const path of ["/llms-full.txt", "/.well-known/vendor-trust.json"]) {
      const body = (await get(path)).body;
      expect(body).toContain("340");
      expect(body).toContain("Self-reported estimates");
      expect(body).toContain("/api/dispatch/analytics/evals");
    }
    expect(SELF_REPORTED.label).toMatch(/not measurements/);
  });

  it("publishes the trust posture from configuration, not_published where nothing was configured", async () => {
    const trust = (await get("/.well-known/vendor-trust.json")).json();
    expect(trust.license).toMatch(/^CSLB/);
    for (const field of ["bond", "insurance", "sla", "vendor", "contact_email"])
      expect(trust[field]).toBe("not_published");
    const keys = (await get("/api/attest/keys")).json();
    expect(trust.audit_log.keys).toEqual(keys.keys);
  });

  it("links everything from the RFC 9727 api-catalog, and indexes every interface with the build", async () => {
    const catalog = (await get("/.well-known/api-catalog")).json() as {
      linkset: Array<{
        anchor: string;
        item?: Array<{ href: string }>;
        describedby?: Array<{ href: string }>;
      }>;
    };
    const hrefs = JSON.stringify(catalog);
    for (const doc of DOCUMENTS.filter((d) => d.id !== "api_catalog"))
      expect(hrefs).toContain(`${doc.path}"`);
    expect(catalog.linkset[0]?.anchor).toMatch(/\/\.well-known\/api-catalog$/);
    const index = (await get("/.well-known/interface-index.json")).json();
    expect(index.schema_version).toBe(2);
    expect(Date.parse(index.generated_at)).not.toBeNaN();
    expect(index.build_hash).toMatch(/^[0-9a-f]{40}$|^unknown$/);
    const paths = index.interfaces.map((i: { path: string; version: string }) => i.path);
    for (const p of ["/api/mcp", "/api/a2a", "/openapi.json", "/.well-known/agent-card.json"])
      expect(paths).toContain(p);
  });

  it("describes the server card, plugin manifest, protected-resource metadata and agents.json honestly", async () => {
    const mcp = (await get("/mcp.json")).json();
    expect(mcp.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(mcp.remotes[0]).toMatchObject({ type: "streamable-http" });
    expect(mcp.remotes[0].url).toMatch(/\/api\/mcp$/);
    const plugin = (await get("/.well-known/ai-plugin.json")).json();
    expect(plugin.api).toEqual({ type: "openapi", url: expect.stringMatching(/\/openapi\.json$/) });
    const prm = (await get("/.well-known/oauth-protected-resource")).json();
    expect(prm.resource).toMatch(/^http/);
    expect(prm.authorization_servers).toBeUndefined(); // no OAuth server: keys are x-api-key
    expect(prm.api_key).toMatchObject({ in: "header", name: "x-api-key" });
    const agents = (await get("/agents.json")).json();
    expect(agents.sources[0].path).toMatch(/\/openapi\.json$/);
    expect(agents.flows[0].actions.map((a: { operationId: string }) => a.operationId)).toEqual([
      "dispatchQuote",
      "dispatchOrder",
    ]);
  });
});
