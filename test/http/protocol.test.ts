// HTTP protocol behaviour: problem documents for malformed, oversized and non-JSON bodies, undecodable
// paths, unknown paths and methods, Request-Id, health and readiness, the OpenAPI document.

import { connect } from "node:net";
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

  it("answers 405 with Allow, not 400, to a method the path does not take, whatever its body", async () => {
    // QUERY (a method Node parses, with a body) is not in light-my-request's list of method names.
    for (const method of ["PUT", "PATCH", "DELETE", "OPTIONS", "QUERY"]) {
      const res = await h.app.inject({
        method: method as "PUT",
        url: QUOTE_PATH,
        headers: { "content-type": "application/json" },
      });
      expectProblem(res, 405, "method_not_allowed");
      expect(res.headers.allow, method).toBe("POST");
    }
    const broken = await h.app.inject({
      method: "PUT",
      url: "/api/dispatch/v1/orders/ord_1",
      headers: { "content-type": "application/json" },
      payload: "{nope",
    });
    expectProblem(broken, 405, "method_not_allowed");
    expect(broken.headers.allow).toBe("GET, HEAD");
    // Any route's path, not only an operation's; an unknown path is 404 with or without a body.
    const health = await h.app.inject({ method: "DELETE", url: "/healthz" });
    expectProblem(health, 405, "method_not_allowed");
    expect(health.headers.allow).toBe("GET, HEAD");
    const unknown = await h.app.inject({
      method: "PUT",
      url: "/api/nope",
      headers: { "content-type": "application/json" },
    });
    expectProblem(unknown, 404, "not_found");
  });

  it("answers a request Node cannot parse (an unknown method, bad syntax) with a problem document", async () => {
    const served = await createHarness();
    await served.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = served.app.server.address() as { port: number };
    const raw = (head: string) =>
      new Promise<{ status: number; headers: Record<string, string>; body: string }>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => socket.write(`${head}\r\nHost: x\r\n\r\n`));
        let text = "";
        socket.on("data", (chunk) => {
          text += chunk;
        });
        socket.on("error", reject);
        socket.on("close", () => {
          const [top = "", body = ""] = text.split("\r\n\r\n");
          const [statusLine = "", ...lines] = top.split("\r\n");
          const headers = Object.fromEntries(
            lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
          );
          resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
        });
      });
    const problemOf = (
      res: { headers: Record<string, string>; body: string },
      status: number,
      code: string,
    ) => {
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      const problem = JSON.parse(res.body);
      expect(problem).toMatchObject({ status, code, type: `/problems/${code}` });
      expect(problem.request_id).toBe(res.headers["request-id"]);
      return problem;
    };
    const unknownMethod = await raw(`FOO ${QUOTE_PATH} HTTP/1.1`);
    expect(unknownMethod.status).toBe(405);
    expect(unknownMethod.headers.allow).toBe("POST");
    problemOf(unknownMethod, 405, "method_not_allowed");
    const elsewhere = await raw("FOO /api/nope HTTP/1.1");
    expect(elsewhere.status).toBe(404);
    problemOf(elsewhere, 404, "not_found");
    const garbled = await raw("GET /healthz HTTP/9.9");
    expect(garbled.status).toBe(400);
    problemOf(garbled, 400, "invalid_request");
    await served.close();
  });

  it("redirects a browser from / to the console, and answers a JSON client 404", async () => {
    const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    const res = await h.get("/", { accept: browser });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe("/console/");
    expect(res.headers.vary).toMatch(/Accept/);
    for (const accept of ["application/json", "*/*", "application/problem+json, text/html;q=0.5"]) {
      expectProblem(await h.get("/", { accept }), 404, "not_found");
    }
    expectProblem(await h.get("/"), 404, "not_found");
    expectProblem(await h.get("/elsewhere", { accept: browser }), 404, "not_found");
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
        "dispatchInvoiceDecision",
        "dispatchInvoicePaid",
        "dispatchInvoicePolicy",
        "dispatchInvoicePolicySet",
        "dispatchKeyRoleSet",
        "dispatchKeys",
        "dispatchOrder",
        "dispatchOrderStatus",
        "dispatchOrderList",
        "dispatchExportInvoices",
        "dispatchExportOrders",
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
        "dispatcherOrder",
        "dispatcherExportInvoices",
        "dispatcherExportOrders",
        "dispatcherAssign",
        "dispatcherCancel",
        "dispatcherPool",
        "dispatcherContractors",
        "dispatcherContractor",
        "dispatcherScheduleOptimize",
        "dispatcherScheduleApply",
        "dispatcherScheduleLanes",
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
        "dispatcherReschedule",
        "orderAttachmentUpload",
        "orderAttachments",
        "orderAttachmentContent",
        "orderAttachmentThumbnail",
        "proofRequirements",
        "proofRequirementsSet",
        "orderReport",
        "orderChecklist",
        "checklistTemplateCreate",
        "checklistTemplates",
        "checklistTemplateRetire",
        "contractorChecklistAnswer",
        "orderInvoice",
        "contractorInvoiceRevise",
        "doNotDispatch",
        "doNotDispatchAdd",
        "doNotDispatchRemove",
        "dispatcherDoNotDispatch",
        "orderRate",
        "orderRating",
        "contractorRatings",
        "contractorCounterOffer",
        "dispatchCounterAccept",
        "dispatchCounterDecline",
        "counterPolicy",
        "counterPolicySet",
        "dispatchSiteCreate",
        "dispatchSiteUpdate",
        "dispatchSiteArchive",
        "dispatchSiteImport",
        "dispatchSites",
        "dispatchTrackingLink",
        "dispatchTrackingLinkRevoke",
        "dispatchTrackingLinks",
        "dispatchRequestLink",
        "dispatchRequestLinkRotate",
        "dispatchRequestLinkQr",
        "dispatchRequests",
        "dispatchRequest",
        "dispatchRequestCreate",
        "dispatchRequestApprove",
        "dispatchRequestReject",
        "dispatchRequestPolicy",
        "dispatchRequestPolicySet",
        "dispatchSite",
        "dispatchAssetCreate",
        "dispatchAssetUpdate",
        "dispatchAssetArchive",
        "dispatchAssets",
        "dispatchAssetHistory",
        "dispatcherSites",
        "dispatcherSite",
        "dispatchPlanCreate",
        "dispatchPlanUpdate",
        "dispatchPlanArchive",
        "dispatchPlans",
        "dispatchPlan",
        "dispatchOccurrences",
        "dispatchOccurrenceSkip",
        "dispatchOccurrenceMove",
        "dispatchMaintenanceCompliance",
        "dispatchNotification",
        "dispatchNotificationOptOut",
        "dispatchNotificationResend",
        "dispatchNotificationSubscribers",
        "dispatchNotificationSubscribersSet",
        "dispatchNotifications",
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
