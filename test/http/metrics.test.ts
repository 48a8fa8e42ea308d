// The metrics listener: Prometheus text at GET /metrics on its own port (loopback by default), with
// requests by operation and status, durations, dispatch latency, limiter decisions and store gauges; the
// API port does not serve it.

import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import {
  closeMetrics,
  createMetricsServer,
  listenMetrics,
  type MetricsSource,
} from "../../src/transports/http/metrics-server.js";
import { createHarness, ORDER_PATH, QUOTE_PATH, validOrder, validQuote } from "../helpers/harness.js";

function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await closeMetrics(s);
});

/** A metrics listener on a free loopback port; returns its scrape URL. */
async function listen(source: MetricsSource): Promise<string> {
  const server = createMetricsServer(source, createLogger({ LOG_LEVEL: "silent" }));
  servers.push(server);
  return listenMetrics(server, 0, "127.0.0.1");
}

describe("the metrics listener", () => {
  it("counts requests, durations, dispatch latency and limiter decisions", async () => {
    const h = await createHarness();
    await h.post(QUOTE_PATH, validQuote(), { "x-api-key": h.sandboxKey });
    await h.post(QUOTE_PATH, validQuote(), { "x-api-key": h.sandboxKey });
    await h.post(ORDER_PATH, validOrder(), { "x-api-key": h.sandboxKey });
    await h.post(QUOTE_PATH, validQuote(), {});
    const { registry } = h.services.metrics;
    const url = await listen({ contentType: registry.contentType, scrape: () => registry.metrics() });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(value(text, 'fsd_http_requests_total{operation="dispatchQuote",method="POST",status="200"}')).toBe(
      2,
    );
    expect(value(text, 'fsd_http_requests_total{operation="dispatchQuote",method="POST",status="401"}')).toBe(
      1,
    );
    expect(value(text, 'fsd_http_requests_total{operation="dispatchOrder",method="POST",status="200"}')).toBe(
      1,
    );
    expect(
      value(text, 'fsd_http_request_duration_seconds_count{operation="dispatchQuote",status="200"}'),
    ).toBe(2);
    expect(value(text, "fsd_dispatch_latency_seconds_count")).toBe(1);
    const source = h.config.REDIS_URL ? "redis" : "memory";
    expect(value(text, `fsd_rate_limiter_decisions_total{source="${source}",outcome="allowed"}`)).toBe(3);
    expect(value(text, "fsd_store_write_queue_depth")).toBe(0);
    if (h.services.store.pool) {
      expect(value(text, 'fsd_store_pool_connections{state="total"}')).toBeGreaterThan(0);
    }
    expect(text).toContain("process_cpu_seconds_total");
  });

  it("is not served on the API port", async () => {
    const h = await createHarness();
    const res = await h.get("/metrics");
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: "not_found" });
  });

  it("answers 404 off /metrics, 405 to other methods, and 503 when a scrape cannot be collected", async () => {
    let fail = false;
    const url = await listen({
      contentType: "text/plain; version=0.0.4; charset=utf-8",
      scrape: async () => {
        if (fail) throw new Error("a worker did not answer");
        return "up 1\n";
      },
    });
    expect(await (await fetch(url)).text()).toBe("up 1\n");
    expect((await fetch(url.replace("/metrics", "/"))).status).toBe(404);
    const post = await fetch(url, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    fail = true;
    const failed = await fetch(url);
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBe("1");
  });

  it("refuses to start on a port already taken, naming it and the setting", async () => {
    const url = await listen({ contentType: "text/plain", scrape: async () => "" });
    const port = Number(new URL(url).port);
    const second = createMetricsServer(
      { contentType: "text/plain", scrape: async () => "" },
      createLogger({ LOG_LEVEL: "silent" }),
    );
    await expect(listenMetrics(second, port, "127.0.0.1")).rejects.toThrow(
      `metrics listener: 127.0.0.1:${port} is in use; set METRICS_PORT`,
    );
  });
});

describe("metrics settings", () => {
  it("listen on loopback port 9464 by default; off (or empty) turns the listener off", () => {
    const defaults = loadConfig({});
    expect(defaults.METRICS_PORT).toBe(9464);
    expect(defaults.METRICS_HOST).toBe("127.0.0.1");
    expect(loadConfig({ METRICS_PORT: "off" }).METRICS_PORT).toBeNull();
    expect(loadConfig({ METRICS_PORT: "" }).METRICS_PORT).toBeNull();
    expect(loadConfig({ METRICS_PORT: "0" }).METRICS_PORT).toBe(0);
    expect(() => loadConfig({ METRICS_PORT: "70000" })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ METRICS_PORT: "yes" })).toThrow(/METRICS_PORT/);
  });
});
