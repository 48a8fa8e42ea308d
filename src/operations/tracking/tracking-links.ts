// An order's tracking link, for the account that owns the order: issue it (or get the one in force),
// list them, revoke one. The link opens a public page of the job's progress (tracking-view.ts,
// transports/http/tracking-page.ts); issuing and revoking are sealed (tracking.link_issued,
// tracking.link_revoked). A revocation takes effect at once: the page answers 404 and its open streams end.

import { z } from "zod";
import { type Actor, sealRecord } from "../../audit/record.js";
import type { Order } from "../../domain/orders/order.js";
import { ApiError } from "../../errors.js";
import type { TrackingLinksTable } from "../../storage/schema.js";
import { defineOperation, type OperationContext, type Services } from "../kernel/operation.js";
import { ownerOf } from "../sites/site-views.js";
import { linkExpiry } from "./tracking-view.js";

const orderIdInput = z.string().min(1).max(64).describe("The order_id of one of your orders (ord_...).");

const trackingLinkSchema = z
  .object({
    link_id: z.string().describe("The link's id (not its token)."),
    order_id: z.string(),
    state: z
      .enum(["active", "expired", "revoked"])
      .describe(
        "active: it opens the page; expired: its order closed more than the days it lives after; revoked.",
      ),
    url: z
      .url()
      .nullable()
      .describe("The page's address (/t/<token>) to send to the site's people; null once revoked."),
    created_at: z.iso.datetime(),
    expires_at: z.iso
      .datetime()
      .nullable()
      .describe(
        "When it stops opening the page: TRACKING_LINK_DAYS_AFTER_CLOSE (7) days after the order closed " +
          "(completed or cancelled); null while the order is open.",
      ),
    revoked_at: z.iso.datetime().nullable(),
    seal: z.string().describe("Seal of the tracking.link_issued record."),
  })
  .meta({ id: "TrackingLink" });

type TrackingLinkView = z.infer<typeof trackingLinkSchema>;

function linkView(ctx: OperationContext, link: TrackingLinksTable, order: Order): TrackingLinkView {
  const expiresAt = linkExpiry(link, order, ctx.services.config.TRACKING_LINK_DAYS_AFTER_CLOSE);
  const expired = expiresAt !== null && ctx.services.now().toISOString() >= expiresAt;
  return {
    link_id: link.id,
    order_id: link.order_id,
    state: link.revoked_at !== null ? "revoked" : expired ? "expired" : "active",
    url: link.revoked_at === null ? trackingUrl(ctx.services, ctx.baseUrl, link.id) : null,
    created_at: link.created_at,
    expires_at: expiresAt,
    revoked_at: link.revoked_at,
    seal: link.seal,
  };
}

/** The caller's order, or 404 (another account's or mode's is not found). */
async function ownOrder(ctx: OperationContext, orderId: string): Promise<Order> {
  const owner = ownerOf(ctx);
  const order = await ctx.services.store.orders.find(orderId, owner.accountId, owner.livemode);
  if (!order) throw new ApiError("not_found", `No order ${orderId} for this API key.`);
  return order;
}

/**
 * The order's tracking link in force, issued now (sealed: tracking.link_issued, by `actor`) when it has
 * none. Also what the notifications' worker calls (a system actor) before a message carries the link.
 */
export async function issueTrackingLink(
  services: Pick<Services, "store" | "tracking" | "config" | "now">,
  order: Order,
  actor: Actor,
): Promise<TrackingLinksTable> {
  const { store, tracking } = services;
  const at = services.now().toISOString();
  const inForce = await store.trackingLinks.live(order.id);
  if (inForce) return inForce;
  const id = tracking.newId();
  const record = sealRecord({
    kind: "tracking.link_issued",
    at,
    accountId: order.account_id,
    livemode: order.livemode,
    orderId: order.id,
    actor,
    data: { link_id: id, order_id: order.id },
  });
  const row: TrackingLinksTable = {
    id,
    order_id: order.id,
    account_id: order.account_id,
    livemode: order.livemode ? 1 : 0,
    created_at: at,
    created_by: actor,
    // Issued for an order already closed: its expiry is known now (else the page computes it).
    expires_at: linkExpiry({ expires_at: null }, order, services.config.TRACKING_LINK_DAYS_AFTER_CLOSE),
    revoked_at: null,
    revoked_by: null,
    seal: record.seal,
  };
  const link = await store.write(async (tx) => {
    // Two calls at once: the partial unique index lets one insert; the other answers its link.
    if (!(await store.trackingLinks.insert(row, tx))) return store.trackingLinks.live(order.id, tx);
    tx.appendAudit(record);
    return row;
  });
  if (!link) throw new Error(`the tracking link of ${order.id} was neither inserted nor found`);
  return link;
}

