// The optimised day (issue "Time"): dispatcherScheduleOptimize proposes each contractor's route for a day
// (a proposal, not a change), dispatcherScheduleApply carries a proposal out by its id as ordinary
// assignments, refusing one whose orders or routed contractors changed since.
//
// The day's jobs: the mode's orders not yet on site (needs_dispatcher, offered, accepted, en_route) whose
// promised time meets the day in the job's own zone: the arrival window, or for as-soon-as-possible work
// from now to arrive_by (from now to the end of the day when arrive_by has passed). Orders from before
// time promises (migration 0017) have none and are left out. Contractors: the mode's pool, active, not
// excluded, compliant on the day, with a base location, working their calendar's working hours that day
// (08:00-18:00 in their zone without working hours) less their time off, taking at most max_active_jobs
// jobs in the day: a contractor's time off and the gaps between its hours are breaks inside its shift (it
// works before and after them, no job nor its drive falls in them: domain/schedule/day.ts); one whose
// time off covers its hours that day is left out.
// Pinned (ride their current contractor): en_route jobs always; accepted ones in incremental mode; any
// job the dispatcher names in `pinned`. Travel and the solver: domain/schedule/day.ts, run on a worker
// thread (kernel/day-planner.ts), one run per mode at a time (409 optimizer_busy); time_limit_ms counts
// from the request's arrival and bounds every phase of the planning, the first construction included.
// What stays on the event loop is cut into short turns: the orders read in pages, the jobs and
// contractors prepared a few hundred at a time (each zone's day computed once a call).

import { setImmediate } from "node:timers/promises";
import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import { complianceIssues, dayOfDate } from "../../domain/compliance.js";
import type { Contractor } from "../../domain/contractor.js";
import { AVERAGE_MPH, type DayContractor, ROAD_FACTOR } from "../../domain/schedule/day.js";
import {
  type DayJobs,
  DayJobsBuilder,
  type DayJobsOptions,
  DayZones,
  inPlanningOrder,
  DEFAULT_SHIFT as SHIFT,
} from "../../domain/schedule/day-jobs.js";
import { lessTimeOff, workingStretches } from "../../domain/time/calendar.js";
import { timeZoneOf } from "../../domain/time/zones.js";
import type { StateCode } from "../../domain/us-regions.js";
import { ApiError } from "../../errors.js";
import type { ScheduleProposalsTable } from "../../storage/schema.js";
import type { ReadSource, ScheduledCursor, ScheduledOrder } from "../../storage/store.js";
import { type Planning, plannerClock } from "../kernel/day-planner.js";
import type { PlannedProposal } from "../kernel/day-planner-thread.js";
import { JsonResult } from "../kernel/json-result.js";
import { defineOperation, principalOf, type Services } from "../kernel/operation.js";
import { stateSchema } from "../kernel/schemas.js";
import { assign } from "../orders/command-runner.js";

/** Open orders read (of the state, or the mode): a day's work stays well under it. */
const SCHEDULED_ORDERS_READ = 20_000;
/** Open orders read a statement at a time (a page's read holds the event loop a few milliseconds). */
const SCHEDULED_PAGE = 250;
/** Orders or contractors prepared between two turns of the event loop. */
const PREPARED_BETWEEN_YIELDS = 250;
const PROPOSAL_TTL_MS = 60 * 60_000;
const MAX_TIME_LIMIT_MS = 2000;
const MAX_ITERATIONS = 20_000;
/** About a second for a 500-job, 100-contractor day on a busy 2-core machine (bench/RESULTS.md). */
const DEFAULT_DAY_ITERATIONS = 1000;

const isoDate = z.iso.date().max(10).describe("The day to plan, YYYY-MM-DD (each job's own local date).");

