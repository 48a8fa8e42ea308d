// The agent transports on the REST app: MCP and A2A under the agent key policy, behind a check of the
// browser's Origin, and the discovery documents that describe them.

import type { FastifyInstance, FastifyRequest } from "fastify";
import { sandboxKeyOf } from "../../auth/sandbox-key.js";
import { ApiError } from "../../errors.js";
import type { Services } from "../../operations/kernel/operation.js";
import { agentCardJson, registerA2a } from "../a2a.js";
import { type AgentCaller, agentKeyFor } from "../agent-call.js";
import { mcpServerCard } from "../discovery/documents.js";
import { mcpTools, registerMcp } from "../mcp.js";
import { baseUrlOf } from "./base-url.js";
import { registerDiscovery } from "./discovery-routes.js";
import { firstHeader } from "./headers.js";
import { sendProblem } from "./problem-reply.js";

const AGENT_PATHS = /^\/api\/(mcp|a2a)(\/|\?|$)/;

/** The origins the agent endpoints accept browser requests from: this service's own, and configured ones. */
function ownOriginsOf(config: Services["config"]): string[] {
  const own = config.PUBLIC_BASE_URL
    ? [new URL(config.PUBLIC_BASE_URL).origin]
    : [`http://localhost:${config.PORT}`, `http://127.0.0.1:${config.PORT}`, `http://[::1]:${config.PORT}`];
  return [...own, ...config.MCP_ALLOWED_ORIGINS];
}

/** Browsers send Origin; a page on another site must not drive the agent endpoints with this server's key. */
function registerOriginCheck(app: FastifyInstance, config: Services["config"]): void {
  const ownOrigins = new Set(ownOriginsOf(config));
  app.addHook("onRequest", (request, reply, done) => {
    const origin = request.headers.origin;
    if (origin && AGENT_PATHS.test(request.url) && !ownOrigins.has(origin.replace(/\/+$/, ""))) {
      sendProblem(
        request,
        reply,
        new ApiError(
          "forbidden_origin",
          `Requests from ${origin} may not use this endpoint (set MCP_ALLOWED_ORIGINS to allow it).`,
        ),
      );
      return;
    }
    done();
  });
}

export async function registerAgentEndpoints(app: FastifyInstance, services: Services): Promise<void> {
  const { config } = services;
  // The agent transports' key policy (agentKeyFor): the caller's own x-api-key, else the server's
  // MCP_API_KEY, else the sandbox account's first-start key, found once here by its stored hash.
  const sandboxKey = await sandboxKeyOf(services.store);
  const callerOf = (request: FastifyRequest): AgentCaller => ({
    key: agentKeyFor(firstHeader(request.headers["x-api-key"]), config, sandboxKey),
    clientIp: request.ip,
    baseUrl: baseUrlOf(services, request),
    requestId: request.id,
    receivedAt: request.receivedAt,
    receivedHr: request.receivedHr,
  });
  registerOriginCheck(app, config);
  registerMcp(app, services, callerOf);
  registerA2a(app, services, callerOf);
  registerDiscovery(app, services, (request) => baseUrlOf(services, request), {
    agentCard: agentCardJson,
    mcpCard: (base) => mcpServerCard(base, mcpTools()),
  });
}
