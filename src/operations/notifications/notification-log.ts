// The account's notifications (issue 35): the messages its orders' changes sent (or kept, with no SMTP
// server) to the people at the site and its opted-in people, each with its delivery log; and a resend of
// one (a new message with its own Message-ID, sealed: notification.resent, then notification.sent).

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import { NOTIFICATION_KINDS } from "../../domain/notifications/events.js";
import { messageIdOf } from "../../domain/notifications/templates.js";
import { ApiError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import type { NotificationAttemptsTable, NotificationsTable } from "../../storage/schema.js";
import { webhookBaseUrl } from "../../webhooks/outbox.js";
import { defineOperation, type OperationContext } from "../kernel/operation.js";
import { cursorSchema, decodeCursor, pageLimitSchema, pageOf } from "../kernel/pagination.js";
import { ownerOf } from "../sites/site-views.js";
import { mailHost, messageDigest, unsubscribeUrl } from "./compose.js";

const STATUSES = ["pending", "sent", "kept", "failed", "cancelled"] as const;
const NOTIFICATION_ID = /^ntf_[0-9A-Za-z]{8,40}$/;
const CURSOR_KIND = "notifications";

const notificationId = z
  .string()
  .max(48, { error: "notification_id must be an ntf_ id" })
  .regex(NOTIFICATION_ID, { error: "notification_id must be an ntf_ id" })
  .describe("A notification's id (ntf_...).");

const notificationSchema = z
  .object({
    notification_id: z.string(),
    order_id: z.string(),
    event: z
      .enum(NOTIFICATION_KINDS)
      .describe("booked, en_route, arrived, completed, rescheduled or cancelled."),
    recipient: z.string().describe("The address it goes to."),
    recipient_role: z
      .enum(["site_contact", "subscriber"])
      .describe("site_contact: the site's contact; subscriber: one of your opted-in people."),
    status: z
      .enum(STATUSES)
      .describe(
        "pending (on its way, retried with backoff), sent (the SMTP server took it), kept (no SMTP server: " +
          "kept here, nothing sent), failed (gave up after NOTIFY_MAX_ATTEMPTS), cancelled (opted out).",
      ),
    subject: z.string(),
    message_id: z.string().describe("The Message-ID header, the same on every attempt."),
    attempts: z.number().int(),
    next_attempt_at: z.iso.datetime().nullable(),
    last_error: z.string().nullable(),
    resend_of: z.string().nullable().describe("The message this one resends."),
    digest: z.string().describe("SHA-256 of the rendered message (what notification.sent seals)."),
    seal: z.string().nullable().describe("Seal of its notification.sent record, once sent or kept."),
    created_at: z.iso.datetime(),
    sent_at: z.iso.datetime().nullable(),
  })
  .meta({ id: "Notification" });

const attemptSchema = z.object({
  attempt: z.number().int(),
  started_at: z.iso.datetime(),
  duration_ms: z.number().int(),
  outcome: z.enum(["sent", "kept", "retrying", "failed", "cancelled"]),
  response: z.string().nullable().describe("The SMTP server's answer."),
  error: z.string().nullable(),
  next_attempt_at: z.iso.datetime().nullable(),
});

const notificationDetailSchema = notificationSchema
  .extend({
    text: z.string().describe("The plain-text part."),
    html: z.string().describe("The HTML part."),
    attempts_log: z.array(attemptSchema).describe("Every attempt, oldest first."),
  })
  .meta({ id: "NotificationDetail" });

function notificationView(n: NotificationsTable): z.infer<typeof notificationSchema> {
  return {
    notification_id: n.id,
    order_id: n.order_id,
    event: n.event as (typeof NOTIFICATION_KINDS)[number],
    recipient: n.recipient,
    recipient_role: n.recipient_role,
    status: n.status,
    subject: n.subject,
    message_id: n.message_id,
    attempts: n.attempts,
    next_attempt_at: n.next_attempt_at,
    last_error: n.last_error,
    resend_of: n.resend_of,
    digest: n.digest,
    seal: n.seal,
    created_at: n.created_at,
    sent_at: n.sent_at,
  };
}

function detailView(n: NotificationsTable, attempts: NotificationAttemptsTable[]) {
  return {
    ...notificationView(n),
    text: n.text_body,
    html: n.html_body,
    attempts_log: attempts.map((a) => ({
      attempt: Number(a.attempt),
      started_at: a.started_at,
      duration_ms: Number(a.duration_ms),
      outcome: a.outcome,
      response: a.response,
      error: a.error,
      next_attempt_at: a.next_attempt_at,
    })),
  };
}

/** The caller's notification, or 404 (another account's or mode's is not found). */
async function ownNotification(ctx: OperationContext, id: string): Promise<NotificationsTable> {
  const owner = ownerOf(ctx);
  const n = await ctx.services.store.notifications.byId(id);
  if (!n || n.account_id !== owner.accountId || (n.livemode === 1) !== owner.livemode)
    throw new ApiError("not_found", `No notification ${id} for this API key.`);
  return n;
}

export const notificationsOperation = defineOperation({
  id: "dispatchNotifications",
  name: "dispatch.notifications",
  summary: "List your notifications",
  description:
    "The messages your orders' changes sent to the people at the site (the site's contact) and to your " +
    "opted-in people: booked, en_route, arrived, completed, rescheduled, cancelled; newest first. With no " +
    "SMTP server configured they are kept (status kept): what would have been sent. Filter by order_id " +
    "and status; page with next_cursor.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/notifications", input: "query" },
  input: z.strictObject({
    order_id: z.string().min(1).max(64).optional().describe("Only this order's messages."),
    status: z.enum(STATUSES, { error: `status must be one of: ${STATUSES.join(", ")}` }).optional(),
    cursor: cursorSchema,
    limit: pageLimitSchema,
  }),
  output: z
    .object({
      notifications: z.array(notificationSchema),
      next_cursor: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last."),
    })
    .meta({ id: "NotificationPage" }),
  example: { status: "kept", limit: 20 },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const before =
      input.cursor === undefined ? undefined : decodeCursor(input.cursor, CURSOR_KIND, NOTIFICATION_ID)[0];
    const rows = await ctx.services.store.notifications.list({
      accountId: owner.accountId,
      livemode: owner.livemode,
      orderId: input.order_id,
      status: input.status,
      before,
      limit: input.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, (last) => last.id);
    return { notifications: page.map(notificationView), next_cursor };
  },
});

