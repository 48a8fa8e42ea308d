// What every request of the REST app goes through besides its route: its JSON body read as I-JSON
// (json-body.ts), the fields the gate and the handlers fill in, the arrival time every latency is measured
// from, and one metrics sample (and, when asked, one access log line) when it is answered, or a count of
// it when its client hung up before it had arrived.

import type { FastifyInstance } from "fastify";
import type { Services } from "../../operations/kernel/operation.js";
import { readJsonBody } from "./json-body.js";

export const BODY_LIMIT = 1024 * 1024;

/** Every JSON body (REST, MCP, A2A): UTF-8, decoded from gzip/deflate/br, parsed as I-JSON (json-body.ts). */
export function registerBodyParsing(app: FastifyInstance): void {
  app.removeContentTypeParser("text/plain");
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
}

/** The request's fields, its arrival time and Request-Id, and the metrics and access log of its answer. */
export function registerRequestHooks(app: FastifyInstance, services: Services): void {
  const { config, metrics } = services;
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
  // The requests whose client hung up before the request had fully arrived (a body cut short), by
  // operation, in fsd_http_requests_aborted_total: they are answered nothing, so the onResponse sample
  // above never sees them. A stream's client going away later (its request long complete) is not one.
  app.addHook("onRequestAbort", (request, done) => {
    if (!request.raw.complete) {
      const route = request.routeOptions.config as { operation?: string } | undefined;
      metrics.requestsAborted.inc({ operation: route?.operation ?? "other" });
    }
    done();
  });
}
