// Every published discovery document, generated from the operation registry and the operations' zod
// schemas (nothing here restates a field by hand), plus the operator's configuration for the trust
// posture. Each takes the base URL the caller reached the service at.

import { CHECKPOINT_ORIGIN } from "../../audit/signing.js";
import type { Config } from "../../config.js";
import { IDEMPOTENCY_KEY_ARGUMENT, IDEMPOTENCY_KEY_HEADER } from "../../operations/kernel/idempotency.js";
import type { AnyOperation, Services } from "../../operations/kernel/operation.js";
import { OPERATIONS } from "../../operations/registry.js";
import { accessText, objectJsonSchema, underscoreName } from "../agent-call.js";

export const SERVICE_NAME = "field-dispatch";
export const API_VERSION = "1.0.0";
const MCP_PROTOCOL_VERSION = "2025-11-25";
export const A2A_PROTOCOL_VERSION = "1.0";
export const SUMMARY =
  "Dispatch field-service jobs (plumbing, electrical, HVAC, ...): price a job, create a work order that is " +
  "matched automatically to a contractor, track it, and read public operational metrics. The same " +
  "operations are served as a REST API, as MCP tools and as A2A skills; every decision is sealed in a " +
  "tamper-evident audit log anyone can verify.";

/** The contract's headline figures: published only as self-reported estimates, next to the measured ones. */
export const SELF_REPORTED = {
  label:
    "Self-reported estimates from the service's published contract, not measurements. Measured figures: GET /api/dispatch/analytics/evals.",
  quote_turnaround: "under 2 hours",
  completion_rate: 0.9,
  dispatch_latency_p50_ms: 340,
  human_override_rate: 0.03,
} as const;

export function restPath(op: AnyOperation): string {
  return op.http.path.replace(/:([a-z_]+)/g, "{$1}");
}

/** The documents, with their paths and content types (the api-catalog and interface index list them). */
export const DOCUMENTS = [
  { id: "openapi_json", path: "/openapi.json", type: "application/json", version: "3.1.0" },
  { id: "openapi_yaml", path: "/openapi.yaml", type: "application/yaml", version: "3.1.0" },
  { id: "llms_txt", path: "/llms.txt", type: "text/plain", version: "1" },
  { id: "llms_full_txt", path: "/llms-full.txt", type: "text/plain", version: "1" },
  { id: "ai_txt", path: "/ai.txt", type: "text/plain", version: "1" },
  { id: "agents_json", path: "/agents.json", type: "application/json", version: "0.1.0" },
  { id: "mcp_server_card", path: "/mcp.json", type: "application/json", version: MCP_PROTOCOL_VERSION },
  {
    id: "a2a_agent_card",
    path: "/.well-known/agent-card.json",
    type: "application/json",
    version: A2A_PROTOCOL_VERSION,
  },
  { id: "ai_plugin", path: "/.well-known/ai-plugin.json", type: "application/json", version: "v1" },
  {
    id: "oauth_protected_resource",
    path: "/.well-known/oauth-protected-resource",
    type: "application/json",
    version: "RFC 9728",
  },
  { id: "vendor_trust", path: "/.well-known/vendor-trust.json", type: "application/json", version: "1" },
  {
    id: "api_catalog",
    path: "/.well-known/api-catalog",
    type: 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"',
    version: "RFC 9727",
  },
  {
    id: "interface_index",
    path: "/.well-known/interface-index.json",
    type: "application/json",
    version: "2",
  },
] as const;

function fieldLines(op: AnyOperation): string[] {
  const schema = objectJsonSchema(op.input, "input") as {
    properties?: Record<string, { description?: string; type?: unknown; enum?: unknown[] }>;
    required?: string[];
  };
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return ["- (no input)"];
  return props.map(([name, p]) => {
    const type = Array.isArray(p.enum) ? `one of ${p.enum.join(", ")}` : String(p.type ?? "object");
    const required = schema.required?.includes(name) ? "required" : "optional";
    return `- \`${name}\` (${type}, ${required})${p.description ? `: ${p.description}` : ""}`;
  });
}

