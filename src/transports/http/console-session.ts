// The web console's session exchange (POST, GET and DELETE /console/session) and how the REST routes take
// its cookie in place of an x-api-key header. The cookie is HttpOnly, SameSite=Strict, Path=/ and Secure
// over https; a state-changing request that comes with it (anything but GET) must also come from this
// service's own origin (Origin) and carry the session's CSRF token (x-csrf-token). An explicit x-api-key
// wins over the cookie and needs neither: it is not ambient authority a browser adds by itself.

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { csrfMatches, type ResolvedSession } from "../../auth/console-sessions.js";
import { ApiError, validationError } from "../../errors.js";
import { type Admission, admit, clientIpPolicy, fieldErrors } from "../../operations/kernel/gate.js";
import type { AnyOperation, Services } from "../../operations/kernel/operation.js";
import { baseUrlOf } from "./base-url.js";
import { firstHeader } from "./headers.js";

const SESSION_COOKIE = "fd_console";
const CSRF_HEADER = "x-csrf-token";
const SESSION_PATH = "/console/session";

const exchangeSchema = z.strictObject({ api_key: z.string().min(1).max(200) });

/** The session cookie's value in the request, if it sent one. */
export function sessionCookieOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** This service's origin as the request reached it (PUBLIC_BASE_URL when set, else its Host). */
function ownOrigin(services: Services, request: FastifyRequest): string {
  return new URL(baseUrlOf(services, request)).origin;
}

/** Refuses a request whose Origin is not this service's own (403 forbidden_origin); `required`: also one
 * without an Origin header. */
function checkOrigin(services: Services, request: FastifyRequest, required: boolean): void {
  const origin = firstHeader(request.headers.origin);
  if (origin === undefined && !required) return;
  const own = ownOrigin(services, request);
  if (origin?.replace(/\/+$/, "") !== own) {
    throw new ApiError(
      "forbidden_origin",
      origin === undefined
        ? "A state-changing console request must carry an Origin header."
        : `Console requests from ${origin} are refused; only ${own} may send them.`,
    );
  }
}

/** The checks a state-changing request with the cookie passes: own origin, then the session's CSRF token. */
function checkStateChange(request: FastifyRequest, session: ResolvedSession): void {
  if (!csrfMatches(session, firstHeader(request.headers[CSRF_HEADER]))) {
    throw new ApiError(
      "csrf_token_mismatch",
      `A state-changing console request must carry the session's CSRF token in ${CSRF_HEADER} (GET ${SESSION_PATH} answers it).`,
    );
  }
}

/**
 * The gate for an operation called with the console's cookie: the session resolved to its key's stored
 * hash, then the same checks as for the key itself (admit: revocation, kind, rate limit).
 */
export async function admitSession(
  op: AnyOperation,
  services: Services,
  request: FastifyRequest,
  cookie: string,
): Promise<Admission> {
  if (!services.config.DISPATCH_ENABLED) {
    throw new ApiError("dispatch_not_configured", "The dispatch API is not enabled on this server.");
  }
  const changes = request.method !== "GET" && request.method !== "HEAD";
  if (changes) checkOrigin(services, request, true);
  const session = await services.sessions.resolve(cookie);
  if (changes) checkStateChange(request, session);
  return admit(op, services, { apiKey: undefined, storedKeyHash: session.keyHash, clientIp: request.ip });
}

function cookieHeader(services: Services, request: FastifyRequest, value: string, maxAge: number): string {
  const secure =
    request.protocol === "https" || services.config.PUBLIC_BASE_URL?.startsWith("https:") === true;
  return [
    `${SESSION_COOKIE}=${value}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${maxAge}`,
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

/** What the console learns of its session: the key's kind and scope, and the CSRF token. */
function sessionBody(
  principal: { kind: string; livemode: boolean; contractorId: string | null; accountId: string },
  csrfToken: string,
  expiresAt: string,
) {
  return {
    kind: principal.kind,
    livemode: principal.livemode,
    account_id: principal.accountId,
    contractor_id: principal.contractorId,
    csrf_token: csrfToken,
    expires_at: expiresAt,
  };
}

export function registerConsoleSession(app: FastifyInstance, services: Services): void {
  const idleSeconds = services.config.CONSOLE_SESSION_IDLE_MINUTES * 60;
  const noStore = (reply: FastifyReply) => reply.header("Cache-Control", "no-store");

  // Its own plugin scope, for the form body the sign-in page may post without script.
  app.register(async (scope) => {
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 4096 },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );
    scope.post(SESSION_PATH, { schema: { hide: true } }, async (request, reply) => {
      noStore(reply);
      // A page elsewhere must not sign a browser in under a key of its choosing (login CSRF).
      checkOrigin(services, request, false);
      const decision = await services.limiter.consume(`ip:${request.ip}`, clientIpPolicy(services));
      if (!decision.allowed) {
        throw new ApiError("rate_limited", `Rate limit exceeded; retry in ${decision.retryAfterSeconds} s.`, {
          extra: { retry_after_seconds: decision.retryAfterSeconds },
        });
      }
      const parsed = exchangeSchema.safeParse(request.body ?? {});
      if (!parsed.success) throw validationError(fieldErrors(parsed.error));
      const opened = await services.sessions.open(parsed.data.api_key);
      reply.header("Set-Cookie", cookieHeader(services, request, opened.id, idleSeconds));
      const form = request.headers["content-type"]?.startsWith("application/x-www-form-urlencoded");
      if (form) return reply.redirect("/console/", 303);
      return sessionBody(opened.principal, opened.csrfToken, opened.expiresAt);
    });
  });

  app.get(SESSION_PATH, { schema: { hide: true } }, async (request, reply) => {
    noStore(reply);
    const cookie = sessionCookieOf(request);
    if (cookie === undefined) throw new ApiError("invalid_session", "Not signed in to the console.");
    const session = await services.sessions.resolve(cookie);
    const principal = await services.keys.authenticateHash(session.keyHash);
    return sessionBody(principal, session.csrfToken, session.expiresAt);
  });

  app.delete(SESSION_PATH, { schema: { hide: true } }, async (request, reply) => {
    noStore(reply);
    const cookie = sessionCookieOf(request);
    if (cookie !== undefined) {
      checkOrigin(services, request, true);
      const session = await services.sessions.resolve(cookie).catch(() => null);
      // An expired or unknown session needs no token to be cleared; a live one is ended by its console only.
      if (session) {
        checkStateChange(request, session);
        await services.sessions.close(cookie);
      }
    }
    reply.header("Set-Cookie", cookieHeader(services, request, "", 0));
    return reply.status(204).send();
  });
}
