// The REST transport: builds the Fastify app with one route per operation from the registry. A route only
// translates HTTP to an operation call (gate, then execute) and back.

import fastifySwagger from "@fastify/swagger";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
} from "fastify";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import type { DestinationStream } from "pino";
import { z } from "zod";
import type { Principal } from "../../auth/api-key-service.js";
import { sandboxKeyOf } from "../../auth/sandbox-key.js";
import { trustProxySetting } from "../../config.js";
import { ApiError, ERROR_CODE_LIST, ERROR_CODES, type ErrorCode } from "../../errors.js";
import { newId } from "../../ids.js";
import { createLogger } from "../../logger.js";
import { type Admission, admit, execute, parseInput } from "../../operations/kernel/gate.js";
import { IDEMPOTENCY_KEY_HEADER } from "../../operations/kernel/idempotency.js";
import type { AnyOperation, Services } from "../../operations/kernel/operation.js";
import { checkReadiness } from "../../operations/kernel/readiness.js";
import { problemSchema } from "../../operations/kernel/schemas.js";
import { OPERATIONS } from "../../operations/registry.js";
import { openApiWebhooks } from "../../webhooks/openapi.js";
import { agentCardJson, registerA2a } from "../a2a.js";
import { type AgentCaller, agentKeyFor } from "../agent-call.js";
import { mcpServerCard } from "../discovery/documents.js";
import { mcpTools, registerMcp } from "../mcp.js";
import { registerApiDocs } from "./api-docs.js";
import { baseUrlOf } from "./base-url.js";
import { registerConsoleAssets } from "./console-assets.js";
import { admitSession, registerConsoleSession, sessionCookieOf } from "./console-session.js";
import { registerDiscovery } from "./discovery-routes.js";
import { eventStreams, wantsStream } from "./event-stream.js";
import { readJsonBody } from "./json-body.js";
import { leanJsonSchemaTransformObject } from "./openapi-components.js";
import { countClientAborts, handleError, sendProblem } from "./problem-reply.js";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
    rateHeaders: Record<string, string> | null;
    receivedHr: bigint;
    receivedAt: Date;
  }
}

const BODY_LIMIT = 1024 * 1024;
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

const firstHeader = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

const IDEMPOTENCY_HEADER = IDEMPOTENCY_KEY_HEADER.toLowerCase();

const AGENT_PATHS = /^\/api\/(mcp|a2a)(\/|\?|$)/;

/** The origins the agent endpoints accept browser requests from: this service's own, and configured ones. */
function ownOriginsOf(config: Services["config"]): string[] {
  const own = config.PUBLIC_BASE_URL
    ? [new URL(config.PUBLIC_BASE_URL).origin]
    : [`http://localhost:${config.PORT}`, `http://127.0.0.1:${config.PORT}`, `http://[::1]:${config.PORT}`];
  return [...own, ...config.MCP_ALLOWED_ORIGINS];
}

function problemResponses(op: AnyOperation): Record<number, z.ZodType> {
  const statuses = [400, 422, 500];
  if (op.access !== "public") statuses.push(401, 403, 503);
  if (op.limit !== "none") statuses.push(429);
  if (op.http.method === "POST") statuses.push(413, 415);
  if (op.http.input === "params") statuses.push(404);
  if (op.idempotent) statuses.push(409);
  statuses.push(...(op.problems ?? []));
  return Object.fromEntries([...new Set(statuses)].map((s) => [s, problemSchema]));
}

function routeSchema(op: AnyOperation) {
  const input =
    op.http.input === "body"
      ? { body: op.input }
      : op.http.input === "params"
        ? { params: op.input }
        : { querystring: op.input };
  const headers = op.idempotent
    ? {
        headers: z.object({
          [IDEMPOTENCY_HEADER]: z
            .string()
            .max(255)
            .optional()
            .describe("Retry-safe key: the same key and body replay the first response for 24 h."),
        }),
      }
    : {};
  return {
    operationId: op.id,
    summary: op.summary,
    description: op.description,
    tags: [
      op.access === "public"
        ? "public"
        : op.access === "key" || op.access === "any_key"
          ? "dispatch"
          : op.access,
    ],
    // A public operation says so (an empty list), rather than leaving readers to guess.
    security: op.access === "public" ? [] : [{ "x-api-key": [] }],
    ...input,
    ...headers,
    response: { 200: op.output, ...problemResponses(op) },
  };
}

/** Path patterns of every route, to answer 405 (with Allow) instead of 404 on a known path. */
function methodsByPath(): Array<{ pattern: RegExp; methods: string[] }> {
  const map = new Map<string, string[]>();
  for (const op of OPERATIONS) {
    const list = map.get(op.http.path) ?? [];
    list.push(op.http.method);
    map.set(op.http.path, list);
  }
  return [...map.entries()].map(([path, methods]) => ({
    pattern: new RegExp(`^${path.replace(/:[a-z_]+/g, "[^/]+")}$`),
    methods,
  }));
}

