// Webhooks, the caller's side: the account's default endpoint, its signing secret (shown once, rotated
// with overlap), the delivery log per endpoint, redelivery, and re-enabling an endpoint that answered
// 410. Scoped to the key's account and mode: test keys manage sandbox webhooks, live keys live ones.

import { z } from "zod";
import { ApiError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import type {
  WebhookAttemptsTable,
  WebhookEndpointsTable,
  WebhookSecretsTable,
} from "../../storage/schema.js";
import type { DeliveryRow } from "../../storage/webhook-store.js";
import {
  MAX_ATTEMPTS,
  newWebhookSecret,
  RETRY_DELAYS_MS,
  WEBHOOK_EVENT_DESCRIPTIONS,
  WEBHOOK_EVENT_TYPES,
} from "../../webhooks/events.js";
import { checkWebhookUrl } from "../../webhooks/targets.js";
import { defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { cursorSchema, decodeCursor, pageLimitSchema, pageOf } from "../kernel/pagination.js";

const ENDPOINT_ID = /^whe_[0-9A-Za-z]{1,40}$/;
const DELIVERY_ID = /^whd_[0-9A-Za-z]{1,40}$/;
const CURSOR_KIND = "w1";

const endpointSchema = z
  .object({
    endpoint_id: z.string(),
    url: z.string(),
    is_default: z.boolean().describe("true: the account's default endpoint; false: an order's callback_url."),
    status: z.enum(["enabled", "disabled"]),
    disabled_reason: z.string().nullable().describe("Why deliveries stopped (an answer of 410 Gone, say)."),
    disabled_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: "WebhookEndpoint" });

const secretInfoSchema = z.object({
  secret_id: z.string(),
  created_at: z.iso.datetime(),
  expires_at: z.iso
    .datetime()
    .nullable()
    .describe("Null for the current secret; the end of the overlap for a rotated one."),
});

function secretInfo(row: WebhookSecretsTable) {
  return { secret_id: row.id, created_at: row.created_at, expires_at: row.expires_at };
}

function endpointView(row: WebhookEndpointsTable) {
  return {
    endpoint_id: row.id,
    url: row.url,
    is_default: row.is_default === 1,
    status: row.status,
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at,
    created_at: row.created_at,
  };
}

const attemptSchema = z.object({
  attempt: z.number().int(),
  started_at: z.iso.datetime(),
  duration_ms: z.number().int(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  outcome: z.enum(["succeeded", "retrying", "failed", "cancelled"]),
  next_attempt_at: z.iso.datetime().nullable(),
});

const deliverySchema = z
  .object({
    delivery_id: z.string(),
    event_id: z.string().describe("The webhook-id header: the same on every attempt of this event."),
    event_type: z.enum(WEBHOOK_EVENT_TYPES),
    order_id: z.string(),
    endpoint_id: z.string(),
    url: z.string(),
    status: z
      .enum(["pending", "succeeded", "failed", "cancelled"])
      .describe(
        "pending: on its way or waiting for a retry; succeeded: a 2xx answer; failed: the schedule ran out " +
          "or the endpoint answered 410; cancelled: the endpoint was disabled.",
      ),
    attempts: z.number().int(),
    next_attempt_at: z.iso.datetime().nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.iso.datetime(),
    delivered_at: z.iso.datetime().nullable(),
    attempt_log: z.array(attemptSchema).describe("Every attempt, oldest first."),
  })
  .meta({ id: "WebhookDelivery" });

function deliveryView(row: DeliveryRow, attempts: WebhookAttemptsTable[]) {
  return {
    delivery_id: row.id,
    event_id: row.event_id,
    event_type: row.event_type as (typeof WEBHOOK_EVENT_TYPES)[number],
    order_id: row.order_id,
    endpoint_id: row.endpoint_id,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    last_status_code: row.last_status_code === null ? null : Number(row.last_status_code),
    last_error: row.last_error,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
    attempt_log: attempts.map((a) => ({
      attempt: Number(a.attempt),
      started_at: a.started_at,
      duration_ms: Number(a.duration_ms),
      status_code: a.status_code === null ? null : Number(a.status_code),
      error: a.error,
      outcome: a.outcome as "succeeded" | "retrying" | "failed" | "cancelled",
      next_attempt_at: a.next_attempt_at,
    })),
  };
}

const ABOUT =
  "Events follow Standard Webhooks: headers webhook-id (stable across retries: deduplicate on it), " +
  "webhook-timestamp (Unix seconds of the attempt) and webhook-signature (v1,<base64 HMAC-SHA256 of " +
  '"<id>.<timestamp>.<body>"> keyed with your whsec_ secret; one per valid secret during a rotation). ' +
  "The body is {id, type, created_at, livemode, data: {order, previous_status, ...}}. Only a 2xx answer " +
  "counts; redirects are not followed; 410 Gone disables the endpoint; Retry-After is honoured.";

export const webhooksConfigOperation = defineOperation({
  id: "webhooksConfig",
  name: "dispatch.webhooks",
  summary: "Your webhook set-up",
  description: `Your account's webhook endpoints (the default one and the orders' callback_url ones), its signing secrets (ids and validity, never the values), the event types and the retry schedule. ${ABOUT}`,
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/webhooks", input: "query" },
  input: z.strictObject({}),
  output: z
    .object({
      endpoints: z.array(endpointSchema).describe("The default endpoint first."),
      secrets: z.array(secretInfoSchema).describe("Secrets that sign deliveries now, newest first."),
      event_types: z.array(z.object({ type: z.enum(WEBHOOK_EVENT_TYPES), description: z.string() })),
      retry_delays_seconds: z
        .array(z.number())
        .describe("Delay before each retry (+-20% jitter), after an immediate first attempt."),
      max_attempts: z.number().int(),
    })
    .meta({ id: "WebhookConfig" }),
  example: {},
  async handler(ctx) {
    const principal = principalOf(ctx);
    const webhooks = ctx.services.store.webhooks;
    const now = ctx.services.now().toISOString();
    const [endpoints, secrets] = await Promise.all([
      webhooks.listEndpoints(principal.accountId, principal.livemode),
      webhooks.signingSecrets(principal.accountId, principal.livemode, now),
    ]);
    return {
      endpoints: endpoints.map(endpointView),
      secrets: secrets.map(secretInfo),
      event_types: WEBHOOK_EVENT_TYPES.map((type) => ({
        type,
        description: WEBHOOK_EVENT_DESCRIPTIONS[type],
      })),
      retry_delays_seconds: RETRY_DELAYS_MS.map((ms) => ms / 1000),
      max_attempts: MAX_ATTEMPTS,
    };
  },
});

export const webhooksSetEndpointOperation = defineOperation({
  id: "webhooksSetEndpoint",
  name: "dispatch.webhooks_set_endpoint",
  summary: "Set your default webhook endpoint",
  description:
    "Sets the URL that receives an event for every status change and NTE decision of every order of " +
    "yours (besides an order's own callback_url), or clears it with null. Live keys need https; private " +
    "addresses are refused (422). Setting a URL enables it again if it was disabled. Create a signing " +
    "secret (dispatch.webhooks_rotate_secret) too: deliveries wait for one.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/webhooks/endpoint", input: "body" },
  input: z.strictObject({
    url: z
      .string()
      .max(2048, { error: "url must be at most 2048 characters" })
      .nullable()
      .describe("An absolute https URL (http allowed for test keys), or null to clear."),
  }),
  output: z
    .object({ endpoint: endpointSchema.nullable().describe("Null once cleared.") })
    .meta({ id: "WebhookEndpointResult" }),
  example: { url: "https://hooks.example.com/field-dispatch" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    if (input.url !== null) checkWebhookUrl(input.url, "url", principal.livemode, ctx.services.config);
    const row = await ctx.services.store.webhooks.setDefaultEndpoint(
      principal.accountId,
      principal.livemode,
      input.url === null ? null : new URL(input.url).href,
      ctx.services.now().toISOString(),
    );
    return { endpoint: row ? endpointView(row) : null };
  },
});

export const webhooksRotateSecretOperation = defineOperation({
  id: "webhooksRotateSecret",
  name: "dispatch.webhooks_rotate_secret",
  summary: "Create or rotate your webhook signing secret",
  description:
    "Creates a new whsec_ signing secret for your account (in the key's mode) and returns it: it is " +
    "shown this once, store it. The previous secret keeps signing for overlap_hours (default 24, 0 " +
    "to stop at once), so deliveries carry both signatures until your receivers have the new one.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/webhooks/secret", input: "body" },
  input: z.strictObject({
    overlap_hours: z
      .number({ error: "overlap_hours must be a number" })
      .int({ error: "overlap_hours must be a whole number" })
      .min(0, { error: "overlap_hours must be from 0 to 168" })
      .max(168, { error: "overlap_hours must be from 0 to 168" })
      .default(24)
      .describe("How long the previous secret keeps signing."),
  }),
  output: z
    .object({
      secret_id: z.string(),
      secret: z.string().describe("whsec_ + base64 of 32 random bytes. Shown once."),
      created_at: z.iso.datetime(),
      signing_secrets: z.array(secretInfoSchema).describe("Every secret that signs from now on."),
    })
    .meta({ id: "WebhookSecret" }),
  example: { overlap_hours: 24 },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const now = ctx.services.now();
    const row = {
      id: newSortableId("whs"),
      account_id: principal.accountId,
      livemode: principal.livemode ? 1 : 0,
      secret: newWebhookSecret(),
      created_at: now.toISOString(),
      expires_at: null,
    };
    const overlapUntil = new Date(now.getTime() + input.overlap_hours * 3_600_000).toISOString();
    const signing = await ctx.services.store.webhooks.rotateSecret(row, overlapUntil);
    ctx.setHeader("Cache-Control", "no-store");
    return {
      secret_id: row.id,
      secret: row.secret,
      created_at: row.created_at,
      signing_secrets: signing.map(secretInfo),
    };
  },
});

