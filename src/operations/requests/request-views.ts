// What the requests' operations share: the views of a request, a site's request link and the account's
// request policy, and a request of the caller's found or 404 (another account's reads as one that does
// not exist).

import { z } from "zod";
import {
  DEFAULT_REQUEST_POLICY,
  REQUEST_LIMITS,
  REQUEST_POLICY_MODES,
  REQUEST_STATUSES,
  REQUEST_URGENCIES,
  type RequestPolicyMode,
} from "../../domain/requests/request.js";
import { TRADE_GUESS_THRESHOLD } from "../../domain/requests/trade-model.js";
import { TRADE_CODES } from "../../domain/trades.js";
import { ApiError } from "../../errors.js";
import type { RequestLinksTable, RequestsTable } from "../../storage/schema.js";
import type { WriteTx } from "../../storage/store.js";
import type { OperationContext, Services } from "../kernel/operation.js";

export const requestIdSchema = z
  .string({ error: "request_id must be a request id (wrq_...)" })
  .max(64, { error: "request_id must be at most 64 characters" })
  .regex(/^wrq_[0-9A-Za-z]{1,40}$/, { error: "request_id must be a request id (wrq_...)" })
  .describe("A request's id (wrq_...).");

const text = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, { error: `${field} must not be empty` })
    .max(max, { error: `${field} must be at most ${max} characters` });

/** What a reporter gives: the form's fields, and the agent's (with the site). Text is kept as typed. */
export const reportShape = {
  description: text("description", REQUEST_LIMITS.descriptionLength).describe(
    "What is wrong, in the reporter's words (kept as text: markup is shown as typed, never run).",
  ),
  urgency: z
    .enum(REQUEST_URGENCIES, { error: `urgency must be one of: ${REQUEST_URGENCIES.join(", ")}` })
    .default("routine")
    .describe("How urgent the reporter says it is: emergency, urgent or routine (default)."),
  name: text("name", REQUEST_LIMITS.nameLength).describe("Who reports it."),
  contact: text("contact", REQUEST_LIMITS.contactLength).describe(
    "How to reach them: a phone number or an email address.",
  ),
};

export const requestSchema = z
  .object({
    request_id: z.string(),
    site_id: z.string(),
    source: z.enum(["form", "agent"]).describe("form: the site's request link; agent: created by API."),
    status: z
      .enum(REQUEST_STATUSES)
      .describe(
        "pending: waiting for the account (dispatch.request_approve or _reject); ordered: an order was " +
          "created from it; linked: an open order at the same site and trade covers it; rejected.",
      ),
    description: z.string(),
    urgency: z.enum(REQUEST_URGENCIES),
    name: z.string(),
    contact: z.string(),
    trade_guess: z
      .object({
        trade: z.enum(TRADE_CODES).nullable().describe("The guessed trade; null below the threshold."),
        confidence: z
          .number()
          .min(0)
          .max(1)
          .describe(`The keyword model's confidence (a guess from ${TRADE_GUESS_THRESHOLD}).`),
      })
      .describe("What the published keyword model guessed from the text (docs/customer-side.md)."),
    trade: z.enum(TRADE_CODES).nullable().describe("The trade the order was created or linked with."),
    order_id: z.string().nullable().describe("The order it became or was linked to."),
    reason: z.string().nullable().describe("Why it is held (while pending) or was rejected; null otherwise."),
    decided_by: z.string().nullable().describe("Who decided: a key (key:...) or the policy (system:...)."),
    decided_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    seal: z.string().describe("Seal of the request.received record."),
    decision_seal: z.string().nullable().describe("Seal of its outcome's record."),
  })
  .meta({ id: "Request" });

export type RequestView = z.infer<typeof requestSchema>;

export function requestView(r: RequestsTable): RequestView {
  return {
    request_id: r.id,
    site_id: r.site_id,
    source: r.source,
    status: r.status,
    description: r.description,
    urgency: r.urgency,
    name: r.reporter_name,
    contact: r.reporter_contact,
    trade_guess: { trade: r.guessed_trade, confidence: r.guess_confidence_pm / 1000 },
    trade: r.trade,
    order_id: r.order_id,
    reason: r.reason,
    decided_by: r.decided_by,
    decided_at: r.decided_at,
    created_at: r.created_at,
    seal: r.seal,
    decision_seal: r.decision_seal,
  };
}

export const requestLinkSchema = z
  .object({
    link_id: z.string().describe("The link's id (not its token)."),
    site_id: z.string(),
    url: z.url().describe("The form's address (/r/<token>) to print or send to the site's people."),
    qr_svg_url: z
      .url()
      .describe("Its QR code as SVG (dispatch.request_link_qr; your key needed), to print and post."),
    created_at: z.iso.datetime(),
    seal: z.string().describe("Seal of the request.link_issued (or _rotated) record."),
  })
  .meta({ id: "RequestLink" });

export function requestLinkView(ctx: OperationContext, link: RequestLinksTable) {
  return {
    link_id: link.id,
    site_id: link.site_id,
    url: requestFormUrl(ctx.baseUrl, ctx.services, link.id),
    qr_svg_url: `${ctx.baseUrl}/api/dispatch/v1/sites/${link.site_id}/request-link/qr`,
    created_at: link.created_at,
    seal: link.seal,
  };
}

export function requestFormUrl(baseUrl: string, services: Services, linkId: string): string {
  return `${baseUrl}/r/${services.requestLinks.tokenOf(linkId)}`;
}

export const requestPolicySchema = z
  .object({
    mode: z
      .enum(REQUEST_POLICY_MODES)
      .describe(
        "create: a request whose trade the model guesses confidently becomes an order at once (or is linked " +
          "to an open one); hold: every request waits for dispatch.request_approve. Default hold.",
      ),
    updated_at: z.iso.datetime().nullable().describe("null: never set (the default)."),
    seal: z.string().nullable(),
  })
  .meta({ id: "RequestPolicy" });

/** The account's policy in a mode (the default when it never set one). */
export async function policyOf(
  services: Services,
  accountId: string,
  livemode: boolean,
  tx?: WriteTx,
): Promise<{ mode: RequestPolicyMode; updated_at: string | null; seal: string | null }> {
  const row = await services.store.requests.policy(accountId, livemode, tx);
  return row
    ? { mode: row.mode, updated_at: row.updated_at, seal: row.seal }
    : { mode: DEFAULT_REQUEST_POLICY, updated_at: null, seal: null };
}

/** The caller's request, or 404. */
export async function ownRequest(
  ctx: OperationContext,
  owner: { accountId: string; livemode: boolean },
  id: string,
  tx?: WriteTx,
): Promise<RequestsTable> {
  const r = await ctx.services.store.requests.byId(id, tx);
  if (!r || r.account_id !== owner.accountId || (r.livemode === 1) !== owner.livemode)
    throw new ApiError("not_found", `No request ${id} for this API key.`);
  return r;
}
