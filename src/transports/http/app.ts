// The REST transport: builds the Fastify app. Its parts: the server's settings, what every request goes
// through (request-hooks.ts), errors and unknown routes as problems (problem-reply.ts, not-found.ts), the
// OpenAPI document (openapi-document.ts) of the routes generated from the registry (operation-routes.ts),
// the console, the API reference, health, the agent transports (agent-endpoints.ts) and the problem types.

import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import type { DestinationStream } from "pino";
import type { Principal } from "../../auth/api-key-service.js";
import { trustProxySetting } from "../../config.js";
import { ApiError, ERROR_CODE_LIST, ERROR_CODES, type ErrorCode } from "../../errors.js";
import { newId } from "../../ids.js";
import { createLogger } from "../../logger.js";
import type { Services } from "../../operations/kernel/operation.js";
import { checkReadiness } from "../../operations/kernel/readiness.js";
import { registerAgentEndpoints } from "./agent-endpoints.js";
import { registerApiDocs } from "./api-docs.js";
import { clientErrorHandler } from "./client-errors.js";
import { registerConsoleAssets } from "./console-assets.js";
import { registerConsoleSession } from "./console-session.js";
import { RouteMethods, registerNotFound } from "./not-found.js";
import { registerOpenApi } from "./openapi-document.js";
import { registerOperationRoutes } from "./operation-routes.js";
import { handleError, sendProblem } from "./problem-reply.js";
import { BODY_LIMIT, registerBodyParsing, registerRequestHooks } from "./request-hooks.js";
import { registerRequestPage } from "./request-page.js";
import { registerTrackingPage } from "./tracking-page.js";
import { registerTusUploads } from "./tus-uploads.js";
import { registerUnsubscribePage } from "./unsubscribe-page.js";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
    rateHeaders: Record<string, string> | null;
    receivedHr: bigint;
    receivedAt: Date;
  }
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export interface AppOptions {
  /** The process's logger; one is created from the config when unset. */
  logger?: FastifyBaseLogger;
  /** Where log lines go when the app creates its logger (tests pass a stream to read them). */
  logDestination?: DestinationStream;
}

function serverOptions(
  config: Services["config"],
  logger: FastifyBaseLogger,
  routes: RouteMethods,
): FastifyServerOptions {
  return {
    bodyLimit: BODY_LIMIT,
    // Fastify also accepts a hop count here; its types only name boolean and string forms.
    trustProxy: trustProxySetting(config.TRUST_PROXY) as boolean | string,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    connectionTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    // One "request completed" line per request (request-hooks.ts) instead of Fastify's two.
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
    // What Node's parser refuses (an unknown method, bad syntax) is a problem document too.
    clientErrorHandler: clientErrorHandler(routes),
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
  };
}

/** Liveness and readiness, outside the OpenAPI document. */
function registerHealth(app: FastifyInstance, services: Services): void {
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
}

/** What a problem's `type` means: /problems/{code}. */
function registerProblemTypes(app: FastifyInstance): void {
  app.get("/problems/:code", { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params as { code: string };
    if (!(ERROR_CODE_LIST as string[]).includes(code)) {
      return sendProblem(request, reply, new ApiError("not_found", `No problem type ${code}.`));
    }
    const entry = ERROR_CODES[code as ErrorCode];
    return { type: `/problems/${code}`, code, status: entry.status, title: entry.title };
  });
}

export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const logger = options.logger ?? createLogger(services.config, options.logDestination);
  const routes = new RouteMethods();
  const app = Fastify(serverOptions(services.config, logger, routes));
  // Validation and serialisation happen in the operations layer (shared with every transport); the
  // route schemas feed the OpenAPI document only.
  app.setValidatorCompiler(() => (data) => ({ value: data }));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  registerBodyParsing(app);
  registerRequestHooks(app, services);
  const unrouted = registerNotFound(app, routes);
  // A request no route takes is answered 404 or 405 even when its body could not be read (an empty or
  // broken JSON body on PUT): the body of a method the path does not take does not matter.
  app.setErrorHandler((error: FastifyError, request, reply) =>
    request.is404 ? unrouted(request, reply) : handleError(error, request, reply),
  );
  await registerOpenApi(app);
  registerOperationRoutes(app, services);
  registerTusUploads(app, services);
  registerConsoleSession(app, services);
  registerConsoleAssets(app, services);
  registerTrackingPage(app, services);
  registerRequestPage(app, services);
  registerUnsubscribePage(app, services);
  await registerApiDocs(app);
  registerHealth(app, services);
  await registerAgentEndpoints(app, services);
  registerProblemTypes(app);
  return app;
}
