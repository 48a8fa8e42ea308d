// Appointment windows and the time promised for a job: the rules a caller's service window must meet,
// the earliest window given to scheduled work booked without one, and the promise an answer states
// (the job's zone, the arrival window or the as-soon-as-possible clocks). Pure: the clock is an argument.
//
// Window rules (each a 422 on the field, with its code):
//   window_not_allowed     emergency and urgent work is as soon as possible: no window (service_window)
//   window_not_ordered     the end is not after the start (service_window.end)
//   window_in_past         the start is before now (service_window.start)
//   window_too_far_ahead   the start or the end is more than 90 days after now (that field)
//   window_too_short       shorter than the trade's typical job hours (service_window.end)
// Earliest window (scheduled without a window): the first window availability offers (domain/
// availability.ts: a slot of the next 14 local days, from tomorrow, that an eligible contractor can
// take), found by the caller, which knows the pool. When none can, the service's booking rule stands
// (earliestWindow): the next working day (Monday to Friday; public holidays are not known) after today
// in the job's zone, from 08:00 local for the longer of 4 hours and the trade's typical job hours rounded
// up to whole hours (08:00-12:00 for every trade today); the order then goes to a dispatcher.

import type { Urgency } from "../pricing.js";
import { TRADES, type TradeCode } from "../trades.js";
import { localDateTime, nextLocalDay, zonedInstant } from "./local-time.js";
import { SERVICE_LEVELS } from "./service-levels.js";

/** How far ahead a window may lie. */
export const MAX_WINDOW_DAYS_AHEAD = 90;
/** The earliest window's local start hour and shortest length. */
export const EARLIEST_WINDOW = { startHour: 8, minHours: 4 } as const;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface TimeWindow {
  start: Date;
  end: Date;
}

type WindowIssueCode =
  | "window_not_allowed"
  | "window_not_ordered"
  | "window_in_past"
  | "window_too_far_ahead"
  | "window_too_short";

export interface WindowIssue {
  field: "service_window" | "service_window.start" | "service_window.end";
  code: WindowIssueCode;
  message: string;
}

/** What the rules judge a window against. */
export interface WindowContext {
  urgency: Urgency;
  trade: TradeCode;
  now: Date;
}

/** The rules a caller's window breaks; none when it may be booked. */
export function windowIssues(window: TimeWindow, ctx: WindowContext): WindowIssue[] {
  if (!SERVICE_LEVELS[ctx.urgency].windowAllowed) {
    return [
      {
        field: "service_window",
        code: "window_not_allowed",
        message: `${ctx.urgency} work is as soon as possible: leave service_window out, or use urgency routine or scheduled`,
      },
    ];
  }
  const issues: WindowIssue[] = [];
  const start = window.start.getTime();
  const end = window.end.getTime();
  const now = ctx.now.getTime();
  const latest = now + MAX_WINDOW_DAYS_AHEAD * DAY_MS;
  if (start < now) {
    issues.push({
      field: "service_window.start",
      code: "window_in_past",
      message: `service_window.start must not be in the past (now is ${ctx.now.toISOString()})`,
    });
  } else if (start > latest) {
    issues.push({
      field: "service_window.start",
      code: "window_too_far_ahead",
      message: `service_window.start must be at most ${MAX_WINDOW_DAYS_AHEAD} days ahead (until ${new Date(latest).toISOString()})`,
    });
  }
  if (end <= start) {
    issues.push({
      field: "service_window.end",
      code: "window_not_ordered",
      message: "service_window.end must be after service_window.start",
    });
    return issues;
  }
  const hours = TRADES[ctx.trade].typicalJobHours;
  if (end - start < hours * HOUR_MS) {
    issues.push({
      field: "service_window.end",
      code: "window_too_short",
      message: `service_window must be at least ${hours} hours long, the typical ${ctx.trade} job`,
    });
  }
  if (end > latest && start <= latest) {
    issues.push({
      field: "service_window.end",
      code: "window_too_far_ahead",
      message: `service_window.end must be at most ${MAX_WINDOW_DAYS_AHEAD} days ahead (until ${new Date(latest).toISOString()})`,
    });
  }
  return issues;
}

