// The webhook events in the OpenAPI document's `webhooks` section (OpenAPI 3.1): one entry per event
// type, with the Standard Webhooks headers and the envelope. The order inside is the OrderSummary
// component the REST operations already publish.

import {
  RETRY_DELAYS_MS,
  WEBHOOK_EVENT_DESCRIPTIONS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from "./events.js";

const HEADERS = [
  {
    name: "webhook-id",
    description: "The event's id (msg_...): the same on every retry; deduplicate on it.",
  },
  { name: "webhook-timestamp", description: "Unix seconds of this attempt; reject stale ones." },
  {
    name: "webhook-signature",
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, one per valid ' +
      "secret (two during a rotation's overlap), keyed with the base64 part of your whsec_ secret.",
  },
];

function envelope(type: WebhookEventType): Record<string, unknown> {
  const nte = type.startsWith("order.nte_");
  const sla = type.startsWith("order.sla_");
  return {
    type: "object",
    required: ["id", "type", "created_at", "livemode", "data"],
    properties: {
      id: { type: "string", description: "Equals the webhook-id header." },
      type: { type: "string", const: type },
      created_at: { type: "string", format: "date-time", description: "When the change happened." },
      livemode: { type: "boolean" },
      data: {
        type: "object",
        required: nte
          ? ["order", "previous_status", "nte_request"]
          : sla
            ? ["order", "previous_status", "sla"]
            : ["order", "previous_status"],
        properties: {
          order: { $ref: "#/components/schemas/OrderSummary" },
          previous_status: {
            type: ["string", "null"],
            description:
              "The status before the change (null for NTE and service-level events, which change none).",
          },
          action: {
            type: "string",
            description: "For order.accepted: accept, assign or reassign (a dispatcher's override).",
          },
          ...(nte
            ? {
                nte_request: {
                  type: "object",
                  properties: {
                    request_id: { type: "string" },
                    requested_cents: { type: "integer" },
                    from_cents: { type: "integer" },
                    decision: { type: "string", enum: ["approved", "rejected"] },
                    reason: { type: ["string", "null"] },
                  },
                },
              }
            : {}),
          ...(sla ? { sla: SLA_SCHEMA } : {}),
        },
      },
    },
  };
}

/** data.sla of the service-level events (domain/orders/sla-clocks.ts firingFacts). */
const SLA_SCHEMA = {
  type: "object",
  required: ["clock", "reason", "started_at", "deadline", "time_allowed_minutes", "time_used_minutes"],
  properties: {
    clock: {
      type: "string",
      enum: ["respond", "arrive"],
      description:
        "respond: a contractor committed by respond_by; arrive: on site by arrive_by or the window's end.",
    },
    reason: {
      type: "string",
      enum: ["time_used", "eta_after_deadline", "deadline_passed", "done_late"],
    },
    started_at: { type: "string", format: "date-time", description: "The request, or the window's start." },
    deadline: { type: "string", format: "date-time" },
    time_allowed_minutes: { type: "number" },
    time_used_minutes: { type: "number" },
    time_used_percent: { type: ["number", "null"] },
    eta_at: { type: ["string", "null"], format: "date-time", description: "The contractor's reported ETA." },
  },
};

/** The OpenAPI `webhooks` object. */
export function openApiWebhooks(): Record<string, unknown> {
  const retries = RETRY_DELAYS_MS.map((ms) => (ms < 60_000 ? `${ms / 1000} s` : `${ms / 60_000} min`));
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(".", "_")}`,
          summary: type,
          description:
            `${WEBHOOK_EVENT_DESCRIPTIONS[type]} Sent to the order's callback_url and your default endpoint, ` +
            `signed per Standard Webhooks. Answer 2xx to acknowledge; anything else is retried after ` +
            `${retries.join(", ")} (+-20% jitter) or a later Retry-After; 410 disables the endpoint; ` +
            "redirects are not followed.",
          parameters: HEADERS.map((h) => ({
            ...h,
            in: "header",
            required: true,
            schema: { type: "string" },
          })),
          // Authenticated by the signature headers above (an HMAC of the body, which no OpenAPI security
          // scheme can express): no scheme applies, said explicitly.
          security: [],
          requestBody: { required: true, content: { "application/json": { schema: envelope(type) } } },
          responses: {
            "200": { description: "Acknowledged (any 2xx)." },
            "410": { description: "Gone: disables the endpoint." },
          },
        },
      },
    ]),
  );
}