const optimizeInput = z.strictObject({
  date: isoDate,
  state: stateSchema.optional().describe("Only the jobs in this state (the region); all states when absent."),
  mode: z
    .enum(["incremental", "full"], { error: "mode must be incremental or full" })
    .default("incremental")
    .describe(
      "incremental (default): jobs a contractor accepted stay with it, only the rest are placed; full: " +
        "every job not yet on its way may move.",
    ),
  pinned: z
    .array(z.string().min(1).max(64))
    .max(1000)
    .default([])
    .describe("Order ids that stay with the contractor they have now."),
  iterations: z
    .number()
    .int()
    .min(0)
    .max(MAX_ITERATIONS)
    .default(DEFAULT_DAY_ITERATIONS)
    .describe(
      `The search's budget: ruin-and-recreate iterations, 0-${MAX_ITERATIONS} (default ` +
        `${DEFAULT_DAY_ITERATIONS}, about a second on a 500-job day). With the seed it decides the proposal.`,
    ),
  time_limit_ms: z
    .number()
    .int()
    .min(50)
    .max(MAX_TIME_LIMIT_MS)
    .default(MAX_TIME_LIMIT_MS)
    .describe(
      `A safety cap on the planning, 50-${MAX_TIME_LIMIT_MS} ms (default ${MAX_TIME_LIMIT_MS}), counted ` +
        "from the request's arrival: a search it stops before its budget is spent answers search.stopped " +
        '"time_limit"; one it stops before the first plan is complete answers "time_limit_construction", ' +
        'the jobs not reached unassigned with reason "time_limit" (both depend on the load).',
    ),
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(1)
    .describe("The search's seed: same day, same seed, same budget, same routes."),
});

const unplacedReason = z
  .enum(["no_contractor", "contractor_unavailable", "no_feasible_slot", "no_location", "time_limit"])
  .describe(
    "no_contractor: none with its trade covers its place; contractor_unavailable: pinned to a " +
      "contractor not working that day; no_feasible_slot: no route reaches it in its time; " +
      "no_location: its ZIP and city are unknown; time_limit: the time limit passed before the first " +
      "plan reached it (not tried: propose again with a longer limit, or a state).",
  );

const stop = z.object({
  order_id: z.string(),
  arrive_at: z.iso.datetime(),
  start_at: z.iso.datetime().describe("Service starts (after waiting for the window to open, if early)."),
  end_at: z.iso.datetime(),
  travel_minutes: z.number().describe("Driving from the previous stop (or the base)."),
  change: z
    .enum(["kept", "moved", "assigned"])
    .describe("kept: its contractor now; moved: from another contractor; assigned: it had none."),
});

const proposalSchema = z
  .object({
    proposal_id: z.string(),
    hash: z.string().describe("SHA-256 (hex) of the proposal's canonical JSON without proposal_id and hash."),
    date: z.string(),
    state: z.string().nullable(),
    mode: z.enum(["incremental", "full"]),
    livemode: z.boolean(),
    generated_at: z.iso.datetime(),
    expires_at: z.iso.datetime().describe("Apply it before then (an hour)."),
    routes: z.array(
      z.object({
        contractor_id: z.string(),
        shift_start: z.iso.datetime(),
        shift_end: z.iso.datetime(),
        stops: z.array(stop),
        travel_minutes: z.number(),
        idle_minutes: z.number().describe("Waiting for windows to open between stops."),
      }),
    ),
    unassigned: z.array(
      z.object({
        order_id: z.string(),
        reason: unplacedReason,
      }),
    ),
    totals: z.object({
      jobs: z.number().int(),
      served: z.number().int(),
      unassigned: z.number().int(),
      travel_minutes: z.number(),
      lateness_minutes: z.number().describe("Always 0: every stop is within its window (a hard rule)."),
      changes: z.number().int().describe("Stops whose contractor differs from today's plan."),
    }),
    assumptions: z.string(),
    search: z
      .object({
        seed: z.number().int(),
        iterations: z.number().int().describe("The budget asked for."),
        iterations_run: z.number().int(),
        time_limit_ms: z.number().int(),
        stopped: z
          .enum(["budget", "time_limit", "time_limit_construction"])
          .describe(
            "budget: every iteration ran, so the same day, seed and budget give the same routes; " +
              "time_limit: the safety cap stopped the search first (raise it or lower the budget); " +
              "time_limit_construction: it passed before the first plan was complete, and the jobs " +
              'not reached are unassigned with reason "time_limit".',
          ),
      })
      .describe("What the search used."),
  })
  .meta({ id: "ScheduleProposal" });