export const webhooksDeliveriesOperation = defineOperation({
  id: "webhooksDeliveries",
  name: "dispatch.webhooks_deliveries",
  summary: "Your webhook delivery log",
  description:
    "Deliveries of your events, newest first, each with every attempt (time, duration, HTTP status or " +
    "error, outcome, next retry). Filter by endpoint, status or order; page with next_cursor. Kept " +
    "WEBHOOK_RETENTION_DAYS (30 by default).",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/webhooks/deliveries", input: "query" },
  input: z.strictObject({
    endpoint_id: z
      .string()
      .max(44, { error: "endpoint_id must be a whe_ id" })
      .regex(ENDPOINT_ID, { error: "endpoint_id must be a whe_ id" })
      .optional(),
    status: z
      .enum(["pending", "succeeded", "failed", "cancelled"], {
        error: "status must be one of: pending, succeeded, failed, cancelled",
      })
      .optional(),
    order_id: z.string().min(1).max(64).optional(),
    cursor: cursorSchema,
    limit: pageLimitSchema,
  }),
  output: z
    .object({
      deliveries: z.array(deliverySchema),
      next_cursor: z
        .string()
        .nullable()
        .describe("Pass as `cursor` for the next page; null on the last page."),
    })
    .meta({ id: "WebhookDeliveryPage" }),
  example: { status: "failed", limit: 20 },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const webhooks = ctx.services.store.webhooks;
    const before =
      input.cursor === undefined ? undefined : decodeCursor(input.cursor, CURSOR_KIND, DELIVERY_ID)[0];
    const rows = await webhooks.listDeliveries({
      accountId: principal.accountId,
      livemode: principal.livemode,
      endpointId: input.endpoint_id,
      status: input.status,
      orderId: input.order_id,
      before,
      limit: input.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, (last) => last.id);
    const attempts = await webhooks.attemptsOf(page.map((d) => d.id));
    const byDelivery = new Map<string, WebhookAttemptsTable[]>();
    for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
    return {
      deliveries: page.map((row) => deliveryView(row, byDelivery.get(row.id) ?? [])),
      next_cursor,
    };
  },
});

