// The maintenance plans' generator (issue 34): each active plan's occurrences whose window starts within
// its horizon become scheduled work orders with that window, created by the same operation a caller's
// order takes (dispatch.order: matched like any scheduled order, capacity as time, compliance on the day),
// for the plan's account, with the plan as the actor its records name.
//
// Once each, across restarts and processes: the order's transaction claims the occurrence (the plan and
// the rule's date are the occurrences table's key) through the same hook a caller's idempotency key uses,
// so of two processes generating one occurrence, one order is written and the other's is not. An
// occurrence that cannot become an order (no contractor can take its window, the window refused) is
// recorded as failed, sealed, with the reason: the account moves or skips it, the generator does not
// retry it on its own.
//
// Then, every tick, the occurrences whose window has ended are settled: completed when their order was
// done by the window's end, else overdue (once, sealed on the order, with its event and webhook).

import { sealRecord } from "../../audit/record.js";
import type { MaintenancePlan, PlanOccurrence } from "../../domain/maintenance/plan.js";
import type { Actor } from "../../domain/orders/order.js";
import { WORK_DONE_STATUSES } from "../../domain/orders/statuses.js";
import type { Site } from "../../domain/sites/site.js";
import { ApiError, validationError } from "../../errors.js";
import type { WriteTx } from "../../storage/store.js";
import type { Services } from "../kernel/operation.js";
import { accountPrincipal, serviceContext } from "../kernel/service-context.js";
import { flagMaintenanceOverdue } from "../orders/command-runner.js";
import { orderOperation } from "../orders/create-order.js";
import { type PlannedOccurrence, planOccurrences, recurrenceOf } from "./plan-rules.js";

/** Plans looked at per tick, and occurrences settled per tick: a tick stays short. */
const PLANS_PER_TICK = 50;
const SETTLED_PER_TICK = 200;
const DAY_MS = 86_400_000;

export interface GenerationReport {
  generated: number;
  failed: number;
  /** Claimed by another process (or an earlier tick) first. */
  existing: number;
}

function actorOf(plan: MaintenancePlan): `system:${string}` {
  return `system:plan:${plan.id}`;
}

export function occurrenceRow(
  plan: MaintenancePlan,
  o: PlannedOccurrence,
  state: PlanOccurrence["state"],
  orderId: string | null,
  reason: string | null,
  at: string,
  seal: string,
): PlanOccurrence {
  return {
    planId: plan.id,
    key: o.key,
    livemode: plan.livemode,
    accountId: plan.accountId,
    siteId: plan.siteId,
    assetId: plan.assetId,
    windowStart: o.start,
    windowEnd: o.end,
    state,
    orderId,
    reason,
    movedFrom: null,
    overdueAt: null,
    createdAt: at,
    updatedAt: at,
    seal,
  };
}

/** The audit record of an occurrence's generation, failure, skip or move, sealed with the plan's account
 * (by the plan itself unless an account's key acted). */
export function occurrenceRecord(
  plan: MaintenancePlan,
  kind:
    | "plan.occurrence_generated"
    | "plan.occurrence_failed"
    | "plan.occurrence_skipped"
    | "plan.occurrence_moved",
  o: PlannedOccurrence,
  at: string,
  extra: Record<string, unknown>,
  actor: Actor = actorOf(plan),
) {
  return sealRecord({
    kind,
    at,
    accountId: plan.accountId,
    livemode: plan.livemode,
    orderId: typeof extra.order_id === "string" ? extra.order_id : null,
    actor,
    data: {
      plan_id: plan.id,
      occurrence_key: o.key,
      window: { start: o.start, end: o.end },
      ...(o.movedFrom ? { moved_from: o.movedFrom } : {}),
      ...extra,
    },
  });
}

/** What claims an occurrence in its order's transaction: false when it was claimed first elsewhere. */
export type OccurrenceClaim = (tx: WriteTx, orderId: string) => Promise<boolean>;

/**
 * Creates a work order for the plan's occurrence `o` through dispatch.order, running `claim` in the
 * order's transaction (the order is written only if it returns true). Null once the order is created or
 * the claim lost; else the refusal dispatch.order answered (a 4xx, as a caller would get it).
 */
export async function createPlannedOrder(
  services: Services,
  plan: MaintenancePlan,
  o: PlannedOccurrence,
  claim: OccurrenceClaim,
): Promise<ApiError | null> {
  const input = {
    trade: plan.trade,
    site_id: plan.siteId,
    ...(plan.assetId ? { asset_ids: [plan.assetId] } : {}),
    description: `${plan.name}: ${plan.description}`.slice(0, 5000),
    urgency: "scheduled",
    ...(plan.nteCents !== null ? { nte_cents: plan.nteCents } : {}),
    reference_id: `${plan.id}/${o.key}`,
    service_window: { start: o.start, end: o.end },
  };
  const ctx = serviceContext(
    services,
    accountPrincipal(plan.accountId, plan.livemode, plan.id),
    actorOf(plan),
    input,
    {
      key: `plan:${plan.id}:${o.key}`,
      claim: (tx: WriteTx, _response: unknown, orderId?: string | null) => claim(tx, orderId ?? ""),
    },
  );
  const parsed = orderOperation.input.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") || "input";
    return validationError([{ field, message: issue?.message ?? "refused" }]);
  }
  try {
    await orderOperation.handler(ctx, parsed.data);
    return null;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status >= 500) throw error;
    return error;
  }
}