type Proposal = z.infer<typeof proposalSchema>;

const ASSUMPTIONS =
  `Travel: great-circle distance x ${ROAD_FACTOR} at ${AVERAGE_MPH} mph between ZIP centroids. Shifts: ` +
  `each contractor's working hours of the day by its calendar, ${SHIFT.startHour}:00-${SHIFT.endHour}:00 ` +
  "in its zone without working hours, less its time off: a break inside them (time off, a gap between " +
  "its hours) holds no job nor the drive to or from one, the contractor back at its base before it and " +
  "leaving it after; one whose time off covers its hours is left out; at most max_active_jobs jobs a day. " +
  "Service: the trade's typical hours. Windows are hard: a job that fits no route is left unassigned.";

interface Shift {
  readonly start: Date;
  readonly end: Date;
  readonly breaks: Array<{ start: Date; end: Date }>;
}

/**
 * The contractor's shift on `date`: its calendar's working stretches that day, or 08:00-18:00 in its zone
 * without working hours, less its time off; from the first minute left to the last, with the gaps between
 * (time off, a break in its hours) as breaks. Null when it does not work that day or time off covers it.
 */
function shiftOf(c: Contractor, zones: DayZones): Shift | null {
  const cal = c.calendar;
  const zone = cal?.weekly ? cal.timeZone : (cal?.timeZone ?? timeZoneOf(c.states[0] as StateCode));
  let stretches: number[];
  if (cal?.weekly) {
    const day = zones.day(zone);
    stretches = workingStretches(cal, day.start.getTime(), day.end.getTime(), zones.zoneOffsets(zone));
  } else {
    const shift = zones.shift(zone);
    stretches = [shift.start.getTime(), shift.end.getTime()];
  }
  const worked = cal && cal.timeOff.length > 0 ? lessTimeOff(stretches, cal.timeOff) : stretches;
  if (worked.length === 0) return null;
  const breaks: Array<{ start: Date; end: Date }> = [];
  for (let i = 2; i < worked.length; i += 2) {
    breaks.push({ start: new Date(worked[i - 1] as number), end: new Date(worked[i] as number) });
  }
  return { start: new Date(worked[0] as number), end: new Date(worked[worked.length - 1] as number), breaks };
}

function dayContractor(c: Contractor, zones: DayZones, today: number): DayContractor | null {
  if (!c.active || c.excluded || c.lat === null || c.lon === null || c.states.length === 0) return null;
  if (complianceIssues(c, today).length > 0) return null;
  const shift = shiftOf(c, zones);
  if (shift === null) return null;
  return {
    id: c.id,
    trades: c.trades,
    states: c.states,
    base: { lat: c.lat, lon: c.lon },
    radiusMiles: c.serviceRadiusMiles,
    shiftStart: shift.start,
    shiftEnd: shift.end,
    ...(shift.breaks.length > 0 ? { breaks: shift.breaks } : {}),
    capacity: c.maxActiveJobs,
  };
}

/** The mode's open orders (of the state when given), read a page at a time with the event loop free
 * between pages: one statement for a busy state's 3,000 orders held it for 100-250 ms on SQLite. */
async function scheduledOrders(
  services: Services,
  livemode: boolean,
  state: string | undefined,
): Promise<ScheduledOrder[]> {
  const orders: ScheduledOrder[] = [];
  let after: ScheduledCursor | null = null;
  for (;;) {
    const page = await services.store.orders.scheduledPage(livemode, state, after, SCHEDULED_PAGE);
    for (const order of page) orders.push(order);
    const last = page.at(-1);
    if (last === undefined || page.length < SCHEDULED_PAGE || orders.length >= SCHEDULED_ORDERS_READ) break;
    after = { state: last.state, status: last.status, id: last.id };
    await setImmediate();
  }
  return orders.slice(0, SCHEDULED_ORDERS_READ);
}