/** The address of a link's page. */
export function trackingUrl(services: Pick<Services, "tracking">, baseUrl: string, linkId: string): string {
  return `${baseUrl}/t/${services.tracking.tokenOf(linkId)}`;
}

export const trackingLinkOperation = defineOperation({
  id: "dispatchTrackingLink",
  name: "dispatch.tracking_link",
  summary: "Issue (or get) an order's tracking link",
  description:
    "The tracking link of one of your orders: a public page (/t/<token>; no key, not indexed) showing the " +
    "job's status, the arrival window or live ETA, the technician's first name and trade and the steps " +
    "done, live; never the contractor's contact, prices or your account. Issues one if the order has none " +
    "in force (sealed: tracking.link_issued), else answers the one it has. It lives while the order is " +
    "open and 7 days (TRACKING_LINK_DAYS_AFTER_CLOSE) after it closes; dispatch.tracking_link_revoke " +
    "ends it at once, after which this issues a new one.",
  access: "key",
  effect: "write",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/tracking-links", input: "body" },
  problems: [404],
  input: z.strictObject({ order_id: orderIdInput }),
  output: trackingLinkSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const order = await ownOrder(ctx, input.order_id);
    return linkView(ctx, await issueTrackingLink(ctx.services, order, ownerOf(ctx).actor), order);
  },
});

export const trackingLinksOperation = defineOperation({
  id: "dispatchTrackingLinks",
  name: "dispatch.tracking_links",
  summary: "List an order's tracking links",
  description:
    "Every tracking link issued for one of your orders, newest first: the one in force (with its url) and " +
    "those revoked or expired, each with its state and when it expires.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/orders/:order_id/tracking-links", input: "params" },
  problems: [404],
  input: z.strictObject({ order_id: orderIdInput }),
  output: z.object({ links: z.array(trackingLinkSchema) }).meta({ id: "TrackingLinkList" }),
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const order = await ownOrder(ctx, input.order_id);
    const links = await ctx.services.store.trackingLinks.ofOrder(order.id);
    return { links: links.map((l) => linkView(ctx, l, order)) };
  },
});

export const trackingLinkRevokeOperation = defineOperation({
  id: "dispatchTrackingLinkRevoke",
  name: "dispatch.tracking_link_revoke",
  summary: "Revoke an order's tracking link",
  description:
    "Revokes the tracking link in force of one of your orders, at once: its page answers 404 and its open " +
    "live streams end. Sealed (tracking.link_revoked, with the reason). dispatch.tracking_link then issues " +
    "a new link (another token). 404 when the order has no link in force.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/tracking-links/revoke", input: "body" },
  problems: [404],
  input: z.strictObject({
    order_id: orderIdInput,
    reason: z
      .string()
      .trim()
      .min(1)
      .max(500, { error: "reason must be at most 500 characters" })
      .optional()
      .describe("Why (sealed with the revocation)."),
  }),
  output: trackingLinkSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", reason: "sent to the wrong contact" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const order = await ownOrder(ctx, input.order_id);
    const { store, tracking } = ctx.services;
    const at = ctx.services.now().toISOString();
    const revoked = await store.write(async (tx) => {
      const link = await store.trackingLinks.live(order.id, tx);
      if (!link || !(await store.trackingLinks.revoke(link.id, at, owner.actor, tx))) return null;
      tx.appendAudit(
        sealRecord({
          kind: "tracking.link_revoked",
          at,
          accountId: owner.accountId,
          livemode: owner.livemode,
          orderId: order.id,
          actor: owner.actor,
          data: { link_id: link.id, order_id: order.id, reason: input.reason ?? null },
        }),
      );
      return { ...link, revoked_at: at, revoked_by: owner.actor };
    });
    if (!revoked) throw new ApiError("not_found", `Order ${order.id} has no tracking link in force.`);
    tracking.revoked(revoked.id);
    return linkView(ctx, revoked, order);
  },
});
