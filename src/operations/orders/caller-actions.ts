// The caller's actions on its own orders after creation: cancelling, and deciding a contractor's request
// for a higher NTE. Scoped to the key's account and mode, like every read of orders.

import { z } from "zod";
import { withinApprovalLimit } from "../../domain/key-roles.js";
import { ApiError } from "../../errors.js";
import { defineOperation, principalOf } from "../kernel/operation.js";
import { cancelOrder, decideNte } from "./command-runner.js";
import { orderSchema, orderSummaryView, orderView } from "./order-view.js";

export const orderCancelOperation = defineOperation({
  id: "dispatchOrderCancel",
  name: "dispatch.order_cancel",
  summary: "Cancel your work order",
  description:
    "Cancels one of your orders before the contractor is on site (409 invalid_transition after that, " +
    "naming the current status). A pending offer is withdrawn and the contractor's capacity given back.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/orders/cancel", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    order_id: z.string().min(1).max(64),
    reason: z.string().max(1000).optional().describe("Why, for the record."),
  }),
  output: orderSchema.omit({ seals: true, seal: true, nte_requests: true }).meta({ id: "CancelledOrder" }),
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", reason: "fixed it ourselves" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { store } = ctx.services;
    const order = await store.orders.find(input.order_id, principal.accountId, principal.livemode);
    if (!order) throw new ApiError("not_found", `No order ${input.order_id} for this key.`);
    const cancelled = await cancelOrder(
      ctx.services,
      order.id,
      input.reason ?? null,
      "caller",
      `key:${principal.keyId}`,
    );
    const view = orderSummaryView(cancelled, ctx);
    return view;
  },
});

export const nteDecisionOperation = defineOperation({
  id: "dispatchNteDecision",
  name: "dispatch.nte_decision",
  summary: "Approve or reject an NTE increase",
  description:
    "Decides a contractor's request to raise the NTE of your order (the request_id is in the order's " +
    "nte_requests). An approval makes the requested amount the NTE in force. Takes an approver's key " +
    "(or an admin's; 403 key_role_not_allowed for a requester); an approver approves up to its approval " +
    "limit (403 approval_limit_exceeded above it, naming the limit).",
  access: "key",
  role: "approver",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/orders/nte-decision", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    order_id: z.string().min(1).max(64),
    request_id: z.string().min(1).max(64),
    decision: z.enum(["approve", "reject"]),
    reason: z.string().max(1000).optional(),
  }),
  output: orderSchema.omit({ seals: true, seal: true }).meta({ id: "OrderAfterNteDecision" }),
  example: {
    order_id: "ord_0VberZOdAb12Cd34Ef56",
    request_id: "nte_0VberZOdAb12Cd34Ef56",
    decision: "approve",
  },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { store } = ctx.services;
    const order = await store.orders.find(input.order_id, principal.accountId, principal.livemode);
    if (!order) throw new ApiError("not_found", `No order ${input.order_id} for this key.`);
    if (input.decision === "approve") {
      const asked = (await store.orders.nteRequests(order.id)).find((r) => r.id === input.request_id);
      if (
        asked &&
        !withinApprovalLimit(principal.role, principal.approvalLimitCents, asked.requested_cents)
      ) {
        throw new ApiError(
          "approval_limit_exceeded",
          `The NTE asked (${asked.requested_cents} cents) is above this key's approval limit (${principal.approvalLimitCents} cents): an approver with a higher limit, or an admin, approves it.`,
          {
            extra: {
              approval_limit_cents: principal.approvalLimitCents,
              requested_cents: asked.requested_cents,
            },
          },
        );
      }
    }
    const decided = await decideNte(
      ctx.services,
      order.id,
      input.request_id,
      input.decision === "approve" ? "approved" : "rejected",
      input.reason ?? null,
      `key:${principal.keyId}`,
    );
    const {
      seal: _seal,
      seals: _seals,
      ...view
    } = orderView(decided, ctx, [], await store.orders.nteRequests(order.id));
    return view;
  },
});
