// HTTP protocol behaviour: problem documents for malformed, oversized and non-JSON bodies, undecodable
// paths, unknown paths and methods, Request-Id, health and readiness, the OpenAPI document.

import { beforeAll, describe, expect, it } from "vitest";
import { WEBHOOK_EVENT_TYPES } from "../../src/webhooks/events.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH, validQuote } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

describe("HTTP protocol", () => {
  it("answers 400 invalid_json to malformed JSON", async () => {
    const res = await h.post(QUOTE_PATH, '{"trade": "plumbing",', { "x-api-key": h.sandboxKey });
    expectProblem(res, 400, "invalid_json");
  });

  it("answers 413 payload_too_large to a body over 1 MiB", async () => {
    const huge = JSON.stringify({ ...validQuote(), description: "x".repeat(1024 * 1024) });
    expectProblem(await h.post(ORDER_PATH, huge, { "x-api-key": h.sandboxKey }), 413, "payload_too_large");
  });

  it("answers 415 unsupported_media_type to a non-JSON content type", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
      const res = await h.app.inject({
        method: "POST",
        url: QUOTE_PATH,
        headers: { "content-type": type, "x-api-key": h.sandboxKey },
        payload: "trade=plumbing",
      });
      expectProblem(res, 415, "unsupported_media_type");
    }
  });

  it("accepts application/json with a charset", async () => {
    const res = await h.post(QUOTE_PATH, validQuote(), {
      "x-api-key": h.sandboxKey,
      "content-type": "application/json; charset=utf-8",
    });
    expect(res.statusCode).toBe(200);
  });

  it("checks the key before reading the body (401 beats 400)", async () => {
    expectProblem(await h.post(QUOTE_PATH, "{broken", {}), 401, "missing_api_key");
  });

  it("answers 404 problem for an unknown path and 405 with Allow for a wrong method", async () => {
    expectProblem(await h.get("/api/nope"), 404, "not_found");
    const res = await h.get(QUOTE_PATH);
    expectProblem(res, 405, "method_not_allowed");
    expect(res.headers.allow).toBe("POST");
  });

  it("answers 400 invalid_request to a path the router cannot decode or with an over-long parameter", async () => {
    const key = { "x-api-key": h.sandboxKey };
    // %FF is no UTF-8; %ED%A0%80 is the bytes of a lone surrogate, which UTF-8 cannot hold.
    for (const id of ["%FF", "%ED%A0%80"]) {
      const body = expectProblem(await h.get(`/api/dispatch/v1/orders/${id}`, key), 400, "invalid_request");
      expect(body.detail).toMatch(/percent-encoded/);
    }
    const long = await h.get(`/api/dispatch/v1/orders/ord_${"x".repeat(200)}`, key);
    expect(expectProblem(long, 400, "invalid_request").detail).toMatch(/too long/);
  });

  it("puts a Request-Id on every response and echoes a sane incoming one", async () => {
    for (const res of [
      await h.get("/healthz"),
      await h.get("/api/nope"),
      await h.get("/api/dispatch/index"),
    ]) {
      expect(res.headers["request-id"]).toMatch(/^req_/);
    }
    const echoed = await h.get("/healthz", { "request-id": "client-abc.123" });
    expect(echoed.headers["request-id"]).toBe("client-abc.123");
    const replaced = await h.get("/healthz", { "request-id": "bad id with spaces" });
    expect(replaced.headers["request-id"]).toMatch(/^req_/);
  });

  it("serves liveness and readiness", async () => {
    expect((await h.get("/healthz")).json()).toEqual({ status: "ok" });
    expect((await h.get("/readyz")).json()).toEqual({
      status: "ready",
      checks: { store: "ok", rate_limiter: h.config.REDIS_URL ? "ok" : "in_memory" },
    });
  });

  it("answers 503 from /readyz when the store is unreachable", async () => {
    const other = await createHarness();
    other.services.store.ping = async () => {
      throw new Error("store down");
    };
    expectProblem(await other.get("/readyz"), 503, "service_unavailable");
    await other.close();
  });

  it("documents every operation in OpenAPI 3.1 with the problem schema for errors", async () => {
    const doc = (await h.get("/openapi.json")).json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    expect(doc.components.securitySchemes["x-api-key"]).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "x-api-key",
    });
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p as object)) as Array<{
      operationId: string;
      responses: Record<string, unknown>;
    }>;
    expect(ops.map((o) => o.operationId).sort()).toEqual(
      [
        "dispatchEstimate",
        "dispatchEvals",
        "dispatchEvalsSeries",
        "dispatchIndex",
        "dispatchOrder",
        "dispatchOrderStatus",
        "dispatchOrderList",
        "dispatchEvents",
        "dispatchOrderCancel",
        "dispatchNteDecision",
        "webhooksConfig",
        "webhooksSetEndpoint",
        "webhooksRotateSecret",
        "webhooksDeliveries",
        "webhooksRedeliver",
        "webhooksEnableEndpoint",
        "contractorRequestNte",
        "contractorInvoice",
        "contractorOffers",
        "contractorAcceptOffer",
        "contractorDeclineOffer",
        "contractorJobs",
        "contractorReportStatus",
        "dispatcherOrders",
        "dispatcherAssign",
        "dispatcherCancel",
        "dispatcherPool",
        "dispatcherContractors",
        "dispatcherContractor",
        "dispatcherScheduleOptimize",
        "dispatcherScheduleApply",
        "dispatchQuote",
        "attestVerify",
        "attestCheckpoint",
        "attestCheckpointAt",
        "attestConsistency",
        "attestKeys",
        "auditList",
        "contractorAuditList",
        "dispatcherAuditList",
        "dispatchAvailability",
        "contractorTimeOff",
        "contractorTimeOffAdd",
        "contractorTimeOffRemove",
        "dispatcherTimeOff",
        "dispatcherTimeOffAdd",
        "dispatcherTimeOffRemove",
        "agenticCommerceProbe",
      ].sort(),
    );
    const quote = doc.paths["/api/dispatch/v1/quote"].post;
    expect(Object.keys(quote.responses).sort()).toEqual([
      "200",
      "400",
      "401",
      "403",
      "413",
      "415",
      "422",
      "429",
      "500",
      "503",
    ]);
    expect(JSON.stringify(doc)).toContain("contractor_ref");
    expect(JSON.stringify(doc)).toContain("valid_for_minutes");
    // Every webhook event type, its Standard Webhooks headers, and an envelope naming the order component.
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    const accepted = doc.webhooks["order.accepted"].post;
    expect(accepted.parameters.map((p: { name: string }) => p.name)).toEqual([
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
    ]);
    const envelope = accepted.requestBody.content["application/json"].schema;
    expect(envelope.properties.type.const).toBe("order.accepted");
    expect(envelope.properties.data.properties.order.$ref).toBe("#/components/schemas/OrderSummary");
    expect(doc.components.schemas.OrderSummary).toBeDefined();
  });

  it("documents each problem type at its type URL", async () => {
    const res = await h.get("/problems/rate_limited");
    expect(res.json()).toMatchObject({ code: "rate_limited", status: 429 });
    expectProblem(await h.get("/problems/nope"), 404, "not_found");
  });
});