/** A delivery of the caller's own, or 404. */
async function ownDelivery(ctx: OperationContext, id: string) {
  const principal = principalOf(ctx);
  const [row] = await ctx.services.store.webhooks.listDeliveries({
    accountId: principal.accountId,
    livemode: principal.livemode,
    deliveryId: id,
    limit: 1,
  });
  if (!row) throw new ApiError("not_found", `No webhook delivery ${id} for this key.`);
  return row;
}

export const webhooksRedeliverOperation = defineOperation({
  id: "webhooksRedeliver",
  name: "dispatch.webhooks_redeliver",
  summary: "Redeliver a webhook event",
  description:
    "Sends a delivery again from now, with a fresh retry schedule and the same webhook-id (whatever its " +
    "status; a pending one is already on its way and is left alone). 409 endpoint_disabled while its " +
    "endpoint is disabled: enable it first (dispatch.webhooks_enable_endpoint).",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/webhooks/redeliver", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    delivery_id: z
      .string()
      .max(44, { error: "delivery_id must be a whd_ id" })
      .regex(DELIVERY_ID, { error: "delivery_id must be a whd_ id" }),
  }),
  output: deliverySchema,
  example: { delivery_id: "whd_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const webhooks = ctx.services.store.webhooks;
    const row = await ownDelivery(ctx, input.delivery_id);
    const endpoint = await webhooks.endpointById(row.endpoint_id);
    if (endpoint?.status !== "enabled") {
      throw new ApiError("endpoint_disabled", `Endpoint ${row.endpoint_id} is disabled: enable it first.`, {
        extra: { endpoint_id: row.endpoint_id, disabled_reason: endpoint?.disabled_reason ?? null },
      });
    }
    if (row.status !== "pending") {
      await webhooks.redeliver({ ids: [row.id] }, ctx.services.now().toISOString());
    }
    const after = await ownDelivery(ctx, input.delivery_id);
    return deliveryView(after, await webhooks.attemptsOf([after.id]));
  },
});

