// Contractor matching: hard filters, then a documented score, then a deterministic tie-break. Pure.
//
// Hard filters (all must hold): active; not excluded; works the trade; covers the location (works in the
// state and, when both the job and the contractor have coordinates and the contractor has a radius, the
// job is within that radius); compliant (insurance and license both verified through the job's day, a
// date equal to that day included: compliance.ts); has capacity (active jobs < max, the count bound);
// emergency-capable when urgency=emergency; fits its calendar (time/calendar.ts) when the request states
// its time:
//   windowed work (a caller's window, or the earliest window of scheduled work): a stretch of the
//     trade's typical hours inside the window, inside its working hours and outside its time off, no
//     earlier than it can travel there;
//   as-soon-as-possible work: it can start the job (the typical hours, inside working hours, outside time
//     off) by arrive_by; emergency work ignores working hours (an emergency-capable contractor is on call
//     around the clock) but not time off.
// A contractor without hours is available any time. Then its time (commitments.ts): the jobs it holds
// are blocks of time, and the job must fit between them with the drive from the one before and to the
// one after; windowed work inside the window, as-soon-as-possible work no later than arrive_by (or than
// the calendar alone would have it start, when that is later already). A contractor whose held jobs
// leave no room is rejected under `capacity`.
//
// ETA (minutes from the request to on site): the earliest start its calendar and its held jobs allow, no
// earlier than its response time plus travel from its base (travel-time.ts: great-circle distance x road
// factor at an average speed; UNKNOWN_TRAVEL_MINUTES without a location) for as-soon-as-possible work,
// or than the window's start plus travel for windowed work; without a stated time, response time plus
// travel.
//
// Score = 0.30 fit + 0.25 eta + 0.20 quality + 0.15 price + 0.10 load, each component in [0, 1]:
//   fit     = 1 - distance / reach (reach = radius, or 150 mi for statewide); 0.5 when distance unknown
//   eta     = min(1, target minutes for the urgency / lead minutes), lead = the ETA for as-soon-as-
//             possible work, minutes from the window's start to the arrival for windowed work
//   quality = rating / 5
//   price   = clamp(1.5 - contractor job cost / model job cost, 0, 1); 0 when over the job's NTE
//   load    = 1 - active jobs / max active jobs
// Tie-break: higher score, then lower cost, then lower contractor id.

import { type CandidateSet, FLAG_ACTIVE, FLAG_EMERGENCY, FLAG_EXCLUDED } from "./candidate-set.js";
import { type Commitment, fitAmong, NO_COMMITMENTS } from "./commitments.js";
import { compliantThrough } from "./compliance.js";
import type { Contractor } from "./contractor.js";
import { distanceMiles, type Point } from "./geo.js";
import { type JobPrice, priceJob, type Urgency } from "./pricing.js";
import { ALWAYS, type Calendar, earliestStart, ZoneOffsets } from "./time/calendar.js";
import { SERVICE_LEVELS } from "./time/service-levels.js";
import type { TradeCode } from "./trades.js";
import { greatCircleTravel, type TravelTime, UNKNOWN_TRAVEL_MINUTES } from "./travel-time.js";
import type { StateCode } from "./us-regions.js";

export { UNKNOWN_TRAVEL_MINUTES } from "./travel-time.js";

export const SCORE_WEIGHTS = { fit: 0.3, eta: 0.25, quality: 0.2, price: 0.15, load: 0.1 } as const;

/** Arrival targets per urgency, minutes: the published service levels' (time/service-levels.ts); for
 * scheduled work, booked days ahead, a week. */
export const ETA_TARGET_MINUTES: Readonly<Record<Urgency, number>> = {
  emergency: SERVICE_LEVELS.emergency.arriveMinutes ?? 120,
  urgent: SERVICE_LEVELS.urgent.arriveMinutes ?? 480,
  routine: SERVICE_LEVELS.routine.arriveMinutes ?? 2880,
  scheduled: 10080,
};

/** How far past arrive_by an as-soon-as-possible arrival is still looked for (a contractor able to start
 * by arrive_by but busy until later reports that later ETA). */
export const ASAP_HORIZON_MINUTES = 7 * 1440;
/** Reach used for the fit score of a statewide contractor. */
export const STATEWIDE_REACH_MILES = 150;

