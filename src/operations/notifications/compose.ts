// An outbox event made into its messages (the worker's fan-out, workers/notification-dispatcher.ts): the
// recipients (the site's contact and the account's opted-in people, none opted out), the order's tracking
// link (issued now by the system when it has none in force and the message carries it), each message
// rendered (domain/notifications/templates.ts) with its Message-ID, unsubscribe link and digest.

import { createHash } from "node:crypto";
import { type NotificationKind, notificationKindOf } from "../../domain/notifications/events.js";
import { recipientsOf } from "../../domain/notifications/recipients.js";
import {
  messageIdOf,
  type RenderedMessage,
  renderNotification,
} from "../../domain/notifications/templates.js";
import type { Order } from "../../domain/orders/order.js";
import { TRADES } from "../../domain/trades.js";
import { newSortableId } from "../../ids.js";
import type { NotificationEventsTable, NotificationsTable } from "../../storage/schema.js";
import type { Services } from "../kernel/operation.js";
import { hasReport, reportPath } from "../orders/service-report-model.js";
import { issueTrackingLink, trackingUrl } from "../tracking/tracking-links.js";
import { firstNameOf } from "../tracking/tracking-view.js";

/** Who asks for the tracking link a message carries. */
const SYSTEM_ACTOR = "system:notifications";
/** The kinds whose message carries the tracking link (the page follows the visit). */
const WITH_TRACKING: readonly NotificationKind[] = ["booked", "en_route", "arrived", "rescheduled"];

export type ComposeServices = Pick<Services, "store" | "tracking" | "unsubscribe" | "config" | "now">;

/** The domain of a From address (names the Message-IDs). */
export function mailHost(from: string): string {
  const match = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from);
  return match?.[1] ?? "localhost";
}

/** SHA-256 of the rendered message: what notification.sent seals. */
export function messageDigest(messageId: string, m: RenderedMessage): string {
  const parts = [messageId, m.subject, m.text, m.html].map((p) => `${Buffer.byteLength(p)}:${p}`);
  return createHash("sha256").update(parts.join("\n"), "utf8").digest("hex");
}

/** The account's opted-in people (their events parsed). */
export async function subscribersOf(
  services: ComposeServices,
  accountId: string,
  livemode: boolean,
): Promise<Array<{ email: string; events: NotificationKind[]; seal: string }>> {
  const rows = await services.store.notifications.subscribers(accountId, livemode);
  return rows.map((r) => ({
    email: r.email,
    events: JSON.parse(r.events) as NotificationKind[],
    seal: r.seal,
  }));
}

async function technicianOf(services: ComposeServices, order: Order): Promise<string | null> {
  if (!order.contractor_id) return null;
  const [listing] = await services.store.contractors.listings([order.contractor_id]);
  return listing ? firstNameOf(listing.name) || null : null;
}

/** The unsubscribe link of message `id`. */
export function unsubscribeUrl(services: ComposeServices, baseUrl: string, id: string): string {
  return `${baseUrl}/n/unsubscribe/${services.unsubscribe.tokenOf(id)}`;
}

/** The messages of an outbox event, one per recipient (none when nobody is left to receive it). */
export async function messagesOf(
  services: ComposeServices,
  event: NotificationEventsTable,
  baseUrl: string,
): Promise<NotificationsTable[]> {
  const kind = notificationKindOf(event.event);
  const livemode = Number(event.livemode) === 1;
  const order = await services.store.orders.find(event.order_id, event.account_id, livemode);
  if (kind === null || order === undefined) return [];
  const named = await services.store.sites.ofOrder(order.id);
  const site = named ? await services.store.sites.siteById(named.siteId) : undefined;
  const subscribers = await subscribersOf(services, order.account_id, livemode);
  const emails = [site?.contact.email, ...subscribers.map((s) => s.email)].flatMap((e) =>
    e ? [e.trim().toLowerCase()] : [],
  );
  const optedOut = await services.store.notifications.optedOut(order.account_id, livemode, emails);
  const recipients = recipientsOf({ kind, contactEmail: site?.contact.email ?? null, subscribers, optedOut });
  if (recipients.length === 0) return [];
  const link = WITH_TRACKING.includes(kind) ? await issueTrackingLink(services, order, SYSTEM_ACTOR) : null;
  const technician = await technicianOf(services, order);
  const at = services.now().toISOString();
  const host = mailHost(services.config.NOTIFY_FROM);
  return recipients.map((r) => {
    const id = newSortableId("ntf");
    const rendered = renderNotification({
      kind,
      role: r.role,
      trade: TRADES[order.trade]?.name ?? order.trade,
      siteName: site?.name ?? null,
      technicianFirstName: technician,
      window:
        order.window_start && order.window_end ? { start: order.window_start, end: order.window_end } : null,
      etaAt: order.eta_at,
      timeZone: site?.timeZone ?? order.time_zone ?? "UTC",
      trackingUrl: link ? trackingUrl(services, baseUrl, link.id) : null,
      reportUrl: hasReport(order) ? `${baseUrl}${reportPath(order.id)}` : null,
      unsubscribeUrl: unsubscribeUrl(services, baseUrl, id),
    });
    const messageId = messageIdOf(id, host);
    return {
      id,
      event_id: event.id,
      resend_of: null,
      account_id: order.account_id,
      livemode: livemode ? 1 : 0,
      order_id: order.id,
      event: kind,
      recipient: r.email,
      recipient_role: r.role,
      status: "pending",
      attempts: 0,
      next_attempt_at: at,
      lease_until: null,
      message_id: messageId,
      subject: rendered.subject,
      text_body: rendered.text,
      html_body: rendered.html,
      digest: messageDigest(messageId, rendered),
      last_error: null,
      created_at: at,
      updated_at: at,
      sent_at: null,
      seal: null,
    };
  });
}
