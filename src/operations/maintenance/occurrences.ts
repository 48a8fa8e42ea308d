// A maintenance plan's occurrences: listed for an account (by site, plan and time: "what is due at the
// Austin store this month?"), skipped or moved, each action with its reason, sealed.
//
// Skipping an occurrence not yet generated records it skipped (the generator then passes it by); one
// generated has its order cancelled with the reason (refused once the job is under way). Moving one not
// yet generated (or failed) creates its order at the new window now; one generated has its order's window
// moved (the contractor holding it keeps it when it has room, as a reschedule does).

import { z } from "zod";
import type { MaintenancePlan, PlanOccurrence } from "../../domain/maintenance/plan.js";
import { WORK_DONE_STATUSES } from "../../domain/orders/statuses.js";
import type { Site } from "../../domain/sites/site.js";
import { ApiError } from "../../errors.js";
import { defineOperation, type OperationContext } from "../kernel/operation.js";
import { rfc3339, serviceWindowSchema } from "../kernel/schemas.js";
import { cancelOrder, reschedule } from "../orders/command-runner.js";
import { ownerOf, ownSite } from "../sites/site-views.js";
import { createPlannedOrder, occurrenceRecord, occurrenceRow } from "./generate.js";
import { occurrencesFor } from "./occurrence-reads.js";
import { type PlannedOccurrence, planOccurrences, recurrenceOf } from "./plan-rules.js";
import { OCCURRENCE_LIMIT, OCCURRENCE_STATUSES, occurrenceSchema, occurrenceView } from "./plan-schemas.js";
import { ownPlan } from "./plans.js";

const DAY_MS = 86_400_000;
/** The longest span one listing covers. */
const MAX_SPAN_DAYS = 366;

type Owner = ReturnType<typeof ownerOf>;

export const occurrencesOperation = defineOperation({
  id: "dispatchOccurrences",
  name: "dispatch.occurrences",
  summary: "List your planned maintenance occurrences",
  description:
    "Your maintenance plans' occurrences whose window meets [from, until) (default: the last 7 days to " +
    `31 days ahead; at most ${MAX_SPAN_DAYS} days), overdue ones first whenever their window was, then by ` +
    "window start: upcoming (not generated yet), generated (its order exists, with its status), " +
    "completed, completed_late, overdue, skipped or failed. site_id, plan_id and status narrow them (a " +
    "site or plan that is not yours narrows them to none).",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/occurrences", input: "query" },
  input: z.strictObject({
    site_id: z.string().min(1).max(64).optional(),
    plan_id: z.string().min(1).max(64).optional(),
    from: rfc3339("from").optional().describe("Windows ending at or after this instant (RFC 3339)."),
    until: rfc3339("until").optional().describe("Windows starting before this instant (RFC 3339)."),
    status: z
      .enum(OCCURRENCE_STATUSES, { error: `status must be one of: ${OCCURRENCE_STATUSES.join(", ")}` })
      .optional(),
    limit: z.coerce
      .number({ error: "limit must be a whole number" })
      .int({ error: "limit must be a whole number" })
      .min(1, { error: `limit must be from 1 to ${OCCURRENCE_LIMIT}` })
      .max(OCCURRENCE_LIMIT, { error: `limit must be from 1 to ${OCCURRENCE_LIMIT}` })
      .default(100),
  }),
  output: z.object({ occurrences: z.array(occurrenceSchema) }).meta({ id: "PlanOccurrenceList" }),
  example: {
    site_id: "site_0VberZOdAb12Cd34Ef56",
    from: "2026-12-01T00:00:00Z",
    until: "2027-01-01T00:00:00Z",
  },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const now = ctx.services.now();
    const from = input.from ? new Date(input.from) : new Date(now.getTime() - 7 * DAY_MS);
    const until = input.until ? new Date(input.until) : new Date(from.getTime() + 38 * DAY_MS);
    if (until <= from)
      throw new ApiError("validation_failed", "until must be after from.", {
        errors: [{ field: "until", message: "must be after from" }],
      });
    if (until.getTime() - from.getTime() > MAX_SPAN_DAYS * DAY_MS)
      throw new ApiError("validation_failed", `from and until are at most ${MAX_SPAN_DAYS} days apart.`, {
        errors: [{ field: "until", message: `at most ${MAX_SPAN_DAYS} days after from` }],
      });
    // A filter, not a target: a site or plan that is not the caller's narrows the list to nothing.
    const named = input.plan_id ? await store.maintenance.planById(input.plan_id) : undefined;
    const mine =
      named !== undefined &&
      named.accountId === owner.accountId &&
      named.livemode === owner.livemode &&
      (input.site_id === undefined || named.siteId === input.site_id);
    const plans = input.plan_id
      ? mine
        ? [named]
        : []
      : await store.maintenance.plans({
          livemode: owner.livemode,
          accountId: owner.accountId,
          ...(input.site_id ? { siteId: input.site_id } : {}),
          includeArchived: true,
          limit: 5000,
        });
    const sites = new Map<string, Site>();
    for (const id of new Set(plans.map((p) => p.siteId))) {
      const site = await store.sites.siteById(id);
      if (site) sites.set(id, site);
    }
    const all = await occurrencesFor(ctx, owner, {
      plans,
      sites,
      from,
      until,
      limit: input.status ? OCCURRENCE_LIMIT * 5 : input.limit,
      ...(input.site_id ? { siteId: input.site_id } : {}),
    });
    const occurrences = input.status ? all.filter((o) => o.status === input.status) : all;
    return { occurrences: occurrences.slice(0, input.limit) };
  },
});

