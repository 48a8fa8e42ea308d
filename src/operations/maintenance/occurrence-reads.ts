// A plan's (or a site's, or an account's) occurrences as a reader sees them: those acted on (generated,
// skipped, failed: stored) and those still to come (computed from the active plans' rules), one list,
// overdue first (whenever their window was), then by window start.

import type { MaintenancePlan, PlanOccurrence } from "../../domain/maintenance/plan.js";
import { WORK_DONE_STATUSES } from "../../domain/orders/statuses.js";
import type { Site } from "../../domain/sites/site.js";
import type { OperationContext } from "../kernel/operation.js";
import { occurrenceRow } from "./generate.js";
import { planOccurrences, recurrenceOf } from "./plan-rules.js";
import { type OccurrenceView, occurrenceView } from "./plan-schemas.js";

export interface OccurrenceQuery {
  plans: readonly MaintenancePlan[];
  sites: ReadonlyMap<string, Site>;
  /** Windows ending at or after this instant (overdue ones whenever). */
  from: Date;
  /** Windows starting before this instant. */
  until: Date;
  limit: number;
  siteId?: string;
}

function upcoming(plan: MaintenancePlan, site: Site, from: Date, until: Date): PlanOccurrence[] {
  const rule = recurrenceOf(plan);
  if (rule === null || plan.status !== "active" || until <= from) return [];
  // Not acted on yet: no state of its own, no seal (the reader says upcoming).
  return planOccurrences(rule, site.timeZone, from, until).map((o) =>
    occurrenceRow(plan, o, "generated", null, null, "", ""),
  );
}

export async function occurrencesFor(
  ctx: OperationContext,
  owner: { accountId: string; livemode: boolean },
  q: OccurrenceQuery,
): Promise<OccurrenceView[]> {
  const { store } = ctx.services;
  const now = ctx.services.now();
  const single = q.plans.length === 1 ? q.plans[0] : undefined;
  const scope = {
    livemode: owner.livemode,
    accountId: owner.accountId,
    ...(single ? { planId: single.id } : {}),
    ...(q.siteId ? { siteId: q.siteId } : {}),
  };
  const planIds = new Set(q.plans.map((p) => p.id));
  const stored = [
    ...(await store.maintenance.occurrences({ ...scope, overdue: true, limit: q.limit })),
    ...(await store.maintenance.occurrences({
      ...scope,
      from: q.from.toISOString(),
      until: q.until.toISOString(),
      limit: q.limit * 2,
    })),
  ].filter((o) => planIds.has(o.planId));
  const byKey = new Map(stored.map((o) => [`${o.planId}/${o.key}`, o]));
  // Still to come: from now (an occurrence whose window started unclaimed is the generator's to tell).
  const start = new Date(Math.max(q.from.getTime(), now.getTime()));
  for (const plan of q.plans) {
    const site = q.sites.get(plan.siteId);
    if (!site) continue;
    for (const o of upcoming(plan, site, start, q.until)) {
      const key = `${o.planId}/${o.key}`;
      if (!byKey.has(key)) byKey.set(key, o);
    }
  }
  const plans = new Map(q.plans.map((p) => [p.id, p]));
  const views: OccurrenceView[] = [];
  for (const o of byKey.values()) {
    const plan = plans.get(o.planId);
    if (!plan) continue;
    const order = o.orderId ? await store.orders.byId(o.orderId) : undefined;
    const done = order !== undefined && (WORK_DONE_STATUSES as readonly string[]).includes(order.status);
    const view = occurrenceView(o, plan, order ? { status: order.status, done } : null);
    views.push(o.seal === "" ? { ...view, status: "upcoming", seal: null } : view);
  }
  views.sort(
    (a, b) =>
      Number(b.status === "overdue") - Number(a.status === "overdue") ||
      a.window.start.localeCompare(b.window.start) ||
      a.plan_id.localeCompare(b.plan_id),
  );
  return views.slice(0, q.limit);
}
