// dispatchAvailability: the appointment windows a job could be booked into over a range of days, each
// with how many eligible contractors could take it (never who), from the contractors' calendars; and the
// next free windows a 409 window_unavailable offers when an order's window filled meanwhile.

import { z } from "zod";
import {
  AVAILABILITY_MAX_DAYS,
  type BookableWindow,
  bookableWindows,
  firstBookable,
  type LocalDay,
  localDayOf,
  slotHours,
  slotsOf,
} from "../../domain/availability.js";
import type { MatchRequest, MatchResult } from "../../domain/matching.js";
import { nextLocalDay } from "../../domain/time/local-time.js";
import { SERVICE_LEVELS } from "../../domain/time/service-levels.js";
import {
  MAX_WINDOW_DAYS_AHEAD,
  type ServicePromise,
  type TimeWindow,
} from "../../domain/time/service-window.js";
import { validationError } from "../../errors.js";
import { defineOperation, principalOf, type Services } from "../kernel/operation.js";
import { quoteLocationSchema, timeZoneSchema, tradeSchema, urgencySchema } from "../kernel/schemas.js";
import {
  accountJob,
  type JobTime,
  matchJob,
  type ResolvedJob,
  resolveJob,
  resolveJobTime,
  timedJob,
} from "./job.js";

const DAY_MS = 86_400_000;
/** How many next free windows a 409 window_unavailable lists. */
const ALTERNATIVES = 5;

const localDate = (field: string) =>
  z.iso
    .date({ error: `${field} must be a date, YYYY-MM-DD` })
    .max(10, { error: `${field} must be a date, YYYY-MM-DD` })
    .describe("A local date in the job's time zone, YYYY-MM-DD.");

const availabilityInput = z
  .strictObject({
    trade: tradeSchema,
    location: quoteLocationSchema,
    start_date: localDate("start_date").describe("First local day (the job's time zone), YYYY-MM-DD."),
    end_date: localDate("end_date").describe(
      `Last local day, included, YYYY-MM-DD: at most ${AVAILABILITY_MAX_DAYS} days from start_date.`,
    ),
    urgency: urgencySchema.describe(
      "routine (the default) or scheduled: the urgencies that may name a window (emergency and urgent are " +
        "as soon as possible).",
    ),
  })
  .meta({ id: "AvailabilityRequest" });

const windowSchema = z
  .object({
    start: z.iso.datetime().describe("UTC (RFC 3339)."),
    end: z.iso.datetime().describe("UTC (RFC 3339)."),
    contractors_available: z
      .number()
      .int()
      .describe("How many eligible contractors could take the job in this window now (never who)."),
  })
  .meta({ id: "BookableWindow" });

const availabilityOutput = z
  .object({
    livemode: z.boolean(),
    trade: z.string(),
    urgency: z.string(),
    state: z.string(),
    time_zone: timeZoneSchema,
    start_date: z.string(),
    end_date: z.string(),
    window_hours: z.number().int().describe("The length of every window, hours."),
    windows: z
      .array(windowSchema)
      .describe(
        "The bookable windows in time order (those no contractor could take are left out): name one as " +
          "an order's service_window.",
      ),
  })
  .meta({ id: "Availability" });

export function windowView(w: BookableWindow) {
  return {
    start: w.start.toISOString(),
    end: w.end.toISOString(),
    contractors_available: w.contractorsAvailable,
  };
}

function dayOfText(text: string): LocalDay {
  const [year, month, day] = text.split("-").map(Number);
  return { year: year ?? 0, month: month ?? 0, day: day ?? 0 };
}

/** Days since the epoch of a local day (as if UTC: day arithmetic only). */
function dayNumber(d: LocalDay): number {
  return Math.floor(Date.UTC(d.year, d.month - 1, d.day) / DAY_MS);
}

/** The bookable windows of `days` local days from `first`, in the caller's pool. */
function availableWindows(
  services: Services,
  job: MatchRequest,
  zone: string,
  first: LocalDay,
  days: number,
  livemode: boolean,
  now: Date,
): BookableWindow[] {
  const index = services.pool.index;
  const set = index.candidates(livemode ? "live" : "sandbox", job.trade, job.state);
  return bookableWindows(
    job,
    slotsOf(zone, first, days, job.trade, now),
    set,
    index.jobs,
    now,
    services.pool.booked(),
  );
}

/**
 * The earliest window scheduled work booked without one gets: the first slot from the next local day on,
 * over AVAILABILITY_MAX_DAYS days, that an eligible contractor of the caller's pool can take (what
 * availability would list first), with the match for it; null when no slot has one.
 */
function earliestBookable(
  services: Services,
  job: MatchRequest,
  zone: string,
  livemode: boolean,
  now: Date,
): { window: TimeWindow; result: MatchResult } | null {
  const index = services.pool.index;
  const set = index.candidates(livemode ? "live" : "sandbox", job.trade, job.state);
  const booked = services.pool.booked();
  // Day by day: the first day usually has one, and the days after are not worked out.
  let day = nextLocalDay(localDayOf(now, zone));
  for (let d = 0; d < AVAILABILITY_MAX_DAYS; d++) {
    const found = firstBookable(job, slotsOf(zone, day, 1, job.trade, now), set, index.jobs, now, booked);
    if (found !== null) return found;
    day = nextLocalDay(day);
  }
  return null;
}