/** The day's jobs made on the event loop, a few hundred between turns: for a store the planner's thread
 * cannot read (in memory). */
async function dayJobs(
  services: Services,
  livemode: boolean,
  input: z.infer<typeof optimizeInput>,
  options: DayJobsOptions,
): Promise<DayJobs> {
  const orders = inPlanningOrder(await scheduledOrders(services, livemode, input.state));
  const builder = new DayJobsBuilder(options);
  for (const [i, order] of orders.entries()) {
    if (i > 0 && i % PREPARED_BETWEEN_YIELDS === 0) await setImmediate();
    builder.add(order);
  }
  return builder.out;
}

/** The mode's contractors who work `date` and could be of use to the jobs (the planner's thread keeps
 * those who could take one): with a state, those who cover it (every job is of that state, so no other
 * could take one). From the in-memory pool (kernel/contractor-pool.ts): reading the 3,300 rows of a
 * sandbox pool from SQLite held the event loop for 100-200 ms a call. Apply checks each routed
 * contractor against the store. */
function dayContractors(
  services: Services,
  livemode: boolean,
  state: StateCode | undefined,
  zones: DayZones,
): Promise<DayContractor[]> {
  const pool = livemode ? "live" : "sandbox";
  const candidates = services.pool.index
    .all()
    .filter((c) => c.pool === pool && (state === undefined || c.states.includes(state)));
  return workingOn(candidates, zones);
}

/** Those of `candidates` who work the day, a few hundred between turns of the event loop. */
async function workingOn(candidates: readonly Contractor[], zones: DayZones): Promise<DayContractor[]> {
  const today = dayOfDate(zones.date);
  const out: DayContractor[] = [];
  for (const [i, c] of candidates.entries()) {
    if (i > 0 && i % PREPARED_BETWEEN_YIELDS === 0) await setImmediate();
    const day = dayContractor(c, zones, today);
    if (day !== null) out.push(day);
  }
  return out;
}

/** Of the contractors holding one of the day's jobs (by id) who are not among the state's, those who
 * work the day: from outside the state (a pinned job stays with its holder). */
function holdersOutside(
  services: Services,
  livemode: boolean,
  state: StateCode | undefined,
  zones: DayZones,
  ids: readonly string[],
): Promise<DayContractor[]> {
  // Without a state, every contractor of the mode who works the day was sent already.
  if (state === undefined) return Promise.resolve([]);
  const pool = livemode ? "live" : "sandbox";
  const outside: Contractor[] = [];
  for (const id of ids) {
    const c = services.pool.index.contractorOf(id);
    if (c !== undefined && c.pool === pool && !c.states.includes(state)) outside.push(c);
  }
  return workingOn(outside, zones);
}

/**
 * The instant (plannerClock) at which the planning stops: the time limit counted from the request's
 * arrival (`receivedHr`, process.hrtime), so that the time spent before the planner's thread has the day
 * (waiting for the loop, reading and preparing the orders and contractors) is spent from it too.
 */
export function planningDeadline(
  limitMs: number,
  receivedHr: bigint,
  nowHr: bigint = process.hrtime.bigint(),
  now: number = plannerClock(),
): number {
  const spentMs = Number(nowHr - receivedHr) / 1e6;
  return now - Math.max(0, spentMs) + limitMs;
}

/** The proposal as JSON text, what it was planned on (the orders' versions, as JSON text) and what apply
 * checks of the contractors it routes. */
interface Proposed {
  readonly planned: PlannedProposal;
  readonly basisJson: string;
  readonly contractorBasis: Record<string, string>;
  readonly generatedAt: string;
  readonly expiresAt: string;
}

