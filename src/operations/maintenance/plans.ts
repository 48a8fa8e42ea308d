// Maintenance plans (issue 34): an account's planned, recurring work at a site or on one of its assets.
// Created, changed and archived by the account's key, each change sealed in the audit log; read with
// their next occurrences. The generator (generate.ts) turns occurrences into scheduled orders.
//
// A plan is refused (422 naming the field) when its rule never occurs or occurs more than daily, when its
// window cannot hold the visit within the site's opening hours on any of its days, when its asset is not
// at its site, or its checklist template is not the account's of the trade. Editing a plan changes what
// is generated from then on: occurrences already generated keep their orders (skip or move them), the
// others follow the plan as changed.

import { z } from "zod";
import type { AuditKind } from "../../audit/kinds.js";
import { sealRecord } from "../../audit/record.js";
import { localDateOf } from "../../domain/maintenance/local-date.js";
import type { MaintenancePlan } from "../../domain/maintenance/plan.js";
import { parseRecurrence } from "../../domain/maintenance/recurrence.js";
import { parseWindow, windowFitsHours } from "../../domain/maintenance/window.js";
import type { Actor } from "../../domain/orders/order.js";
import type { Site } from "../../domain/sites/site.js";
import { parseHours } from "../../domain/time/calendar.js";
import { ApiError, type FieldError, validationError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import type { WriteTx } from "../../storage/store.js";
import { defineOperation, type OperationContext } from "../kernel/operation.js";
import { cursorSchema, decodeCursor, pageLimitSchema, pageOf } from "../kernel/pagination.js";
import { booleanQuery } from "../kernel/schemas.js";
import { ownAsset, ownerOf, ownSite } from "../sites/site-views.js";
import { occurrencesFor } from "./occurrence-reads.js";
import {
  OCCURRENCE_LIMIT,
  occurrenceSchema,
  PLAN_LIMITS,
  type PlanView,
  planInputShape,
  planSchema,
  planView,
} from "./plan-schemas.js";

const planIdSchema = z.string().min(1).max(64).describe("The plan's id (mpl_...).");

/** The caller's account and mode, and the actor its records name (the service's own, when it acts). */
function planOwner(ctx: OperationContext): { accountId: string; livemode: boolean; actor: Actor } {
  const owner = ownerOf(ctx);
  return { ...owner, actor: ctx.actingAs ?? owner.actor };
}

type Owner = ReturnType<typeof planOwner>;

/** The plan's fields as given, checked against the site, its hours and the rules (422 on each fault). */
async function checkedPlan(
  ctx: OperationContext,
  owner: Owner,
  fields: z.output<z.ZodObject<typeof planInputShape>>,
  site: Site,
  tx?: WriteTx,
): Promise<
  Pick<
    MaintenancePlan,
    | "assetId"
    | "checklistTemplateId"
    | "recurrence"
    | "exceptions"
    | "startsOn"
    | "window"
    | "durationMinutes"
  >
> {
  const faults: FieldError[] = [];
  if (site.archivedAt !== null) faults.push({ field: "site_id", message: `site ${site.id} is archived` });
  const assetId = fields.asset_id ?? null;
  if (assetId !== null) {
    const asset = await ownAsset(ctx, owner, assetId, tx).catch(() => null);
    if (!asset || asset.siteId !== site.id)
      faults.push({ field: "asset_id", message: `no asset ${assetId} at site ${site.id}` });
    else if (asset.archivedAt !== null)
      faults.push({ field: "asset_id", message: `asset ${assetId} is archived` });
  }
  const templateId = fields.checklist_template_id ?? null;
  if (templateId !== null) {
    const t = await ctx.services.store.checklists.templateById(templateId, tx);
    if (!t || t.accountId !== owner.accountId || t.livemode !== owner.livemode)
      faults.push({
        field: "checklist_template_id",
        message: `no checklist template ${templateId} of yours`,
      });
    else if (t.trade !== fields.trade)
      faults.push({
        field: "checklist_template_id",
        message: `template ${templateId} is for ${t.trade}, not ${fields.trade}`,
      });
  }
  const startsOn = fields.starts_on ?? localDateOf(ctx.services.now(), site.timeZone);
  const rule = parseRecurrence(fields.recurrence, { start: startsOn, exceptions: fields.exceptions });
  if (Array.isArray(rule))
    faults.push(
      ...rule.map((f) => ({
        ...f,
        field: f.field === "start" ? "starts_on" : f.field.replace(/^exceptions\.?/, "exceptions"),
      })),
    );
  const window = parseWindow(fields.window, fields.duration_minutes);
  if (Array.isArray(window)) faults.push(...window);
  else {
    const hours = parseHours(site.hours);
    const weekly = "hours" in hours ? hours.hours : null;
    if (!windowFitsHours(window, weekly, fields.duration_minutes)) {
      faults.push({
        field: "window",
        message:
          `on none of its days does the window ${window.start}-${window.end} hold ${fields.duration_minutes} ` +
          `minutes within the site's opening hours (${site.hours || "any time"}, ${site.timeZone})`,
      });
    }
  }
  if (faults.length > 0) throw validationError(faults);
  return {
    assetId,
    checklistTemplateId: templateId,
    recurrence: Array.isArray(rule) ? fields.recurrence : rule.rule,
    exceptions: Array.isArray(rule) ? fields.exceptions : [...rule.exceptions],
    startsOn,
    window: Array.isArray(window) ? fields.window : { ...window, days: [...window.days] },
    durationMinutes: fields.duration_minutes,
  };
}

/** The record of a plan as it stands after a change: everything a reader needs to check what it did. */
function planRecord(kind: AuditKind, plan: MaintenancePlan, actor: Actor, at: string, extra = {}) {
  return sealRecord({
    kind,
    at,
    accountId: plan.accountId,
    livemode: plan.livemode,
    orderId: null,
    actor,
    data: {
      plan_id: plan.id,
      site_id: plan.siteId,
      asset_id: plan.assetId,
      trade: plan.trade,
      name: plan.name,
      description: plan.description,
      checklist_template_id: plan.checklistTemplateId,
      duration_minutes: plan.durationMinutes,
      recurrence: plan.recurrence,
      exceptions: plan.exceptions,
      starts_on: plan.startsOn,
      window: plan.window,
      horizon_days: plan.horizonDays,
      nte_cents: plan.nteCents,
      status: plan.status,
      version: plan.version,
      ...extra,
    },
  });
}

/** The caller's plan, or 404 (another account's or mode's is not found). */
export async function ownPlan(
  owner: Owner,
  ctx: OperationContext,
  id: string,
  tx?: WriteTx,
): Promise<MaintenancePlan> {
  const plan = await ctx.services.store.maintenance.planById(id, tx);
  if (!plan || plan.accountId !== owner.accountId || plan.livemode !== owner.livemode)
    throw new ApiError("not_found", `No maintenance plan ${id} for this API key.`);
  return plan;
}

const planInput = z.strictObject(planInputShape);

export const planCreateOperation = defineOperation({
  id: "dispatchPlanCreate",
  name: "dispatch.plan_create",
  summary: "Create a maintenance plan",
  description:
    "Plans recurring work at one of your sites (or on one of its assets): a trade, a description, an " +
    "estimated duration, an RFC 5545 recurrence rule read in the site's time zone, a preferred window " +
    "(days and hours) and a horizon. Each occurrence whose window starts within the horizon becomes a " +
    "scheduled work order with that window, once, matched like any scheduled order. Refused (422, " +
    "naming the field) when the rule never occurs or occurs more than daily, when the window cannot hold " +
    "the visit within the site's opening hours, when the asset is not at the site, or the checklist " +
    "template is not yours for the trade.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/plans", input: "body" },
  problems: [404],
  input: planInput,
  output: planSchema,
  example: {
    site_id: "site_0VberZOdAb12Cd34Ef56",
    trade: "hvac",
    name: "Quarterly filter change",
    description: "Replace the rooftop units' air filters and check the belts.",
    duration_minutes: 90,
    recurrence: "FREQ=MONTHLY;INTERVAL=3;BYDAY=2TU",
    window: { days: ["tue", "wed"], start: "07:00", end: "11:00" },
    horizon_days: 30,
  },
  async handler(ctx, input) {
    const owner = planOwner(ctx);
    const { store } = ctx.services;
    const site = await ownSite(ctx, owner, input.site_id);
    const at = ctx.services.now().toISOString();
    const checked = await checkedPlan(ctx, owner, input, site);
    const created = await store.write(async (tx) => {
      const count = (
        await store.maintenance.plans(
          { livemode: owner.livemode, accountId: owner.accountId, limit: PLAN_LIMITS.plansPerAccount },
          tx,
        )
      ).length;
      if (count >= PLAN_LIMITS.plansPerAccount)
        return validationError([
          {
            field: "site_id",
            message: `at most ${PLAN_LIMITS.plansPerAccount} active plans: archive one first`,
          },
        ]);
      const draft: MaintenancePlan = {
        id: newSortableId("mpl"),
        livemode: owner.livemode,
        accountId: owner.accountId,
        siteId: site.id,
        trade: input.trade,
        name: input.name,
        description: input.description,
        horizonDays: input.horizon_days,
        nteCents: input.nte_cents ?? null,
        ...checked,
        status: "active",
        version: 1,
        generatedUntil: null,
        refreshAt: null,
        createdAt: at,
        createdBy: owner.actor,
        updatedAt: at,
        updatedBy: owner.actor,
        seal: "",
      };
      const record = planRecord("plan.created", draft, owner.actor, at);
      const plan = { ...draft, seal: record.seal };
      await store.maintenance.insertPlan(plan, tx);
      tx.appendAudit(record);
      return plan;
    });
    if (created instanceof ApiError) throw created;
    return planView(created, site.timeZone);
  },
});

