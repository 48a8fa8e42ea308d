// The product floor over HTTP (issue 29): product-floor.ts says what it writes and why. Same framework,
// body schema and handling as the floor (floor-server.ts), so that only the writes differ.
//
//   node dist/bench/product-floor-server.js      (PORT, PRODUCT_FLOOR_DB: the SQLite file; run.ts starts it)

import Fastify from "fastify";
import { type OrderBody, orderBody } from "./floor-common.js";
import { openProductFloor } from "./product-floor.js";

const floor = openProductFloor(process.env.PRODUCT_FLOOR_DB ?? "product-floor.sqlite");
const app = Fastify({ logger: false });
app.get("/healthz", async () => ({ ok: true }));
app.post<{ Body: OrderBody }>("/order", { schema: { body: orderBody } }, (request) =>
  floor.order(request.body),
);

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" });
process.stdout.write(`Product floor listening at ${address}\n`);
process.on("SIGTERM", () => {
  void (async () => {
    await app.close();
    await floor.close();
    process.exit(0);
  })();
});