/** A refusal in words for the occurrence's record: the message and the fields at fault. */
function refusalReason(error: ApiError): string {
  const fields = error.errors?.map((e) => e.field).join(", ");
  return fields ? `${error.message} (${fields})` : error.message;
}

/**
 * Generates one occurrence: its order created and the occurrence claimed in the order's transaction
 * ("generated"), claimed first elsewhere ("existing"), or recorded as failed with the refusal.
 */
async function generateOccurrence(
  services: Services,
  plan: MaintenancePlan,
  o: PlannedOccurrence,
): Promise<"generated" | "existing" | "failed"> {
  let claimed = false;
  const refusal = await createPlannedOrder(services, plan, o, async (tx, orderId) => {
    const at = services.now().toISOString();
    const record = occurrenceRecord(plan, "plan.occurrence_generated", o, at, { order_id: orderId });
    claimed = await services.store.maintenance.claimOccurrence(
      occurrenceRow(plan, o, "generated", orderId, null, at, record.seal),
      tx,
    );
    if (claimed) tx.appendAudit(record);
    return claimed;
  });
  if (refusal === null) return claimed ? "generated" : "existing";
  const reason = refusalReason(refusal);
  const at = services.now().toISOString();
  const record = occurrenceRecord(plan, "plan.occurrence_failed", o, at, { reason, code: refusal.code });
  const wrote = await services.store.write(async (tx) => {
    const ok = await services.store.maintenance.claimOccurrence(
      occurrenceRow(plan, o, "failed", null, reason, at, record.seal),
      tx,
    );
    if (ok) tx.appendAudit(record);
    return ok;
  });
  return wrote ? "failed" : "existing";
}

/** Generates one plan's occurrences due inside its horizon from `now`, and records how far it went. */
async function generatePlan(
  services: Services,
  plan: MaintenancePlan,
  site: Site,
  now: Date,
): Promise<GenerationReport> {
  const report: GenerationReport = { generated: 0, failed: 0, existing: 0 };
  const rule = recurrenceOf(plan);
  if (rule === null) return report; // a stored plan's rule was valid when stored; never reached
  const until = new Date(now.getTime() + plan.horizonDays * DAY_MS);
  const from =
    plan.generatedUntil !== null && plan.generatedUntil > now.toISOString()
      ? new Date(plan.generatedUntil)
      : now;
  for (const o of planOccurrences(rule, site.timeZone, from, until)) {
    if (await services.store.maintenance.occurrence(plan.id, o.key)) {
      report.existing++;
      continue;
    }
    report[await generateOccurrence(services, plan, o)]++;
  }
  // Looked at again once its horizon has moved on by a day: from where this round stopped, so no window
  // between two rounds is passed over.
  const refreshAt = new Date(now.getTime() + DAY_MS).toISOString();
  await services.store.write((tx) =>
    services.store.maintenance.setGeneratedUntil(plan.id, plan.version, until.toISOString(), refreshAt, tx),
  );
  return report;
}

/** One tick of generation: the plans with occurrences not yet generated inside the longest horizon. */
export async function generateDue(services: Services): Promise<GenerationReport> {
  const now = services.now();
  const total: GenerationReport = { generated: 0, failed: 0, existing: 0 };
  const candidates = await services.store.maintenance.plansToGenerate(now.toISOString(), PLANS_PER_TICK);
  for (const plan of candidates) {
    const site = await services.store.sites.siteById(plan.siteId);
    if (!site || site.archivedAt !== null) continue;
    const r = await generatePlan(services, plan, site, now);
    total.generated += r.generated;
    total.failed += r.failed;
    total.existing += r.existing;
  }
  return total;
}

/** Settles occurrences whose window ended: completed (order done by then) or overdue (flagged once). */
export async function settleEnded(services: Services): Promise<{ completed: number; overdue: number }> {
  const now = services.now();
  const at = now.toISOString();
  const done = { completed: 0, overdue: 0 };
  const ended = await services.store.maintenance.endedNotFlagged(at, SETTLED_PER_TICK);
  for (const o of ended) {
    const order = o.orderId ? await services.store.orders.byId(o.orderId) : undefined;
    const finished = order !== undefined && (WORK_DONE_STATUSES as readonly string[]).includes(order.status);
    if (finished && order.completed_at !== null && order.completed_at <= o.windowEnd) {
      await services.store.write((tx) =>
        services.store.maintenance.updateOccurrence({ ...o, state: "completed", updatedAt: at }, tx),
      );
      done.completed++;
      continue;
    }
    if (order === undefined || finished || order.status === "cancelled") {
      // Done late, or cancelled without being skipped: overdue from its window's end, with no event (the
      // order has nothing more to say; a cancelled order's occurrence stays overdue until skipped).
      await services.store.write((tx) => services.store.maintenance.markOverdue(o.planId, o.key, at, tx));
      done.overdue++;
      continue;
    }
    const outcome = await flagMaintenanceOverdue(
      services,
      order.id,
      { planId: o.planId, occurrenceKey: o.key, windowStart: o.windowStart, windowEnd: o.windowEnd },
      (tx) => services.store.maintenance.markOverdue(o.planId, o.key, at, tx),
    );
    if (outcome.kind === "committed") done.overdue++;
  }
  return done;
}