export function llmsTxt(base: string): string {
  const ops = OPERATIONS.map(
    (op) =>
      `- [${op.name}](${base}${restPath(op)}): ${op.summary}. \`${op.http.method} ${restPath(op)}\`, ${op.access === "public" ? "public" : op.access === "key" ? "needs a key" : op.access === "any_key" ? "needs a key of any kind" : `needs a ${op.access} key`}.`,
  );
  return [
    `# ${SERVICE_NAME}`,
    "",
    `> ${SUMMARY}`,
    "",
    "Keyed operations need an `x-api-key` header (keys are issued by the operator; `fsd_test_` keys run in the sandbox). Errors are RFC 9457 problem documents with a machine-readable `code`.",
    "",
    "## Operations",
    "",
    ...ops,
    "",
    "## Interfaces",
    "",
    `- [OpenAPI 3.1](${base}/openapi.json): every operation, its schemas and errors (also [as YAML](${base}/openapi.yaml))`,
    `- [MCP server](${base}/api/mcp): Streamable HTTP, JSON-RPC 2.0; [server card](${base}/mcp.json)`,
    `- [A2A agent card](${base}/.well-known/agent-card.json): JSON-RPC at ${base}/api/a2a`,
    `- [llms-full.txt](${base}/llms-full.txt): every operation with its inputs and an example`,
    "",
    "## Optional",
    "",
    `- [ai.txt](${base}/ai.txt): our policy for AI agents and crawlers`,
    `- [agents.json](${base}/agents.json): the quote-then-order flow`,
    `- [Vendor trust](${base}/.well-known/vendor-trust.json): license, bond, insurance and SLA posture, audit log key`,
    `- [API catalog](${base}/.well-known/api-catalog): links to all of the above (RFC 9727)`,
    "",
  ].join("\n");
}

export function llmsFullTxt(base: string): string {
  const sections = OPERATIONS.map((op) => {
    const example = JSON.stringify(op.example, null, 2);
    return [
      `## ${op.name}`,
      "",
      `${op.summary}. REST: \`${op.http.method} ${base}${restPath(op)}\` (operationId \`${op.id}\`). MCP tool \`${op.name}\` (\`${underscoreName(op.name)}\` at /api/mcp/compat); A2A skill \`${op.name}\`. ${accessText(op)}`,
      "",
      op.description,
      "",
      "Inputs:",
      "",
      ...fieldLines(op),
      "",
      ...(op.idempotent
        ? [
            `Retry-safe: send a key of 1-255 visible ASCII characters, over REST in the \`${IDEMPOTENCY_KEY_HEADER}\` header, over MCP and A2A as the \`${IDEMPOTENCY_KEY_ARGUMENT}\` argument beside the inputs. The same key and inputs return the first result again for 24 h; other inputs answer 422 \`idempotency_key_reused\`, a retry while the first is running 409 \`idempotency_request_in_progress\`.`,
            "",
          ]
        : []),
      "Example input:",
      "",
      "```json",
      example,
      "```",
      "",
    ].join("\n");
  });
  return [
    `# ${SERVICE_NAME}`,
    "",
    `> ${SUMMARY}`,
    "",
    `Base URL: ${base}. Keyed operations take the key in the \`x-api-key\` header; over MCP and A2A the server applies its own key on the caller's behalf when it has one. Rate limits answer 429 with \`Retry-After\`. Errors are RFC 9457 problem documents: \`type\`, \`title\`, \`status\`, \`detail\`, \`code\`, \`request_id\` and, for validation, \`errors[]\` with the field at fault.`,
    "",
    `Published figures (${SELF_REPORTED.label}): quote turnaround ${SELF_REPORTED.quote_turnaround}, completion ${SELF_REPORTED.completion_rate * 100}%, dispatch latency p50 ${SELF_REPORTED.dispatch_latency_p50_ms} ms, human-override rate ${SELF_REPORTED.human_override_rate * 100}%.`,
    "",
    ...sections,
  ].join("\n");
}

export function aiTxt(base: string): string {
  return [
    `# ai.txt for ${SERVICE_NAME} (${base})`,
    "# Our policy for AI agents, assistants and crawlers.",
    "",
    "Agents acting for a user are welcome. Use the interfaces made for you rather than scraping:",
    `  REST (OpenAPI):  ${base}/openapi.json`,
    `  MCP:             ${base}/api/mcp  (server card ${base}/mcp.json)`,
    `  A2A:             ${base}/api/a2a  (agent card ${base}/.well-known/agent-card.json)`,
    `  Summary:         ${base}/llms.txt and ${base}/llms-full.txt`,
    "",
    "Public operations (trade index, evals, estimate, readiness probe, audit verification) need no key and are",
    "rate limited per client IP. Quotes, orders and audit records need an API key issued by the operator;",
    "never share one key between unrelated users.",
    "",
    "Orders create real work for real contractors when made with a live key. Test keys (fsd_test_) run in the",
    "sandbox: use them while developing an agent.",
    "",
    "Crawling and indexing: the documents above may be crawled, indexed and used to answer questions about",
    "this service, including for model training. API responses carry account data: do not index or train",
    "on them.",
    "",
    "Figures in our documents marked as self-reported estimates are not measurements; measured figures are at",
    `${base}/api/dispatch/analytics/evals.`,
    "",
  ].join("\n");
}

