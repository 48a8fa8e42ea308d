// Turns a validated quote/order/estimate location into what pricing and matching need, and matches it
// against the caller's pool (sandbox for test keys, live for live keys).

import { dayOf } from "../../domain/compliance.js";
import { firstZipOfCity, lookupCity, lookupZip, type Point } from "../../domain/geo.js";
import {
  type MatchRequest,
  type MatchResult,
  type MatchTime,
  match,
  type RankedCandidate,
} from "../../domain/matching.js";
import { MAX_OFFERS } from "../../domain/orders/policy.js";
import { modelJobPrice, type Urgency } from "../../domain/pricing.js";
import {
  type ServicePromise,
  servicePromise,
  type TimeWindow,
  windowIssues,
} from "../../domain/time/service-window.js";
import { timeZoneOf } from "../../domain/time/zones.js";
import { TRADES, type TradeCode } from "../../domain/trades.js";
import type { StateCode } from "../../domain/us-regions.js";
import { validationError } from "../../errors.js";
import type { Services } from "../kernel/operation.js";

export interface JobInput {
  trade: TradeCode;
  location: { state: string; zip?: string | undefined; city?: string | undefined };
  urgency: Urgency;
  nte_cents?: number | undefined;
}

/** A job resolved for pricing and matching: exactly what the matcher takes. */
export type ResolvedJob = MatchRequest;

/** Resolves coordinates (ZIP first, then city) and checks a ZIP is one the service knows (it has its
 * centroid) and lies in the given state; `now` (the request's time) is the day compliance is judged on
 * until timedJob moves it to the job's day. */
export function resolveJob(input: JobInput, now: Date): ResolvedJob {
  const state = input.location.state as StateCode;
  let point: Point | null = null;
  if (input.location.zip) {
    const zip = lookupZip(input.location.zip);
    // A ZIP that exists nowhere (00000, 99999) would be priced and matched on the state alone, as if it
    // had not been given: refused like a ZIP of another state, so the caller corrects it.
    if (!zip) {
      throw validationError([
        {
          field: "location.zip",
          message: `ZIP ${input.location.zip} is not a known US ZIP code: give the site's ZIP code, or leave zip out and give the city`,
          code: "zip_unknown",
        },
      ]);
    }
    if (zip.state !== state) {
      throw validationError([
        { field: "location.zip", message: `ZIP ${input.location.zip} is in ${zip.state}, not ${state}` },
      ]);
    }
    point = { lat: zip.lat, lon: zip.lon };
  }
  if (!point && input.location.city) point = lookupCity(input.location.city, state) ?? null;
  return {
    trade: input.trade,
    state,
    point,
    urgency: input.urgency,
    nteCents: input.nte_cents ?? null,
    laborHours: TRADES[input.trade].typicalJobHours,
    modelPrice: modelJobPrice(input.trade, state, input.urgency),
    today: dayOf(now),
  };
}

/** A job's time as a request gives it: its zone and the caller's window, if any; and for scheduled work
 * without one, the earliest window the pool can serve (null: none can). */
export interface JobTime {
  timeZone: string;
  window: TimeWindow | null;
  earliest?: TimeWindow | null;
}

/**
 * The job's time zone (its ZIP, else the lowest ZIP of its city, else its state) and the caller's
 * service window, checked against the window rules on `now`: a broken rule is a 422 on the field, with
 * the rule's code.
 */
export function resolveJobTime(
  input: JobInput & { service_window?: { start: string; end: string } | undefined },
  now: Date,
): JobTime {
  const state = input.location.state as StateCode;
  const zip =
    input.location.zip ?? (input.location.city ? firstZipOfCity(input.location.city, state) : undefined);
  const timeZone = timeZoneOf(state, zip);
  if (input.service_window === undefined) return { timeZone, window: null };
  const window = { start: new Date(input.service_window.start), end: new Date(input.service_window.end) };
  const unreadable = (["start", "end"] as const).filter((k) => Number.isNaN(window[k].getTime()));
  if (unreadable.length > 0) {
    throw validationError(
      unreadable.map((k) => ({
        field: `service_window.${k}`,
        message: `service_window.${k} is not a date-time that exists`,
      })),
    );
  }
  const issues = windowIssues(window, { urgency: input.urgency, trade: input.trade, now });
  if (issues.length > 0) throw validationError(issues);
  return { timeZone, window };
}

/** The job's time as the matcher reads it (its calendar filter and ETA): the promised window, or the
 * service level's arrive_by, and the trade's typical hours. */