async function propose(
  services: Services,
  livemode: boolean,
  input: z.infer<typeof optimizeInput>,
  deadline: number,
  planDay: Planning,
): Promise<Proposed> {
  const now = services.now();
  const zones = new DayZones(input.date);
  // Every account's do-not-dispatch entries of the mode, read now: no job is planned on a contractor
  // its account excludes from its trade (a handful of rows, sent to the planner's thread with the rest).
  const exclusions = (await services.store.doNotDispatch.list({ livemode })).map((e) => ({
    accountId: e.accountId,
    contractorId: e.contractorId,
    trades: e.trades,
  }));
  const options = { date: input.date, now, mode: input.mode, pinned: input.pinned, exclusions };
  const source = services.store.readSource;
  // The planner's thread reads the day itself on a connection of its own; a store it cannot reach (in
  // memory) has its day made here.
  const made = source === undefined ? await dayJobs(services, livemode, input, options) : null;
  const day =
    made === null
      ? { read: { ...options, source: source as ReadSource, livemode, state: input.state } }
      : { jobs: made.jobs };
  const generatedAt = now.toISOString();
  const expiresAt = new Date(now.getTime() + PROPOSAL_TTL_MS).toISOString();
  const planned = await planDay(
    {
      day,
      travel: services.pool.travel.model,
      seed: input.seed,
      iterations: input.iterations,
      deadline,
      frame: {
        date: input.date,
        state: input.state ?? null,
        mode: input.mode,
        livemode,
        generated_at: generatedAt,
        expires_at: expiresAt,
        unassigned: made?.unassigned ?? [],
        assumptions: ASSUMPTIONS,
        search: { seed: input.seed, iterations: input.iterations, time_limit_ms: input.time_limit_ms },
      },
    },
    {
      // Prepared on the event loop, a few hundred between turns, while the thread reads the day.
      ofState: dayContractors(services, livemode, input.state, zones),
      holders: (ids) => holdersOutside(services, livemode, input.state, zones, ids),
    },
  );
  // What apply checks of the contractors it routes (their standing, calendar, compliance, time off).
  const prints = await services.store.contractors.fingerprints([...planned.routed], generatedAt);
  return {
    planned,
    basisJson: planned.basisJson ?? JSON.stringify(made?.basis ?? {}),
    contractorBasis: Object.fromEntries(prints),
    generatedAt,
    expiresAt,
  };
}

export const scheduleOptimizeOperation = defineOperation({
  id: "dispatcherScheduleOptimize",
  name: "dispatch.schedule_optimize",
  summary: "Propose an optimised day",
  description:
    "For a date and an optional state, plans the day's jobs that are not yet on site (windows, service " +
    "times, trades) over the contractors who can work it (trades, states, reach, base, shifts, daily job " +
    "limits) and returns a proposal, not a change: each contractor's ordered route with arrival times, " +
    "travel and idle time, the jobs left unassigned with the reason, and the totals (jobs served, travel, " +
    "lateness, changes against today's plan). incremental keeps accepted jobs where they are; full may move " +
    "them; pinned keeps any. Apply it with dispatcherScheduleApply within the hour. The planning runs off " +
    "the server's event loop, one per mode at a time: 409 optimizer_busy (with Retry-After) while another " +
    "runs.",
  access: "dispatcher",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatcher/v1/schedule/optimize", input: "body" },
  problems: [409],
  input: optimizeInput,
  output: proposalSchema,
  example: { date: "2026-11-24", state: "TX", mode: "incremental", seed: 1, iterations: 1000 },
  async handler(ctx, input) {
    const livemode = principalOf(ctx).livemode;
    const deadline = planningDeadline(input.time_limit_ms, ctx.receivedHr);
    const { planned, basisJson, contractorBasis, generatedAt, expiresAt } =
      await ctx.services.planner.exclusive(livemode, deadline, (plan) =>
        propose(ctx.services, livemode, input, deadline, plan),
      );
    await ctx.services.store.schedules.insert({
      id: planned.proposalId,
      livemode: livemode ? 1 : 0,
      created_at: generatedAt,
      expires_at: expiresAt,
      hash: planned.hash,
      body: planned.json,
      basis: basisJson,
      contractor_basis: JSON.stringify(contractorBasis),
      applied_at: null,
    });
    // Proposals a day past their expiry, dropped after the answer (housekeeping the caller need not wait
    // for; one that fails is done by the next call).
    ctx.services.store.schedules
      .purge(new Date(Date.parse(generatedAt) - 24 * PROPOSAL_TTL_MS).toISOString())
      .catch(() => {});
    // Sent as the thread made it: a 3,000-job proposal is not parsed and serialised again here.
    return new JsonResult<z.input<typeof proposalSchema>>(planned.json);
  },
});