export function agentsJson(base: string): Record<string, unknown> {
  const quote = OPERATIONS.find((o) => o.id === "dispatchQuote");
  const order = OPERATIONS.find((o) => o.id === "dispatchOrder");
  const orderSchema = order ? objectJsonSchema(order.input, "input") : {};
  const props =
    (orderSchema as { properties?: Record<string, { description?: string; type?: string }> }).properties ??
    {};
  const required = (orderSchema as { required?: string[] }).required ?? [];
  return {
    agentsJson: "0.1.0",
    info: { title: SERVICE_NAME, version: API_VERSION, description: SUMMARY },
    sources: [{ id: "field_dispatch", path: `${base}/openapi.json` }],
    overrides: [],
    flows: [
      {
        id: "quote_then_order",
        title: "Quote a job, then order it",
        description:
          "Price a field-service job and see the contractor that would be matched (dispatchQuote), then create " +
          "the work order with a description of the problem (dispatchOrder). Both need an API key.",
        actions: [
          { id: "quote", sourceId: "field_dispatch", operationId: quote?.id ?? "dispatchQuote" },
          { id: "order", sourceId: "field_dispatch", operationId: order?.id ?? "dispatchOrder" },
        ],
        links: ["trade", "location", "urgency", "nte_cents"].flatMap((field) => [
          {
            origin: { fieldPath: `parameters.${field}` },
            target: { actionId: "quote", fieldPath: `requestBody.${field}` },
          },
          {
            origin: { fieldPath: `parameters.${field}` },
            target: { actionId: "order", fieldPath: `requestBody.${field}` },
          },
        ]),
        fields: {
          parameters: Object.entries(props).map(([name, p]) => ({
            name,
            description: p.description ?? name,
            required: required.includes(name),
            type: p.type ?? "object",
          })),
          responses: {
            success: {
              type: "object",
              description:
                "The order: order_id, status, the masked contractor reference, status_url and the seals.",
            },
          },
        },
      },
    ],
  };
}

export function mcpServerCard(base: string, tools: Array<{ name: string; description?: string }>) {
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json",
    name: "dev.field-dispatch/field-dispatch",
    title: SERVICE_NAME,
    version: API_VERSION,
    description: "Quote, order and track field-service jobs; verify their audit records.",
    websiteUrl: base,
    remotes: [
      { type: "streamable-http", url: `${base}/api/mcp`, supportedProtocolVersions: [MCP_PROTOCOL_VERSION] },
      {
        type: "streamable-http",
        url: `${base}/api/mcp/compat`,
        supportedProtocolVersions: [MCP_PROTOCOL_VERSION],
        description: "The same tools named with underscores (dispatch_quote), for clients that refuse dots.",
      },
    ],
    authentication: {
      description:
        "None for the MCP client to quote, order and read that order: dispatch.quote, dispatch.order and dispatch.order_status run under the server's own key on the caller's behalf (MCP_API_KEY, else its sandbox key, test mode only) unless the caller sends its own x-api-key. Every other tool that needs an API key needs the caller's own x-api-key. tools/list shows the tools the caller may call.",
    },
    tools: tools.map((t) => ({ name: t.name, description: t.description })),
  };
}

export function aiPluginManifest(base: string, config: Config) {
  return {
    schema_version: "v1",
    name_for_human: "Field Dispatch",
    name_for_model: "field_dispatch",
    description_for_human: "Quote and order plumbing, electrical, HVAC and other field-service jobs.",
    description_for_model:
      "Quote field-service jobs (dispatchQuote), create work orders matched to a contractor (dispatchOrder), " +
      "read an order (dispatchOrderStatus), estimate prices (dispatchEstimate), read the trade index and " +
      "evals, and verify audit records. Keyed operations take an API key in the x-api-key header. This " +
      "manifest format is deprecated: prefer the MCP server at /api/mcp or the OpenAPI document.",
    auth: { type: "user_http", authorization_type: "custom", custom_auth_header: "x-api-key" },
    api: { type: "openapi", url: `${base}/openapi.json` },
    logo_url: `${base}/logo.svg`,
    contact_email: config.VENDOR_CONTACT_EMAIL ?? "not_published",
    legal_info_url: `${base}/.well-known/vendor-trust.json`,
  };
}

