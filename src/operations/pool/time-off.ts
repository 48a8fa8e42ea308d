// Time off in a contractor's calendar (domain/time/calendar.ts): the contractor sets its own (contractor
// keys), the dispatch team sets any contractor's of its pool (dispatcher keys). Each change is audited
// and reaches matching at once in this process, in others within the pool refresh interval.
//
// A period is [start, end): the end after the start, not already over, at most a year long and starting
// at most five years ahead (each a 422 on the field, with its code).

import { z } from "zod";
import { type Actor, sealRecord } from "../../audit/record.js";
import { ApiError, validationError } from "../../errors.js";
import { newId } from "../../ids.js";
import type { ContractorTimeOffTable } from "../../storage/schema.js";
import { contractorOf, defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { contractorIdSchema } from "../kernel/schemas.js";

const DAY_MS = 86_400_000;
/** How long one period may be. */
const TIME_OFF_MAX_DAYS = 366;
/** How far ahead it may start. */
const TIME_OFF_MAX_AHEAD_DAYS = 5 * 366;
/** How many periods one list answer holds at most (the earliest first). */
const LIST_LIMIT = 200;

const timeOffSchema = z
  .object({
    time_off_id: z.string(),
    start: z.iso.datetime().describe("First instant off (UTC)."),
    end: z.iso.datetime().describe("First instant back at work (UTC): the period is [start, end)."),
    reason: z.string().nullable(),
    created_by: z.enum(["contractor", "dispatcher"]).describe("Who set it."),
    created_at: z.iso.datetime(),
  })
  .meta({ id: "TimeOff" });

const timeOffListSchema = z
  .object({ time_off: z.array(timeOffSchema).describe("Periods not yet over, earliest first.") })
  .meta({ id: "TimeOffList" });

const periodShape = {
  start: z.iso.datetime({ offset: true }).max(64).describe("First instant off, ISO 8601 with its offset."),
  end: z.iso
    .datetime({ offset: true })
    .max(64)
    .describe("First instant back at work: the period is [start, end)."),
  reason: z.string().min(1).max(500).optional().describe("Why (kept in the audit record)."),
};

const timeOffIdSchema = z
  .string()
  .max(44, { error: "time_off_id must be off_ followed by letters or digits" })
  .regex(/^off_[0-9A-Za-z]{1,40}$/, { error: "time_off_id must be off_ followed by letters or digits" });

function view(row: ContractorTimeOffTable) {
  return {
    time_off_id: row.id,
    start: row.start_at,
    end: row.end_at,
    reason: row.reason,
    created_by: row.created_by.startsWith("contractor:") ? ("contractor" as const) : ("dispatcher" as const),
    created_at: row.created_at,
  };
}

/** The period, checked against the rules on `now`. */
function period(input: { start: string; end: string }, now: Date): { start: Date; end: Date } {
  const start = new Date(input.start);
  const end = new Date(input.end);
  const errors = [];
  if (end.getTime() <= start.getTime()) {
    errors.push({ field: "end", code: "time_off_not_ordered", message: "end must be after start" });
  } else if (end.getTime() <= now.getTime()) {
    errors.push({
      field: "end",
      code: "time_off_in_past",
      message: `end must be after now (${now.toISOString()})`,
    });
  } else if (end.getTime() - start.getTime() > TIME_OFF_MAX_DAYS * DAY_MS) {
    errors.push({
      field: "end",
      code: "time_off_too_long",
      message: `a period of time off is at most ${TIME_OFF_MAX_DAYS} days`,
    });
  }
  if (start.getTime() > now.getTime() + TIME_OFF_MAX_AHEAD_DAYS * DAY_MS) {
    errors.push({
      field: "start",
      code: "time_off_too_far_ahead",
      message: `start must be at most ${TIME_OFF_MAX_AHEAD_DAYS} days ahead`,
    });
  }
  if (errors.length > 0) throw validationError(errors);
  return { start, end };
}

/** The contractor a dispatcher names, in the pool of its key's mode (404 otherwise). */
async function poolContractor(
  ctx: OperationContext,
  contractorId: string,
  notFound = `No contractor ${contractorId} in this pool.`,
): Promise<boolean> {
  const principal = principalOf(ctx);
  const standing = await ctx.services.store.contractors.standing(contractorId);
  if (!standing || standing.pool !== (principal.livemode ? "live" : "sandbox")) {
    throw new ApiError("not_found", notFound);
  }
  return principal.livemode;
}

async function addTimeOff(
  ctx: OperationContext,
  contractorId: string,
  livemode: boolean,
  actor: Actor,
  input: { start: string; end: string; reason?: string | undefined },
) {
  const now = ctx.services.now();
  const p = period(input, now);
  const row: ContractorTimeOffTable = {
    id: newId("off", 16),
    contractor_id: contractorId,
    start_at: p.start.toISOString(),
    end_at: p.end.toISOString(),
    reason: input.reason ?? null,
    created_by: actor,
    created_at: now.toISOString(),
    removed_at: null,
  };
  await ctx.services.store.contractors.addTimeOff(
    row,
    sealRecord({
      kind: "pool.time_off_added",
      at: row.created_at,
      accountId: null,
      livemode,
      actor,
      data: {
        contractor_id: contractorId,
        time_off_id: row.id,
        start: row.start_at,
        end: row.end_at,
        reason: row.reason,
      },
    }),
  );
  await ctx.services.pool.load(); // this process matches by the new calendar at once
  return view(row);
}

async function removeTimeOff(
  ctx: OperationContext,
  contractorId: string,
  livemode: boolean,
  actor: Actor,
  timeOffId: string,
  reason: string | undefined,
) {
  const removed = await ctx.services.store.contractors.removeTimeOff(
    contractorId,
    timeOffId,
    sealRecord({
      kind: "pool.time_off_removed",
      at: ctx.services.now().toISOString(),
      accountId: null,
      livemode,
      actor,
      data: { contractor_id: contractorId, time_off_id: timeOffId, reason: reason ?? null },
    }),
  );
  if (!removed) throw new ApiError("not_found", `No time off ${timeOffId}.`);
  await ctx.services.pool.load();
  return { time_off_id: timeOffId, removed: true as const };
}

async function listTimeOff(ctx: OperationContext, contractorId: string) {
  const rows = await ctx.services.store.contractors.timeOff(contractorId, ctx.services.now().toISOString());
  return { time_off: rows.slice(0, LIST_LIMIT).map(view) };
}

const removedSchema = z
  .object({ time_off_id: z.string(), removed: z.literal(true) })
  .meta({ id: "TimeOffRemoved" });

export const contractorTimeOffOperation = defineOperation({
  id: "contractorTimeOff",
  name: "contractor.time_off",
  summary: "List your time off",
  description:
    "Your periods of time off that are not over yet, earliest first: no work is offered to you in them.",
  access: "contractor",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/contractor/v1/time-off", input: "query" },
  input: z.strictObject({}),
  output: timeOffListSchema,
  example: {},
  async handler(ctx) {
    return listTimeOff(ctx, contractorOf(ctx).contractorId);
  },
});

export const contractorTimeOffAddOperation = defineOperation({
  id: "contractorTimeOffAdd",
  name: "contractor.time_off_add",
  summary: "Add time off",
  description:
    "Adds a period of time off, [start, end): no work is offered to you when a job would overlap it. Jobs " +
    "you already hold are not affected. 422 on start or end when the period is not ordered, already over, " +
    `longer than ${TIME_OFF_MAX_DAYS} days or starting more than ${TIME_OFF_MAX_AHEAD_DAYS} days ahead.`,
  access: "contractor",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/time-off", input: "body" },
  input: z.strictObject(periodShape),
  output: timeOffSchema,
  example: { start: "2030-07-03T00:00:00-05:00", end: "2030-07-06T00:00:00-05:00", reason: "holiday" },
  async handler(ctx, input) {
    const { contractorId, livemode } = contractorOf(ctx);
    return addTimeOff(ctx, contractorId, livemode, `contractor:${contractorId}`, input);
  },
});

export const contractorTimeOffRemoveOperation = defineOperation({
  id: "contractorTimeOffRemove",
  name: "contractor.time_off_remove",
  summary: "Remove time off",
  description:
    "Removes one of your periods of time off (404 when you have none by that id; removing it again " +
    "answers the same).",
  access: "contractor",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/time-off/remove", input: "body" },
  problems: [404],
  input: z.strictObject({ time_off_id: timeOffIdSchema }),
  output: removedSchema,
  example: { time_off_id: "off_8Hq2LmX4pR7tVw1Z" },
  async handler(ctx, input) {
    const { contractorId, livemode } = contractorOf(ctx);
    return removeTimeOff(
      ctx,
      contractorId,
      livemode,
      `contractor:${contractorId}`,
      input.time_off_id,
      undefined,
    );
  },
});

const dispatcherReason = z
  .string()
  .min(1)
  .max(1000)
  .describe("Why: recorded in the audit log with the change.");

export const dispatcherTimeOffOperation = defineOperation({
  id: "dispatcherTimeOff",
  name: "dispatcher.time_off",
  summary: "List a contractor's time off",
  description: "A contractor's periods of time off that are not over yet, earliest first, in the key's pool.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/contractors/:contractor_id/time-off", input: "params" },
  problems: [404],
  input: z.strictObject({ contractor_id: contractorIdSchema }),
  output: timeOffListSchema,
  example: { contractor_id: "ctr_2f6a9c1d7e3b" },
  async handler(ctx, input) {
    await poolContractor(ctx, input.contractor_id);
    return listTimeOff(ctx, input.contractor_id);
  },
});