export const ETA_TIERS = ["within_2_hours", "same_day", "next_day", "within_3_days", "scheduled"] as const;
export type EtaTier = (typeof ETA_TIERS)[number];

export function etaTier(etaMinutes: number, urgency: Urgency): EtaTier {
  if (urgency === "scheduled") return "scheduled";
  if (etaMinutes <= 120) return "within_2_hours";
  if (etaMinutes <= 480) return "same_day";
  if (etaMinutes <= 1440) return "next_day";
  return "within_3_days";
}

export interface MatchRequest {
  trade: TradeCode;
  state: StateCode;
  point: Point | null;
  urgency: Urgency;
  nteCents: number | null;
  laborHours: number;
  /** The model's price of this job, the reference the price score compares against. */
  modelPrice: JobPrice;
  /** The job's day (days since the epoch, UTC: compliance.ts dayOf(now)): compliance is judged on it. */
  today: number;
  /** The job's time, for the calendar filter and the ETA; absent: calendars are not consulted. */
  time?: MatchTime | undefined;
}

/** When a job is wanted (instants in ms since the epoch). */
export interface MatchTime {
  /** The request's instant. */
  now: number;
  /** Windowed work: the arrival window. */
  window: { start: number; end: number } | null;
  /** As-soon-as-possible work: on site by. */
  arriveBy: number | null;
  /** The job's length in minutes (the trade's typical hours). */
  durationMinutes: number;
}

/** When a contractor can be on site: its ETA and the lead the eta score compares, minutes; and the
 * instant it starts on site (the block its capacity holds), null when the request states no time. */
export interface Arrival {
  eta: number;
  lead: number;
  at: number | null;
}

/** What a contractor's time holds already, and how travel between jobs is measured. */
export interface HeldTime {
  held: readonly Commitment[];
  travel: TravelTime;
  /** Judge as-soon-as-possible work against arrive_by (the matcher); the writer, placing a job the
   * matcher or a dispatcher chose, only looks for room. */
  judgeDeadline: boolean;
}

const FREE: HeldTime = { held: NO_COMMITMENTS, travel: greatCircleTravel, judgeDeadline: true };

/** What the pool's contractors hold, by their slot in the index (contractor-index.ts), and the travel
 * time between jobs. */
export interface Booked {
  held: ArrayLike<readonly Commitment[] | undefined>;
  travel: TravelTime;
}

export const NOTHING_BOOKED: Booked = { held: [], travel: greatCircleTravel };

const MINUTE_MS = 60_000;

/** The offset cache for one request's range of time. */
export function zoneOffsetsFor(req: Pick<MatchRequest, "time">): ZoneOffsets {
  const t = req.time;
  if (t === undefined) return new ZoneOffsets(0, 0);
  const last = Math.max(t.window?.end ?? 0, t.arriveBy ?? 0, t.now);
  return new ZoneOffsets(t.now - 86_400_000, last + (ASAP_HORIZON_MINUTES + 2880) * MINUTE_MS);
}

/** When the contractor can be on site (see the module's comment); null when the job does not fit its
 * calendar, or its held jobs leave it no room. */