const { site_id: _site, trade: _trade, exceptions, horizon_days, ...changeable } = planInputShape;
const updateInput = z.strictObject({
  plan_id: planIdSchema,
  version: z
    .number()
    .int()
    .optional()
    .describe(
      "The version you read: the update is refused (409 invalid_transition) if the plan changed since.",
    ),
  ...changeable,
  name: changeable.name.optional(),
  description: changeable.description.optional(),
  duration_minutes: changeable.duration_minutes.optional(),
  recurrence: changeable.recurrence.optional(),
  window: changeable.window.optional(),
  // Without their defaults: absent means unchanged.
  exceptions: exceptions.removeDefault().optional(),
  horizon_days: horizon_days.removeDefault().optional(),
});

export const planUpdateOperation = defineOperation({
  id: "dispatchPlanUpdate",
  name: "dispatch.plan_update",
  summary: "Change a maintenance plan",
  description:
    "Changes the fields given (the site and trade stay: create another plan for another). What is " +
    "generated from now on follows the plan as changed; occurrences already generated keep their orders " +
    "(skip or move them with dispatch.occurrence_skip / dispatch.occurrence_move). Send `version` to be " +
    "refused (409) if someone changed the plan since you read it.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/plans/update", input: "body" },
  problems: [404, 409],
  input: updateInput,
  output: planSchema,
  example: { plan_id: "mpl_0VberZOdAb12Cd34Ef56", window: { days: ["wed"], start: "06:00", end: "10:00" } },
  async handler(ctx, input) {
    const owner = planOwner(ctx);
    const { store } = ctx.services;
    const current = await ownPlan(owner, ctx, input.plan_id);
    const site = await ownSite(ctx, owner, current.siteId);
    const at = ctx.services.now().toISOString();
    const merged = {
      site_id: current.siteId,
      trade: current.trade as z.output<typeof planInputShape.trade>,
      asset_id: input.asset_id === undefined ? current.assetId : input.asset_id,
      name: input.name ?? current.name,
      description: input.description ?? current.description,
      checklist_template_id:
        input.checklist_template_id === undefined ? current.checklistTemplateId : input.checklist_template_id,
      duration_minutes: input.duration_minutes ?? current.durationMinutes,
      recurrence: input.recurrence ?? current.recurrence,
      exceptions: input.exceptions ?? current.exceptions,
      starts_on: input.starts_on ?? current.startsOn,
      window: input.window ?? current.window,
      horizon_days: input.horizon_days ?? current.horizonDays,
      nte_cents: input.nte_cents === undefined ? current.nteCents : input.nte_cents,
    };
    const checked = await checkedPlan(ctx, owner, merged as never, site);
    const updated = await store.write(async (tx) => {
      const before = await ownPlan(owner, ctx, input.plan_id, tx);
      if (before.status === "archived")
        return new ApiError("invalid_transition", `Plan ${before.id} is archived: create a new one.`);
      if (input.version !== undefined && input.version !== before.version)
        return new ApiError(
          "invalid_transition",
          `Plan ${before.id} is at version ${before.version}, not ${input.version}: read it again.`,
          { extra: { current_version: before.version } },
        );
      const draft: MaintenancePlan = {
        ...before,
        ...checked,
        name: merged.name,
        description: merged.description,
        horizonDays: merged.horizon_days,
        nteCents: merged.nte_cents,
        version: before.version + 1,
        updatedAt: at,
        updatedBy: owner.actor,
      };
      const changed = Object.fromEntries(
        (Object.keys(input) as string[])
          .filter((k) => k !== "plan_id" && k !== "version")
          .map((k) => [k, (planView(before, site.timeZone) as Record<string, unknown>)[k] ?? null]),
      );
      // A change of what the occurrences are (rule, dates, window) is generated again from now on.
      const regenerate =
        draft.recurrence !== before.recurrence ||
        draft.startsOn !== before.startsOn ||
        JSON.stringify(draft.exceptions) !== JSON.stringify(before.exceptions) ||
        JSON.stringify(draft.window) !== JSON.stringify(before.window) ||
        draft.horizonDays !== before.horizonDays;
      const record = planRecord("plan.updated", draft, owner.actor, at, { previous: changed });
      const plan = {
        ...draft,
        seal: record.seal,
        generatedUntil: regenerate ? null : before.generatedUntil,
        refreshAt: regenerate ? null : before.refreshAt,
      };
      await store.maintenance.updatePlan(plan, tx, { regenerate });
      tx.appendAudit(record);
      return plan;
    });
    if (updated instanceof ApiError) throw updated;
    return planView(updated, site.timeZone);
  },
});

