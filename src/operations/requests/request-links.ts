// A site's request link, for the account that owns the site: get it (issued on first use), rotate it (the
// old one ends at once, a new token is issued), and its QR code as SVG to print. The link opens the public
// request form (/r/<token>, transports/http/request-page.ts); issuing and rotating are sealed
// (request.link_issued, request.link_rotated). Also what the form's routes use: the link and site a token
// opens, read the same way whatever the token, so a bad one costs what a good one does.

import QRCode from "qrcode";
import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import type { Site } from "../../domain/sites/site.js";
import { ApiError, validationError } from "../../errors.js";
import type { RequestLinksTable } from "../../storage/schema.js";
import { defineOperation, type OperationContext, type Services } from "../kernel/operation.js";
import { TextStream } from "../kernel/text-stream.js";
import { ownerOf, ownSite, siteIdSchema } from "../sites/site-views.js";
import { requestFormUrl, requestLinkSchema, requestLinkView } from "./request-views.js";

/** The caller's site in force (an archived site takes no requests), or 404 / 422. */
async function siteInForce(ctx: OperationContext, siteId: string): Promise<Site> {
  const site = await ownSite(ctx, ownerOf(ctx), siteId);
  if (site.archivedAt !== null) {
    throw validationError([
      { field: "site_id", code: "site_archived", message: `site ${site.id} is archived` },
    ]);
  }
  return site;
}

function linkRow(ctx: OperationContext, site: Site, id: string, at: string, seal: string): RequestLinksTable {
  return {
    id,
    site_id: site.id,
    account_id: site.accountId,
    livemode: site.livemode ? 1 : 0,
    created_at: at,
    created_by: ownerOf(ctx).actor,
    revoked_at: null,
    revoked_by: null,
    seal,
  };
}

export const requestLinkOperation = defineOperation({
  id: "dispatchRequestLink",
  name: "dispatch.request_link",
  summary: "Get (or issue) a site's request link",
  description:
    "The request link of one of your sites: a public form (/r/<token>; no key, not indexed) where the " +
    "site's people report what is wrong, how urgent, their name and how to reach them. Each submission " +
    "becomes a request (dispatch.requests) that your request policy turns into an order or holds for " +
    "approval. The form shows the site's name and city, nothing of its other work. Issues the link on " +
    "first use (sealed: request.link_issued), else answers the one in force; dispatch.request_link_rotate " +
    "replaces it. qr_svg_url is its QR code to print.",
  access: "key",
  effect: "write",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/request-links", input: "body" },
  problems: [404],
  input: z.strictObject({ site_id: siteIdSchema }),
  output: requestLinkSchema,
  example: { site_id: "site_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const site = await siteInForce(ctx, input.site_id);
    const { store } = ctx.services;
    const inForce = await store.requests.liveLink(site.id);
    if (inForce) return requestLinkView(ctx, inForce);
    const owner = ownerOf(ctx);
    const at = ctx.services.now().toISOString();
    const id = ctx.services.requestLinks.newId();
    const record = sealRecord({
      kind: "request.link_issued",
      at,
      accountId: owner.accountId,
      livemode: owner.livemode,
      orderId: null,
      actor: owner.actor,
      data: { link_id: id, site_id: site.id },
    });
    const row = linkRow(ctx, site, id, at, record.seal);
    const link = await store.write(async (tx) => {
      // Two calls at once: the partial unique index lets one insert; the other answers its link.
      if (!(await store.requests.insertLink(row, tx))) return store.requests.liveLink(site.id, tx);
      tx.appendAudit(record);
      return row;
    });
    if (!link) throw new Error(`the request link of ${site.id} was neither inserted nor found`);
    return requestLinkView(ctx, link);
  },
});

