// The optimised day's jobs made from the day's open orders: the interval each may be served in on the
// date (its arrival window, or from its receipt to arrive_by for as-soon-as-possible work, cut to the
// date's day in the job's own zone), its place (ZIP centroid, else its city), its service time and
// whether it stays with its contractor. Pure: run on the server's event loop for an in-memory store and on
// the day planner's thread otherwise (operations/kernel/day-planner-thread.ts).

import { barredFor, type DoNotDispatchEntry } from "../do-not-dispatch.js";
import { lookupCity, lookupZip, type Point } from "../geo.js";
import type { Order } from "../orders/order.js";
import { ZoneOffsets } from "../time/calendar.js";
import { zonedInstant } from "../time/local-time.js";
import { timeZoneOf } from "../time/zones.js";
import { TRADES, type TradeCode } from "../trades.js";
import type { StateCode } from "../us-regions.js";
import type { DayJob } from "./day.js";

/** The columns of an order the day is planned with. */
export type DayOrder = Pick<
  Order,
  | "id"
  | "account_id"
  | "status"
  | "created_at"
  | "version"
  | "contractor_id"
  | "trade"
  | "state"
  | "zip"
  | "city"
  | "time_zone"
  | "window_start"
  | "window_end"
  | "arrive_by"
  | "received_at"
>;

/** The shift of a contractor without working hours. */
export const DEFAULT_SHIFT = { startHour: 8, endHour: 18 } as const;

/** The order in which the statuses' orders are planned (the store returns them in none). */
const SCHEDULED_STATUSES = ["needs_dispatcher", "offered", "accepted", "en_route"] as const;

function dayBounds(date: string, zone: string, startHour = 0, endHour = 24): { start: Date; end: Date } {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number];
  const start = zonedInstant(zone, { year, month, day, hour: startHour, minute: 0 });
  const next = new Date(Date.UTC(year, month - 1, day + 1));
  const end =
    endHour === 24
      ? zonedInstant(zone, {
          year: next.getUTCFullYear(),
          month: next.getUTCMonth() + 1,
          day: next.getUTCDate(),
          hour: 0,
          minute: 0,
        })
      : zonedInstant(zone, { year, month, day, hour: endHour, minute: 0 });
  return { start, end };
}

/**
 * One date's bounds per zone, computed once a call (a zone's midnight and working hours are the same for
 * every order and contractor in it): each is two zonedInstant calls, which for 3,000 orders and a pool of
 * 3,300 contractors held the event loop for 100-200 ms a call.
 */
export class DayZones {
  private readonly days = new Map<string, { start: Date; end: Date }>();
  private readonly shifts = new Map<string, { start: Date; end: Date }>();
  private readonly offsets = new Map<string, ZoneOffsets>();

  constructor(readonly date: string) {}

  /** The date's midnight to the next, in `zone`. */
  day(zone: string): { start: Date; end: Date } {
    let day = this.days.get(zone);
    if (day === undefined) {
      day = dayBounds(this.date, zone);
      this.days.set(zone, day);
    }
    return day;
  }

  /** The default shift's hours of the date in `zone`. */
  shift(zone: string): { start: Date; end: Date } {
    let shift = this.shifts.get(zone);
    if (shift === undefined) {
      shift = dayBounds(this.date, zone, DEFAULT_SHIFT.startHour, DEFAULT_SHIFT.endHour);
      this.shifts.set(zone, shift);
    }
    return shift;
  }

  /** The zone offsets over the date's day in `zone` (calendars of that zone share them). */
  zoneOffsets(zone: string): ZoneOffsets {
    let offsets = this.offsets.get(zone);
    if (offsets === undefined) {
      const day = this.day(zone);
      offsets = new ZoneOffsets(day.start.getTime(), day.end.getTime());
      this.offsets.set(zone, offsets);
    }
    return offsets;
  }
}

function pointOf(order: DayOrder): Point | null {
  const zip = order.zip ? lookupZip(order.zip) : undefined;
  if (zip) return { lat: zip.lat, lon: zip.lon };
  return order.city ? (lookupCity(order.city, order.state) ?? null) : null;
}

