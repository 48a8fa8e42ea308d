// Who may upload to an order's attachments and read them. The account that owns the order: always. The
// contractor holding the job: its own job only, uploading while accepted, en route, on site or completed.
// The dispatch team: reads every order of its mode, uploads nothing. Anyone else is told the order does
// not exist (404), as an order of another account or contractor is everywhere else.

import type { Actor } from "../../audit/record.js";
import type { Principal } from "../../auth/api-key-service.js";
import type { Order } from "../../domain/orders/order.js";
import type { OrderStatus } from "../../domain/orders/transitions.js";
import { ApiError } from "../../errors.js";
import { type OperationContext, principalOf } from "../kernel/operation.js";

/** The statuses in which the contractor on the job may add proof of its work. */
const CONTRACTOR_UPLOAD_STATUSES: readonly OrderStatus[] = ["accepted", "en_route", "on_site", "completed"];

export interface OrderAccess {
  order: Order;
  principal: Principal;
  /** Who the records name as the uploader. */
  actor: Actor;
  role: "account" | "contractor" | "dispatcher";
}

function notFound(orderId: string): ApiError {
  return new ApiError("not_found", `No order ${orderId} for this API key.`);
}

/** The order, if the caller may see it (else 404). */
export async function orderFor(ctx: OperationContext, orderId: string): Promise<OrderAccess> {
  const principal = principalOf(ctx);
  const { orders } = ctx.services.store;
  if (principal.kind === "account") {
    const order = await orders.find(orderId, principal.accountId, principal.livemode);
    if (!order) throw notFound(orderId);
    return { order, principal, actor: `key:${principal.keyId}`, role: "account" };
  }
  const order = await orders.byId(orderId);
  if (!order || order.livemode !== principal.livemode) throw notFound(orderId);
  if (principal.kind === "dispatcher") {
    return { order, principal, actor: `operator:${principal.keyId}`, role: "dispatcher" };
  }
  if (principal.contractorId === null || order.contractor_id !== principal.contractorId)
    throw notFound(orderId);
  return { order, principal, actor: `contractor:${principal.contractorId}`, role: "contractor" };
}

/** The order, if the caller may add an attachment to it now (404, 403 or 409 otherwise). */
export async function orderForUpload(ctx: OperationContext, orderId: string): Promise<OrderAccess> {
  const access = await orderFor(ctx, orderId);
  if (access.role === "dispatcher") {
    throw new ApiError(
      "key_kind_not_allowed",
      "The dispatch team reads an order's attachments; the account and the contractor on the job add them.",
    );
  }
  if (access.role === "contractor" && !CONTRACTOR_UPLOAD_STATUSES.includes(access.order.status)) {
    throw new ApiError(
      "invalid_transition",
      `Attachments are added to a job while it is ${CONTRACTOR_UPLOAD_STATUSES.join(", ")}; this one is ${access.order.status}.`,
      { extra: { current_status: access.order.status } },
    );
  }
  return access;
}