// Results an operation returns frozen (static documents such as the trade index) are serialised once.
const serialized = new WeakMap<object, string>();

function serialize(result: unknown): string {
  if (typeof result === "object" && result !== null && Object.isFrozen(result)) {
    let text = serialized.get(result);
    if (text === undefined) {
      text = JSON.stringify(result);
      serialized.set(result, text);
    }
    return text;
  }
  return JSON.stringify(result);
}

export interface AppOptions {
  /** The process's logger; one is created from the config when unset. */
  logger?: FastifyBaseLogger;
  /** Where log lines go when the app creates its logger (tests pass a stream to read them). */
  logDestination?: DestinationStream;
}

export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  const logger = options.logger ?? createLogger(config, options.logDestination);
  const app = Fastify({
    bodyLimit: BODY_LIMIT,
    // Fastify also accepts a hop count here; its types only name boolean and string forms.
    trustProxy: trustProxySetting(config.TRUST_PROXY) as boolean | string,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    connectionTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    // One "request completed" line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "request_id" }),
    // No per-request child logger (its creation costs every request, its lines are rare): our own log
    // calls carry request_id explicitly.
    childLoggerFactory: (parent) => parent,
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers["request-id"];
      return typeof incoming === "string" && REQUEST_ID_PATTERN.test(incoming) ? incoming : newId("req");
    },
    loggerInstance: logger,
    // The router refuses a path it cannot decode (bad percent-encoding, a lone surrogate's bytes) or with an
    // over-long parameter before any hook runs; answer that with a problem too, not Fastify's own JSON.
    frameworkErrors: (error, request, reply) => {
      reply.header("Request-Id", request.id);
      sendProblem(
        request,
        reply,
        new ApiError(
          "invalid_request",
          error.code === "FST_ERR_MAX_PARAM_LENGTH"
            ? "A path parameter of this URL is too long."
            : "The URL's path is not valid percent-encoded UTF-8.",
        ),
      );
    },
  });

  // Validation and serialisation happen in the operations layer (shared with every transport); the
  // route schemas feed the OpenAPI document only.
  app.setValidatorCompiler(() => (data) => ({ value: data }));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeContentTypeParser("text/plain");
  // Every JSON body (REST, MCP, A2A): UTF-8, decoded from gzip/deflate/br, parsed as I-JSON (json-body.ts).
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    try {
      const value = readJsonBody(request.headers, body as Buffer, BODY_LIMIT);
      if (value instanceof Promise) value.then((v) => done(null, v), done);
      else done(null, value);
    } catch (error) {
      done(error as Error);
    }
  });

  app.decorateRequest("principal", null);
  app.decorateRequest("rateHeaders", null);
  app.decorateRequest("receivedHr", 0n);
  app.decorateRequest("receivedAt", null as unknown as Date);

  // Hooks in callback style: they run on every request, and skip a promise each. This one is the first
  // hook of every request (app-level onRequest hooks run before a route's own, where the gate checks the
  // key): the arrival time every latency is measured from.
  app.addHook("onRequest", (request, reply, done) => {
    request.receivedHr = process.hrtime.bigint();
    request.receivedAt = services.now();
    reply.header("Request-Id", request.id);
    done();
  });
  const logRequests = config.LOG_REQUESTS && ["trace", "debug", "info"].includes(config.LOG_LEVEL);
  const { metrics } = services;
  app.addHook("onResponse", (request, reply, done) => {
    const operation =
      (request.routeOptions.config as { operation?: string } | undefined)?.operation ?? "other";
    const status = String(reply.statusCode);
    metrics.requests.inc({ operation, method: request.method, status });
    metrics.duration.observe({ operation, status }, reply.elapsedTime / 1000);
    if (logRequests) {
      request.log.info(
        {
          request_id: request.id,
          method: request.method,
          url: request.url.split("?")[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 100) / 100,
        },
        "request completed",
      );
    }
    done();
  });

  app.setErrorHandler(handleError);
  countClientAborts(app, metrics);

  const known = methodsByPath();
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const route = known.find((r) => r.pattern.test(path));
    if (route) {
      reply.header("Allow", route.methods.join(", "));
      return sendProblem(
        request,
        reply,
        new ApiError(
          "method_not_allowed",
          `${request.method} is not allowed here; use ${route.methods.join(" or ")}.`,
        ),
      );
    }
    return sendProblem(
      request,
      reply,
      new ApiError("not_found", `No endpoint at ${request.method} ${path}.`),
    );
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "field-dispatch",
        version: "1.0.0",
        description:
          "Dispatch field-service jobs: quotes, work orders auto-matched to contractors, public evals, a trade " +
          "index and estimates. Errors are RFC 9457 problem documents with a machine-readable `code`. " +
          "Request bodies are I-JSON (RFC 7493) in UTF-8, unencoded or gzip, deflate or br encoded; " +
          "no string of any input may hold a C0 control character other than tab, line feed and carriage return. " +
          "Keyed operations take an API key in the `x-api-key` header: a fresh install prints a sandbox key on " +
          "its first start (see the key scheme, under Authorize in the API reference at /docs).",
      },
      // Relative: the server that serves this document (the API reference's "try it" calls it too).
      servers: [{ url: "/", description: "This server" }],
      components: {
        securitySchemes: {
          "x-api-key": {
            type: "apiKey",
            in: "header",
            name: "x-api-key",
            description:
              "An API key. A fresh install prints its sandbox key (`fsd_test_...`, test mode: the sandbox " +
              "contractor pool only) once, on its first start; lost it? `npm run cli -- keys create --account " +
              "sandbox --mode test`. To try an operation at /docs: Authorize, paste the key, then Execute.",
          },
        },
      },
      // @fastify/swagger copies unknown top-level fields through; the type lacks OpenAPI 3.1's webhooks.
      ...({ webhooks: openApiWebhooks() } as object),
    },
    transform: jsonSchemaTransform,
    // One component per named schema, in the form (input or output) the document uses it.
    transformObject: leanJsonSchemaTransformObject,
  });

  const streams = eventStreams(app, services);
  for (const op of OPERATIONS) {
    app.route({
      method: op.http.method,
      url: op.http.path,
      schema: routeSchema(op),
      config: { operation: op.id },
      // Gate before the body is read: 503, 401 and 429 never depend on what an unauthenticated caller sent.
      onRequest: (request, _reply, done) => {
        const apiKey = request.headers["x-api-key"];
        const admitted = (admission: Admission) => {
          request.principal = admission.principal;
          request.rateHeaders = admission.headers;
          done();
        };
        // The console's session cookie stands in for a key only when no key is sent (console-session.ts).
        const cookie = apiKey === undefined && op.access !== "public" ? sessionCookieOf(request) : undefined;
        if (cookie !== undefined) {
          admitSession(op, services, request, cookie).then(admitted, done);
          return;
        }
        try {
          const admission = admit(op, services, {
            apiKey: firstHeader(apiKey),
            clientIp: request.ip,
          });
          if (admission instanceof Promise) admission.then(admitted, done);
          else admitted(admission);
        } catch (error) {
          done(error as Error);
        }
      },
      handler: async (request, reply) => {
        // Set first, so failed calls (422, 404) carry the rate-limit fields too.
        if (request.rateHeaders) reply.headers(request.rateHeaders);
        const raw =
          op.http.input === "body"
            ? request.body
            : op.http.input === "params"
              ? request.params
              : request.query;
        const idem = firstHeader(request.headers[IDEMPOTENCY_HEADER]);
        const ctx = {
          services,
          requestId: request.id,
          principal: request.principal,
          baseUrl: baseUrlOf(services, request),
          receivedAt: request.receivedAt,
          receivedHr: request.receivedHr,
          idempotencyKey: idem === undefined ? undefined : ({ value: idem, in: "header" } as const),
          rawInput: raw,
          setHeader: (name: string, value: string) => {
            reply.header(name, value);
          },
        };
        if (op.stream) {
          // SSE's reconnection names the last event it saw in Last-Event-ID: it wins over `after`.
          const lastEventId = firstHeader(request.headers["last-event-id"]);
          const input = lastEventId === undefined ? raw : { ...(raw as object), after: lastEventId };
          if (wantsStream(request)) return streams.open(op, ctx, parseInput(op, input), reply);
          const page = await execute(op, ctx, input);
          return reply.type("application/json").send(serialize(page));
        }
        const result = await execute(op, ctx, raw);
        return reply.type("application/json").send(serialize(result));
      },
    });
  }

  registerConsoleSession(app, services);
  registerConsoleAssets(app, services);
  await registerApiDocs(app);
  app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { schema: { hide: true } }, async (request, reply) => {
    const { ready, checks, error } = await checkReadiness(services);
    if (ready) return { status: "ready", checks };
    request.log.warn({ err: error, request_id: request.id }, "readiness check failed");
    return sendProblem(
      request,
      reply,
      new ApiError("service_unavailable", "The store is not reachable.", { extra: { checks } }),
    );
  });
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
  const ownOrigins = new Set(ownOriginsOf(config));
  app.addHook("onRequest", (request, reply, done) => {
    // Browsers send Origin; a page on another site must not drive the agent endpoints with this server's key.
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
  registerMcp(app, services, callerOf);
  registerA2a(app, services, callerOf);
  registerDiscovery(app, services, (request) => baseUrlOf(services, request), {
    agentCard: agentCardJson,
    mcpCard: (base) => mcpServerCard(base, mcpTools()),
  });
  app.get("/problems/:code", { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params as { code: string };
    if (!(ERROR_CODE_LIST as string[]).includes(code)) {
      return sendProblem(request, reply, new ApiError("not_found", `No problem type ${code}.`));
    }
    const entry = ERROR_CODES[code as ErrorCode];
    return { type: `/problems/${code}`, code, status: entry.status, title: entry.title };
  });

  return app;
}
