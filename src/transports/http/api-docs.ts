// The API reference at /docs: Swagger UI (@fastify/swagger-ui, which ships Swagger UI's files inside the
// package) rendering /openapi.json, every file from this origin, under the console's Content-Security-
// Policy (no inline script or style, no other origin). "Try it out" sends the x-api-key the reader pastes
// under Authorize; the page holds no key of its own and keeps none (persistAuthorization off).

import fastifySwaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { secure } from "./console-assets.js";

const DOCS_PATH = "/docs";

export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  await app.register(async (docs) => {
    // Every response under /docs, the plugin's static files included, gets the console's headers.
    docs.addHook("onSend", (_request, reply, payload, done) => {
      secure(reply);
      done(null, payload);
    });
    await docs.register(fastifySwaggerUi, {
      routePrefix: DOCS_PATH,
      theme: { title: "field-dispatch API reference" },
      uiConfig: {
        // No top bar: its box loads a document from any URL, which this page has no use for.
        layout: "BaseLayout",
        deepLinking: true,
        displayOperationId: true,
        docExpansion: "list",
        defaultModelsExpandDepth: 0,
        filter: true,
        tryItOutEnabled: true,
        persistAuthorization: false,
        displayRequestDuration: true,
      },
      uiHooks: {
        // The plugin would serve its own copy of the document at /docs/json and /docs/yaml: send the page
        // (and anyone else) to the one /openapi.json, compact, cached by ETag and compressed.
        onRequest: (request, reply, done) => {
          const path = request.url.split("?")[0];
          if (path === `${DOCS_PATH}/json`) return reply.redirect("/openapi.json", 302);
          if (path === `${DOCS_PATH}/yaml`) return reply.redirect("/openapi.yaml", 302);
          done();
        },
      },
    });
  });
}
