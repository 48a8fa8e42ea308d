// What a request no route serves is answered, whatever its body (never read): 405 with Allow on a path a
// route serves with other methods, else 404, both problem documents; and a browser asking for / is sent
// to the console. The same answer serves a request whose method Node cannot even parse (client-errors.ts).

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors.js";
import { negotiate } from "./discovery-routes.js";
import { sendProblem } from "./problem-reply.js";

/** Every route's path with the methods it takes, filled as routes are added (the onRoute hook). */
export class RouteMethods {
  private readonly paths = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(url: string, methods: string[]): void {
    const entry = this.paths.get(url) ?? {
      // find-my-way's syntax: `:name` is one segment, `*` the rest of the path.
      pattern: new RegExp(
        `^${url
          .split(/(:[A-Za-z_]+|\*)/)
          .map((part) =>
            part === "*"
              ? ".*"
              : part.startsWith(":")
                ? "[^/]+"
                : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
          )
          .join("")}$`,
      ),
      methods: new Set<string>(),
    };
    for (const method of methods) entry.methods.add(method);
    this.paths.set(url, entry);
  }

  /**
   * The methods some route takes at `path` (every route whose pattern matches it: GET
   * /orders/:order_id serves /orders/cancel as well as POST /orders/cancel does), or null when none does.
   */
  allowedAt(path: string): string[] | null {
    const methods = new Set<string>();
    for (const { pattern, methods: taken } of this.paths.values()) {
      if (pattern.test(path)) for (const m of taken) methods.add(m);
    }
    return methods.size > 0 ? [...methods] : null;
  }
}

/** The problem for `method` at `path`, which no route takes: 405 with the Allow value, or 404. */
export function unroutedProblem(
  routes: RouteMethods,
  method: string,
  path: string,
): { error: ApiError; allow?: string } {
  const allowed = routes.allowedAt(path);
  if (allowed === null) {
    return { error: new ApiError("not_found", `No endpoint at ${method} ${path}.`) };
  }
  return {
    error: new ApiError("method_not_allowed", `${method} is not allowed here; use ${allowed.join(" or ")}.`),
    allow: allowed.join(", "),
  };
}

/** A browser (Accept prefers HTML) asking for the root: the console is the page to show. */
function wantsConsole(request: FastifyRequest, path: string): boolean {
  if (path !== "/" || (request.method !== "GET" && request.method !== "HEAD")) return false;
  return (
    negotiate(request.headers.accept, ["application/problem+json", "application/json", "text/html"]) ===
    "text/html"
  );
}

/**
 * Collects every route's methods (routes added after this) and answers what none serves; returns that
 * answer, for the error handler to give a request no route serves whose body could not be read.
 */
export function registerNotFound(
  app: FastifyInstance,
  routes: RouteMethods,
): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  app.addHook("onRoute", (route) => {
    // A route that only refuses its method (MCP's GET and DELETE answer 405 themselves) takes none.
    if ((route.config as { refusesMethod?: boolean } | undefined)?.refusesMethod) return;
    routes.add(route.url, Array.isArray(route.method) ? route.method : [route.method]);
  });
  const answer = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0] ?? "";
    if (path === "/") reply.header("Vary", "Accept");
    if (wantsConsole(request, path)) return reply.redirect("/console/", 302);
    const { error, allow } = unroutedProblem(routes, request.method, path);
    if (allow !== undefined) reply.header("Allow", allow);
    return sendProblem(request, reply, error);
  };
  app.setNotFoundHandler(answer);
  return answer;
}