/**
 * The job timed and matched, as quotes and orders take it: the caller's window or the service level's
 * clocks; for scheduled work without a window, the earliest window the pool can serve (matched once: the
 * search's match is the job's). `time.earliest` is null when no contractor can take any window then:
 * the booking rule's window is stated, and nobody is matched.
 */
export function timedMatch(
  services: Services,
  resolved: ResolvedJob,
  time: JobTime,
  livemode: boolean,
  now: Date,
): { job: ResolvedJob; promise: ServicePromise; time: JobTime; result: MatchResult } {
  const level = SERVICE_LEVELS[resolved.urgency];
  if (time.window === null && (level.respondMinutes === null || level.arriveMinutes === null)) {
    const found = earliestBookable(services, resolved, time.timeZone, livemode, now);
    const booked: JobTime = { ...time, earliest: found?.window ?? null };
    const { job, promise } = timedJob(resolved, booked, now);
    return { job, promise, time: booked, result: found?.result ?? matchJob(services, job, livemode) };
  }
  const { job, promise } = timedJob(resolved, time, now);
  return { job, promise, time, result: matchJob(services, job, livemode) };
}

/** The next free windows from a window's local day on (for a 409 window_unavailable). */
export function nextFreeWindows(
  services: Services,
  job: MatchRequest,
  zone: string,
  after: TimeWindow,
  livemode: boolean,
  now: Date,
): BookableWindow[] {
  const from = after.start.getTime() < now.getTime() ? now : after.start;
  return availableWindows(services, job, zone, localDayOf(from, zone), AVAILABILITY_MAX_DAYS, livemode, now)
    .filter((w) => w.start.getTime() >= from.getTime())
    .slice(0, ALTERNATIVES);
}

export const availabilityOperation = defineOperation({
  id: "dispatchAvailability",
  name: "dispatch.availability",
  summary: "List bookable windows",
  description:
    "For a trade, a US location and a range of local days (at most 14), the appointment windows an order " +
    "could name as its service_window, each with how many eligible contractors could take it now (never " +
    "who), from their working hours, time off and capacity. Windows are the earliest window's shape: from " +
    "08:00 local, the longer of 4 hours and the trade's typical hours, back to back until 20:00; given in " +
    "UTC with the job's time zone named. Past windows and those more than 90 days ahead are left out. 422 " +
    "on end_date when the range is not ordered or longer than 14 days, on urgency for emergency or urgent " +
    "work (as soon as possible: no window).",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/availability", input: "body" },
  input: availabilityInput,
  output: availabilityOutput,
  example: {
    trade: "plumbing",
    location: { state: "TX", zip: "78701" },
    start_date: "2026-12-07",
    end_date: "2026-12-11",
    urgency: "scheduled",
  },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const now = ctx.services.now();
    const urgency = input.urgency;
    if (!SERVICE_LEVELS[urgency].windowAllowed) {
      throw validationError([
        {
          field: "urgency",
          code: "window_not_allowed",
          message: `${urgency} work is as soon as possible, without a window: use routine or scheduled`,
        },
      ]);
    }
    const first = dayOfText(input.start_date);
    const last = dayOfText(input.end_date);
    const days = dayNumber(last) - dayNumber(first) + 1;
    if (days < 1) {
      throw validationError([
        { field: "end_date", code: "range_not_ordered", message: "end_date must not be before start_date" },
      ]);
    }
    if (days > AVAILABILITY_MAX_DAYS) {
      throw validationError([
        {
          field: "end_date",
          code: "range_too_long",
          message: `end_date must be at most ${AVAILABILITY_MAX_DAYS - 1} days after start_date (${AVAILABILITY_MAX_DAYS} days in all)`,
        },
      ]);
    }
    const job = await accountJob(
      ctx.services,
      resolveJob({ ...input, urgency }, now),
      principal.accountId,
      principal.livemode,
    );
    const { timeZone } = resolveJobTime({ ...input, urgency }, now);
    if (dayNumber(first) > dayNumber(localDayOf(now, timeZone)) + MAX_WINDOW_DAYS_AHEAD) {
      throw validationError([
        {
          field: "start_date",
          code: "window_too_far_ahead",
          message: `start_date must be at most ${MAX_WINDOW_DAYS_AHEAD} days ahead`,
        },
      ]);
    }
    const windows = availableWindows(ctx.services, job, timeZone, first, days, principal.livemode, now);
    return {
      livemode: principal.livemode,
      trade: job.trade,
      urgency,
      state: job.state,
      time_zone: timeZone,
      start_date: input.start_date,
      end_date: input.end_date,
      window_hours: slotHours(job.trade),
      windows: windows.map(windowView),
    };
  },
});
