// The day's schedule board (issue 31): dispatcherScheduleLanes reads, for one date, a page of the pool's
// contractors as lanes (a dispatcher's Gantt): each lane's working hours and time off over the day, and
// the jobs it holds that day as blocks (the capacity ledger's commitments: the time each job was placed
// at, its status and its service-level standing, and the drive before it, domain/commitments.ts leadIns).
// Read only; the queue beside the lanes is dispatcher.orders (needs_dispatcher, cannot_complete), the
// optimised day dispatch.schedule_optimize.
//
// Bounded: a page holds at most MAX_LANES lanes, and of each lane the blocks of the day (a contractor
// holds at most max_active_jobs); the orders behind the blocks are read in one query. Sorted by name
// (the directory's own order, paged in SQL) or by load (the day's held minutes from the in-memory pool,
// then name); `total` counts every lane the filters match.

import { z } from "zod";
import { type Commitment, leadIns } from "../../domain/commitments.js";
import type { Contractor } from "../../domain/contractor.js";
import { type ContractorStanding, standingOf } from "../../domain/contractor-directory.js";
import { isPlannedReference } from "../../domain/maintenance/plan.js";
import type { Order } from "../../domain/orders/order.js";
import { slaStanding } from "../../domain/orders/sla-clocks.js";
import { DayZones } from "../../domain/schedule/day-jobs.js";
import { workingStretches } from "../../domain/time/calendar.js";
import { isTimeZone } from "../../domain/time/local-time.js";
import { timeZoneOf } from "../../domain/time/zones.js";
import type { StateCode } from "../../domain/us-regions.js";
import { validationError } from "../../errors.js";
import type { ContractorFilter, ContractorListing } from "../../storage/store.js";
import { defineOperation, principalOf, type Services } from "../kernel/operation.js";
import { cursorSchema, decodeCursor } from "../kernel/pagination.js";
import { stateSchema, tradeSchema } from "../kernel/schemas.js";
import { orderNames } from "../orders/dispatcher-actions.js";
import { ORDER_STATUSES } from "../orders/order-view.js";

const MAX_LANES = 50;
const BY_NAME = "l1";
const BY_LOAD = "l2";
const NAME_POSITION = /^([\s\S]*)\|(ctr_[0-9A-Za-z]{1,40})$/;
const LOAD_POSITION = /^(\d+)\|(\d+)$/;

const span = z.object({ start: z.iso.datetime(), end: z.iso.datetime() });

const laneInput = z.strictObject({
  date: z.iso.date().max(10).describe("The day, YYYY-MM-DD: each lane's midnight to midnight in its zone."),
  state: stateSchema.optional().describe("Only contractors covering this state."),
  trade: tradeSchema.optional().describe("Only contractors of this trade."),
  name: z.string().trim().min(1).max(100).optional().describe("Only contractors whose name contains this."),
  standing: z
    .enum(["active", "inactive", "excluded"])
    .default("active")
    .describe("Only contractors of this standing (default active: those who may take work)."),
  time_zone: z
    .string()
    .max(64)
    .optional()
    .describe(
      "Draw every lane's day in this IANA zone (e.g. America/Chicago); default: each lane in its own zone " +
        "(its home ZIP's, else its first state's).",
    ),
  sort: z
    .enum(["name", "load"])
    .default("name")
    .describe("name (default), or load: the most minutes held that day first."),
  cursor: cursorSchema,
  limit: z.coerce.number().int().min(1).max(MAX_LANES).default(25).describe(`Lanes a page, 1-${MAX_LANES}.`),
});

