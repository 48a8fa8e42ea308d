// The agentic-commerce discovery documents: ACP's /.well-known/acp.json, UCP's business profile at
// /.well-known/ucp, and the other surfaces an agent may start from (A2A agent card, MCP server card,
// OAuth protected-resource metadata, agents.json).

import { type CheckResult, result } from "./scoring.js";
import { asDocument, type Document, isHttpsUrl, isRecord, jsonObject, type Site } from "./site.js";

const DATE_VERSION = /^\d{4}-\d{2}-\d{2}$/;

function found(doc: Document, detail: string) {
  return { url: doc.url, http_status: doc.status, detail };
}

/** Cache-Control's verdict for a discovery document: null when it grants a public lifetime of >= minAge. */
function cacheProblem(cacheControl: string | undefined, minAge: number): string | null {
  if (!cacheControl) return "no Cache-Control header";
  const directives = cacheControl
    .toLowerCase()
    .split(",")
    .map((d) => d.trim());
  const forbidden = directives.find((d) => d === "private" || d === "no-store" || d === "no-cache");
  if (forbidden) return `Cache-Control has ${forbidden}`;
  if (!directives.includes("public")) return "Cache-Control lacks public";
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)?.[1]).find((v) => v !== undefined);
  if (maxAge === undefined || Number(maxAge) < minAge) return `Cache-Control max-age is under ${minAge} s`;
  return null;
}

export async function checkAcp(site: Site): Promise<CheckResult> {
  const fetched = await site.get("/.well-known/acp.json");
  const doc = asDocument(fetched);
  const fix =
    'Publish an ACP discovery document at /.well-known/acp.json: protocol {name: "acp", version, ' +
    'supported_versions}, an https api_base_url, transports including "rest" and capabilities.services ' +
    'including "checkout", served with Cache-Control: public, max-age=3600.';
  const parsed = jsonObject(doc);
  if ("error" in parsed)
    return result("acp_discovery", "fail", found(doc, `No ACP discovery: ${parsed.error}.`), fix);
  const d = parsed.value;
  const missing: string[] = [];
  const warnings: string[] = [];
  const protocol = isRecord(d.protocol) ? d.protocol : null;
  if (protocol?.name !== "acp") missing.push('protocol.name "acp"');
  if (typeof protocol?.version !== "string" || !DATE_VERSION.test(protocol.version)) {
    missing.push("protocol.version (YYYY-MM-DD)");
  }
  if (!isHttpsUrl(d.api_base_url)) missing.push("api_base_url over https");
  const capabilities = isRecord(d.capabilities) ? d.capabilities : {};
  const services = Array.isArray(capabilities.services) ? capabilities.services : d.services;
  if (!Array.isArray(services) || !services.includes("checkout")) {
    missing.push('capabilities.services including "checkout"');
  }
  const supported = protocol?.supported_versions;
  if (!Array.isArray(supported) || supported.length === 0)
    warnings.push("protocol.supported_versions is missing");
  else if (supported[supported.length - 1] !== protocol?.version) {
    warnings.push("protocol.version is not the last of supported_versions");
  }
  if (!Array.isArray(d.transports) || !d.transports.includes("rest"))
    warnings.push('transports lacks "rest"');
  const cache = cacheProblem(fetched.ok ? fetched.headers["cache-control"] : undefined, 1);
  if (cache) warnings.push(cache);
  const details = {
    protocol_version: protocol?.version ?? null,
    services: Array.isArray(services) ? services : [],
  };
  if (missing.length > 0) {
    return result(
      "acp_discovery",
      "fail",
      found(doc, `ACP document lacks ${missing.join(", ")}.`),
      fix,
      details,
    );
  }
  if (warnings.length > 0) {
    return result(
      "acp_discovery",
      "warn",
      found(doc, `Valid ACP discovery for checkout, but ${warnings.join("; ")}.`),
      fix,
      details,
    );
  }
  return result(
    "acp_discovery",
    "pass",
    found(doc, "Valid ACP discovery with checkout over https."),
    null,
    details,
  );
}

