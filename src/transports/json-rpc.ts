// JSON-RPC 2.0 envelope checks shared by the MCP and A2A endpoints, run before a message reaches either
// SDK so that the error codes mean what the JSON-RPC specification says: -32700 Parse error only for a
// body that is not JSON at all, -32600 Invalid Request for JSON that is not a request (members missing or
// of the wrong type), -32602 Invalid params for a request whose params do not fit its method; each with a
// message a person can act on, and the request's id when it has a usable one.

import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { ApiError } from "../errors.js";
import { handleError } from "./http/problem-reply.js";

export const JSON_RPC_ERROR = {
  parseError: -32700,
  invalidRequest: -32600,
  invalidParams: -32602,
} as const;

export type JsonRpcId = string | number | null;

export interface JsonRpcErrorResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  error: { code: number; message: string };
}

export function rpcError(id: JsonRpcId, code: number, message: string): JsonRpcErrorResponse {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** The answer to a body that is not JSON. */
const PARSE_ERROR = rpcError(null, JSON_RPC_ERROR.parseError, "Parse error: the body is not valid JSON.");

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A usable request id: a string or an integer (MCP forbids null; A2A's SDK accepts it). */
function validId(id: unknown, allowNull: boolean): id is string | number | null {
  return typeof id === "string" || Number.isSafeInteger(id) || (allowNull && id === null);
}

/** The id to answer a message with: its own when usable, else null (as JSON-RPC requires). */
export function idOf(message: unknown, allowNull = true): JsonRpcId {
  if (!isObject(message)) return null;
  return validId(message.id, allowNull) ? message.id : null;
}

/**
 * What makes `message` not a JSON-RPC 2.0 request, notification or response, in words; null when it is
 * one. `responses`: whether a response (result or error, no method) is acceptable here (MCP clients answer
 * server requests; an A2A client never does).
 */
export function envelopeProblem(
  message: unknown,
  options: { allowNullId: boolean; responses: boolean },
): string | null {
  if (!isObject(message)) return "a JSON-RPC request must be an object";
  if (message.jsonrpc !== "2.0") return 'member "jsonrpc" must be the string "2.0"';
  const idText = options.allowNullId
    ? 'member "id" must be a string, an integer or null'
    : 'member "id" must be a string or an integer';
  if (!("method" in message)) {
    if (options.responses && ("result" in message || "error" in message)) {
      return validId(message.id, options.allowNullId) ? null : idText;
    }
    return 'member "method" is missing';
  }
  if (typeof message.method !== "string" || message.method === "") {
    return 'member "method" must be a non-empty string';
  }
  if ("id" in message && !validId(message.id, options.allowNullId)) return idText;
  if ("params" in message && (typeof message.params !== "object" || message.params === null)) {
    return 'member "params" must be an object';
  }
  return null;
}

/** A zod error on a whole request, as "params.name: expected string, received number; ...". */
export function issuesText(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      const message = issue.message.replace(/^Invalid input: /, "");
      return path ? `${path}: ${message}` : message;
    })
    .join("; ");
}

/**
 * The error handler of a JSON-RPC route: a body that is not JSON is -32700 (Fastify's parser rejects it
 * before the route runs); any other failure is the usual problem document (413, 415, 500).
 */
export function jsonRpcErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (
    error.code === "FST_ERR_CTP_INVALID_JSON_BODY" ||
    error.code === "FST_ERR_CTP_EMPTY_JSON_BODY" ||
    error instanceof SyntaxError
  ) {
    return reply.code(400).type("application/json").send(PARSE_ERROR);
  }
  // The body parser's own refusal (not JSON, or not I-JSON: duplicate names, a lone surrogate): still a
  // parse error to JSON-RPC, saying what is wrong and where.
  if (error instanceof ApiError && error.code === "invalid_json") {
    return reply
      .code(400)
      .type("application/json")
      .send(rpcError(null, JSON_RPC_ERROR.parseError, `Parse error: invalid_json: ${error.message}`));
  }
  return handleError(error, request, reply);
}

/** The headers set so far (Request-Id) onto the raw response, for a route that writes past Fastify. */
export function passHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value);
  }
}
