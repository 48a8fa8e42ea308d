// Renders any error as an RFC 9457 problem: ApiErrors as they are, Fastify's own request errors mapped to
// the closed code set, anything else as a logged 500 that leaks nothing. A request whose client hung up
// before it had fully arrived is answered nothing (nobody is there), logged at debug and counted apart
// (countClientAborts), not taken for a store fault.

import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, toProblem } from "../../errors.js";
import { asApiError, isClientAbort } from "../../operations/kernel/failures.js";

function fromFastifyError(error: FastifyError): ApiError | null {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError("payload_too_large", "The request body exceeds 1 MiB.");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError("unsupported_media_type", "Send the request body as application/json.");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new ApiError("invalid_request", "The Content-Length header does not match the body.");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ApiError("invalid_json", "The body is empty but Content-Type is application/json.");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new ApiError("invalid_json", "The request body is not valid JSON.");
    default:
      break;
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new ApiError("invalid_json", "The request body is not valid JSON.");
  }
  if (error.statusCode === 413) return new ApiError("payload_too_large", "The request body exceeds 1 MiB.");
  if (error.statusCode === 415) {
    return new ApiError("unsupported_media_type", "Send the request body as application/json.");
  }
  return null;
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  const path = request.url.split("?")[0];
  return reply
    .status(error.status)
    .type("application/problem+json")
    .send(JSON.stringify(toProblem(error, request.id, path)));
}

export function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (isClientAbort(error)) {
    request.log.debug({ err: error, request_id: request.id }, "client hung up before its request arrived");
    reply.hijack();
    reply.raw.destroy();
    return reply;
  }
  const expected = asApiError(error);
  if (expected) {
    // An unavailable store is worth an operator's attention even though the caller only retries.
    if (!(error instanceof ApiError))
      request.log.error({ err: error, request_id: request.id }, "store unavailable");
    return sendProblem(request, reply, expected);
  }
  const mapped = fromFastifyError(error as FastifyError);
  if (mapped) return sendProblem(request, reply, mapped);
  request.log.error({ err: error, request_id: request.id }, "unhandled error");
  return sendProblem(
    request,
    reply,
    new ApiError(
      "internal_error",
      `An internal error occurred; quote request id ${request.id} when reporting it.`,
    ),
  );
}
