// dispatchOrderList: the caller's own work orders, newest first, filtered and paginated. Scoped to the
// key's account and mode, like every read of orders.

import { z } from "zod";
import { defineOperation, principalOf } from "../kernel/operation.js";
import {
  cursorSchema,
  orderPosition,
  orderPositionOf,
  pageLimitSchema,
  pageOf,
  sinceSchema,
  untilSchema,
} from "../kernel/pagination.js";
import {
  ORDER_STATUSES,
  orderCoordinates,
  orderCoordinatesShape,
  orderSchema,
  orderSummaryView,
} from "./order-view.js";

const CURSOR_KIND = "o1";

const orderListInput = z.strictObject({
  status: z
    .enum(ORDER_STATUSES, { error: () => `status must be one of: ${ORDER_STATUSES.join(", ")}` })
    .optional()
    .describe("Only orders in this status."),
  reference_id: z.string().max(255).optional().describe("Only orders with this reference_id of yours."),
  recall_of: z
    .string()
    .max(64)
    .optional()
    .describe("Only the recalls of this order of yours (the orders naming it as recall_of)."),
  since: sinceSchema.describe("Created from (inclusive)."),
  until: untilSchema.describe("Created until (exclusive)."),
  cursor: cursorSchema,
  limit: pageLimitSchema,
});

/** An order in a list: the order without its seal list (read one order for its audit trail), with its
 * approximate point for a map. */
const orderSummarySchema = orderSchema
  .omit({ seals: true, seal: true, nte_requests: true })
  .extend(orderCoordinatesShape)
  .meta({ id: "OrderSummary" });

const orderListOutput = z
  .object({
    orders: z.array(orderSummarySchema).describe("Newest first."),
    next_cursor: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last page."),
  })
  .meta({ id: "OrderPage" });

export const orderListOperation = defineOperation({
  id: "dispatchOrderList",
  name: "dispatch.order_list",
  summary: "List your work orders",
  description:
    "Your account's work orders for the key's mode (test keys see sandbox orders), newest first. Filter " +
    "by status, your reference_id, the order they recall and creation time; page with next_cursor. Read one order " +
    "(dispatchOrderStatus) for its audit trail.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/orders", input: "query" },
  input: orderListInput,
  output: orderListOutput,
  example: { status: "needs_dispatcher", since: "2026-11-01T00:00:00.000Z", limit: 20 },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const rows = await ctx.services.store.orders.list({
      accountId: principal.accountId,
      livemode: principal.livemode,
      status: input.status,
      referenceId: input.reference_id,
      recallOf: input.recall_of,
      since: input.since,
      until: input.until,
      before: orderPosition(input.cursor, CURSOR_KIND),
      limit: input.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, orderPositionOf);
    return {
      orders: page.map((row) => ({ ...orderSummaryView(row, ctx), ...orderCoordinates(row) })),
      next_cursor,
    };
  },
});
