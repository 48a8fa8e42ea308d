// The maintenance plans' wire shapes (issue 34): a plan's input and view, an occurrence's view, shared by
// the plan and occurrence operations and the generator.

import { z } from "zod";
import type { MaintenancePlan, PlanOccurrence } from "../../domain/maintenance/plan.js";
import { nteSchema, tradeSchema } from "../kernel/schemas.js";

export const PLAN_LIMITS = {
  nameLength: 200,
  descriptionLength: 5000,
  recurrenceLength: 500,
  exceptions: 100,
  minDurationMinutes: 15,
  maxDurationMinutes: 12 * 60,
  minHorizonDays: 1,
  /** Generated orders' windows lie within the order's 90 days ahead; the horizon stays inside it. */
  maxHorizonDays: 60,
  defaultHorizonDays: 30,
  /** Active plans per account and mode. */
  plansPerAccount: 2000,
} as const;

const L = PLAN_LIMITS;

const localDateSchema = (field: string) =>
  z
    .string({ error: `${field} must be a date (YYYY-MM-DD)` })
    .max(10, { error: `${field} must be a date (YYYY-MM-DD)` })
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: `${field} must be a date (YYYY-MM-DD)` })
    .refine(
      (s) =>
        !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
      {
        error: `${field} must be a real calendar date`,
      },
    );

const hhmm = (field: string) =>
  z
    .string({ error: `${field} must be a local time (HH:MM)` })
    .max(5, { error: `${field} must be a local time (HH:MM, 00:00-24:00)` })
    .regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, {
      error: `${field} must be a local time (HH:MM, 00:00-24:00)`,
    });

const DAY_CODES = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

const windowSchema = z
  .strictObject({
    days: z
      .array(z.enum(DAY_CODES, { error: `days must be among: ${DAY_CODES.join(", ")}` }))
      .min(1, { error: "window.days needs at least one day" })
      .max(7)
      .describe("The weekdays a visit may take place (mon..sun)."),
    start: hhmm("window.start").describe("Local start, HH:MM, in the site's time zone."),
    end: hhmm("window.end").describe("Local end, HH:MM, in the site's time zone (after start)."),
  })
  .refine((w) => w.start < w.end, { error: "window.end must be after window.start", path: ["end"] })
  .describe(
    "The preferred window, in the site's time zone: each occurrence's order gets this window on its day " +
      "(an occurrence whose day is not one of `days` moves to the next one that is).",
  );

export const planInputShape = {
  site_id: z.string().min(1).max(64).describe("The site (site_...) the plan maintains."),
  asset_id: z
    .string()
    .min(1)
    .max(64)
    .nullable()
    .optional()
    .describe("One asset (ast_...) at that site the plan maintains; omitted: the site as a whole."),
  trade: tradeSchema,
  name: z
    .string()
    .trim()
    .min(1, { error: "name must not be empty" })
    .max(L.nameLength, { error: `name must be at most ${L.nameLength} characters` }),
  description: z
    .string()
    .trim()
    .min(1, { error: "description must not be empty" })
    .max(L.descriptionLength, { error: `description must be at most ${L.descriptionLength} characters` })
    .describe("What the visit does: becomes each generated order's description."),
  checklist_template_id: z
    .string()
    .min(1)
    .max(64)
    .nullable()
    .optional()
    .describe("One of the account's checklist templates (clt_...) of the same trade, for the record."),
  duration_minutes: z
    .number({ error: "duration_minutes must be a whole number of minutes" })
    .int({ error: "duration_minutes must be a whole number of minutes" })
    .min(L.minDurationMinutes, { error: `duration_minutes must be at least ${L.minDurationMinutes}` })
    .max(L.maxDurationMinutes, { error: `duration_minutes must be at most ${L.maxDurationMinutes}` })
    .describe("The visit's estimated duration: the window must hold it within the site's opening hours."),
  recurrence: z
    .string({ error: "recurrence must be an RRULE (RFC 5545), e.g. FREQ=MONTHLY;INTERVAL=3" })
    .trim()
    .min(1, { error: "recurrence must not be empty" })
    .max(L.recurrenceLength, { error: `recurrence must be at most ${L.recurrenceLength} characters` })
    .describe(
      "An RFC 5545 RRULE read in the site's time zone, without DTSTART (starts_on gives it): e.g. " +
        "FREQ=WEEKLY;BYDAY=MO, FREQ=MONTHLY;BYDAY=2TU (the 2nd Tuesday), FREQ=MONTHLY;INTERVAL=3, " +
        "FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=15. At most one occurrence a day.",
    ),
  exceptions: z
    .array(localDateSchema("exceptions[]"))
    .max(L.exceptions, { error: `at most ${L.exceptions} exceptions` })
    .default([])
    .describe("Dates (YYYY-MM-DD) the rule skips."),
  starts_on: localDateSchema("starts_on")
    .optional()
    .describe("The rule's first date (YYYY-MM-DD); default: today in the site's time zone."),
  window: windowSchema,
  horizon_days: z
    .number({ error: "horizon_days must be a whole number of days" })
    .int({ error: "horizon_days must be a whole number of days" })
    .min(L.minHorizonDays, { error: `horizon_days must be at least ${L.minHorizonDays}` })
    .max(L.maxHorizonDays, { error: `horizon_days must be at most ${L.maxHorizonDays}` })
    .default(L.defaultHorizonDays)
    .describe(
      `Occurrences whose window starts within this many days are generated (default ${L.defaultHorizonDays}).`,
    ),
  nte_cents: nteSchema.nullable().optional(),
};

