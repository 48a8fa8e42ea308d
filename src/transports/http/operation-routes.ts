// One REST route per operation of the registry. A route only translates HTTP to an operation call (gate,
// then execute) and back; its schema feeds the OpenAPI document only (validation happens in the
// operations layer, shared with every transport).

import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { z } from "zod";
import { validationError } from "../../errors.js";
import { type Admission, admit, execute, executeForWire, parseInput } from "../../operations/kernel/gate.js";
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyArgument } from "../../operations/kernel/idempotency.js";
import { JsonResult } from "../../operations/kernel/json-result.js";
import type { AnyOperation, OperationContext, Services } from "../../operations/kernel/operation.js";
import { problemSchema } from "../../operations/kernel/schemas.js";
import { TextStream } from "../../operations/kernel/text-stream.js";
import { OPERATIONS } from "../../operations/registry.js";
import { baseUrlOf } from "./base-url.js";
import { attachmentDisposition, type BlobDescriptor, sendBlob } from "./blob-reply.js";
import { admitSession, sessionCookieOf } from "./console-session.js";
import { type EventStreams, eventStreams, wantsStream } from "./event-stream.js";
import { firstHeader } from "./headers.js";
import { tagOf } from "./openapi-operations.js";
import { readUpload, registerMultipart } from "./upload.js";

const IDEMPOTENCY_HEADER = IDEMPOTENCY_KEY_HEADER.toLowerCase();

function problemResponses(op: AnyOperation): Record<number, z.ZodType> {
  const statuses = [400, 422, 500];
  if (op.access !== "public") statuses.push(401, 403, 503);
  if (op.limit !== "none") statuses.push(429);
  if (op.http.method === "POST") statuses.push(413, 415);
  if (op.http.input === "params") statuses.push(404);
  if (op.idempotent) statuses.push(409);
  if (op.download) statuses.push(416);
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
          // The form the server checks (1-255 visible ASCII characters), as the agents' argument has it.
          [IDEMPOTENCY_HEADER]: idempotencyKeyArgument
            .optional()
            .describe(
              "Retry-safe key, 1-255 visible ASCII characters: the same key and body replay the first response for 24 h.",
            ),
        }),
      }
    : {};
  return {
    operationId: op.id,
    summary: op.summary,
    description: op.description,
    tags: [tagOf(op)],
    // A public operation says so (an empty list), rather than leaving readers to guess.
    security: op.access === "public" ? [] : [{ "x-api-key": [] }],
    ...input,
    ...headers,
    response: { 200: op.output, ...problemResponses(op) },
  };
}

// Results an operation returns frozen (static documents such as the trade index) are serialised once.
const serialized = new WeakMap<object, string>();

function serialize(result: unknown): string {
  if (result instanceof JsonResult) return result.json;
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

/** The gate, before the body is read: 503, 401 and 429 never depend on what an unauthenticated caller sent. */
export function gateHook(op: AnyOperation, services: Services) {
  return (request: FastifyRequest, done: HookHandlerDoneFunction) => {
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
  };
}

export function contextOf(
  op: AnyOperation,
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  raw: unknown,
) {
  const idem = firstHeader(request.headers[IDEMPOTENCY_HEADER]);
  return {
    ...(op.upload ? { readUpload: (maxBytes: number) => readUpload(request, maxBytes) } : {}),
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
  } satisfies OperationContext;
}

function operationHandler(op: AnyOperation, services: Services, streams: EventStreams) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // Set first, so failed calls (422, 404) carry the rate-limit fields too.
    if (request.rateHeaders) reply.headers(request.rateHeaders);
    const raw =
      op.http.input === "body" ? request.body : op.http.input === "params" ? request.params : request.query;
    // JSON's null is a body, not an object; no body at all (no Content-Type: Fastify's validation step
    // hands it over as null too) is read as {}.
    if (raw === null && request.headers["content-type"] !== undefined) {
      throw validationError([{ field: "body", message: "the body must be a JSON object" }]);
    }
    const ctx = contextOf(op, services, request, reply, raw);
    if (op.stream) {
      // SSE's reconnection names the last event it saw in Last-Event-ID: it wins over `after`.
      const lastEventId = firstHeader(request.headers["last-event-id"]);
      const input = lastEventId === undefined ? raw : { ...(raw as object), after: lastEventId };
      if (wantsStream(request)) return streams.open(op, ctx, parseInput(op, input), reply);
      const page = await execute(op, ctx, input);
      return reply.type("application/json").send(serialize(page));
    }
    const result = await executeForWire(op, ctx, raw);
    if (op.download) return sendBlob(request, reply, services.blobs, result as BlobDescriptor);
    if (result instanceof TextStream) return sendTextStream(reply, result);
    return reply.type("application/json").send(serialize(result));
  };
}

/** A text file written as it is read: each chunk sent when the client has taken the last (Readable.from
 * pulls the next only then), so memory holds a chunk, not the file. A failure after the first chunk can
 * only cut the reply short (its status is sent): the connection is closed, and the error logged. */
function sendTextStream(reply: FastifyReply, result: TextStream): FastifyReply {
  reply.header("Content-Disposition", attachmentDisposition(result.filename));
  reply.header("X-Content-Type-Options", "nosniff");
  reply.header("Cache-Control", "private, no-store");
  const type = result.mediaType.startsWith("text/") ? `${result.mediaType}; charset=utf-8` : result.mediaType;
  return reply.type(type).send(Readable.from(result.chunks, { objectMode: false }));
}

/** A route per operation of the registry, each with its schema (for the OpenAPI document), gate and handler. */
export function registerOperationRoutes(app: FastifyInstance, services: Services): void {
  const streams = eventStreams(app, services);
  const uploads: AnyOperation[] = [];
  for (const op of OPERATIONS) {
    if (op.upload) uploads.push(op);
    else registerRoute(app, op, services, streams);
  }
  // Multipart bodies only where an operation takes a file: every other route keeps refusing them (415).
  app.register(async (scope) => {
    await registerMultipart(scope);
    for (const op of uploads) registerRoute(scope, op, services, streams);
  });
}

function registerRoute(app: FastifyInstance, op: AnyOperation, services: Services, streams: EventStreams) {
  const gate = gateHook(op, services);
  const handle = operationHandler(op, services, streams);
  app.route({
    method: op.http.method,
    url: op.http.path,
    schema: routeSchema(op),
    config: { operation: op.id },
    onRequest: (request, _reply, done) => gate(request, done),
    handler: (request, reply) => handle(request, reply),
  });
}