export async function checkUcp(site: Site): Promise<CheckResult> {
  // Agents fetch the profile without following redirects (the UCP spec forbids them), and so does this.
  const fetched = await site.get("/.well-known/ucp", { followRedirects: false });
  const fix =
    "Publish a UCP business profile at /.well-known/ucp (no redirect): ucp.version (YYYY-MM-DD), " +
    "ucp.services with https endpoints, the dev.ucp.shopping.checkout capability and ucp.payment_handlers, " +
    "served with Cache-Control: public, max-age=60 or more.";
  if (fetched.ok && fetched.status >= 300 && fetched.status <= 399) {
    return result(
      "ucp_profile",
      "fail",
      {
        url: fetched.url,
        http_status: fetched.status,
        detail: `The profile redirects (to ${fetched.headers.location ?? "?"}); agents do not follow redirects for it.`,
      },
      fix,
    );
  }
  const doc = asDocument(fetched);
  const parsed = jsonObject(doc);
  if ("error" in parsed)
    return result("ucp_profile", "fail", found(doc, `No UCP profile: ${parsed.error}.`), fix);
  const ucp = isRecord(parsed.value.ucp) ? parsed.value.ucp : null;
  if (!ucp) return result("ucp_profile", "fail", found(doc, "The document has no ucp object."), fix);
  const missing: string[] = [];
  const warnings: string[] = [];
  if (typeof ucp.version !== "string" || !DATE_VERSION.test(ucp.version))
    missing.push("ucp.version (YYYY-MM-DD)");
  const endpoints: string[] = [];
  let legacy = false;
  if (!isRecord(ucp.services) || Object.keys(ucp.services).length === 0) missing.push("ucp.services");
  else {
    for (const bindings of Object.values(ucp.services)) {
      if (!Array.isArray(bindings)) {
        legacy = true;
        continue;
      }
      for (const b of bindings)
        if (isRecord(b) && b.endpoint !== undefined) endpoints.push(String(b.endpoint));
    }
    if (endpoints.length === 0 && !legacy) missing.push("a service endpoint");
    const insecure = endpoints.filter((e) => !isHttpsUrl(e));
    if (insecure.length > 0) missing.push(`https endpoints (${insecure.slice(0, 3).join(", ")} are not)`);
  }
  const capabilityNames = isRecord(ucp.capabilities)
    ? Object.keys(ucp.capabilities)
    : Array.isArray(ucp.capabilities)
      ? ucp.capabilities.map((c) => (isRecord(c) ? String(c.name) : ""))
      : [];
  if (Array.isArray(ucp.capabilities)) legacy = true;
  if (!capabilityNames.some((n) => n === "dev.ucp.shopping.checkout" || n.endsWith(".checkout"))) {
    missing.push("the checkout capability (dev.ucp.shopping.checkout)");
  }
  if (!isRecord(ucp.payment_handlers)) missing.push("ucp.payment_handlers");
  else if (Object.keys(ucp.payment_handlers).length === 0) warnings.push("no payment handler is listed");
  const cache = cacheProblem(fetched.ok ? fetched.headers["cache-control"] : undefined, 60);
  if (cache) warnings.push(cache);
  if (legacy)
    warnings.push("services or capabilities use the pre-release shape (objects where arrays are due)");
  const details = { ucp_version: ucp.version ?? null, capabilities: capabilityNames, endpoints };
  if (missing.length > 0) {
    return result(
      "ucp_profile",
      "fail",
      found(doc, `UCP profile lacks ${missing.join(", ")}.`),
      fix,
      details,
    );
  }
  if (warnings.length > 0) {
    return result(
      "ucp_profile",
      "warn",
      found(doc, `Valid UCP profile with checkout, but ${warnings.join("; ")}.`),
      fix,
      details,
    );
  }
  return result(
    "ucp_profile",
    "pass",
    found(doc, "Valid UCP profile: dated version, https services, checkout and payment handlers, cacheable."),
    null,
    details,
  );
}

interface Surface {
  name: string;
  paths: string[];
  /** Null when valid, else what is wrong. */
  validate(d: Record<string, unknown>): string | null;
}