const laneOutput = z
  .object({
    date: z.string(),
    time_zone: z.string().nullable().describe("The zone asked for; null: each lane in its own."),
    total: z.number().int().describe("Lanes the filters match, over every page."),
    lanes: z.array(
      z.object({
        contractor_id: z.string(),
        name: z.string(),
        standing: z.enum(["active", "inactive", "excluded"]),
        trades: z.array(z.string()),
        states: z.array(z.string()),
        time_zone: z.string().describe("The zone the lane's day is drawn in."),
        base_time_zone: z.string().describe("The contractor's own zone (its hours are read in it)."),
        day: span.describe("The date's midnight to midnight in time_zone."),
        working: z
          .array(span)
          .describe("Its working hours within the day (the whole day when it has none stated)."),
        time_off: z.array(span).describe("Its time off within the day."),
        max_active_jobs: z.number().int(),
        held_minutes: z.number().int().describe("Minutes its jobs hold within the day."),
        jobs: z
          .array(
            z.object({
              order_id: z.string(),
              status: z.enum(ORDER_STATUSES),
              trade: z.string(),
              urgency: z.string(),
              start: z.iso.datetime().describe("On site from, as the job was placed."),
              end: z.iso.datetime(),
              travel_minutes: z
                .number()
                .int()
                .describe(
                  "Minutes of the drive before it, as the capacity ledger counts it when fitting jobs: " +
                    "from the place of the job it holds before (travel_from_order_id), else from its base.",
                ),
              travel_start: z.iso.datetime().describe("When that drive starts: start less travel_minutes."),
              travel_from_order_id: z
                .string()
                .nullable()
                .describe("The job the drive comes from; null: from the contractor's base."),
              city: z.string().nullable(),
              state: z.string(),
              account_name: z.string().nullable(),
              planned: z
                .boolean()
                .describe(
                  "Planned maintenance: the order of a maintenance plan's occurrence (reference_id).",
                ),
              service_level: z
                .enum(["on_track", "at_risk", "breached", "met"])
                .nullable()
                .describe("The worst standing of its service-level clocks now; null: none runs."),
            }),
          )
          .describe("The jobs it holds (offered to it, accepted, en route, on site) that meet the day."),
      }),
    ),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: "ScheduleLanes" });

type LaneInput = z.infer<typeof laneInput>;

const iso = (ms: number) => new Date(ms).toISOString();

/** The contractor's own zone: its calendar's, else its first state's. */
function baseZone(c: Contractor): string {
  return c.calendar?.timeZone ?? timeZoneOf(c.states[0] as StateCode);
}

/** Minutes a contractor's held blocks take within [from, until). */
function heldMinutes(services: Services, id: string, from: number, until: number): number {
  let ms = 0;
  for (const b of services.pool.index.heldBy(id) ?? []) {
    ms += Math.max(0, Math.min(b.end, until) - Math.max(b.start, from));
  }
  return Math.round(ms / 60_000);
}

/** One page of the filtered pool's listings, in the order asked for, with the total and the next cursor. */
async function pageOfLanes(
  services: Services,
  filter: ContractorFilter,
  input: LaneInput,
  dayOf: (c: Contractor) => { start: Date; end: Date },
): Promise<{ listings: ContractorListing[]; total: number; next_cursor: string | null }> {
  const store = services.store.contractors;
  if (input.sort === "name") {
    const total = await store.matching(filter);
    const after = input.cursor
      ? (([, name, id]) => ({ name: name as string, id: id as string }))(
          decodeCursor(input.cursor, BY_NAME, NAME_POSITION),
        )
      : undefined;
    const rows = await store.directory(filter, { after, limit: input.limit + 1 });
    const listings = rows.slice(0, input.limit);
    const last = listings.at(-1);
    const next =
      rows.length > input.limit && last
        ? Buffer.from(`${BY_NAME}:${last.name}|${last.id}`).toString("base64url")
        : null;
    return { listings, total, next_cursor: next };
  }
  // By load: every matching contractor's held minutes from the in-memory pool, an offset into that order.
  const ids = (await store.locations(filter)).map((r) => r.id);
  const total = ids.length;
  let offset = 0;
  if (input.cursor) {
    const [, at, count] = decodeCursor(input.cursor, BY_LOAD, LOAD_POSITION);
    if (Number(count) !== total)
      throw validationError([{ field: "cursor", message: "the pool changed: start again" }]);
    offset = Number(at);
  }
  const loads = ids.map((id) => {
    const c = services.pool.index.contractorOf(id);
    const day = c ? dayOf(c) : null;
    return { id, load: c && day ? heldMinutes(services, id, day.start.getTime(), day.end.getTime()) : 0 };
  });
  loads.sort((a, b) => b.load - a.load || (a.id < b.id ? -1 : 1));
  const pageIds = loads.slice(offset, offset + input.limit).map((l) => l.id);
  const byId = new Map((await store.listings(pageIds)).map((l) => [l.id, l]));
  const listings = pageIds.flatMap((id) => byId.get(id) ?? []);
  const end = offset + input.limit;
  const next = end < total ? Buffer.from(`${BY_LOAD}:${end}|${total}`).toString("base64url") : null;
  return { listings, total, next_cursor: next };
}