export const planArchiveOperation = defineOperation({
  id: "dispatchPlanArchive",
  name: "dispatch.plan_archive",
  summary: "Archive a maintenance plan",
  description:
    "Nothing more is generated from the plan; the orders it generated stand (cancel them as any order). " +
    "Archiving an archived plan answers it as it is.",
  access: "key",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/plans/archive", input: "body" },
  problems: [404],
  input: z.strictObject({ plan_id: planIdSchema }),
  output: planSchema,
  example: { plan_id: "mpl_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = planOwner(ctx);
    const { store } = ctx.services;
    const at = ctx.services.now().toISOString();
    const archived = await store.write(async (tx) => {
      const before = await ownPlan(owner, ctx, input.plan_id, tx);
      if (before.status === "archived") return before;
      const draft: MaintenancePlan = {
        ...before,
        status: "archived",
        version: before.version + 1,
        updatedAt: at,
        updatedBy: owner.actor,
      };
      const record = planRecord("plan.archived", draft, owner.actor, at);
      const plan = { ...draft, seal: record.seal };
      await store.maintenance.updatePlan(plan, tx);
      tx.appendAudit(record);
      return plan;
    });
    const site = await store.sites.siteById(archived.siteId);
    return planView(archived, site?.timeZone ?? "UTC");
  },
});