/** The interval an order may be served in, on the date, or null when its promise does not meet the day. */
function intervalOf(order: DayOrder, zones: DayZones, now: Date): { ready: Date; due: Date } | null {
  const zone = order.time_zone ?? timeZoneOf(order.state as StateCode, order.zip);
  const day = zones.day(zone);
  let ready: Date;
  let due: Date;
  if (order.window_start && order.window_end) {
    ready = new Date(Math.max(Date.parse(order.window_start), now.getTime()));
    due = new Date(order.window_end);
  } else if (order.arrive_by) {
    ready = new Date(Math.max(Date.parse(order.received_at), now.getTime()));
    due = new Date(order.arrive_by);
    // Already past its promise: as soon as possible, within the day.
    if (due.getTime() <= ready.getTime()) due = day.end;
  } else return null;
  ready = new Date(Math.max(ready.getTime(), day.start.getTime()));
  due = new Date(Math.min(due.getTime(), day.end.getTime()));
  return ready.getTime() < due.getTime() ? { ready, due } : null;
}

/** The orders in the order the solver takes them (its ties): by status, then newest first, so that the
 * plan does not depend on the order the store returned them in. Sorts `orders` in place. */
export function inPlanningOrder<T extends DayOrder>(orders: T[]): T[] {
  const rank = new Map<string, number>(SCHEDULED_STATUSES.map((s, i) => [s, i]));
  return orders.sort(
    (a, b) =>
      (rank.get(a.status) ?? 0) - (rank.get(b.status) ?? 0) ||
      (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1),
  );
}

/** What the day's jobs are made with besides the orders. */
export interface DayJobsOptions {
  readonly date: string;
  readonly now: Date;
  /** incremental: accepted jobs stay with their contractor; full: only en_route ones (and `pinned`). */
  readonly mode: "incremental" | "full";
  readonly pinned: readonly string[];
  /** The mode's do-not-dispatch entries in force (every account's): a job is never planned on a
   * contractor its account excludes from its trade. */
  readonly exclusions?: readonly Pick<DoNotDispatchEntry, "accountId" | "contractorId" | "trades">[];
}

/** The day's jobs, with what apply checks of them (their versions), who holds each now, and those left
 * out for want of a location. */
export interface DayJobs {
  readonly jobs: DayJob[];
  readonly current: Map<string, string | null>;
  readonly basis: Record<string, number>;
  readonly unassigned: Array<{ order_id: string; reason: "no_location" }>;
}

/** Makes the day's jobs one order at a time (`add`, in planning order), so a caller on an event loop can
 * yield between a few hundred of them. */
export class DayJobsBuilder {
  readonly zones: DayZones;
  readonly out: DayJobs = { jobs: [], current: new Map(), basis: {}, unassigned: [] };
  private readonly pinned: ReadonlySet<string>;
  /** The exclusions by account. */
  private readonly excluded = new Map<string, Pick<DoNotDispatchEntry, "contractorId" | "trades">[]>();

  constructor(private readonly options: DayJobsOptions) {
    this.zones = new DayZones(options.date);
    this.pinned = new Set(options.pinned);
    for (const e of options.exclusions ?? []) {
      const list = this.excluded.get(e.accountId);
      if (list) list.push(e);
      else this.excluded.set(e.accountId, [e]);
    }
  }

  add(order: DayOrder): void {
    const interval = intervalOf(order, this.zones, this.options.now);
    if (interval === null) return;
    const { out } = this;
    out.basis[order.id] = order.version;
    out.current.set(order.id, order.contractor_id);
    const point = pointOf(order);
    if (point === null) {
      out.unassigned.push({ order_id: order.id, reason: "no_location" });
      return;
    }
    const stays =
      order.status === "en_route" ||
      (this.options.mode === "incremental" && order.status === "accepted") ||
      this.pinned.has(order.id);
    out.jobs.push({
      orderId: order.id,
      trade: order.trade,
      state: order.state,
      point,
      ready: interval.ready,
      due: interval.due,
      serviceMinutes: Math.round((TRADES[order.trade as TradeCode]?.typicalJobHours ?? 2) * 60),
      contractorId: order.contractor_id,
      pinned: stays && order.contractor_id !== null,
      ...this.barredOf(order),
    });
  }

  /** The job's `barred`, when its account excludes anyone from its trade. */
  private barredOf(order: DayOrder): { barred?: readonly string[] } {
    const entries = this.excluded.get(order.account_id);
    if (entries === undefined) return {};
    const barred = barredFor(entries, order.trade);
    return barred.size === 0 ? {} : { barred: [...barred] };
  }
}
