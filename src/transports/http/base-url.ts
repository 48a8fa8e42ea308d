// This service's absolute base URL as a caller reaches it: PUBLIC_BASE_URL when set, else the request's
// own protocol and (well-formed) Host.

import type { FastifyRequest } from "fastify";
import type { Services } from "../../operations/kernel/operation.js";

const HOST_PATTERN = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export function baseUrlOf(services: Services, request: FastifyRequest): string {
  const configured = services.config.PUBLIC_BASE_URL;
  if (configured) return configured.replace(/\/+$/, "");
  const host = HOST_PATTERN.test(request.host)
    ? request.host
    : `${services.config.HOST}:${services.config.PORT}`;
  return `${request.protocol}://${host}`;
}