export const requestLinkRotateOperation = defineOperation({
  id: "dispatchRequestLinkRotate",
  name: "dispatch.request_link_rotate",
  summary: "Rotate a site's request link",
  description:
    "Replaces the request link of one of your sites: the old link's form answers 404 at once, and a new " +
    "link (another token, another QR code) is issued in the same step. Sealed (request.link_rotated, with " +
    "the reason). Requests already received stay.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/request-links/rotate", input: "body" },
  problems: [404],
  input: z.strictObject({
    site_id: siteIdSchema,
    reason: z
      .string()
      .trim()
      .min(1)
      .max(500, { error: "reason must be at most 500 characters" })
      .optional()
      .describe("Why (sealed with the rotation)."),
  }),
  output: requestLinkSchema,
  example: { site_id: "site_0VberZOdAb12Cd34Ef56", reason: "the printed code was posted publicly" },
  async handler(ctx, input) {
    const site = await siteInForce(ctx, input.site_id);
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const at = ctx.services.now().toISOString();
    const id = ctx.services.requestLinks.newId();
    const link = await store.write(async (tx) => {
      const old = await store.requests.liveLink(site.id, tx);
      if (old) await store.requests.revokeLink(old.id, at, owner.actor, tx);
      const record = sealRecord({
        kind: old ? "request.link_rotated" : "request.link_issued",
        at,
        accountId: owner.accountId,
        livemode: owner.livemode,
        orderId: null,
        actor: owner.actor,
        data: {
          link_id: id,
          site_id: site.id,
          ...(old ? { old_link_id: old.id, reason: input.reason ?? null } : {}),
        },
      });
      const row = linkRow(ctx, site, id, at, record.seal);
      if (!(await store.requests.insertLink(row, tx))) return null;
      tx.appendAudit(record);
      return row;
    });
    if (!link) throw new Error(`the request link of ${site.id} was not replaced`);
    return requestLinkView(ctx, link);
  },
});

export const requestLinkQrOperation = defineOperation({
  id: "dispatchRequestLinkQr",
  name: "dispatch.request_link_qr",
  summary: "A site's request link as a QR code (SVG)",
  description:
    "The QR code of the request link in force of one of your sites, as an SVG file to print and post at " +
    "the site (image/svg+xml, a download). 404 when the site has no link yet (dispatch.request_link " +
    "issues it). REST only; agents hand out the link's url.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/sites/:site_id/request-link/qr", input: "params" },
  problems: [404],
  textStream: { mediaTypes: ["image/svg+xml"] },
  input: z.strictObject({ site_id: siteIdSchema }),
  output: z.string().describe("An SVG image: the QR code of the link's url, black on white."),
  example: { site_id: "site_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const site = await ownSite(ctx, ownerOf(ctx), input.site_id);
    const link = await ctx.services.store.requests.liveLink(site.id);
    if (!link) throw new ApiError("not_found", `Site ${site.id} has no request link; issue one first.`);
    const svg = await QRCode.toString(requestFormUrl(ctx.baseUrl, ctx.services, link.id), {
      type: "svg",
      errorCorrectionLevel: "M",
      margin: 4,
    });
    return new TextStream(
      "image/svg+xml",
      `request-link-${site.id}.svg`,
      (async function* () {
        yield svg;
      })(),
    );
  },
});

/**
 * The link a token opens and its site, or null: a token of another shape or a wrong mac, no such link, a
 * revoked link, or an archived site. Every null is answered alike; the link and a site are read whether
 * the mac matched or not, so a forged token costs what a real one does.
 */
export async function openRequestLink(
  services: Services,
  token: string,
): Promise<{ link: RequestLinksTable; site: Site } | null> {
  const checked = services.requestLinks.check(token) ?? { id: "0".repeat(22), valid: false };
  const link = await services.store.requests.linkById(checked.id);
  const site = await services.store.sites.siteById(link?.site_id ?? "site_none");
  if (!checked.valid || link === undefined || link.revoked_at !== null) return null;
  if (site === undefined || site.archivedAt !== null) return null;
  return { link, site };
}