interface Block {
  orderId: string;
  start: number;
  end: number;
  /** Minutes of the drive before it (domain/commitments.ts leadIns), and the job it comes from. */
  travelMinutes: number;
  travelFrom: string | null;
}

/** A lane without its jobs: the contractor, its day in `zone`, its hours and time off within it, its
 * load, and the blocks that meet the day (`today`). */
function laneFrame(
  listing: ContractorListing,
  c: Contractor | undefined,
  zone: string,
  zones: DayZones,
  blocks: readonly Block[],
) {
  const day = zones.day(zone);
  const from = day.start.getTime();
  const until = day.end.getTime();
  const cal = c?.calendar;
  const working = cal ? workingStretches(cal, from, until, zones.zoneOffsets(cal.timeZone)) : [from, until];
  const pairs: Array<{ start: string; end: string }> = [];
  for (let i = 0; i < working.length; i += 2) {
    pairs.push({ start: iso(working[i] as number), end: iso(working[i + 1] as number) });
  }
  const off = cal?.timeOff ?? new Float64Array(0);
  const timeOff: Array<{ start: string; end: string }> = [];
  for (let i = 0; i < off.length; i += 2) {
    const s = Math.max(off[i] as number, from);
    const e = Math.min(off[i + 1] as number, until);
    if (s < e) timeOff.push({ start: iso(s), end: iso(e) });
  }
  const today = blocks.filter((b) => b.start < until && b.end > from);
  const ms = today.reduce((m, b) => m + Math.max(0, Math.min(b.end, until) - Math.max(b.start, from)), 0);
  return {
    contractor_id: listing.id,
    name: listing.name,
    standing: standingOf(Boolean(listing.active), Boolean(listing.excluded)),
    trades: c?.trades.slice() ?? [],
    states: c?.states.slice() ?? [],
    time_zone: zone,
    base_time_zone: c ? baseZone(c) : zone,
    day: { start: day.start.toISOString(), end: day.end.toISOString() },
    working: pairs,
    time_off: timeOff,
    max_active_jobs: Number(listing.max_active_jobs),
    held_minutes: Math.round(ms / 60_000),
    today,
  };
}

/** A held job as a lane's block: the order's status and the worst standing of its clocks at `now`. */
function laneJob(o: Order, b: Block, accountName: string | null, now: Date) {
  const standings = slaStanding(o, now).map((s) => s.standing);
  const worst = (["breached", "at_risk", "on_track", "met"] as const).find((s) => standings.includes(s));
  return {
    order_id: o.id,
    status: o.status,
    trade: o.trade,
    urgency: o.urgency,
    start: iso(b.start),
    end: iso(b.end),
    travel_minutes: b.travelMinutes,
    travel_start: iso(b.start - b.travelMinutes * 60_000),
    travel_from_order_id: b.travelFrom,
    city: o.city,
    state: o.state,
    account_name: accountName,
    planned: isPlannedReference(o.reference_id),
    service_level: worst ?? null,
  };
}

