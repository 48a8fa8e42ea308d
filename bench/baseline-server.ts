// The baseline for the HTTP benchmarks: a bare Fastify app with one JSON route, nothing else.

import Fastify from "fastify";

const app = Fastify({ logger: false });
app.get("/json", async () => ({ hello: "world" }));
app.post("/json", async (request) => ({ received: request.body !== undefined }));

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" });
process.stdout.write(`Server listening at ${address}\n`);
process.on("SIGTERM", () => {
  void app.close().then(() => process.exit(0));
});
