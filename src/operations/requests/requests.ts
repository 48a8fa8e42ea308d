// An account's requests (issue 35): what its sites' people reported through the request form, or its agent
// reported for a site; listed and read, created by the agent, approved (made into an order, the trade the
// model guessed confirmed or another given) or rejected (with the reason). intake.ts does the work.

import { z } from "zod";
import { REQUEST_LIMITS, REQUEST_STATUSES, REQUEST_URGENCIES } from "../../domain/requests/request.js";
import { validationError } from "../../errors.js";
import { defineOperation } from "../kernel/operation.js";
import { tradeSchema } from "../kernel/schemas.js";
import { ownerOf, ownSite, siteIdSchema } from "../sites/site-views.js";
import { alreadyDecided, receiveRequest, rejectRequest, settleRequest } from "./intake.js";
import { ownRequest, reportShape, requestIdSchema, requestSchema, requestView } from "./request-views.js";

export const requestsOperation = defineOperation({
  id: "dispatchRequests",
  name: "dispatch.requests",
  summary: "List your requests",
  description:
    "The requests reported at your sites (through their request links, or by your agent), newest first, " +
    "a page at a time (before: the last request_id of the previous page). status and site_id narrow them; " +
    "status=pending is what waits for you.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/requests", input: "query" },
  input: z.strictObject({
    status: z.enum(REQUEST_STATUSES).optional(),
    site_id: siteIdSchema.optional(),
    before: requestIdSchema.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(50),
  }),
  output: z
    .object({
      requests: z.array(requestSchema),
      next_before: z.string().nullable().describe("Pass as `before` for the next page; null on the last."),
    })
    .meta({ id: "RequestList" }),
  example: { status: "pending" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const rows = await ctx.services.store.requests.list({
      accountId: owner.accountId,
      livemode: owner.livemode,
      status: input.status,
      siteId: input.site_id,
      before: input.before,
      limit: input.limit + 1,
    });
    const page = rows.slice(0, input.limit);
    return {
      requests: page.map(requestView),
      next_before: rows.length > input.limit ? (page.at(-1)?.id ?? null) : null,
    };
  },
});

export const requestOperation = defineOperation({
  id: "dispatchRequest",
  name: "dispatch.request",
  summary: "Read a request",
  description: "One of your requests: what was reported, the trade guessed, its status and its order.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/requests/:request_id", input: "params" },
  problems: [404],
  input: z.strictObject({ request_id: requestIdSchema }),
  output: requestSchema,
  example: { request_id: "wrq_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    return requestView(await ownRequest(ctx, ownerOf(ctx), input.request_id));
  },
});

export const requestCreateOperation = defineOperation({
  id: "dispatchRequestCreate",
  name: "dispatch.request_create",
  summary: "Report a request at one of your sites",
  description:
    "Records a request at one of your sites as its request form would (your agent reporting what someone " +
    "told it): the same keyword model guesses the trade and your request policy decides, so the answer is " +
    "the request ordered, linked to an open order of the same site and trade, or pending.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/requests", input: "body" },
  problems: [404],
  input: z.strictObject({ site_id: siteIdSchema, ...reportShape }),
  output: requestSchema,
  example: {
    site_id: "site_0VberZOdAb12Cd34Ef56",
    description: "The walk-in freezer is warm and beeping",
    urgency: "urgent",
    name: "Dana (store manager)",
    contact: "+1-512-555-0142",
  },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const site = await ownSite(ctx, owner, input.site_id);
    if (site.archivedAt !== null)
      throw validationError([
        { field: "site_id", code: "site_archived", message: `site ${site.id} is archived` },
      ]);
    const { site_id: _site, ...report } = input;
    const row = await receiveRequest(ctx.services, site, report, {
      source: "agent",
      linkId: null,
      actor: owner.actor,
    });
    return requestView(row);
  },
});

export const requestApproveOperation = defineOperation({
  id: "dispatchRequestApprove",
  name: "dispatch.request_approve",
  summary: "Approve a request: make it an order",
  description:
    "Makes a pending request an order at its site (dispatch.order's matching), with the trade the model " +
    "guessed or the one you give (required when it guessed none), and its urgency or yours. When an open " +
    "order of that trade is at the site already, the request is linked to it instead (status linked). " +
    "Sealed: request.ordered or request.linked. 409 request_decided when it was decided already.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/requests/approve", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    request_id: requestIdSchema,
    trade: tradeSchema.optional().describe("The trade (default: the one guessed)."),
    urgency: z
      .enum(REQUEST_URGENCIES, { error: `urgency must be one of: ${REQUEST_URGENCIES.join(", ")}` })
      .optional()
      .describe("The order's urgency (default: the request's)."),
  }),
  output: requestSchema,
  example: { request_id: "wrq_0VberZOdAb12Cd34Ef56", trade: "appliance_repair" },
  async handler(ctx, input) {
    const r = await ownRequest(ctx, ownerOf(ctx), input.request_id);
    if (r.status !== "pending") throw alreadyDecided(r);
    const trade = input.trade ?? r.guessed_trade;
    if (trade === null)
      throw validationError([{ field: "trade", message: "the model guessed no trade: name one" }]);
    if (r.status !== "pending") throw alreadyDecided(r);
    const urgency = input.urgency ?? r.urgency;
    return requestView(await settleRequest(ctx, { ...r, urgency }, trade));
  },
});

export const requestRejectOperation = defineOperation({
  id: "dispatchRequestReject",
  name: "dispatch.request_reject",
  summary: "Reject a request",
  description:
    "Rejects a pending request, with the reason (sealed: request.rejected). Nothing is ordered; the " +
    "reporter is not told. 409 request_decided when it was decided already.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/requests/reject", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    request_id: requestIdSchema,
    reason: z
      .string({ error: "reason must be a string" })
      .trim()
      .min(1, { error: "reason must not be empty" })
      .max(REQUEST_LIMITS.rejectReasonLength, {
        error: `reason must be at most ${REQUEST_LIMITS.rejectReasonLength} characters`,
      }),
  }),
  output: requestSchema,
  example: { request_id: "wrq_0VberZOdAb12Cd34Ef56", reason: "a duplicate of the call this morning" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const r = await ownRequest(ctx, owner, input.request_id);
    return requestView(await rejectRequest(ctx.services, r, input.reason, owner.actor));
  },
});