/** The plan's occurrence of `key` as its rule gives it (404 when the rule has no such date). */
function ruleOccurrence(plan: MaintenancePlan, site: Site, key: string): PlannedOccurrence {
  const rule = recurrenceOf(plan);
  const day = Date.parse(`${key}T00:00:00Z`);
  const found =
    rule && !Number.isNaN(day)
      ? planOccurrences(rule, site.timeZone, new Date(day - 2 * DAY_MS), new Date(day + 9 * DAY_MS)).find(
          (o) => o.key === key,
        )
      : undefined;
  if (!found) throw new ApiError("not_found", `Plan ${plan.id} has no occurrence ${key}.`);
  return found;
}

const occurrenceTarget = {
  plan_id: z.string().min(1).max(64).describe("The plan (mpl_...)."),
  occurrence_key: z
    .string()
    .max(10, { error: "occurrence_key must be the occurrence's date (YYYY-MM-DD)" })
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: "occurrence_key must be the occurrence's date (YYYY-MM-DD)" })
    .describe("The occurrence's key: the rule's date (YYYY-MM-DD), as listed."),
  reason: z
    .string()
    .trim()
    .min(1, { error: "reason must not be empty" })
    .max(500, { error: "reason must be at most 500 characters" })
    .describe("Why: kept in the audit log."),
};

/** The plan, its site and the occurrence (stored, or as its rule gives it), for an action by the account. */
async function target(ctx: OperationContext, owner: Owner, planId: string, key: string) {
  const plan = await ownPlan(owner, ctx, planId);
  const site = await ownSite(ctx, owner, plan.siteId);
  const stored = await ctx.services.store.maintenance.occurrence(plan.id, key);
  return { plan, site, stored, planned: stored ? null : ruleOccurrence(plan, site, key) };
}

async function occurrenceAnswer(ctx: OperationContext, plan: MaintenancePlan, key: string) {
  const o = (await ctx.services.store.maintenance.occurrence(plan.id, key)) as PlanOccurrence;
  const order = o.orderId ? await ctx.services.store.orders.byId(o.orderId) : undefined;
  const done = order !== undefined && (WORK_DONE_STATUSES as readonly string[]).includes(order.status);
  return occurrenceView(o, plan, order ? { status: order.status, done } : null);
}

export const occurrenceSkipOperation = defineOperation({
  id: "dispatchOccurrenceSkip",
  name: "dispatch.occurrence_skip",
  summary: "Skip a planned maintenance occurrence",
  description:
    "Skips one occurrence of a plan, with a reason: one not generated yet is never generated; one " +
    "generated has its order cancelled with the reason (409 once the job is under way or done). An " +
    "overdue occurrence skipped stops being overdue. Skipping a skipped occurrence answers it as it is.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/occurrences/skip", input: "body" },
  problems: [404, 409],
  input: z.strictObject(occurrenceTarget),
  output: occurrenceSchema,
  example: {
    plan_id: "mpl_0VberZOdAb12Cd34Ef56",
    occurrence_key: "2027-01-12",
    reason: "Store closed for remodel",
  },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const { plan, stored, planned } = await target(ctx, owner, input.plan_id, input.occurrence_key);
    if (stored?.state === "skipped") return occurrenceAnswer(ctx, plan, stored.key);
    if (stored?.state === "completed")
      throw new ApiError("invalid_transition", `Occurrence ${stored.key} of plan ${plan.id} is completed.`);
    if (stored?.orderId) {
      const order = await store.orders.byId(stored.orderId);
      if (order && order.status !== "cancelled")
        await cancelOrder(
          ctx.services,
          order.id,
          `maintenance occurrence skipped: ${input.reason}`,
          "caller",
          owner.actor,
        );
    }
    const at = ctx.services.now().toISOString();
    const o: PlannedOccurrence = stored
      ? { key: stored.key, start: stored.windowStart, end: stored.windowEnd, movedFrom: null }
      : (planned as PlannedOccurrence);
    const record = occurrenceRecord(
      plan,
      "plan.occurrence_skipped",
      o,
      at,
      { reason: input.reason, order_id: stored?.orderId ?? null },
      owner.actor,
    );
    await store.write(async (tx) => {
      const row = stored
        ? { ...stored, state: "skipped" as const, reason: input.reason, updatedAt: at, seal: record.seal }
        : occurrenceRow(plan, o, "skipped", null, input.reason, at, record.seal);
      let wrote = true;
      if (stored) await store.maintenance.updateOccurrence(row, tx);
      else wrote = await store.maintenance.claimOccurrence(row, tx);
      if (!wrote)
        throw new ApiError(
          "invalid_transition",
          `Occurrence ${o.key} was generated meanwhile: skip it again.`,
        );
      tx.appendAudit(record);
    });
    return occurrenceAnswer(ctx, plan, o.key);
  },
});