export function oauthProtectedResource(base: string) {
  return {
    resource: base,
    resource_name: SERVICE_NAME,
    resource_documentation: `${base}/llms-full.txt`,
    // Honest: there is no OAuth authorization server. Keys are operator-issued API keys in x-api-key.
    bearer_methods_supported: [],
    scopes_supported: [],
    api_key: {
      in: "header",
      name: "x-api-key",
      issued_by: "the operator, on request (keys are scoped to one account and revocable)",
      documentation: `${base}/openapi.json`,
    },
  };
}

export function vendorTrust(base: string, services: Services) {
  const { config } = services;
  const posture = (value: string | undefined) => value ?? "not_published";
  return {
    schema_version: 1,
    vendor: posture(config.VENDOR_NAME),
    contact_email: posture(config.VENDOR_CONTACT_EMAIL),
    license: posture(config.VENDOR_LICENSE),
    bond: posture(config.VENDOR_BOND),
    insurance: posture(config.VENDOR_INSURANCE),
    sla: posture(config.VENDOR_SLA),
    note: "Each value is the operator's own statement; not_published means it was not given and is unverified.",
    audit_log: {
      origin: CHECKPOINT_ORIGIN,
      keys: [services.audit.signer.published()],
      keys_url: `${base}/api/attest/keys`,
      checkpoint_url: `${base}/api/attest/checkpoint`,
      verify_url_template: `${base}/api/attest/verify/{seal}`,
    },
    self_reported_estimates: { ...SELF_REPORTED, measured_at: `${base}/api/dispatch/analytics/evals` },
  };
}

export function apiCatalog(base: string) {
  return {
    linkset: [
      {
        anchor: `${base}/.well-known/api-catalog`,
        item: [{ href: `${base}/api` }, { href: `${base}/api/mcp` }, { href: `${base}/api/a2a` }],
        describedby: DOCUMENTS.filter((d) => d.id !== "api_catalog").map((d) => ({
          href: `${base}${d.path}`,
          type: d.type,
        })),
      },
      {
        anchor: `${base}/api`,
        "service-desc": [
          { href: `${base}/openapi.json`, type: "application/vnd.oai.openapi+json;version=3.1" },
          { href: `${base}/openapi.yaml`, type: "application/vnd.oai.openapi;version=3.1" },
        ],
        "service-doc": [{ href: `${base}/llms-full.txt`, type: "text/plain" }],
        "service-meta": [{ href: `${base}/.well-known/vendor-trust.json`, type: "application/json" }],
        status: [{ href: `${base}/readyz`, type: "application/json" }],
      },
      {
        anchor: `${base}/api/mcp`,
        "service-desc": [{ href: `${base}/mcp.json`, type: "application/json" }],
        "service-doc": [{ href: `${base}/llms-full.txt`, type: "text/plain" }],
      },
      {
        anchor: `${base}/api/a2a`,
        "service-desc": [{ href: `${base}/.well-known/agent-card.json`, type: "application/json" }],
        "service-doc": [{ href: `${base}/llms-full.txt`, type: "text/plain" }],
      },
    ],
  };
}

export function interfaceIndex(generatedAt: string, buildHash: string) {
  return {
    schema_version: 2,
    generated_at: generatedAt,
    build_hash: buildHash,
    service: SERVICE_NAME,
    version: API_VERSION,
    interfaces: [
      { id: "rest", path: "/api", version: API_VERSION, description: "REST API (see openapi_json)" },
      { id: "mcp", path: "/api/mcp", version: MCP_PROTOCOL_VERSION, description: "MCP, Streamable HTTP" },
      {
        id: "mcp_compat",
        path: "/api/mcp/compat",
        version: MCP_PROTOCOL_VERSION,
        description: "MCP with underscore tool names",
      },
      { id: "a2a", path: "/api/a2a", version: A2A_PROTOCOL_VERSION, description: "A2A JSON-RPC" },
      ...DOCUMENTS.map((d) => ({ id: d.id, path: d.path, version: d.version, content_type: d.type })),
    ],
  };
}
