// dispatchOrderStatus: reads one of the caller's own orders (same account and mode; anything else is 404).

import { z } from "zod";
import { ApiError } from "../../errors.js";
import { defineOperation, principalOf } from "../kernel/operation.js";
import { storedOrderSite } from "../kernel/order-site.js";
import { sealRef } from "../matching/decision-records.js";
import { latestCounter } from "./counter-view.js";
import { orderSchema, orderView } from "./order-view.js";

const orderStatusInput = z.strictObject({
  order_id: z.string().min(1).max(64).describe("The order_id returned when the order was created."),
});

export const orderStatusOperation = defineOperation({
  id: "dispatchOrderStatus",
  name: "dispatch.order_status",
  summary: "Read a work order",
  description:
    "Returns the current state of one of your work orders: its status, the masked contractor handle and " +
    "the job details. Orders of other accounts, and live orders read with a test key, are not found.",
  access: "key",
  // For an agent without a key of its own, the order id it was given is what opens its status.
  onServerKey: true,
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/orders/:order_id", input: "params" },
  input: orderStatusInput,
  output: orderSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { store } = ctx.services;
    const [row, seals, nteRequests, counters, site] = await Promise.all([
      store.orders.find(input.order_id, principal.accountId, principal.livemode),
      store.audit.orderSeals(input.order_id),
      store.orders.nteRequests(input.order_id),
      store.counters.ofOrder(input.order_id),
      storedOrderSite(store, input.order_id, ctx.services.now(), true),
    ]);
    if (!row) throw new ApiError("not_found", `No order ${input.order_id} for this API key.`);
    return orderView(
      row,
      ctx,
      seals.map((s) => sealRef(ctx.baseUrl, s.seal, s.kind, s.created_at)),
      nteRequests,
      latestCounter(counters),
      site,
    );
  },
});
