// Requests Node's HTTP parser refuses before any route or hook sees them are answered with a problem
// document too, written to the socket (Fastify's own answer is a JSON body of another shape): a method it
// does not know (FOO) as a known method no route takes would be (405 with Allow, or 404), headers too
// large 431, a request that took too long 408, anything else malformed 400.

import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { ApiError, toProblem } from "../../errors.js";
import { newId } from "../../ids.js";
import { type RouteMethods, unroutedProblem } from "./not-found.js";

/** The request line's method and path, when the bytes Node refused start with one. */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\/[^ \r\n?]*)\S* HTTP\/1\.[01]\r?\n/;

function problemOf(
  error: Error & { code?: string; rawPacket?: Buffer },
  routes: RouteMethods,
): { error: ApiError; allow?: string; path?: string } {
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return { error: new ApiError("request_timeout", "The request was not received in time.") };
  }
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return { error: new ApiError("headers_too_large", "The request's header fields are too large.") };
  }
  const line =
    error.code === "HPE_INVALID_METHOD" ? REQUEST_LINE.exec(error.rawPacket?.toString("latin1") ?? "") : null;
  if (line?.[1] && line[2]) return { ...unroutedProblem(routes, line[1], line[2]), path: line[2] };
  return { error: new ApiError("invalid_request", "The request is not valid HTTP/1.1.") };
}

/** Fastify's clientErrorHandler: the refusal as a problem, then the connection closed. */
export function clientErrorHandler(routes: RouteMethods) {
  return function answer(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
    // A reset connection has no one to answer (Node's own rule, which Fastify's handler follows).
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const refusal = problemOf(error, routes);
    const requestId = newId("req");
    const body = JSON.stringify(toProblem(refusal.error, requestId, refusal.path));
    this.log.debug({ err: error, request_id: requestId }, "client error");
    if (socket.writable) {
      const allow = refusal.allow === undefined ? "" : `Allow: ${refusal.allow}\r\n`;
      socket.write(
        `HTTP/1.1 ${refusal.error.status} ${STATUS_CODES[refusal.error.status]}\r\n` +
          `Content-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Request-Id: ${requestId}\r\n${allow}Connection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