/**
 * Earliest windows already worked out, by zone, trade and minute: the answer changes only with the local
 * date, never within a minute (US zones' offsets are whole minutes), and working it out asks ICU for
 * local times several times (about 40 µs, on every scheduled quote and order without a window).
 */
const earliestCache = new Map<string, TimeWindow>();
const EARLIEST_CACHE_LIMIT = 4096;

/** The service's booking rule for scheduled work when no contractor can take a window (see the module's
 * comment). */
export function earliestWindow(now: Date, timeZone: string, trade: TradeCode): TimeWindow {
  const key = `${timeZone}|${trade}|${Math.floor(now.getTime() / 60_000)}`;
  const cached = earliestCache.get(key);
  if (cached !== undefined) return { start: cached.start, end: cached.end };
  const window = computeEarliestWindow(now, timeZone, trade);
  if (earliestCache.size >= EARLIEST_CACHE_LIMIT) earliestCache.clear();
  earliestCache.set(key, window);
  return { start: window.start, end: window.end };
}

function computeEarliestWindow(now: Date, timeZone: string, trade: TradeCode): TimeWindow {
  let day = nextLocalDay(localDateTime(now, timeZone));
  while (day.weekday === 0 || day.weekday === 6) day = nextLocalDay(day);
  const hours = Math.max(EARLIEST_WINDOW.minHours, Math.ceil(TRADES[trade].typicalJobHours));
  const start = zonedInstant(timeZone, { ...day, hour: EARLIEST_WINDOW.startHour, minute: 0 });
  const end = zonedInstant(timeZone, { ...day, hour: EARLIEST_WINDOW.startHour + hours, minute: 0 });
  return { start, end };
}

/** Whose an arrival window is: the caller's ("requested"), the earliest the service gave ("earliest"), or
 * the dispatch team's, which moved it ("rescheduled"). */
export type WindowSource = "requested" | "earliest" | "rescheduled" | "countered";

/** The time an answer promises for a job. */
export interface ServicePromise {
  timeZone: string;
  /** For windowed work: the caller's window ("requested") or the earliest one ("earliest"). */
  arrivalWindow: (TimeWindow & { source: WindowSource }) | null;
  /** For as-soon-as-possible work: a contractor committed by, on site by. */
  respondBy: Date | null;
  arriveBy: Date | null;
}

/**
 * The promise for a job requested at `now`: a window (the caller's, already checked by windowIssues, or
 * for scheduled work the earliest: the one the pool can serve, else the booking rule's) or, for as-soon-as-possible work, the clocks of the urgency's level.
 */
export function servicePromise(
  job: {
    urgency: Urgency;
    trade: TradeCode;
    timeZone: string;
    window: TimeWindow | null;
    /** The earliest window the pool can serve, when the caller found one (scheduled work without a
     * window); absent or null: the booking rule's. */
    earliest?: TimeWindow | null | undefined;
  },
  now: Date,
): ServicePromise {
  const level = SERVICE_LEVELS[job.urgency];
  if (job.window !== null && level.windowAllowed) {
    return {
      timeZone: job.timeZone,
      arrivalWindow: { ...job.window, source: "requested" },
      respondBy: null,
      arriveBy: null,
    };
  }
  if (level.respondMinutes === null || level.arriveMinutes === null) {
    return {
      timeZone: job.timeZone,
      arrivalWindow: {
        ...(job.earliest ?? earliestWindow(now, job.timeZone, job.trade)),
        source: "earliest",
      },
      respondBy: null,
      arriveBy: null,
    };
  }
  return {
    timeZone: job.timeZone,
    arrivalWindow: null,
    respondBy: new Date(now.getTime() + level.respondMinutes * 60_000),
    arriveBy: new Date(now.getTime() + level.arriveMinutes * 60_000),
  };
}