export const scheduleLanesOperation = defineOperation({
  id: "dispatcherScheduleLanes",
  name: "dispatch.schedule_lanes",
  summary: "Read a day's schedule, a lane per contractor",
  description:
    "For a date, a page of the pool's contractors (filtered by state, trade, name and standing; sorted by " +
    "name or by the day's load) as lanes: each one's working hours and time off within the day, and the " +
    "jobs it holds that day as blocks from their start to their end (as each was placed), with the " +
    "order's status and service-level standing and the drive before each (from the job before, else from " +
    "the contractor's base, as the capacity ledger counts it). Each lane's day is drawn in its own zone, or in the " +
    "time_zone asked for. Read only: place work with dispatcher.assign, move it with " +
    "dispatcher.reschedule, plan the day with dispatch.schedule_optimize.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/schedule/lanes", input: "query" },
  problems: [422],
  input: laneInput,
  output: laneOutput,
  example: { date: "2026-11-24", state: "TX", trade: "plumbing", sort: "load", limit: 25 },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const services = ctx.services;
    if (input.time_zone !== undefined && !isTimeZone(input.time_zone)) {
      throw validationError([{ field: "time_zone", message: "is not an IANA time zone" }]);
    }
    const zones = new DayZones(input.date);
    const zoneOf = (c: Contractor) => input.time_zone ?? baseZone(c);
    const filter: ContractorFilter = {
      pool: principal.livemode ? "live" : "sandbox",
      trade: input.trade,
      state: input.state,
      standing: input.standing as ContractorStanding,
      name: input.name,
    };
    const { listings, total, next_cursor } = await pageOfLanes(services, filter, input, (c) =>
      zones.day(zoneOf(c)),
    );
    // The blocks of the page's contractors, from the ledger (the authority), and the orders behind them;
    // the drive before each measured from its lane's blocks (every one held, not only the day's: the job
    // before the day's first may be yesterday's) and the contractor's base, with no further read.
    const held = new Map<string, Commitment[]>();
    for (const [id, c] of await services.store.contractors.commitments(listings.map((l) => l.id))) {
      const list = held.get(id) ?? [];
      list.push(c);
      held.set(id, list);
    }
    const blocks = new Map<string, Block[]>();
    for (const [id, list] of held) {
      const c = services.pool.index.contractorOf(id);
      const base = c && c.lat !== null && c.lon !== null ? { lat: c.lat, lon: c.lon } : null;
      blocks.set(
        id,
        leadIns(list, base, services.pool.travel).map(({ commitment, minutes, from }) => ({
          orderId: commitment.orderId,
          start: commitment.start,
          end: commitment.end,
          travelMinutes: minutes,
          travelFrom: from?.orderId ?? null,
        })),
      );
    }
    const frames = listings.map((l) => {
      const c = services.pool.index.contractorOf(l.id);
      return laneFrame(l, c, c ? zoneOf(c) : (input.time_zone ?? "UTC"), zones, blocks.get(l.id) ?? []);
    });
    const orders = await services.store.orders.byIds(frames.flatMap((f) => f.today.map((b) => b.orderId)));
    const byId = new Map(orders.filter((o) => o.livemode === principal.livemode).map((o) => [o.id, o]));
    const names = await orderNames(services, orders);
    const now = services.now();
    return {
      date: input.date,
      time_zone: input.time_zone ?? null,
      total,
      lanes: frames.map(({ today, ...lane }) => ({
        ...lane,
        jobs: today
          .flatMap((b) => {
            const o = byId.get(b.orderId);
            return o ? [laneJob(o, b, names.accounts.get(o.account_id) ?? null, now)] : [];
          })
          .sort((a, b) => a.start.localeCompare(b.start)),
      })),
      next_cursor,
    };
  },
});
