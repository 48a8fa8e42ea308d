// What the OpenAPI document says of each operation beyond its zod schemas, from the operation's own
// declaration (access, limit, idempotent, stream) and the closed error set: its tag (each tag defined at
// the top level), a description of every answer, errors as application/problem+json (how problem-reply.ts
// serves them), the response headers the server sends, and the event stream's text/event-stream.

import { STATUS_CODES } from "node:http";
import { z } from "zod";
import { ERROR_CODE_LIST, ERROR_CODES } from "../../errors.js";
import type { Access, AnyOperation } from "../../operations/kernel/operation.js";
import { OPERATIONS } from "../../operations/registry.js";
import { EVENT_STREAM_EXAMPLE, EVENT_STREAM_FORMAT } from "./event-stream.js";

type Json = Record<string, unknown>;

const TAG_OF_ACCESS: Record<Access, string> = {
  key: "dispatch",
  any_key: "dispatch",
  public: "public",
  contractor: "contractor",
  dispatcher: "dispatcher",
};

/** The tag an operation is listed under: who may call it. */
export function tagOf(op: AnyOperation): string {
  return TAG_OF_ACCESS[op.access];
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  dispatch:
    "A caller's operations, under an account's API key: quotes, work orders, their events, webhooks and " +
    "the account's audit records.",
  public: "No key: estimates, the trade index, evals, the readiness probe and the audit log's proofs.",
  contractor: "A contractor's own key: its offers and jobs, NTE requests, invoices and time off.",
  dispatcher:
    "The dispatch team's key: every order of its mode, assignments, the contractor pool, schedules and " +
    "time off.",
};

/** The top-level tags: those the operations use, in the registry's order. */
function documentTags(): Array<{ name: string; description: string }> {
  const used = [...new Set(OPERATIONS.map(tagOf))];
  return used.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
}

const HEADER = "#/components/headers/";