const CURSOR_KIND = "plans";
const PLAN_POSITION = /^(mpl_[0-9A-Za-z]{1,40})$/;

export const plansOperation = defineOperation({
  id: "dispatchPlans",
  name: "dispatch.plans",
  summary: "List your maintenance plans",
  description:
    "Your maintenance plans of this key's mode, oldest first, a page at a time; site_id or asset_id " +
    "narrows them. Archived plans are left out unless include_archived is true.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/plans", input: "query" },
  input: z.strictObject({
    site_id: z.string().min(1).max(64).optional(),
    asset_id: z.string().min(1).max(64).optional(),
    include_archived: booleanQuery.default(false),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  output: z
    .object({
      plans: z.array(planSchema),
      next_cursor: z
        .string()
        .nullable()
        .describe("Pass as `cursor` for the next page; null on the last page."),
    })
    .meta({ id: "MaintenancePlanList" }),
  example: { site_id: "site_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = planOwner(ctx);
    const { store } = ctx.services;
    const after =
      input.cursor === undefined ? undefined : decodeCursor(input.cursor, CURSOR_KIND, PLAN_POSITION)[1];
    const rows = await store.maintenance.plans({
      livemode: owner.livemode,
      accountId: owner.accountId,
      ...(input.site_id ? { siteId: input.site_id } : {}),
      ...(input.asset_id ? { assetId: input.asset_id } : {}),
      includeArchived: input.include_archived,
      ...(after ? { after } : {}),
      limit: input.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, (p) => p.id);
    const zones = await siteZones(ctx, page);
    return { plans: page.map((p) => planView(p, zones.get(p.siteId) ?? "UTC")), next_cursor };
  },
});

/** The time zone of each plan's site, one read per site. */
async function siteZones(
  ctx: OperationContext,
  plans: readonly MaintenancePlan[],
): Promise<Map<string, string>> {
  const zones = new Map<string, string>();
  for (const id of new Set(plans.map((p) => p.siteId))) {
    const site = await ctx.services.store.sites.siteById(id);
    if (site) zones.set(id, site.timeZone);
  }
  return zones;
}

export const planOperation = defineOperation({
  id: "dispatchPlan",
  name: "dispatch.plan",
  summary: "Read a maintenance plan and its occurrences",
  description:
    "One plan, with its occurrences from `upcoming` days ago... until `upcoming_days` ahead (default 90): " +
    "the generated ones with their orders' status, the ones to come, and any overdue first.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/plans/:plan_id", input: "params" },
  problems: [404],
  input: z.strictObject({ plan_id: planIdSchema }),
  output: z
    .object({ plan: planSchema, occurrences: z.array(occurrenceSchema) })
    .meta({ id: "MaintenancePlanDetail" }),
  example: { plan_id: "mpl_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = planOwner(ctx);
    const plan = await ownPlan(owner, ctx, input.plan_id);
    const site = await ownSite(ctx, owner, plan.siteId);
    const now = ctx.services.now();
    const occurrences = await occurrencesFor(ctx, owner, {
      plans: [plan],
      sites: new Map([[site.id, site]]),
      from: new Date(now.getTime() - 30 * 86_400_000),
      until: new Date(now.getTime() + 90 * 86_400_000),
      limit: OCCURRENCE_LIMIT,
    });
    return { plan: planView(plan, site.timeZone) satisfies PlanView, occurrences };
  },
});