const SURFACES: Surface[] = [
  {
    name: "a2a_agent_card",
    paths: ["/.well-known/agent-card.json", "/.well-known/agent.json"],
    validate(d) {
      const lacks: string[] = [];
      if (typeof d.name !== "string") lacks.push("name");
      if (typeof d.description !== "string") lacks.push("description");
      if (!Array.isArray(d.skills)) lacks.push("skills");
      const interfaces = Array.isArray(d.supportedInterfaces) ? d.supportedInterfaces : [];
      const hasInterface =
        interfaces.some((i) => isRecord(i) && typeof i.url === "string") || typeof d.url === "string";
      if (!hasInterface) lacks.push("supportedInterfaces (or url)");
      return lacks.length ? `lacks ${lacks.join(", ")}` : null;
    },
  },
  {
    name: "mcp_server_card",
    paths: ["/.well-known/mcp/server-card.json", "/.well-known/mcp.json", "/.well-known/mcp/catalog.json"],
    validate(d) {
      if (Array.isArray(d.entries)) return d.entries.length > 0 ? null : "catalog has no entries";
      const info = isRecord(d.serverInfo) ? d.serverInfo : d;
      const lacks: string[] = [];
      if (typeof info.name !== "string") lacks.push("name");
      if (typeof info.version !== "string") lacks.push("version");
      return lacks.length ? `lacks ${lacks.join(", ")}` : null;
    },
  },
  {
    name: "oauth_protected_resource",
    paths: ["/.well-known/oauth-protected-resource"],
    validate(d) {
      if (!isHttpsUrl(d.resource)) return "lacks an https resource";
      if (!Array.isArray(d.authorization_servers) || d.authorization_servers.length === 0) {
        return "lists no authorization_servers";
      }
      return null;
    },
  },
  {
    name: "agents_json",
    paths: ["/.well-known/agents.json"],
    validate(d) {
      const lacks: string[] = [];
      if (typeof d.agentsJson !== "string") lacks.push("agentsJson");
      if (!isRecord(d.info)) lacks.push("info");
      if (!Array.isArray(d.sources) || d.sources.length === 0) lacks.push("sources");
      if (!Array.isArray(d.flows)) lacks.push("flows");
      return lacks.length ? `lacks ${lacks.join(", ")}` : null;
    },
  },
];

export async function checkAgentSurfaces(site: Site): Promise<CheckResult> {
  const findings = await Promise.all(
    SURFACES.map(async (surface) => {
      let first: { url: string; status: number | null; finding: string } | null = null;
      for (const path of surface.paths) {
        const doc = asDocument(await site.get(path));
        const parsed = jsonObject(doc);
        if ("error" in parsed) {
          first ??= { url: doc.url, status: doc.status, finding: `absent: ${parsed.error}` };
          continue;
        }
        const problem = surface.validate(parsed.value);
        return {
          surface: surface.name,
          url: doc.url,
          status: doc.status,
          valid: problem === null,
          finding: problem ?? "valid",
        };
      }
      return {
        surface: surface.name,
        url: first?.url ?? null,
        status: first?.status ?? null,
        valid: false,
        finding: first?.finding ?? "absent",
        absent: true,
      };
    }),
  );
  const valid = findings.filter((f) => f.valid);
  const invalid = findings.filter((f) => !f.valid && !("absent" in f));
  const details = {
    surfaces: findings.map((f) => ({
      surface: f.surface,
      url: f.url,
      http_status: f.status,
      finding: f.finding,
    })),
  };
  const fix =
    "Publish at least one agent entry point: an A2A agent card at /.well-known/agent-card.json, an MCP " +
    "server card at /.well-known/mcp/server-card.json, OAuth protected-resource metadata at " +
    "/.well-known/oauth-protected-resource, or /.well-known/agents.json.";
  if (valid.length > 0) {
    const first = valid[0];
    return result(
      "agent_surfaces",
      "pass",
      {
        url: first?.url ?? null,
        http_status: first?.status ?? null,
        detail: `Valid: ${valid.map((f) => f.surface).join(", ")}.`,
      },
      null,
      details,
    );
  }
  if (invalid.length > 0) {
    const first = invalid[0];
    return result(
      "agent_surfaces",
      "warn",
      {
        url: first?.url ?? null,
        http_status: first?.status ?? null,
        detail: `Found but invalid: ${invalid.map((f) => `${f.surface} (${f.finding})`).join("; ")}.`,
      },
      fix,
      details,
    );
  }
  return result(
    "agent_surfaces",
    "fail",
    {
      url: site.url("/.well-known/agent-card.json").href,
      http_status: findings[0]?.status ?? null,
      detail: "No A2A card, MCP server card, protected-resource metadata or agents.json.",
    },
    fix,
    details,
  );
}