export const planSchema = z
  .object({
    plan_id: z.string(),
    site_id: z.string(),
    asset_id: z.string().nullable(),
    trade: z.string(),
    name: z.string(),
    description: z.string(),
    checklist_template_id: z.string().nullable(),
    duration_minutes: z.number().int(),
    recurrence: z.string(),
    exceptions: z.array(z.string()),
    starts_on: z.string(),
    window: z.object({ days: z.array(z.string()), start: z.string(), end: z.string() }),
    time_zone: z.string().describe("The site's zone, in which the rule and the window are read."),
    horizon_days: z.number().int(),
    nte_cents: z.number().int().nullable(),
    status: z.enum(["active", "archived"]),
    version: z
      .number()
      .int()
      .describe("Send it back with an update to be sure no one changed the plan since."),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    seal: z.string().describe("The audit record of the plan as it stands."),
  })
  .meta({ id: "MaintenancePlan" });

export type PlanView = z.input<typeof planSchema>;

export function planView(p: MaintenancePlan, timeZone: string): PlanView {
  return {
    plan_id: p.id,
    site_id: p.siteId,
    asset_id: p.assetId,
    trade: p.trade,
    name: p.name,
    description: p.description,
    checklist_template_id: p.checklistTemplateId,
    duration_minutes: p.durationMinutes,
    recurrence: p.recurrence,
    exceptions: p.exceptions,
    starts_on: p.startsOn,
    window: p.window,
    time_zone: timeZone,
    horizon_days: p.horizonDays,
    nte_cents: p.nteCents,
    status: p.status,
    version: p.version,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    seal: p.seal,
  };
}

/** Occurrences one read answers at most. */
export const OCCURRENCE_LIMIT = 200;

export const OCCURRENCE_STATUSES = [
  "upcoming",
  "generated",
  "completed",
  "completed_late",
  "overdue",
  "skipped",
  "failed",
] as const;
type OccurrenceStatus = (typeof OCCURRENCE_STATUSES)[number];

export const occurrenceSchema = z
  .object({
    plan_id: z.string(),
    occurrence_key: z.string().describe("The rule's date (YYYY-MM-DD): stable when the occurrence moves."),
    site_id: z.string(),
    asset_id: z.string().nullable(),
    plan_name: z.string(),
    trade: z.string(),
    status: z
      .enum(OCCURRENCE_STATUSES)
      .describe(
        "upcoming: not generated yet (inside or beyond the horizon); generated: its order exists; " +
          "completed: its order was done by the window's end; completed_late: done after it; overdue: the window ended without its order " +
          "done (until done or skipped); skipped; failed: its order could not be created (reason says why: " +
          "move or skip it).",
      ),
    window: z.object({ start: z.iso.datetime(), end: z.iso.datetime() }),
    moved_from: z.object({ start: z.iso.datetime(), end: z.iso.datetime() }).nullable(),
    order_id: z.string().nullable(),
    order_status: z.string().nullable(),
    reason: z.string().nullable(),
    overdue_at: z.iso.datetime().nullable(),
    seal: z.string().nullable().describe("The audit record of its latest action (null while upcoming)."),
  })
  .meta({ id: "PlanOccurrence" });

export type OccurrenceView = z.input<typeof occurrenceSchema>;

/** An occurrence's status as a reader sees it: overdue while its window ended and its order is not done. */
function occurrenceStatus(o: PlanOccurrence, orderDone: boolean): OccurrenceStatus {
  if (o.state === "skipped" || o.state === "failed" || o.state === "completed") return o.state;
  if (o.overdueAt !== null) return orderDone ? "completed_late" : "overdue";
  return "generated";
}

export function occurrenceView(
  o: PlanOccurrence,
  plan: { name: string; trade: string },
  order: { status: string; done: boolean } | null,
): OccurrenceView {
  return {
    plan_id: o.planId,
    occurrence_key: o.key,
    site_id: o.siteId,
    asset_id: o.assetId,
    plan_name: plan.name,
    trade: plan.trade,
    status: occurrenceStatus(o, order?.done ?? false),
    window: { start: o.windowStart, end: o.windowEnd },
    moved_from: o.movedFrom,
    order_id: o.orderId,
    order_status: order?.status ?? null,
    reason: o.reason,
    overdue_at: o.overdueAt,
    seal: o.seal,
  };
}
