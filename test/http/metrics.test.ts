// GET /metrics: Prometheus text with requests by operation and status, durations, dispatch latency,
// limiter decisions and store gauges.

import { describe, expect, it } from "vitest";
import { createHarness, ORDER_PATH, QUOTE_PATH, validOrder, validQuote } from "../helpers/harness.js";

function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics", () => {
  it("counts requests, durations, dispatch latency and limiter decisions", async () => {
    const h = await createHarness();
    await h.post(QUOTE_PATH, validQuote(), { "x-api-key": h.sandboxKey });
    await h.post(QUOTE_PATH, validQuote(), { "x-api-key": h.sandboxKey });
    await h.post(ORDER_PATH, validOrder(), { "x-api-key": h.sandboxKey });
    await h.post(QUOTE_PATH, validQuote(), {});
    const res = await h.get("/metrics");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    const text = res.body;
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
});