const appliedSchema = z
  .object({
    proposal_id: z.string(),
    hash: z.string(),
    applied_at: z.iso.datetime(),
    seal: z.string().describe("Seal of the schedule.applied audit record."),
    assignments: z.array(
      z.object({
        order_id: z.string(),
        contractor_id: z.string(),
        outcome: z.enum(["assigned", "refused"]),
        reason: z.string().optional().describe("Why an assignment was refused (its problem's detail)."),
      }),
    ),
    unassigned: z
      .array(
        z.object({
          order_id: z.string(),
          reason: unplacedReason,
          contractor_id: z.string().nullable().describe("Who holds or is offered it now (unchanged)."),
        }),
      )
      .describe(
        "The jobs the proposal did not place. Apply leaves them as they are (an offer or a contractor " +
          "they have stays; apply never takes a job away): place them by hand, or propose again.",
      ),
  })
  .meta({ id: "ScheduleApplied" });

export const scheduleApplyOperation = defineOperation({
  id: "dispatcherScheduleApply",
  name: "dispatch.schedule_apply",
  summary: "Apply a proposed day",
  description:
    "Carries out a proposal of dispatcherScheduleOptimize by its id: each stop whose contractor differs " +
    "from the order's now becomes an assignment (an ordinary dispatcher assignment, audited as " +
    "order.assigned), and one schedule.applied record holds the proposal's hash. Jobs it left unassigned " +
    "stay as they are (listed). 409 proposal_stale when an order it plans or a contractor it routes " +
    "(standing, hours, time off, compliance) changed since (the problem lists them: propose again), 409 " +
    "proposal_applied when it was applied already; 404 when unknown, of the other mode, or expired.",
  access: "dispatcher",
  effect: "destructive",
  limit: "key",
  http: { method: "POST", path: "/api/dispatcher/v1/schedule/apply", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    proposal_id: z.string().min(1).max(64),
    reason: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe("Recorded with each assignment (default: the proposal's id)."),
  }),
  output: appliedSchema,
  example: { proposal_id: "prp_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const services = ctx.services;
    const stored = await services.store.schedules.byId(input.proposal_id);
    const now = services.now();
    const row = applicable(stored, input.proposal_id, principal.livemode, now);
    const proposal = JSON.parse(row.body) as Proposal;
    const appliedAt = now.toISOString();
    const holders = await claim(services, row, proposal, appliedAt);
    // Jobs the proposal could not place stay as they are (apply never takes a job away): listed so the
    // dispatcher can place them by hand.
    const leftAsTheyAre = proposal.unassigned.map((u) => ({
      order_id: u.order_id,
      reason: u.reason,
      contractor_id: holders.get(u.order_id) ?? null,
    }));
    const actor = `operator:${principal.keyId}` as const;
    const assignments = await carryOut(
      services,
      proposal,
      principal.livemode,
      input.reason ?? `schedule proposal ${row.id}`,
      actor,
    );
    const record = sealRecord({
      kind: "schedule.applied",
      at: appliedAt,
      accountId: null,
      livemode: principal.livemode,
      actor,
      data: {
        proposal_id: row.id,
        proposal_hash: row.hash,
        date: proposal.date,
        state: proposal.state,
        mode: proposal.mode,
        assignments: assignments.map((a) => ({
          order_id: a.order_id,
          to_contractor: a.contractor_id,
          outcome: a.outcome,
          ...(a.reason === undefined ? {} : { reason: a.reason }),
        })),
        unassigned: leftAsTheyAre,
      },
    });
    await services.store.write(async (tx) => tx.appendAudit(record));
    return {
      proposal_id: row.id,
      hash: row.hash,
      applied_at: appliedAt,
      seal: record.seal,
      assignments,
      unassigned: leftAsTheyAre,
    };
  },
});