export function arrivalOf(
  calendar: Calendar | undefined,
  req: Pick<MatchRequest, "time" | "urgency" | "point">,
  responseMinutes: number,
  travelMinutes: number,
  zones: ZoneOffsets,
  time: HeldTime = FREE,
): Arrival | null {
  const base = Math.round(responseMinutes + travelMinutes);
  const t = req.time;
  if (t === undefined) return { eta: base, lead: base, at: null };
  const cal = calendar ?? ALWAYS;
  const duration = t.durationMinutes * MINUTE_MS;
  const anyHours = req.urgency === "emergency";
  const held = time.held;
  if (t.window !== null) {
    const at =
      held.length === 0
        ? earliestStart(
            cal,
            Math.max(t.window.start, t.now + Math.round(travelMinutes) * MINUTE_MS),
            t.window.end - duration,
            duration,
            zones,
            anyHours,
          )
        : fitAmong(
            cal,
            {
              now: t.now,
              notBefore: t.window.start,
              leadMinutes: 0,
              fromBaseMinutes: Math.round(travelMinutes),
              latestStart: t.window.end - duration,
              durationMs: duration,
              point: req.point,
              anyHours,
            },
            held,
            time.travel,
            zones,
          );
    if (at === null) return null;
    return {
      eta: Math.round((at - t.now) / MINUTE_MS),
      lead: Math.round((at - Math.max(t.now, t.window.start)) / MINUTE_MS),
      at,
    };
  }
  const ready = t.now + base * MINUTE_MS;
  const deadline = t.arriveBy ?? ready;
  const horizon = Math.max(deadline, ready) + ASAP_HORIZON_MINUTES * MINUTE_MS;
  let free: number | null = ready;
  if (!((cal.weekly === null || anyHours) && cal.timeOff.length === 0)) {
    free = earliestStart(cal, ready, horizon, duration, zones, anyHours);
    if (free === null) return null;
    if (
      time.judgeDeadline &&
      free > deadline &&
      earliestStart(cal, t.now, deadline, duration, zones, anyHours) === null
    )
      return null;
  }
  let at = free;
  if (held.length > 0) {
    const fitted = fitAmong(
      cal,
      {
        now: t.now,
        notBefore: t.now,
        leadMinutes: responseMinutes,
        fromBaseMinutes: base - responseMinutes,
        latestStart: horizon,
        durationMs: duration,
        point: req.point,
        anyHours,
      },
      held,
      time.travel,
      zones,
    );
    // Held jobs may not push the start past arrive_by, unless the calendar alone puts it later already.
    if (fitted === null || (time.judgeDeadline && fitted > Math.max(deadline, free))) return null;
    at = fitted;
  }
  const eta = Math.round((at - t.now) / MINUTE_MS);
  return { eta, lead: eta, at };
}

export interface ScoreComponents {
  fit: number;
  eta: number;
  quality: number;
  price: number;
  load: number;
}

export interface RankedCandidate {
  contractor: Contractor;
  score: number;
  components: ScoreComponents;
  distanceMiles: number | null;
  etaMinutes: number;
  etaTier: EtaTier;
  /** When it would start on site (the block its capacity would hold); null when the request states no
   * time. */
  startAt: number | null;
  price: JobPrice;
  withinNte: boolean | null;
}

export type RejectReason =
  | "inactive"
  | "excluded"
  | "trade"
  | "coverage"
  | "compliance"
  | "capacity"
  | "emergency"
  | "calendar";

export interface MatchResult {
  /** Best candidate, or null when none passes the hard filters. */
  chosen: RankedCandidate | null;
  /** Eligible candidates, best first (at most `limit`). */
  ranked: RankedCandidate[];
  considered: number;
  eligible: number;
  rejected: Record<RejectReason, number>;
}

/** Returns why a contractor fails the hard filters, or null when it passes; also returns its distance
 * and, when it passes, its arrival. */
export function hardFilter(
  c: Contractor,
  req: MatchRequest,
  activeJobs: number,
  zones: ZoneOffsets = zoneOffsetsFor(req),
  time: HeldTime = FREE,
): { reason: RejectReason | null; distance: number | null; arrival?: Arrival } {
  if (!c.active) return { reason: "inactive", distance: null };
  if (c.excluded) return { reason: "excluded", distance: null };
  if (!c.trades.includes(req.trade)) return { reason: "trade", distance: null };
  if (!c.states.includes(req.state)) return { reason: "coverage", distance: null };
  let distance: number | null = null;
  if (req.point && c.lat !== null && c.lon !== null) {
    distance = distanceMiles(req.point, { lat: c.lat, lon: c.lon });
    if (c.serviceRadiusMiles !== null && distance > c.serviceRadiusMiles)
      return { reason: "coverage", distance };
  }
  if (compliantThrough(c) < req.today) return { reason: "compliance", distance };
  if (activeJobs >= c.maxActiveJobs) return { reason: "capacity", distance };
  if (req.urgency === "emergency" && !c.emergencyCapable) return { reason: "emergency", distance };
  const travel = baseTravelMinutes(c, req.point, time.travel);
  const arrival = arrivalOf(c.calendar, req, c.responseMinutes, travel, zones, time);
  if (arrival === null) return { reason: heldReason(c, req, travel, zones, time), distance };
  return { reason: null, distance, arrival };
}

