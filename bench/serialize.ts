// Serialisation micro-benchmark: the hot responses (a quote, a new order) as REST sends them today
// (JSON.stringify) against Fastify's schema serializer (fast-json-stringify compiled, by Fastify's own
// compiler, from the route's response schema: the operation's output schema as JSON Schema), and what
// VALIDATE_RESPONSES costs per response. The results are what the real handlers return, captured from one
// quote and one order on a fresh embedded store. The compiler is Fastify's own dependency, imported here
// for the measurement only.
//
//   npm run bench:serialize        (BENCH_ITERATIONS calls per round, default 200000)

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";
import { z } from "zod";
import { bootstrap } from "../src/bootstrap.js";
import { loadConfig } from "../src/config.js";
import { responseIssues } from "../src/operations/kernel/gate.js";
import type { AnyOperation } from "../src/operations/kernel/operation.js";
import { quoteOperation } from "../src/operations/matching/quote.js";
import { orderOperation } from "../src/operations/orders/create-order.js";
import { createServices } from "../src/services/create-services.js";
import { openSqliteStore } from "../src/storage/sqlite.js";
import { buildApp } from "../src/transports/http/app.js";

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200_000);
const ROUNDS = 5;

/** One real result of each operation, as its handler returned it. */
async function capture(): Promise<Map<AnyOperation, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), "fd-bench-serialize-"));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent", SANDBOX_SIMULATION: "false" });
  const store = openSqliteStore(join(dir, "bench.sqlite"));
  const services = createServices(config, store);
  const { sandboxKey } = await bootstrap(store, services.keys);
  await services.pool.load();
  const app = await buildApp(services);
  const results = new Map<AnyOperation, unknown>();
  for (const op of [quoteOperation, orderOperation] as AnyOperation[]) {
    const handler = op.handler;
    op.handler = async (ctx, input) => {
      const result = await handler(ctx, input);
      results.set(op, result);
      return result;
    };
    const res = await app.inject({
      method: "POST",
      url: op.http.path,
      headers: { "content-type": "application/json", "x-api-key": sandboxKey ?? "" },
      payload: JSON.stringify({ ...op.example, description: "Kitchen sink leaking under the cabinet" }),
    });
    op.handler = handler;
    if (res.statusCode !== 200) throw new Error(`${op.id}: ${res.statusCode} ${res.body}`);
  }
  await app.close();
  await services.audit.stop();
  await services.limiter.close();
  await services.fetcher.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return results;
}

/** Fastify's default serializer compiler, given the response schema a route would declare. */
function schemaSerializer(op: AnyOperation): (data: unknown) => string {
  const schema = z.toJSONSchema(op.output, { io: "output", target: "draft-07", unrepresentable: "any" });
  const compile = SerializerSelector()({}, {});
  return compile({ schema, method: op.http.method, url: op.http.path, httpStatus: "200" });
}

/**
 * CPU ns per call of each function: ROUNDS rounds of ITERATIONS calls, the functions interleaved within a
 * round so that drift on a shared machine hits them alike; the median round of each.
 */
function time(fns: Array<() => unknown>): number[] {
  for (const fn of fns) for (let i = 0; i < ITERATIONS / 10; i++) fn(); // warm-up
  const rounds: number[][] = fns.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [k, fn] of fns.entries()) {
      const start = process.cpuUsage();
      for (let i = 0; i < ITERATIONS; i++) fn();
      const used = process.cpuUsage(start);
      rounds[k]?.push(((used.user + used.system) * 1000) / ITERATIONS);
    }
  }
  return rounds.map((r) => r.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] as number);
}

const cells = (values: Array<string | number>) =>
  values.map((v, i) => String(v).padEnd(i === 0 ? 15 : 12)).join("");

async function main(): Promise<void> {
  const results = await capture();
  process.stdout.write(
    `node ${process.version}, ${ITERATIONS} calls per round, median of ${ROUNDS} rounds, CPU ns per call\n` +
      "fjs: fast-json-stringify; same JSON: byte for byte; same value: the same object once parsed; check: " +
      "what VALIDATE_RESPONSES adds\n\n" +
      `${cells(["response", "bytes", "stringify", "fjs", "fjs/str", "same JSON", "same value", "check"])}\n`,
  );
  for (const [op, result] of results) {
    const fjs = schemaSerializer(op);
    const json = JSON.stringify(result);
    const fast = fjs(result);
    const [stringify = 0, schema = 0, check = 0] = time([
      () => JSON.stringify(result),
      () => fjs(result),
      () => responseIssues(op, result),
    ]);
    process.stdout.write(
      `${cells([
        op.id,
        json.length,
        stringify.toFixed(0),
        schema.toFixed(0),
        (schema / stringify).toFixed(2),
        fast === json ? "yes" : "no",
        isDeepStrictEqual(JSON.parse(fast), JSON.parse(json)) ? "yes" : "no",
        check.toFixed(0),
      ])}\n`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