type Assignments = z.infer<typeof appliedSchema>["assignments"];

/** The stored proposal, if it may be applied: 404 unless it is of the caller's mode and unexpired, 409
 * once applied. */
function applicable(
  row: ScheduleProposalsTable | undefined,
  id: string,
  livemode: boolean,
  now: Date,
): ScheduleProposalsTable {
  if (!row || Boolean(row.livemode) !== livemode || Date.parse(row.expires_at) <= now.getTime()) {
    throw new ApiError("not_found", `No proposal ${id} to apply (unknown, of the other mode, or expired).`);
  }
  if (row.applied_at !== null) {
    throw new ApiError("proposal_applied", `Proposal ${row.id} was applied at ${row.applied_at}.`);
  }
  return row;
}

/**
 * Checks that nothing the proposal relies on changed and claims it, in one write: the orders and
 * contractors read are locked until COMMIT where the store locks rows (SQLite has one writer), and a stale
 * proposal is not claimed. Returns who holds each planned order now; 409 when stale or claimed already.
 */
async function claim(
  services: Services,
  row: ScheduleProposalsTable,
  proposal: Proposal,
  appliedAt: string,
): Promise<Map<string, string | null>> {
  const basis = JSON.parse(row.basis) as Record<string, number>;
  const contractorBasis = JSON.parse(row.contractor_basis ?? "{}") as Record<string, string>;
  const verdict = await services.store.write(async (tx) => {
    const ids = Object.keys(basis);
    const orders = await services.store.orders.byIds(ids, tx, true);
    const versions = new Map(orders.map((o) => [o.id, o.version]));
    const changedOrders = ids.filter((id) => (versions.get(id) ?? -1) !== basis[id]);
    const contractorIds = Object.keys(contractorBasis);
    const prints = await services.store.contractors.fingerprints(contractorIds, proposal.generated_at, tx);
    const changedContractors = contractorIds.filter((id) => prints.get(id) !== contractorBasis[id]);
    if (changedOrders.length > 0 || changedContractors.length > 0)
      return { kind: "stale" as const, changedOrders, changedContractors };
    if (!(await services.store.schedules.claim(row.id, appliedAt, tx))) return { kind: "taken" as const };
    return { kind: "claimed" as const, holders: new Map(orders.map((o) => [o.id, o.contractor_id])) };
  });
  if (verdict.kind === "stale") {
    const { changedOrders, changedContractors } = verdict;
    throw new ApiError(
      "proposal_stale",
      `${changedOrders.length} of the proposal's orders and ${changedContractors.length} of its ` +
        "contractors changed since it was made: propose the day again.",
      {
        extra: {
          changed_orders: changedOrders.slice(0, 100),
          changed_contractors: changedContractors.slice(0, 100),
        },
      },
    );
  }
  if (verdict.kind === "taken") {
    throw new ApiError(
      "proposal_applied",
      `Proposal ${row.id} is being applied, or was, by another request.`,
    );
  }
  return verdict.holders;
}

/** Each stop whose contractor changes becomes an ordinary assignment; a refused one is listed with why. */
async function carryOut(
  services: Services,
  proposal: Proposal,
  livemode: boolean,
  reason: string,
  actor: `operator:${string}`,
): Promise<Assignments> {
  const assignments: Assignments = [];
  for (const route of proposal.routes) {
    for (const s of route.stops) {
      if (s.change === "kept") continue;
      try {
        await assign(services, s.order_id, livemode, route.contractor_id, reason, actor);
        assignments.push({ order_id: s.order_id, contractor_id: route.contractor_id, outcome: "assigned" });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        assignments.push({
          order_id: s.order_id,
          contractor_id: route.contractor_id,
          outcome: "refused",
          reason: `${error.code}: ${error.message}`,
        });
      }
    }
  }
  return assignments;
}