/** Minutes from the contractor's base to the job's place. */
export function baseTravelMinutes(c: Contractor, point: Point | null, travel: TravelTime): number {
  return c.lat === null || c.lon === null || point === null
    ? UNKNOWN_TRAVEL_MINUTES
    : travel.minutes({ lat: c.lat, lon: c.lon }, point);
}

/** Why a contractor with held jobs does not fit: its calendar alone, or its held jobs (capacity). */
function heldReason(
  c: Contractor,
  req: MatchRequest,
  travel: number,
  zones: ZoneOffsets,
  time: HeldTime,
): RejectReason {
  if (time.held.length === 0) return "calendar";
  const free = arrivalOf(c.calendar, req, c.responseMinutes, travel, zones, {
    ...time,
    held: NO_COMMITMENTS,
  });
  return free === null ? "calendar" : "capacity";
}

function clamp01(x: number): number {
  return x < 0 ? 0 : Math.min(x, 1);
}

export function scoreCandidate(
  c: Contractor,
  req: MatchRequest,
  activeJobs: number,
  distance: number | null,
  arrival?: Arrival,
): RankedCandidate {
  const reach = c.serviceRadiusMiles ?? STATEWIDE_REACH_MILES;
  const fit = distance === null ? 0.5 : clamp01(1 - distance / reach);
  const travel = baseTravelMinutes(c, req.point, greatCircleTravel);
  const base = Math.round(c.responseMinutes + travel);
  const at = arrival ?? arrivalOf(c.calendar, req, c.responseMinutes, travel, zoneOffsetsFor(req));
  const etaMinutes = at?.eta ?? base;
  const eta = clamp01(ETA_TARGET_MINUTES[req.urgency] / Math.max(1, at?.lead ?? base));
  const quality = clamp01(c.rating / 5);
  const price = priceJob(c.hourlyRateCents, req.laborHours, req.urgency);
  const withinNte = req.nteCents === null ? null : price.total_cents <= req.nteCents;
  const priceScore =
    withinNte === false ? 0 : clamp01(1.5 - price.total_cents / Math.max(1, req.modelPrice.total_cents));
  const load = clamp01(1 - activeJobs / Math.max(1, c.maxActiveJobs));
  // Keys in sorted order: the audit record lists them so, and its sealer then takes them as they are.
  const components = { eta, fit, load, price: priceScore, quality };
  const raw =
    SCORE_WEIGHTS.fit * fit +
    SCORE_WEIGHTS.eta * eta +
    SCORE_WEIGHTS.quality * quality +
    SCORE_WEIGHTS.price * priceScore +
    SCORE_WEIGHTS.load * load;
  return {
    contractor: c,
    score: Math.round(raw * 1e6) / 1e6,
    components,
    distanceMiles: distance === null ? null : Math.round(distance * 10) / 10,
    etaMinutes,
    etaTier: etaTier(etaMinutes, req.urgency),
    startAt: at?.at ?? null,
    price,
    withinNte,
  };
}

/** Orders candidates: higher score, then lower cost, then lower id. */
export function compareCandidates(a: RankedCandidate, b: RankedCandidate): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.price.total_cents !== b.price.total_cents) return a.price.total_cents - b.price.total_cents;
  return a.contractor.id < b.contractor.id ? -1 : a.contractor.id > b.contractor.id ? 1 : 0;
}

const EARTH_RADIUS_MILES = 3958.8;
const RAD = Math.PI / 180;

/**
 * Matches a job against a candidate set; keeps the best `limit` eligible ones, ranked. Same filters and
 * score as `hardFilter` and `scoreCandidate` (the readable per-contractor definitions; a property test
 * holds the two equal), computed over the set's typed arrays: a full RankedCandidate is built only for
 * candidates whose score bound can still enter the top list.
 */