function matchTimeOf(p: ServicePromise, trade: TradeCode, now: Date): MatchTime {
  return {
    now: now.getTime(),
    window: p.arrivalWindow
      ? { start: p.arrivalWindow.start.getTime(), end: p.arrivalWindow.end.getTime() }
      : null,
    arriveBy: p.arriveBy?.getTime() ?? null,
    durationMinutes: Math.round(TRADES[trade].typicalJobHours * 60),
  };
}

/** The job with its time attached, judged for compliance on its own day (the window's start, or
 * arrive_by), and the promise it was read from. */
export function timedJob(
  job: ResolvedJob,
  time: JobTime,
  now: Date,
): { job: ResolvedJob; promise: ServicePromise } {
  const promise = servicePromise({ urgency: job.urgency, trade: job.trade, ...time }, now);
  // Compliance is judged on the job's own day, not the request's: a contractor whose insurance lapses
  // before a window booked weeks ahead is not offered it.
  const jobDay = promise.arrivalWindow?.start ?? promise.arriveBy ?? now;
  const today = Math.max(job.today, dayOf(jobDay));
  return { job: { ...job, today, time: matchTimeOf(promise, job.trade, now) }, promise };
}

/** A promise as answers state it (UTC times, the zone named). */
export function serviceTimeView(p: ServicePromise) {
  return {
    time_zone: p.timeZone,
    arrival_window: p.arrivalWindow
      ? {
          start: p.arrivalWindow.start.toISOString(),
          end: p.arrivalWindow.end.toISOString(),
          source: p.arrivalWindow.source,
        }
      : null,
    respond_by: p.respondBy?.toISOString() ?? null,
    arrive_by: p.arriveBy?.toISOString() ?? null,
  };
}

/** The job as an account's request makes it: the contractors its do-not-dispatch list bars from work of
 * the job's trade attached (from the cached lists: no query for an account whose list is read already). */
export async function accountJob(
  services: Services,
  job: ResolvedJob,
  accountId: string,
  livemode: boolean,
): Promise<ResolvedJob> {
  const barred = await services.doNotDispatch.barred(accountId, livemode, job.trade);
  return barred.size === 0 ? job : { ...job, barred };
}

export function matchJob(services: Services, job: ResolvedJob, livemode: boolean): MatchResult {
  const index = services.pool.index;
  const pool = livemode ? "live" : "sandbox";
  return match(job, index.candidates(pool, job.trade, job.state), index.jobs, 5, services.pool.booked());
}

/**
 * The contractors an order's cascade may offer the job to, best first: the match (those this process
 * counts as free), then, while that leaves fewer than the cascade's offers and other processes share the
 * store, the best of those this process counts as full but the store says have capacity now (another
 * process gave it back since this one last heard). On the embedded store this process is the only
 * writer: its counts are exact, and the match is the whole answer.
 */
export async function cascadeCandidates(
  services: Services,
  job: ResolvedJob,
  livemode: boolean,
  result: MatchResult,
): Promise<RankedCandidate[]> {
  if (result.ranked.length >= MAX_OFFERS || result.rejected.capacity === 0) return result.ranked;
  if (services.store.singleWriter) return result.ranked;
  const index = services.pool.index;
  const set = index.candidates(livemode ? "live" : "sandbox", job.trade, job.state);
  const known = new Set(result.ranked.map((c) => c.contractor.id));
  // The best of those this process counts as full, by job count or by time (its copy of other
  // processes' jobs and blocks may be stale: jobs end elsewhere too)...
  const unbooked = { held: [], travel: services.pool.travel };
  const counted = match(job, set, noJobs(index.jobs.length), 5, unbooked).ranked.filter(
    (c) => !known.has(c.contractor.id),
  );
  if (counted.length === 0) return result.ranked;
  // ...asked of the store, the authority: their job counts, and the time their jobs hold now, which
  // this process's copy takes at once.
  const ids = counted.map((c) => c.contractor.id);
  const [free, held] = await Promise.all([
    services.store.contractors.withCapacity(ids),
    services.store.contractors.commitments(ids),
  ]);
  index.syncCommitmentsOf(ids, held);
  const fitting = match(job, set, noJobs(index.jobs.length), 5, services.pool.booked()).ranked;
  return [
    ...result.ranked,
    ...fitting.filter((c) => !known.has(c.contractor.id) && free.has(c.contractor.id)),
  ];
}

let zeros = new Int32Array(0);
/** Active-job counts of nobody (a match that leaves capacity to the store). */
function noJobs(length: number): Int32Array {
  if (zeros.length < length) zeros = new Int32Array(length);
  return zeros;
}