export const occurrenceMoveOperation = defineOperation({
  id: "dispatchOccurrenceMove",
  name: "dispatch.occurrence_move",
  summary: "Move a planned maintenance occurrence",
  description:
    "Moves one occurrence of a plan to another window (service_window, as dispatch.order takes it), with a reason. One not generated yet (or failed) " +
    "becomes its order now, at the new window (409 window_unavailable with alternatives when no " +
    "contractor can take it); one generated has its order's window moved, its contractor keeping it when " +
    "it has room (409 once the job is under way). The window follows dispatch.order's service_window rules.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/occurrences/move", input: "body" },
  problems: [404, 409],
  input: z.strictObject({ ...occurrenceTarget, service_window: serviceWindowSchema }),
  output: occurrenceSchema,
  example: {
    plan_id: "mpl_0VberZOdAb12Cd34Ef56",
    occurrence_key: "2027-01-12",
    service_window: { start: "2027-01-14T13:00:00Z", end: "2027-01-14T17:00:00Z" },
    reason: "Store manager asked for Thursday",
  },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const { plan, stored, planned } = await target(ctx, owner, input.plan_id, input.occurrence_key);
    if (stored && stored.state !== "generated" && stored.state !== "failed")
      throw new ApiError(
        "invalid_transition",
        `Occurrence ${stored.key} of plan ${plan.id} is ${stored.state}.`,
      );
    const before = stored
      ? { start: stored.windowStart, end: stored.windowEnd }
      : { start: (planned as PlannedOccurrence).start, end: (planned as PlannedOccurrence).end };
    const moved: PlannedOccurrence = {
      key: input.occurrence_key,
      start: new Date(input.service_window.start).toISOString(),
      end: new Date(input.service_window.end).toISOString(),
      movedFrom: null,
    };
    const at = ctx.services.now().toISOString();
    if (stored?.orderId) {
      await reschedule(
        ctx.services,
        stored.orderId,
        owner.livemode,
        { start: new Date(moved.start), end: new Date(moved.end) },
        `maintenance occurrence moved: ${input.reason}`,
        owner.actor,
      );
      const record = occurrenceRecord(
        plan,
        "plan.occurrence_moved",
        moved,
        at,
        { reason: input.reason, previous_window: before, order_id: stored.orderId },
        owner.actor,
      );
      await store.write(async (tx) => {
        await store.maintenance.updateOccurrence(
          {
            ...stored,
            windowStart: moved.start,
            windowEnd: moved.end,
            movedFrom: before,
            reason: input.reason,
            overdueAt: null,
            updatedAt: at,
            seal: record.seal,
          },
          tx,
        );
        tx.appendAudit(record);
      });
      return occurrenceAnswer(ctx, plan, moved.key);
    }
    // Not generated yet, or failed: its order is created now at the new window.
    const refusal = await createPlannedOrder(ctx.services, plan, moved, async (tx, orderId) => {
      const record = occurrenceRecord(
        plan,
        "plan.occurrence_moved",
        moved,
        at,
        { reason: input.reason, previous_window: before, order_id: orderId },
        owner.actor,
      );
      const row = {
        ...occurrenceRow(plan, moved, "generated", orderId, input.reason, at, record.seal),
        movedFrom: before,
        ...(stored ? { createdAt: stored.createdAt } : {}),
      };
      const ok = stored
        ? await store.maintenance.replaceFailed(row, tx)
        : await store.maintenance.claimOccurrence(row, tx);
      if (ok) tx.appendAudit(record);
      return ok;
    });
    if (refusal) throw refusal;
    return occurrenceAnswer(ctx, plan, moved.key);
  },
});
