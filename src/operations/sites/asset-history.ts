// An asset's service history (issue 34): every order that named it, newest first, with its status, trade,
// times, final cost and its proof (the order's attachments, and its service report once the work is done).

import { z } from "zod";
import { ORDER_STATUSES } from "../../domain/orders/transitions.js";
import { defineOperation } from "../kernel/operation.js";
import { hasReport, reportPath } from "../orders/service-report-model.js";
import { assetIdSchema, assetSchema, assetView, ownAsset, ownerOf } from "./site-views.js";

/** The most orders a history lists (the newest). */
const HISTORY_MAX = 200;

const entrySchema = z
  .object({
    order_id: z.string(),
    status: z.enum(ORDER_STATUSES),
    trade: z.string(),
    description: z.string(),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
    final_cost_cents: z.number().int().nullable(),
    invoice_cents: z.number().int().nullable(),
    attachment_ids: z.array(z.string()).describe("The order's photos and documents (proof of work)."),
    report_url: z.url().nullable().describe("The order's service report (PDF) once the work is done."),
  })
  .meta({ id: "AssetHistoryEntry" });

export const assetHistoryOperation = defineOperation({
  id: "dispatchAssetHistory",
  name: "dispatch.asset_history",
  summary: "An asset's service history",
  description:
    `The orders that named one of your assets (asset_ids), newest first, up to ${HISTORY_MAX}: each with its ` +
    "status, trade, description, when it was made and completed, its final cost and invoice, and its " +
    "proof (attachment ids, and the service report's URL once the work is done). Another account's asset " +
    "is not found.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/assets/:asset_id/history", input: "params" },
  problems: [404],
  input: z.strictObject({ asset_id: assetIdSchema }),
  output: z.object({ asset: assetSchema, orders: z.array(entrySchema) }).meta({ id: "AssetHistory" }),
  example: { asset_id: "ast_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const asset = await ownAsset(ctx, owner, input.asset_id);
    const ids = await store.sites.ordersOfAsset(asset.id, HISTORY_MAX);
    const orders = (await store.orders.byIds(ids)).filter(
      (o) => o.account_id === owner.accountId && o.livemode === owner.livemode,
    );
    const attachments = await Promise.all(orders.map((o) => store.attachments.ofOrder(o.id)));
    const entries = orders
      .map((o, i) => ({
        order_id: o.id,
        status: o.status,
        trade: o.trade,
        description: o.description,
        created_at: o.created_at,
        completed_at: o.completed_at,
        final_cost_cents: o.final_cost_cents,
        invoice_cents: o.invoice_cents,
        attachment_ids: (attachments[i] ?? []).map((a) => a.id),
        report_url: hasReport(o) ? `${ctx.baseUrl}${reportPath(o.id)}` : null,
      }))
      .sort((a, b) => (a.order_id < b.order_id ? 1 : a.order_id > b.order_id ? -1 : 0));
    return { asset: assetView(asset, ctx.services.now()), orders: entries };
  },
});
