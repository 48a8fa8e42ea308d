// What a request no route serves is answered: 405 with Allow on a path an operation serves with another
// method, else 404; both problem documents.

import type { FastifyInstance } from "fastify";
import { ApiError } from "../../errors.js";
import { OPERATIONS } from "../../operations/registry.js";
import { sendProblem } from "./problem-reply.js";

/** Path patterns of every route, to answer 405 (with Allow) instead of 404 on a known path. */
function methodsByPath(): Array<{ pattern: RegExp; methods: string[] }> {
  const map = new Map<string, string[]>();
  for (const op of OPERATIONS) {
    const list = map.get(op.http.path) ?? [];
    list.push(op.http.method);
    map.set(op.http.path, list);
  }
  return [...map.entries()].map(([path, methods]) => ({
    pattern: new RegExp(`^${path.replace(/:[a-z_]+/g, "[^/]+")}$`),
    methods,
  }));
}

export function registerNotFound(app: FastifyInstance): void {
  const known = methodsByPath();
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const route = known.find((r) => r.pattern.test(path));
    if (route) {
      reply.header("Allow", route.methods.join(", "));
      return sendProblem(
        request,
        reply,
        new ApiError(
          "method_not_allowed",
          `${request.method} is not allowed here; use ${route.methods.join(" or ")}.`,
        ),
      );
    }
    return sendProblem(
      request,
      reply,
      new ApiError("not_found", `No endpoint at ${request.method} ${path}.`),
    );
  });
}