export const webhooksEnableEndpointOperation = defineOperation({
  id: "webhooksEnableEndpoint",
  name: "dispatch.webhooks_enable_endpoint",
  summary: "Enable a disabled webhook endpoint",
  description:
    "Enables an endpoint that was disabled (it answered 410 Gone). New events reach it again; " +
    "deliveries cancelled while it was disabled can be sent with dispatch.webhooks_redeliver.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/webhooks/endpoint/enable", input: "body" },
  problems: [404],
  input: z.strictObject({
    endpoint_id: z
      .string()
      .max(44, { error: "endpoint_id must be a whe_ id" })
      .regex(ENDPOINT_ID, { error: "endpoint_id must be a whe_ id" }),
  }),
  output: endpointSchema,
  example: { endpoint_id: "whe_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const webhooks = ctx.services.store.webhooks;
    const endpoint = await webhooks.endpointById(input.endpoint_id);
    if (
      !endpoint ||
      endpoint.account_id !== principal.accountId ||
      endpoint.livemode !== (principal.livemode ? 1 : 0)
    ) {
      throw new ApiError("not_found", `No webhook endpoint ${input.endpoint_id} for this key.`);
    }
    await webhooks.enableEndpoint(endpoint.id, ctx.services.now().toISOString());
    return endpointView((await webhooks.endpointById(endpoint.id)) as WebhookEndpointsTable);
  },
});