export const notificationOperation = defineOperation({
  id: "dispatchNotification",
  name: "dispatch.notification",
  summary: "Read one notification",
  description:
    "One of your notifications with its plain-text and HTML parts and every attempt to send it (time, " +
    "duration, the SMTP server's answer or the error, the next retry).",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/notifications/:notification_id", input: "params" },
  problems: [404],
  input: z.strictObject({ notification_id: notificationId }),
  output: notificationDetailSchema,
  example: { notification_id: "ntf_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const n = await ownNotification(ctx, input.notification_id);
    return detailView(n, await ctx.services.store.notifications.attemptsOf(n.id));
  },
});

export const notificationResendOperation = defineOperation({
  id: "dispatchNotificationResend",
  name: "dispatch.notification_resend",
  summary: "Resend a notification",
  description:
    "Sends one of your notifications again, to the same address: a new message (its own id and " +
    "Message-ID, resend_of naming the first) with the same content, through the outbox like the first. " +
    "Sealed (notification.resent). An address that has opted out gets nothing: the new message is " +
    "cancelled when its turn comes.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/notifications/resend", input: "body" },
  problems: [404],
  input: z.strictObject({ notification_id: notificationId }),
  output: notificationSchema,
  example: { notification_id: "ntf_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const first = await ownNotification(ctx, input.notification_id);
    const { store } = ctx.services;
    const row = resendOf(ctx, first);
    await store.write(async (tx) => {
      await store.notifications.insert(row, tx);
      tx.appendAudit(
        sealRecord({
          kind: "notification.resent",
          at: row.created_at,
          accountId: owner.accountId,
          livemode: owner.livemode,
          orderId: first.order_id,
          actor: owner.actor,
          data: { notification_id: row.id, resend_of: first.id },
        }),
      );
    });
    return notificationView(row);
  },
});

/** A new message with the content of `first`: its own id, Message-ID and unsubscribe link. */
function resendOf(ctx: OperationContext, first: NotificationsTable): NotificationsTable {
  const services = ctx.services;
  const baseUrl = webhookBaseUrl(services.config);
  const id = newSortableId("ntf");
  const oldLink = unsubscribeUrl(services, baseUrl, first.id);
  const newLink = unsubscribeUrl(services, baseUrl, id);
  const text = first.text_body.replaceAll(oldLink, newLink);
  const html = first.html_body.replaceAll(oldLink, newLink);
  const messageId = messageIdOf(id, mailHost(services.config.NOTIFY_FROM));
  const at = services.now().toISOString();
  return {
    ...first,
    id,
    resend_of: first.id,
    status: "pending",
    attempts: 0,
    next_attempt_at: at,
    lease_until: null,
    message_id: messageId,
    text_body: text,
    html_body: html,
    digest: messageDigest(messageId, { subject: first.subject, text, html }),
    last_error: null,
    created_at: at,
    updated_at: at,
    sent_at: null,
    seal: null,
  };
}