export const dispatcherTimeOffAddOperation = defineOperation({
  id: "dispatcherTimeOffAdd",
  name: "dispatcher.time_off_add",
  summary: "Add time off for a contractor",
  description:
    "Adds a period of time off, [start, end), to a contractor of the key's pool, with a reason (audited): " +
    "no work is offered to it when a job would overlap the period. Same rules as the contractor's own.",
  access: "dispatcher",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatcher/v1/time-off", input: "body" },
  problems: [404],
  input: z.strictObject({ contractor_id: contractorIdSchema, ...periodShape, reason: dispatcherReason }),
  output: timeOffSchema,
  example: {
    contractor_id: "ctr_2f6a9c1d7e3b",
    start: "2030-07-03T00:00:00-05:00",
    end: "2030-07-06T00:00:00-05:00",
    reason: "called in: van in the shop",
  },
  async handler(ctx, input) {
    const livemode = await poolContractor(ctx, input.contractor_id);
    const actor = `operator:${principalOf(ctx).keyId}` as const;
    return addTimeOff(ctx, input.contractor_id, livemode, actor, input);
  },
});

export const dispatcherTimeOffRemoveOperation = defineOperation({
  id: "dispatcherTimeOffRemove",
  name: "dispatcher.time_off_remove",
  summary: "Remove a contractor's time off",
  description: "Removes one period of time off of a contractor of the key's pool, with a reason (audited).",
  access: "dispatcher",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatcher/v1/time-off/remove", input: "body" },
  problems: [404],
  input: z.strictObject({ time_off_id: timeOffIdSchema, reason: dispatcherReason }),
  output: removedSchema,
  example: { time_off_id: "off_8Hq2LmX4pR7tVw1Z", reason: "back early" },
  async handler(ctx, input) {
    const row = await ctx.services.store.contractors.timeOffById(input.time_off_id);
    if (!row) throw new ApiError("not_found", `No time off ${input.time_off_id}.`);
    const livemode = await poolContractor(ctx, row.contractor_id, `No time off ${input.time_off_id}.`);
    const actor = `operator:${principalOf(ctx).keyId}` as const;
    return removeTimeOff(ctx, row.contractor_id, livemode, actor, input.time_off_id, input.reason);
  },
});
