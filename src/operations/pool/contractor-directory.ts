// The dispatch team's contractor directory (dispatcher keys, in the key's mode: a test key reads the
// sandbox pool, a live key the live pool): find a contractor by trade, state, distance, standing and name,
// with its capacity, verifications and measured record, to assign it an order by its contractor_id.

import { z } from "zod";
import type { Pool } from "../../domain/contractor.js";
import {
  contractorCalendar,
  contractorTimeZone,
  SHIFT_HORIZON_DAYS,
  shiftAt,
  shiftZones,
} from "../../domain/contractor-calendar.js";
import {
  CONTRACTOR_STANDINGS,
  EXPIRING_WITHIN_DAYS,
  type Ranked,
  rankByDistance,
  ratio,
  standingOf,
  VERIFICATION_STATES,
  verificationOf,
} from "../../domain/contractor-directory.js";
import { boundingBox, lookupZip, type Point } from "../../domain/geo.js";
import { arrivalOf, baseTravelMinutes, type MatchRequest, zoneOffsetsFor } from "../../domain/matching.js";
import type { Order } from "../../domain/orders/order.js";
import { RECALL_WINDOW_DAYS, RECALL_WINDOW_MS } from "../../domain/orders/recall.js";
import type { OrderStatus } from "../../domain/orders/transitions.js";
import type { ZoneOffsets } from "../../domain/time/calendar.js";
import { TRADE_CODES } from "../../domain/trades.js";
import type { StateCode } from "../../domain/us-regions.js";
import { ApiError, validationError } from "../../errors.js";
import type { ContractorFilter, ContractorListing, ContractorRecord } from "../../storage/store.js";
import { defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { cursorSchema, decodeCursor, pageLimitSchema, pageOf } from "../kernel/pagination.js";
import { contractorIdSchema, stateSchema, tradeSchema, zipSchema } from "../kernel/schemas.js";
import { orderPoint, orderTime } from "../orders/command-runner.js";
import { coordinatesSchema, ORDER_STATUSES } from "../orders/order-view.js";
import { ratingAggregate, ratingAggregateSchema } from "../orders/ratings.js";

/** Cursor kinds: a position in name order, and in distance order. */
const BY_NAME = "c1";
const BY_DISTANCE = "c2";

const nonNegative = z.number().int().min(0);

const verificationSchema = z
  .enum(VERIFICATION_STATES)
  .describe(
    `not_verified (no date), expired (the date is before today, UTC), expiring (it ends within ` +
      `${EXPIRING_WITHIN_DAYS} days, today included) or verified.`,
  );

const recordSchema = z
  .object({
    offers_received: nonNegative.describe("Offers made to it, in any state (pending included)."),
    offers_accepted: nonNegative,
    offers_declined: nonNegative,
    offers_expired: nonNegative.describe("Offers it left unanswered until their deadline."),
    acceptance_rate: z
      .number()
      .nullable()
      .describe(
        "offers_accepted / (offers_accepted + offers_declined + offers_expired): an offer left to expire " +
          "counts against it; pending and withdrawn offers (the order was cancelled or assigned by hand " +
          "meanwhile) are left out. Null when it has answered none. 4 decimals.",
      ),
    jobs_completed: nonNegative.describe("Orders it holds that are completed or invoiced."),
    jobs_cannot_complete: nonNegative.describe("Orders it holds that it could not complete."),
    completion_rate: z
      .number()
      .nullable()
      .describe(
        "jobs_completed / (jobs_completed + jobs_cannot_complete), over the orders it holds now (its " +
          "jobs that reached an outcome; cancelled ones are left out). A job it could not complete that a " +
          "dispatcher then gave to another contractor is that contractor's from then on, and leaves this " +
          "record. Null when none ended. 4 decimals.",
      ),
    arrivals: nonNegative.describe(
      "Orders it holds with an ETA it gave when it set off (en_route) and an arrival it reported (on_site).",
    ),
    late_arrivals: nonNegative.describe("Of those, the arrivals after the ETA."),
    average_lateness_minutes: z
      .number()
      .nullable()
      .describe(
        "Mean over its arrivals of the minutes from the ETA it gave to its arrival, an arrival by the ETA " +
          "counting 0 (on_site_at - eta_at, floored at 0; the ETA is the time it reported en_route plus its " +
          "eta_minutes). Null without arrivals. 1 decimal.",
      ),
    jobs_judged_for_recall: nonNegative.describe(
      `Orders it holds completed more than ${RECALL_WINDOW_DAYS} days ago: those whose time to be recalled ` +
        "is over (a job completed since may still be recalled, and is not judged yet).",
    ),
    jobs_recalled: nonNegative.describe(
      "Of those, the ones a later order of the caller's named as its recall (recall_of): the job did not hold.",
    ),
    first_time_fix_rate: z
      .number()
      .nullable()
      .describe(
        "(jobs_judged_for_recall - jobs_recalled) / jobs_judged_for_recall: its jobs fixed the first time. " +
          "Null when none is judged yet. 4 decimals. The evals publish the same rate, overall and its spread " +
          "over contractors, unnamed.",
      ),
  })
  .describe(
    "Measured from the store's offers and orders when read: the offers made to it, and the orders it " +
      "holds (its latest assignment: a reassignment moves an order, with its outcome and arrival, to the " +
      "new contractor).",
  );

const shiftSchema = z
  .object({
    on_shift: z
      .boolean()
      .describe("At work now: inside its hours (any time when it has none) and not on time off."),
    off_reason: z
      .enum(["hours", "time_off"])
      .nullable()
      .describe(
        "Why it is not at work now: outside its hours, or on time off (time off wins); null when on shift.",
      ),
    ends_at: z.iso
      .datetime()
      .nullable()
      .describe(
        `On shift: when this stretch at work ends (its hours end, or time off starts); null when off shift, ` +
          `or when it does not end within ${SHIFT_HORIZON_DAYS} days (no hours: any time).`,
      ),
    next_on_shift_at: z.iso
      .datetime()
      .nullable()
      .describe(
        `Off shift: when it is next at work (its hours, outside time off); null when on shift, or not within ` +
          `${SHIFT_HORIZON_DAYS} days.`,
      ),
    time_off_today: z
      .array(z.object({ start: z.iso.datetime(), end: z.iso.datetime() }))
      .describe(
        "Its periods of time off that overlap its local day today (in time_zone), [start, end), UTC.",
      ),
  })
  .describe(
    "Its shift now, from its hours and time off as matching reads them (the pool in memory: time off set " +
      "in another process shows within the pool refresh interval). Times UTC; show them in time_zone.",
  )
  .meta({ id: "ContractorShift" });

const arrivalSchema = z
  .object({
    fits: z
      .boolean()
      .describe(
        "Whether earliest_at is inside the order's arrival window (or by its arrive_by). Matching's own " +
          "filter for as-soon-as-possible work is looser (a contractor able to start by arrive_by passes " +
          "before its travel is counted, and its ETA is scored): this is whether it would actually be there.",
      ),
    earliest_at: z.iso
      .datetime()
      .nullable()
      .describe(
        "The earliest start on site as matching computes it: its response time and travel from its base, " +
          "then its hours (ignored for emergency work), its time off and the jobs it holds (besides this " +
          "order). As-soon-as-possible work: up to 7 days past arrive_by, so a late one says how late; " +
          "windowed work: inside the window only. Null when none fits.",
      ),
  })
  .describe(
    "Its arrival for the order given as order_id; null without order_id, or when the order states no time.",
  )
  .meta({ id: "ContractorArrival" });

const contractorSchema = z
  .object({
    contractor_id: z
      .string()
      .describe("Its id in the pool: pass it to dispatcher.assign and dispatcher.pool."),
    name: z.string(),
    trades: z.array(z.enum(TRADE_CODES)),
    states: z.array(z.string()).describe("The states, DC or territories it works in."),
    base_zip: z.string().nullable().describe("The ZIP of its base, when known."),
    base_coordinates: coordinatesSchema
      .nullable()
      .describe(
        "Where its base is, as the pool holds it (its ZIP's centroid, or the lat and lon it was imported " +
          "with): what distances and service_radius_miles are measured from; null when unknown. The " +
          "dispatch team's view only.",
      ),
    hours: z
      .string()
      .nullable()
      .describe(
        "Its working hours per weekday, e.g. `mon-fri 08:00-17:00; sat 09:00-13:00`, in time_zone; null: " +
          "any time. Its time off: GET /api/dispatcher/v1/contractors/{contractor_id}/time-off.",
      ),
    time_zone: z
      .string()
      .describe("The IANA zone its hours are read in (its base ZIP's, else its first state's)."),
    service_radius_miles: z
      .number()
      .nullable()
      .describe("How far from its base it travels; null: anywhere in its states."),
    distance_miles: z
      .number()
      .nullable()
      .describe(
        "Great-circle miles from the location asked for (zip, or lat and lon) to its base, 1 decimal; null " +
          "without a location, or when its base is unknown.",
      ),
    status: z
      .enum(CONTRACTOR_STANDINGS)
      .describe(
        "active (can be given work), inactive (deactivated for now) or excluded (never matched or assigned).",
      ),
    emergency_capable: z.boolean(),
    hourly_rate_cents: z.number().int(),
    rating: z
      .number()
      .describe(
        "Quality record, 0-5, from the pool file: the prior its accounts' ratings are shrunk toward.",
      ),
    ratings: ratingAggregateSchema.describe(
      "Its accounts' ratings of its completed jobs as a whole (never who gave which), and the rating matching weighs it by.",
    ),
    response_minutes: z.number().int().describe("Typical minutes from accepting a job to setting off."),
    capacity: z.object({
      max_active_jobs: nonNegative,
      in_use: nonNegative.describe(
        "Units of its capacity held now: one per pending offer and per job (accepted, en_route, on_site). " +
          "An assignment needs in_use < max_active_jobs.",
      ),
      free: nonNegative.describe("max_active_jobs - in_use (0 when full)."),
      open_jobs: nonNegative.describe("Orders it holds now as accepted, en_route or on_site."),
      pending_offers: nonNegative.describe("Offers waiting for its answer."),
    }),
    verification: z.object({
      insurance_verified_until: z.iso.date().nullable(),
      insurance: verificationSchema,
      license_verified_until: z.iso.date().nullable(),
      license: verificationSchema,
    }),
    record: recordSchema,
    shift: shiftSchema,
    arrival: arrivalSchema.nullable(),
  })
  .meta({ id: "DispatcherContractor" });

const heldOrderSchema = z.object({
  order_id: z.string(),
  status: z.enum(ORDER_STATUSES),
  trade: z.string(),
  urgency: z.string(),
  state: z.string(),
  updated_at: z.iso.datetime(),
});

const listInput = z.strictObject({
  trade: tradeSchema.optional().describe("Only contractors working this trade."),
  state: stateSchema.optional().describe("Only contractors working in this state, DC or territory."),
  zip: zipSchema
    .optional()
    .describe("Sort by distance from this ZIP's centroid (and filter with radius_miles)."),
  lat: z.coerce
    .number({ error: "lat must be a number" })
    .min(-90, { error: "lat must be from -90 to 90" })
    .max(90, { error: "lat must be from -90 to 90" })
    .optional()
    .describe("With lon, instead of zip: the location to sort by distance from."),
  lon: z.coerce
    .number({ error: "lon must be a number" })
    .min(-180, { error: "lon must be from -180 to 180" })
    .max(180, { error: "lon must be from -180 to 180" })
    .optional(),
  radius_miles: z.coerce
    .number({ error: "radius_miles must be a number" })
    .positive({ error: "radius_miles must be more than 0" })
    .max(5000, { error: "radius_miles must be at most 5000" })
    .optional()
    .describe("With a location: only contractors whose base is within this many miles of it."),
  status: z
    .enum(CONTRACTOR_STANDINGS, { error: () => `status must be one of: ${CONTRACTOR_STANDINGS.join(", ")}` })
    .optional()
    .describe("Only contractors of this standing."),
  name: z
    .string()
    .min(1, { error: "name must not be empty" })
    .max(200, { error: "name must be at most 200 characters" })
    .optional()
    .describe("Only contractors whose name contains this text, case-insensitively."),
  order_id: z
    .string()
    .min(1, { error: "order_id must not be empty" })
    .max(64, { error: "order_id must be at most 64 characters" })
    .optional()
    .describe(
      "An order of the key's mode to judge each contractor's arrival against (`arrival`): the assign " +
        "picker's question. It filters nothing: pass its trade, state and zip as well.",
    ),
  cursor: cursorSchema,
  limit: pageLimitSchema,
});

/** The location to sort from, if any: a ZIP's centroid or lat and lon (422 for an unknown ZIP, or a lat
 * without its lon, or a radius without a location). */
function originOf(input: z.output<typeof listInput>): Point | undefined {
  const hasPoint = input.lat !== undefined || input.lon !== undefined;
  if (input.zip !== undefined && hasPoint) {
    throw validationError([{ field: "zip", message: "give zip, or lat and lon, not both" }]);
  }
  let origin: Point | undefined;
  if (input.zip !== undefined) {
    const zip = lookupZip(input.zip);
    if (!zip) throw validationError([{ field: "zip", message: `ZIP ${input.zip} is unknown` }]);
    origin = { lat: zip.lat, lon: zip.lon };
  } else if (hasPoint) {
    if (input.lat === undefined || input.lon === undefined) {
      const missing = input.lat === undefined ? "lat" : "lon";
      throw validationError([{ field: missing, message: "lat and lon go together" }]);
    }
    origin = { lat: input.lat, lon: input.lon };
  }
  if (input.radius_miles !== undefined && !origin) {
    throw validationError([{ field: "radius_miles", message: "radius_miles needs a zip, or lat and lon" }]);
  }
  return origin;
}

function poolOf(ctx: OperationContext): Pool {
  return principalOf(ctx).livemode ? "live" : "sandbox";
}

// A page by name ends at a contractor: its id is the position (its name, up to 500 characters, is read
// back from the store, which keeps the cursor short).
const ID_POSITION = /^(ctr_[0-9A-Za-z]{1,40})$/;
const ANY_POSITION = /^(.*)$/s;

async function namePosition(ctx: OperationContext, cursor: string): Promise<{ name: string; id: string }> {
  const [, id] = decodeCursor(cursor, BY_NAME, ID_POSITION);
  const [last] = await ctx.services.store.contractors.listings([id as string]);
  if (!last) throw validationError([{ field: "cursor", message: "is not a cursor this API returned" }]);
  return { name: last.name, id: last.id };
}

function distancePosition(cursor: string): Ranked {
  const [, text] = decodeCursor(cursor, BY_DISTANCE, ANY_POSITION);
  const value = parseJson(text as string);
  if (
    Array.isArray(value) &&
    (value[0] === null || typeof value[0] === "number") &&
    typeof value[1] === "string"
  ) {
    return { distance: value[0], id: value[1] };
  }
  throw validationError([{ field: "cursor", message: "is not a cursor this API returned" }]);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const EMPTY_RECORD: ContractorRecord = {
  offersReceived: 0,
  offersAccepted: 0,
  offersDeclined: 0,
  offersExpired: 0,
  offersPending: 0,
  openJobs: 0,
  jobsCompleted: 0,
  jobsCannotComplete: 0,
  arrivals: 0,
  lateArrivals: 0,
  minutesLate: 0,
  jobsJudged: 0,
  jobsRecalled: 0,
};

/** The order a page's arrivals are judged against: its job's time and place. */
interface Judged {
  orderId: string;
  req: Pick<MatchRequest, "time" | "urgency" | "point">;
  zones: ZoneOffsets;
}

/** The order named by order_id, in the key's mode (422 on order_id otherwise); null when it states no
 * time (an order made before orders stated one). */
async function judgedOrder(ctx: OperationContext, orderId: string): Promise<Judged | null> {
  const [order]: Array<Order | undefined> = await ctx.services.store.orders.byIds([orderId]);
  if (!order || order.livemode !== principalOf(ctx).livemode) {
    throw validationError([{ field: "order_id", message: `no order ${orderId} in this key's mode` }]);
  }
  const time = orderTime(order, ctx.services.now());
  if (time === null) return null;
  const req = { urgency: order.urgency, point: orderPoint(order), time };
  return { orderId: order.id, req, zones: zoneOffsetsFor(req) };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Its shift now and (with an order) its arrival for it, from the pool in memory: the calendars, held
 * jobs and travel matching reads. A contractor the pool has not loaded yet (imported since the last
 * refresh) is read from its row: its hours, no time off, no arrival. */
function timingOf(
  ctx: OperationContext,
  row: ContractorListing,
  now: number,
  zones: ZoneOffsets,
  judged: Judged | null,
): Pick<z.input<typeof contractorSchema>, "shift" | "arrival"> {
  const { index, travel } = ctx.services.pool;
  const c = index.contractorOf(row.id);
  const calendar = c
    ? c.calendar
    : contractorCalendar(row.hours || null, row.home_zip, JSON.parse(row.states) as StateCode[], []);
  const s = shiftAt(calendar, now, zones);
  const shift = {
    on_shift: s.onShift,
    off_reason: s.offReason,
    ends_at: iso(s.endsAt),
    next_on_shift_at: iso(s.nextStartAt),
    time_off_today: s.timeOffToday.map((p) => ({
      start: new Date(p.start).toISOString(),
      end: new Date(p.end).toISOString(),
    })),
  };
  if (judged === null || c === undefined) return { shift, arrival: null };
  const t = judged.req.time;
  const held = (index.heldBy(c.id) ?? []).filter((b) => b.orderId !== judged.orderId);
  const fromBase = baseTravelMinutes(c, judged.req.point, travel);
  const at =
    arrivalOf(c.calendar, judged.req, c.responseMinutes, fromBase, judged.zones, {
      held,
      travel,
      judgeDeadline: false,
    })?.at ?? null;
  const deadline = t?.window ? t.window.end : (t?.arriveBy ?? null);
  return {
    shift,
    arrival: { fits: at !== null && (deadline === null || at <= deadline), earliest_at: iso(at) },
  };
}

function contractorView(
  c: ContractorListing,
  r: ContractorRecord,
  distance: number | null,
  today: string,
  timing: Pick<z.input<typeof contractorSchema>, "shift" | "arrival">,
): z.input<typeof contractorSchema> {
  const inUse = Number(c.active_jobs);
  const max = Number(c.max_active_jobs);
  const answered = r.offersAccepted + r.offersDeclined + r.offersExpired;
  return {
    contractor_id: c.id,
    name: c.name,
    trades: JSON.parse(c.trades),
    states: JSON.parse(c.states),
    base_zip: c.home_zip,
    base_coordinates: c.lat === null || c.lon === null ? null : { lat: Number(c.lat), lon: Number(c.lon) },
    hours: c.hours || null,
    time_zone: contractorTimeZone(c.home_zip, JSON.parse(c.states)),
    service_radius_miles: c.service_radius_miles === null ? null : Number(c.service_radius_miles),
    distance_miles: distance === null ? null : Math.round(distance * 10) / 10,
    status: standingOf(Number(c.active) === 1, Number(c.excluded) === 1),
    emergency_capable: Number(c.emergency_capable) === 1,
    hourly_rate_cents: Number(c.hourly_rate_cents),
    rating: Number(c.rating),
    ratings: ratingAggregate(Number(c.rating), {
      count: Number(c.rating_count),
      quality: Number(c.rating_quality_sum),
      timeliness: Number(c.rating_timeliness_sum),
      communication: Number(c.rating_communication_sum),
      value: Number(c.rating_value_sum),
    }),
    response_minutes: Number(c.response_minutes),
    capacity: {
      max_active_jobs: max,
      in_use: inUse,
      free: Math.max(0, max - inUse),
      open_jobs: r.openJobs,
      pending_offers: r.offersPending,
    },
    verification: {
      insurance_verified_until: c.insurance_verified_until ?? null,
      insurance: verificationOf(c.insurance_verified_until, today),
      license_verified_until: c.license_verified_until ?? null,
      license: verificationOf(c.license_verified_until, today),
    },
    record: {
      offers_received: r.offersReceived,
      offers_accepted: r.offersAccepted,
      offers_declined: r.offersDeclined,
      offers_expired: r.offersExpired,
      acceptance_rate: ratio(r.offersAccepted, answered),
      jobs_completed: r.jobsCompleted,
      jobs_cannot_complete: r.jobsCannotComplete,
      completion_rate: ratio(r.jobsCompleted, r.jobsCompleted + r.jobsCannotComplete),
      arrivals: r.arrivals,
      late_arrivals: r.lateArrivals,
      average_lateness_minutes: r.arrivals > 0 ? Math.round((r.minutesLate / r.arrivals) * 10) / 10 : null,
      jobs_judged_for_recall: r.jobsJudged,
      jobs_recalled: r.jobsRecalled,
      first_time_fix_rate: ratio(r.jobsJudged - r.jobsRecalled, r.jobsJudged),
    },
    ...timing,
  };
}

/** The page's contractors with their records (one query for every record of the page), shifts and, with
 * an order, arrivals. */
async function views(
  ctx: OperationContext,
  page: ContractorListing[],
  distances?: Map<string, number | null>,
  judged: Judged | null = null,
) {
  // A job's recalls are judged once its 30 days to be recalled are over.
  const judgedBefore = new Date(ctx.services.now().getTime() - RECALL_WINDOW_MS).toISOString();
  const records = await ctx.services.store.contractors.records(
    page.map((c) => c.id),
    judgedBefore,
  );
  const now = ctx.services.now().getTime();
  const today = new Date(now).toISOString().slice(0, 10);
  const zones = shiftZones(now);
  return page.map((c) =>
    contractorView(
      c,
      records.get(c.id) ?? EMPTY_RECORD,
      distances?.get(c.id) ?? null,
      today,
      timingOf(ctx, c, now, zones, judged),
    ),
  );
}

export const dispatcherContractorsOperation = defineOperation({
  id: "dispatcherContractors",
  name: "dispatcher.contractors",
  summary: "Find contractors in the pool",
  description:
    "The contractors of the key's pool (a test key: the sandbox pool; a live key: the live pool), with " +
    "their contractor_id (what dispatcher.assign takes), capacity, verifications and measured record. " +
    "Filter by trade, state, status and name; give a zip (or lat and lon) to sort by distance from it, " +
    "nearest first (contractors without a known base last), and radius_miles to keep only those within " +
    "it. Without a location: by name (byte order), then contractor_id. Page with next_cursor. Each " +
    "contractor has its shift now (at work or not, until when, its time off today); give order_id for " +
    "whether each can be on site in that order's window or by its arrive_by (`arrival`).",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/contractors", input: "query" },
  input: listInput,
  output: z
    .object({
      contractors: z.array(contractorSchema),
      total: z
        .number()
        .int()
        .describe("Contractors the filters (and the radius, when given) match, over every page."),
      next_cursor: z
        .string()
        .nullable()
        .describe("Pass as `cursor`, with the same filters, for the next page; null on the last page."),
    })
    .meta({ id: "DispatcherContractorPage" }),
  example: { trade: "plumbing", state: "TX", zip: "78701", radius_miles: 100, status: "active", limit: 20 },
  async handler(ctx, input) {
    const origin = originOf(input);
    const judged = input.order_id === undefined ? null : await judgedOrder(ctx, input.order_id);
    const { contractors } = ctx.services.store;
    const filter: ContractorFilter = {
      pool: poolOf(ctx),
      trade: input.trade,
      state: input.state,
      standing: input.status,
      name: input.name,
    };
    if (!origin) {
      const after = input.cursor === undefined ? undefined : await namePosition(ctx, input.cursor);
      const [rows, total] = await Promise.all([
        contractors.directory(filter, { after, limit: input.limit + 1 }),
        contractors.matching(filter),
      ]);
      const { page, next_cursor } = pageOf(rows, input.limit, BY_NAME, (c) => c.id);
      return { contractors: await views(ctx, page, undefined, judged), total, next_cursor };
    }
    // By distance: the candidates' coordinates (only those in the radius's box, when one is given), ranked
    // here, then the page's rows.
    const after = input.cursor === undefined ? undefined : distancePosition(input.cursor);
    const box = input.radius_miles === undefined ? undefined : boundingBox(origin, input.radius_miles);
    const located = await contractors.locations({ ...filter, box });
    const ranked = rankByDistance(located, origin, input.radius_miles, after);
    const { page, next_cursor } = pageOf(ranked.slice(0, input.limit + 1), input.limit, BY_DISTANCE, (r) =>
      JSON.stringify([r.distance, r.id]),
    );
    const rows = new Map((await contractors.listings(page.map((r) => r.id))).map((c) => [c.id, c]));
    const listed = page.flatMap((r) => rows.get(r.id) ?? []);
    return {
      contractors: await views(ctx, listed, new Map(page.map((r) => [r.id, r.distance])), judged),
      total: after === undefined ? ranked.length : rankByDistance(located, origin, input.radius_miles).length,
      next_cursor,
    };
  },
});

export const dispatcherContractorOperation = defineOperation({
  id: "dispatcherContractor",
  name: "dispatcher.contractor",
  summary: "Read one contractor of the pool",
  description:
    "One contractor of the key's pool with the fields of dispatcher.contractors and the orders it holds " +
    "now (offered to it, accepted, en_route, on_site) and the accounts' do-not-dispatch entries naming it. 422 for an id not of the form ctr_... (such as the " +
    "handle cref-... callers see); 404 for an id not in this pool.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/contractors/:contractor_id", input: "params" },
  input: z.strictObject({ contractor_id: contractorIdSchema }),
  output: contractorSchema
    .extend({
      held_orders: z
        .array(heldOrderSchema)
        .describe(
          "Orders it holds now, newest change first: offered (its answer pending), accepted, en_route, on_site.",
        ),
      do_not_dispatch: z
        .array(
          z.object({
            entry_id: z.string(),
            account_id: z.string(),
            trades: z.array(z.string()).nullable().describe("null: every trade."),
            reason: z.string(),
            created_at: z.iso.datetime(),
          }),
        )
        .describe(
          "The accounts that exclude it from their work (do-not-dispatch), oldest first: their work of " +
            "those trades is never offered to it, and assigning it is refused (409 contractor_excluded).",
        ),
    })
    .meta({ id: "DispatcherContractorDetail" }),
  example: { contractor_id: "ctr_2f6a9c1d7e3b" },
  async handler(ctx, input) {
    const { contractors } = ctx.services.store;
    const [row] = await contractors.listings([input.contractor_id]);
    if (!row || row.pool !== poolOf(ctx)) {
      throw new ApiError("not_found", `No contractor ${input.contractor_id} in the ${poolOf(ctx)} pool.`);
    }
    const [[view], held, excluded] = await Promise.all([
      views(ctx, [row]),
      contractors.heldOrders(row.id, 200),
      ctx.services.store.doNotDispatch.list({ livemode: row.pool === "live", contractorId: row.id }),
    ]);
    return {
      ...(view as z.input<typeof contractorSchema>),
      held_orders: held.map((o) => ({
        ...o,
        status: o.status as OrderStatus,
      })),
      do_not_dispatch: excluded.map((e) => ({
        entry_id: e.id,
        account_id: e.accountId,
        trades: e.trades === null ? null : [...e.trades],
        reason: e.reason,
        created_at: e.createdAt,
      })),
    };
  },
});
