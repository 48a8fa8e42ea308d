// Serves the discovery documents. Each is generated once per base URL (they depend on nothing else that
// changes while the process runs) and answered with its content type.

import { readFileSync } from "node:fs";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { stringify } from "yaml";
import { ApiError } from "../../errors.js";
import type { Services } from "../../operations/kernel/operation.js";
import { OPERATIONS } from "../../operations/registry.js";
import {
  agentsJson,
  aiPluginManifest,
  aiTxt,
  apiCatalog,
  DOCUMENTS,
  interfaceIndex,
  llmsFullTxt,
  llmsTxt,
  oauthProtectedResource,
  restPath,
  vendorTrust,
} from "../discovery/documents.js";
import { type Precompressed, precompressed } from "./precompressed.js";
import { sendProblem } from "./problem-reply.js";

const YAML_TYPES = ["application/yaml", "text/yaml", "application/x-yaml", "text/plain"];

/** The media type to answer from an Accept header, among `offered` (first is the default); null: none fits. */
export function negotiate(accept: string | undefined, offered: string[]): string | null {
  if (!accept?.trim()) return offered[0] ?? null;
  const ranges = accept
    .split(",")
    .map((part, order) => {
      const [type = "", ...params] = part.trim().toLowerCase().split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      return { type: type.trim(), q: q ? Number(q.slice(2)) : 1, order };
    })
    .filter((r) => r.type && Number.isFinite(r.q) && r.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
  for (const range of ranges) {
    if (range.type === "*/*") return offered[0] ?? null;
    if (range.type.endsWith("/*")) {
      const family = range.type.slice(0, -1);
      const match = offered.find((o) => o.startsWith(family));
      if (match) return match;
      continue;
    }
    if (offered.includes(range.type)) return range.type;
  }
  return null;
}

/** The release in use: BUILD_HASH, else the git commit checked out next to the code, else "unknown". */
function buildHash(configured: string | undefined): string {
  if (configured) return configured;
  try {
    const git = new URL("../../../../.git/", import.meta.url);
    const head = readFileSync(new URL("HEAD", git), "utf8").trim();
    if (!head.startsWith("ref: ")) return head;
    const ref = head.slice(5);
    try {
      return readFileSync(new URL(ref, git), "utf8").trim();
    } catch {
      const packed = readFileSync(new URL("packed-refs", git), "utf8");
      const line = packed.split("\n").find((l) => l.endsWith(` ${ref}`));
      return line?.split(" ")[0] ?? "unknown";
    }
  } catch {
    return "unknown";
  }
}

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#1f4e79"/><path d="M18 44V20h24v6H25v5h14v6H25v7z" fill="#fff"/></svg>`;

export function registerDiscovery(
  app: FastifyInstance,
  services: Services,
  baseUrlOf: (request: FastifyRequest) => string,
  extra: {
    agentCard: (base: string) => unknown;
    mcpCard: (base: string) => unknown;
  },
): void {
  const generatedAt = services.now().toISOString();
  const hash = buildHash(services.config.BUILD_HASH);
  const cache = new Map<string, string>();
  /** One document per (path, base URL), serialised once. */
  const once = (key: string, base: string, make: () => unknown): string => {
    const k = `${key} ${base}`;
    let text = cache.get(k);
    if (text === undefined) {
      const doc = make();
      text = typeof doc === "string" ? doc : JSON.stringify(doc, null, 2);
      if (cache.size > 500) cache.clear(); // bounded: a client choosing Host headers cannot grow it forever
      cache.set(k, text);
    }
    return text;
  };
  const serve = (path: string, type: string, make: (base: string) => unknown) => {
    app.get(path, { schema: { hide: true }, config: { operation: "discovery" } }, (request, reply) => {
      const base = baseUrlOf(request);
      reply.type(type).header("cache-control", "public, max-age=300");
      return reply.send(once(path, base, () => make(base)));
    });
  };

  const openApi = (): Record<string, unknown> => withExamples(app.swagger() as unknown as OpenApiDoc);
  // Compact, with a strong ETag and compressed once: made on the first request (not at start, which
  // every test harness would pay for) and never again.
  let openApiJson: Precompressed | undefined;
  app.get(
    "/openapi.json",
    { schema: { hide: true }, config: { operation: "discovery" } },
    (request, reply) => {
      openApiJson ??= precompressed(JSON.stringify(openApi()), "application/json", "public, max-age=300");
      return openApiJson.send(request, reply);
    },
  );
  app.get(
    "/openapi.yaml",
    { schema: { hide: true }, config: { operation: "discovery" } },
    (request, reply) => {
      const type = negotiate(request.headers.accept, YAML_TYPES);
      if (!type) {
        return sendProblem(
          request,
          reply,
          new ApiError(
            "not_acceptable",
            `/openapi.yaml is served as ${YAML_TYPES.join(", ")}; /openapi.json as JSON.`,
          ),
        );
      }
      reply
        .type(`${type}; charset=utf-8`)
        .header("vary", "Accept")
        .header("cache-control", "public, max-age=300");
      return reply.send(
        once("/openapi.yaml", "", () => stringify(openApi(), { aliasDuplicateObjects: false })),
      );
    },
  );
  serve("/llms.txt", "text/plain; charset=utf-8", llmsTxt);
  serve("/llms-full.txt", "text/plain; charset=utf-8", llmsFullTxt);
  serve("/ai.txt", "text/plain; charset=utf-8", aiTxt);
  serve("/agents.json", "application/json", agentsJson);
  serve("/mcp.json", "application/json", extra.mcpCard);
  serve("/.well-known/agent-card.json", "application/json", extra.agentCard);
  serve("/.well-known/ai-plugin.json", "application/json", (base) => aiPluginManifest(base, services.config));
  serve("/.well-known/oauth-protected-resource", "application/json", oauthProtectedResource);
  serve("/.well-known/vendor-trust.json", "application/json", (base) => vendorTrust(base, services));
  serve(
    "/.well-known/api-catalog",
    DOCUMENTS.find((d) => d.id === "api_catalog")?.type ?? "application/linkset+json",
    apiCatalog,
  );
  serve("/.well-known/interface-index.json", "application/json", () => interfaceIndex(generatedAt, hash));
  serve("/logo.svg", "image/svg+xml", () => LOGO);
}

type OpenApiDoc = {
  paths?: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content?: Record<string, { example?: unknown }> };
        parameters?: Array<{ name: string; example?: unknown }>;
      }
    >
  >;
};

/** The OpenAPI document with each operation's example on its request body or parameters. */
function withExamples(source: OpenApiDoc): Record<string, unknown> {
  const doc = structuredClone(source) as OpenApiDoc;
  for (const op of OPERATIONS) {
    const entry = doc.paths?.[restPath(op)]?.[op.http.method.toLowerCase()];
    if (!entry) continue;
    const example = op.example as Record<string, unknown>;
    if (op.http.input === "body") {
      const media = entry.requestBody?.content?.["application/json"];
      if (media) media.example = example;
    } else {
      for (const p of entry.parameters ?? []) if (p.name in example) p.example = example[p.name];
    }
  }
  return doc as Record<string, unknown>;
}