export function match(
  req: MatchRequest,
  set: CandidateSet,
  jobs: ArrayLike<number>,
  limit = 5,
  booked: Booked = NOTHING_BOOKED,
): MatchResult {
  const rejected: Record<RejectReason, number> = {
    inactive: 0,
    excluded: 0,
    trade: 0,
    coverage: 0,
    compliance: 0,
    capacity: 0,
    emergency: 0,
    calendar: 0,
  };
  const zones = zoneOffsetsFor(req);
  const top: RankedCandidate[] = [];
  let eligible = 0;
  const checkTradeState = set.only === null || set.only.trade !== req.trade || set.only.state !== req.state;
  const hasPoint = req.point !== null;
  const pLat = hasPoint ? (req.point as Point).lat * RAD : 0;
  const pLon = hasPoint ? (req.point as Point).lon * RAD : 0;
  const pCos = Math.cos(pLat);
  const emergency = req.urgency === "emergency";
  const etaTarget = ETA_TARGET_MINUTES[req.urgency];
  const today = req.today;
  const { flags, latRad, lonRad, cosLat, radius, maxJobs, rating, responseMinutes, slot } = set;
  const through = set.compliantThrough;
  const free: HeldTime = booked.travel === FREE.travel ? FREE : { ...FREE, travel: booked.travel };

  for (let i = 0; i < set.length; i++) {
    const f = flags[i] as number;
    if ((f & FLAG_ACTIVE) === 0) {
      rejected.inactive++;
      continue;
    }
    if ((f & FLAG_EXCLUDED) !== 0) {
      rejected.excluded++;
      continue;
    }
    if (checkTradeState) {
      const c = set.contractors[i] as Contractor;
      if (!c.trades.includes(req.trade)) {
        rejected.trade++;
        continue;
      }
      if (!c.states.includes(req.state)) {
        rejected.coverage++;
        continue;
      }
    }
    const lat = latRad[i] as number;
    let distance: number | null = null;
    if (hasPoint && !Number.isNaN(lat)) {
      const dLat = lat - pLat;
      const dLon = (lonRad[i] as number) - pLon;
      const h = Math.sin(dLat / 2) ** 2 + pCos * (cosLat[i] as number) * Math.sin(dLon / 2) ** 2;
      distance = 2 * EARTH_RADIUS_MILES * Math.asin(Math.min(1, Math.sqrt(h)));
      const r = radius[i] as number;
      if (!Number.isNaN(r) && distance > r) {
        rejected.coverage++;
        continue;
      }
    }
    if ((through[i] as number) < today) {
      rejected.compliance++;
      continue;
    }
    const active = jobs[slot[i] as number] ?? 0;
    const max = maxJobs[i] as number;
    if (active >= max) {
      rejected.capacity++;
      continue;
    }
    if (emergency && (f & FLAG_EMERGENCY) === 0) {
      rejected.emergency++;
      continue;
    }
    const c = set.contractors[i] as Contractor;
    const travel =
      distance === null ? UNKNOWN_TRAVEL_MINUTES : baseTravelMinutes(c, req.point, booked.travel);
    const held = booked.held[slot[i] as number];
    const time: HeldTime =
      held === undefined || held.length === 0 ? free : { held, travel: booked.travel, judgeDeadline: true };
    const arrival = arrivalOf(c.calendar, req, responseMinutes[i] as number, travel, zones, time);
    if (arrival === null) {
      rejected[heldReason(c, req, travel, zones, time)]++;
      continue;
    }
    eligible++;
    const last = top.length < limit ? undefined : top[top.length - 1];
    if (last) {
      // Upper bound of the score: the price component taken at its best (1).
      const r = radius[i] as number;
      const reach = Number.isNaN(r) ? STATEWIDE_REACH_MILES : r;
      const fit = distance === null ? 0.5 : clamp01(1 - distance / reach);
      const eta = clamp01(etaTarget / Math.max(1, arrival.lead));
      const bound =
        SCORE_WEIGHTS.fit * fit +
        SCORE_WEIGHTS.eta * eta +
        SCORE_WEIGHTS.quality * clamp01((rating[i] as number) / 5) +
        SCORE_WEIGHTS.price +
        SCORE_WEIGHTS.load * clamp01(1 - active / Math.max(1, max));
      if (Math.round(bound * 1e6) / 1e6 + 1e-6 < last.score) continue;
    }
    const ranked = scoreCandidate(set.contractors[i] as Contractor, req, active, distance, arrival);
    if (!last) {
      top.push(ranked);
      top.sort(compareCandidates);
    } else if (compareCandidates(ranked, last) < 0) {
      top[top.length - 1] = ranked;
      top.sort(compareCandidates);
    }
  }
  return { chosen: top[0] ?? null, ranked: top, considered: set.length, eligible, rejected };
}