/** Response headers, one component each (a header's `required` cannot vary by reference). */
const HEADERS: Record<string, Json> = {
  RequestId: {
    description: "This request's id (a sane incoming Request-Id is kept): quote it when reporting a problem.",
    required: true,
    schema: { type: "string", maxLength: 128 },
  },
  RateLimitPolicy: {
    description:
      'The limit applied (draft-ietf-httpapi-ratelimit-headers): `"<name>";q=<requests>;w=60;fsd-burst=<burst>`.',
    required: true,
    schema: { type: "string" },
  },
  RateLimit: {
    description: 'What is left of it: `"<name>";r=<remaining>;t=<seconds until the bucket is full>`.',
    required: true,
    schema: { type: "string" },
  },
  XRateLimitLimit: {
    description: "The bucket's capacity (the burst).",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  XRateLimitRemaining: {
    description: "Requests left in the bucket.",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  XRateLimitReset: {
    description: "Unix time (seconds) at which the bucket is full again.",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  RetryAfter: {
    description: "Seconds to wait before retrying.",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  RetryAfterWhenTransient: {
    description:
      "Seconds to wait before retrying, when the store is briefly unavailable (service_unavailable).",
    schema: { type: "integer", minimum: 0 },
  },
  RetryAfterWhenBusy: {
    description:
      "Seconds to wait before retrying, when another optimisation of the mode's day is running " +
      "(optimizer_busy): what is left of its time limit, at least 1.",
    schema: { type: "integer", minimum: 1 },
  },
  ETag: {
    description: "The SHA-256 (hex, quoted) of the bytes: a strong validator for If-None-Match and If-Range.",
    required: true,
    schema: { type: "string" },
  },
  ContentRange: {
    description: "The range served: `bytes <first>-<last>/<size>` (on 416: `bytes */<size>`).",
    required: true,
    schema: { type: "string" },
  },
  IdempotentReplayed: {
    description: "`true` on a replay: the stored answer to the first request with this Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  },
};

const ref = (name: keyof typeof HEADERS) => ({ $ref: `${HEADER}${name}` });

const RATE_LIMIT_HEADERS = {
  "RateLimit-Policy": ref("RateLimitPolicy"),
  RateLimit: ref("RateLimit"),
  "X-RateLimit-Limit": ref("XRateLimitLimit"),
  "X-RateLimit-Remaining": ref("XRateLimitRemaining"),
  "X-RateLimit-Reset": ref("XRateLimitReset"),
};

/** The headers of a successful answer of `op`. */
function headersOf(op: AnyOperation): Json {
  const headers: Json = { "Request-Id": ref("RequestId") };
  // A limited call's answer carries the limit once the gate has counted it.
  if (op.limit !== "none") Object.assign(headers, RATE_LIMIT_HEADERS);
  if (op.idempotent) headers["Idempotent-Replayed"] = ref("IdempotentReplayed");
  return headers;
}

const PROBLEM = { $ref: "#/components/schemas/Problem" };

/** The name of the shared answer for an error status: `TooManyRequests` for 429. */
const errorResponseName = (status: number) => (STATUS_CODES[status] ?? `Status${status}`).replace(/\W/g, "");

/** The shared answer for an error status: a problem document, whatever the operation. */
function errorResponse(status: number): Json {
  const codes = ERROR_CODE_LIST.filter((code) => ERROR_CODES[code].status === status);
  const headers: Json = { "Request-Id": ref("RequestId") };
  // Only a limited operation answers 429, always from its limit (or its count of open streams).
  if (status === 429) Object.assign(headers, RATE_LIMIT_HEADERS, { "Retry-After": ref("RetryAfter") });
  if (status === 503) headers["Retry-After"] = ref("RetryAfterWhenTransient");
  if (status === 409) headers["Retry-After"] = ref("RetryAfterWhenBusy");
  if (status === 416) headers["Content-Range"] = ref("ContentRange");
  return {
    description: `${STATUS_CODES[status] ?? status}: an RFC 9457 problem document; its \`code\` is one of ${codes
      .map((c) => `\`${c}\``)
      .join(", ")}.`,
    headers,
    content: { "application/problem+json": { schema: PROBLEM } },
  };
}

/** One successful answer of `op`: its description, headers and media types. */
function describeSuccess(op: AnyOperation, response: Json): Json {
  const content = (response.content ?? {}) as Record<string, Json>;
  const schema = content["application/json"]?.schema;
  if (op.textStream) {
    // The text (its format is the output schema's description), in the media type the request asked for.
    const description = (schema as Json | undefined)?.description;
    const text = (type: string) => ({ schema: { type: "string", contentMediaType: type, description } });
    return {
      description:
        "The file, written as it is read (chunked), as an attachment (Content-Disposition names it).",
      headers: headersOf(op),
      content: Object.fromEntries(op.textStream.mediaTypes.map((type) => [type, text(type)])),
    };
  }
  const media: Record<string, Json> = { "application/json": { schema } };
  // JSON first: what a client that names no stream (and the API reference's "try it") asks for.
  if (op.stream) {
    media["text/event-stream"] = {
      schema: { type: "string", description: EVENT_STREAM_FORMAT },
      example: EVENT_STREAM_EXAMPLE,
    };
  }
  return {
    description: op.stream
      ? "The events: a Server-Sent Events stream (text/event-stream, the default), or one page of them as JSON to a request that accepts only application/json."
      : "OK",
    headers: headersOf(op),
    content: media,
  };
}

/** A request body is required only when some member is: a request without one is read as {}. */
function describeRequestBody(body: Json, document: Json): Json {
  let schema = ((body.content as Record<string, Json> | undefined)?.["application/json"]?.schema ??
    {}) as Json;
  if (typeof schema.$ref === "string") {
    const schemas = (document.components as { schemas?: Record<string, Json> } | undefined)?.schemas ?? {};
    schema = schemas[schema.$ref.split("/").pop() as string] ?? {};
  }
  // A union (oneOf, anyOf) requires what each of its forms does: taken as required.
  const optional =
    schema.type === "object" &&
    !(Array.isArray(schema.required) && schema.required.length > 0) &&
    schema.oneOf === undefined &&
    schema.anyOf === undefined &&
    schema.allOf === undefined;
  return { ...body, required: !optional };
}

/** An upload's body: multipart/form-data with the file and the operation's text fields. */
function uploadBody(fields: z.ZodObject): Json {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(fields, { io: "input" }) as Json;
  const properties = (schema.properties ?? {}) as Json;
  return {
    required: true,
    content: {
      "multipart/form-data": {
        schema: {
          type: "object",
          required: ["file"],
          properties: {
            file: {
              type: "string",
              contentMediaType: "application/octet-stream",
              description: "The file (one): its type is judged from its content.",
            },
            ...properties,
          },
        },
      },
    },
  };
}

const BINARY = { schema: { type: "string", contentMediaType: "application/octet-stream" } };

/** A download's answers: the bytes (200), one range of them (206), not modified (304). */
function downloadResponses(op: AnyOperation): Json {
  const types = op.download?.mediaTypes ?? [];
  const content = Object.fromEntries(types.map((type) => [type, BINARY]));
  const headers = {
    "Request-Id": ref("RequestId"),
    ...(op.limit !== "none" ? RATE_LIMIT_HEADERS : {}),
    ETag: ref("ETag"),
  };
  return {
    200: {
      description: "The file's bytes, with its media type (Content-Type) and Content-Disposition.",
      headers,
      content,
    },
    206: {
      description: "The range of the file's bytes asked for (Range: bytes=...), with Content-Range.",
      headers: { ...headers, "Content-Range": ref("ContentRange") },
      content,
    },
    304: { description: "Not modified: If-None-Match named this file's ETag.", headers },
  };
}

/**
 * The document with every operation's answers described (descriptions, headers, media types; each error
 * status one shared answer in components.responses), the header components they refer to and the
 * top-level tags.
 */
export function describeOperations(document: Json): Json {
  const byId = new Map(OPERATIONS.map((op) => [op.id, op]));
  const errors: Record<string, Json> = {};
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const op = byId.get(operation.operationId as string);
      if (!op) continue;
      if (operation.requestBody) {
        operation.requestBody = describeRequestBody(operation.requestBody as Json, document);
      }
      if (op.upload) operation.requestBody = uploadBody(op.upload.fields);
      const responses = operation.responses as Record<string, Json>;
      if (op.download) Object.assign(responses, downloadResponses(op));
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) {
          if (!op.download) responses[status] = describeSuccess(op, response);
          continue;
        }
        const name = errorResponseName(Number(status));
        errors[name] ??= errorResponse(Number(status));
        responses[status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  const components = (document.components ?? {}) as Json;
  return {
    ...document,
    tags: documentTags(),
    components: { ...components, responses: errors, headers: HEADERS },
  };
}
