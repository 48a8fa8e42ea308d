// A planned order's occurrence is overdue (issue 34): the window of the maintenance plan's occurrence it
// was generated for has ended, and the order is not done. The order's status does not change (it is still
// whatever it was: offered, accepted, needs_dispatcher...); the change records the fact once, sealed, and
// tells the account (event and webhook order.maintenance_overdue), as the service-level clocks do.

import { type CommandContext, changeOf, refuse } from "./commands.js";
import type { Actor, Decision, OrderState } from "./order.js";
import { WORK_DONE_STATUSES } from "./statuses.js";

export interface OverdueOccurrence {
  planId: string;
  occurrenceKey: string;
  windowStart: string;
  windowEnd: string;
}

export function flagMaintenanceOverdue(
  state: OrderState | null,
  cmd: { actor: Actor; occurrence: OverdueOccurrence },
  ctx: CommandContext,
): Decision {
  const order = state?.order;
  if (!order) return refuse("not_found", "No such order.");
  if ((WORK_DONE_STATUSES as readonly string[]).includes(order.status) || order.status === "cancelled") {
    return refuse("invalid_transition", `The order is ${order.status}: it is not overdue.`, {
      currentStatus: order.status,
    });
  }
  const { occurrence } = cmd;
  if (Date.parse(occurrence.windowEnd) > ctx.now.getTime()) {
    return refuse("invalid_transition", "The occurrence's window has not ended.", {
      currentStatus: order.status,
    });
  }
  const at = ctx.now.toISOString();
  const maintenance = {
    plan_id: occurrence.planId,
    occurrence_key: occurrence.occurrenceKey,
    window: { start: occurrence.windowStart, end: occurrence.windowEnd },
  };
  return changeOf(
    order,
    {},
    {
      audit: [
        {
          kind: "order.maintenance_overdue",
          actor: cmd.actor,
          at,
          data: { status: order.status, maintenance },
        },
      ],
      event: { type: "order.maintenance_overdue", at, details: { previous_status: null, maintenance } },
    },
  );
}
