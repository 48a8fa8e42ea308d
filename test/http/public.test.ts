// The public operations: estimate (limited per client IP), trade index and evals (unlimited).

import { beforeAll, describe, expect, it } from "vitest";
import { evalsOutput } from "../../src/operations/evals/evals.js";
import { estimateOutput } from "../../src/operations/matching/estimate.js";
import { tradeIndexOutput } from "../../src/operations/matching/trade-index.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, ESTIMATE_PATH, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";
import { isWithinSketch } from "../helpers/sketch.js";

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

describe("POST /api/dispatch/v1/estimate", () => {
  it("returns an ordered price range without a key", async () => {
    const res = await h.post(ESTIMATE_PATH, {
      trade: "Electrical",
      location: { state: "ny" },
      urgency: "emergency",
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = estimateOutput.parse(res.json());
    expect(body).toMatchObject({ trade: "electrical", state: "NY", urgency: "emergency", estimated: true });
    expect(body.low_cents).toBeLessThanOrEqual(body.typical_cents);
    expect(body.typical_cents).toBeLessThanOrEqual(body.high_cents);
    expect(body.typical.urgency_multiplier).toBe(1.75);
  });

  it("uses the same model as the trade index", async () => {
    const index = (await h.get("/api/dispatch/index")).json();
    const plumbing = index.trades.find((t: { code: string }) => t.code === "plumbing");
    // A state whose regional factor is close to 1 would blur this; compute the factor-adjusted rate.
    const est = (await h.post(ESTIMATE_PATH, { trade: "plumbing", location: { state: "PA" } })).json();
    expect(est.typical.hourly_rate_cents).toBe(
      Math.round(plumbing.wage_reference.median_hourly_usd * 3 * est.regional_factor * 100),
    );
  });

  it("validates like the keyed operations", async () => {
    const body = expectProblem(
      await h.post(ESTIMATE_PATH, { trade: "x", location: { state: "QQ" } }),
      422,
      "validation_failed",
    );
    expect(body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["location.state", "trade"]);
  });

  it("is limited per client IP, with rate-limit fields, and 429 past the burst", async () => {
    const small = await createHarness({ PUBLIC_RATE_LIMIT_PER_MINUTE: "60", PUBLIC_RATE_LIMIT_BURST: "3" });
    const body = { trade: "hvac", location: { state: "TX" } };
    for (let i = 0; i < 3; i++) {
      const ok = await small.post(ESTIMATE_PATH, body);
      expect(ok.statusCode).toBe(200);
      expect(ok.headers["ratelimit-policy"]).toBe('"per-ip";q=60;w=60;fsd-burst=3');
      expect(ok.headers["x-ratelimit-remaining"]).toBe(String(2 - i));
    }
    const limited = await small.post(ESTIMATE_PATH, body);
    expectProblem(limited, 429, "rate_limited");
    expect(limited.headers["retry-after"]).toBe("1");
    // Another client address has its own bucket.
    const other = await small.app.inject({
      method: "POST",
      url: ESTIMATE_PATH,
      remoteAddress: "127.0.0.2",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify(body),
    });
    expect(other.statusCode).toBe(200);
    await small.close();
  });
});

describe("GET /api/dispatch/index", () => {
  it("lists the 8 trade verticals with baseline routine rates and cited methodology", async () => {
    const res = await h.get("/api/dispatch/index");
    expect(res.statusCode).toBe(200);
    const body = tradeIndexOutput.parse(res.json());
    expect(body.trades.map((t) => t.code)).toEqual([
      "plumbing",
      "electrical",
      "hvac",
      "appliance_repair",
      "locksmith",
      "roofing",
      "pest_control",
      "handyman",
    ]);
    for (const t of body.trades) {
      expect(t.baseline_hourly_rate_cents).toBeGreaterThan(5000);
      expect(t.urgency_multiplier).toBe(1);
    }
    expect(body.methodology.disclaimer).toMatch(/not the survey's figures verbatim/);
    expect(body.methodology.sources.map((s) => s.name).join(" ")).toMatch(/OEWS/);
    expect(res.headers.ratelimit).toBeUndefined();
  });

  it("every index code is accepted as a trade", async () => {
    const codes = (await h.get("/api/dispatch/index")).json().trades.map((t: { code: string }) => t.code);
    for (const trade of codes) {
      expect((await h.post(ESTIMATE_PATH, { trade, location: { state: "OH" } })).statusCode).toBe(200);
    }
  });
});

describe("GET /api/dispatch/analytics/evals", () => {
  it("defaults to rolling_30d, is estimated and marks lifecycle figures as not yet measured", async () => {
    const res = await h.get("/api/dispatch/analytics/evals");
    expect(res.statusCode).toBe(200);
    const body = evalsOutput.parse(res.json());
    expect(body.period).toBe("rolling_30d");
    expect(body.estimated).toBe(true);
    expect(body.goal_fulfillment.completion_rate).toEqual({ value: null, sample_size: 0, unit: "ratio" });
    expect(body.trust_signals.human_override_rate.value).toBeNull();
    expect(Object.keys(body.provenance)).toContain("operations.dispatch_latency_p50");
    expect(body.published_targets.dispatch_latency_p50_ms).toBe(340);
  });

  it.each(["rolling_7d", "rolling_90d"])("accepts period=%s", async (period) => {
    expect((await h.get(`/api/dispatch/analytics/evals?period=${period}`)).json().period).toBe(period);
  });

  it("answers 422 for any other period", async () => {
    const body = expectProblem(
      await h.get("/api/dispatch/analytics/evals?period=rolling_1y"),
      422,
      "validation_failed",
    );
    expect(body.errors[0].field).toBe("period");
  });

  it("computes counts and latency from live orders only, never sandbox", async () => {
    const fresh = await createHarness();
    await fresh.services.store.contractors.insert([liveContractor()], testRecord());
    await fresh.services.pool.load();
    const live = await fresh.key("acme", "live");
    const order = { trade: "plumbing", location: { state: "CA", zip: "94103" }, description: "Leak" };
    for (let i = 0; i < 3; i++)
      expect((await fresh.post(ORDER_PATH, order, { "x-api-key": live })).json().status).toBe("offered");
    expect(
      (await fresh.post(ORDER_PATH, { ...order, trade: "roofing" }, { "x-api-key": live })).json().status,
    ).toBe("needs_dispatcher");
    for (let i = 0; i < 5; i++) await fresh.post(ORDER_PATH, order, { "x-api-key": fresh.sandboxKey });

    const body = (await fresh.get("/api/dispatch/analytics/evals?period=rolling_7d")).json();
    // The published latency is the nearest-rank median of the live orders' stored latencies (whatever
    // this machine's speed made them).
    const liveOrders = (await fresh.services.store.orders.list({ livemode: true, limit: 10 })).filter(
      (o) => o.dispatch_latency_ms !== null,
    );
    const latencies = liveOrders.map((o) => Number(o.dispatch_latency_ms)).sort((a, b) => a - b);
    expect(body.operations.orders_received).toBe(4);
    expect(body.operations.orders_matched).toBe(3);
    expect(body.operations.orders_awaiting_dispatcher).toBe(1);
    expect(body.operations.auto_match_rate.value).toBe(0.75);
    expect(body.operations.dispatch_latency_p50.sample_size).toBe(3);
    expect(body.operations.dispatch_latency_p50.value).toBeGreaterThan(0);
    expect(body.operations.dispatch_latency_p95.value).toBeGreaterThanOrEqual(
      body.operations.dispatch_latency_p50.value,
    );
    expect(latencies).toHaveLength(3);
    // From the sketch: within its stated error (1 %) of the exact value, published to the microsecond.
    expect(isWithinSketch(body.operations.dispatch_latency_p50.value, latencies[1] as number)).toBe(true);
    expect(isWithinSketch(body.operations.dispatch_latency_p95.value, latencies[2] as number)).toBe(true);
    await fresh.close();
  });

  it("is not rate limited", async () => {
    for (let i = 0; i < 250; i++) {
      const res = await h.get("/api/dispatch/analytics/evals");
      expect(res.statusCode).toBe(200);
    }
  });
});
