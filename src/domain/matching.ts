// Contractor matching: hard filters, then a documented score, then a deterministic tie-break. Pure.
//
// Hard filters (all must hold): active; not excluded; not on the job's account's do-not-dispatch list
// for its trade (do-not-dispatch.ts, `barred`); works the trade; covers the location (works in the
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
//   quality = shrunk rating / 5: the accounts' ratings of its completed jobs (1-5, the overall of each the
//             mean of quality, timeliness, communication and value) as a Bayesian average pulled toward
//             its pool rating with a pseudo-count of 5: (5 x pool rating + sum of overalls) / (5 + count)
//             (ratings.ts); the pool rating alone while nobody has rated it
//   price   = clamp(1.5 - contractor job cost / model job cost, 0, 1); 0 when over the job's NTE
//   load    = 1 - active jobs / max active jobs
// Tie-break: higher score, then lower cost, then lower contractor id.

import { type CandidateSet, FLAG_ACTIVE, FLAG_EMERGENCY, FLAG_EXCLUDED } from "./candidate-set.js";
import { type Commitment, fitAmong, NO_COMMITMENTS } from "./commitments.js";
import { compliantThrough } from "./compliance.js";
import type { Contractor } from "./contractor.js";
import { distanceMiles, type Point } from "./geo.js";
import { type JobPrice, priceJob, type Urgency } from "./pricing.js";
import { matchingRating } from "./ratings.js";
import { ALWAYS, type Calendar, earliestStart, ZoneOffsets } from "./time/calendar.js";
import { SERVICE_LEVELS } from "./time/service-levels.js";
import type { TradeCode } from "./trades.js";
import { greatCircleTravel, type TravelTime, UNKNOWN_TRAVEL_MINUTES } from "./travel-time.js";
import type { StateCode } from "./us-regions.js";

export { UNKNOWN_TRAVEL_MINUTES } from "./travel-time.js";

const SCORE_WEIGHTS = { fit: 0.3, eta: 0.25, quality: 0.2, price: 0.15, load: 0.1 } as const;

/** Arrival targets per urgency, minutes: the published service levels' (time/service-levels.ts); for
 * scheduled work, booked days ahead, a week. */
const ETA_TARGET_MINUTES: Readonly<Record<Urgency, number>> = {
  emergency: SERVICE_LEVELS.emergency.arriveMinutes ?? 120,
  urgent: SERVICE_LEVELS.urgent.arriveMinutes ?? 480,
  routine: SERVICE_LEVELS.routine.arriveMinutes ?? 2880,
  scheduled: 10080,
};

/** How far past arrive_by an as-soon-as-possible arrival is still looked for (a contractor able to start
 * by arrive_by but busy until later reports that later ETA). */
const ASAP_HORIZON_MINUTES = 7 * 1440;
/** Reach used for the fit score of a statewide contractor. */
const STATEWIDE_REACH_MILES = 150;

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
  /** Contractors the job's account excludes from work of its trade (do-not-dispatch.ts); absent: none. */
  barred?: ReadonlySet<string> | undefined;
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

interface ScoreComponents {
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
  | "do_not_dispatch"
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
  if (req.barred?.has(c.id)) return { reason: "do_not_dispatch", distance: null };
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
  const quality = clamp01(matchingRating(c) / 5);
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
 *
 * The hot path of every quote and order: what the request fixes is computed once into a Scan, and each
 * step takes the scan and the candidate's index, so a candidate allocates nothing the steps' own results
 * do not (no closure, no array, no object per candidate; only an eligible one's arrival and, if it can
 * enter the top list, its RankedCandidate).
 */
export function match(
  req: MatchRequest,
  set: CandidateSet,
  jobs: ArrayLike<number>,
  limit = 5,
  booked: Booked = NOTHING_BOOKED,
): MatchResult {
  const scan = scanOf(req, set, jobs, booked);
  const top: RankedCandidate[] = [];
  let eligible = 0;
  for (let i = 0; i < set.length; i++) {
    // Miles, NaN when unknown (null only for the RankedCandidate: a number is never boxed on the way).
    const miles = screen(scan, i);
    if (miles === REJECTED) continue;
    const c = set.contractors[i] as Contractor;
    const arrival = arrivalIn(scan, i, c, miles);
    if (arrival === null) continue;
    eligible++;
    const active = jobs[set.slot[i] as number] ?? 0;
    const last = top.length < limit ? undefined : top[top.length - 1];
    if (last && scoreBound(scan, i, miles, active, arrival) + 1e-6 < last.score) continue;
    enterTop(top, scoreCandidate(c, req, active, Number.isNaN(miles) ? null : miles, arrival), last);
  }
  return { chosen: top[0] ?? null, ranked: top, considered: set.length, eligible, rejected: scan.rejected };
}

/** One match's scan of a candidate set: what the request fixes, computed once, and the rejections
 * counted so far. */
interface Scan {
  readonly req: MatchRequest;
  readonly set: CandidateSet;
  readonly jobs: ArrayLike<number>;
  readonly booked: Booked;
  /** The account's do-not-dispatch set for the job's trade; null when it has none. */
  readonly barred: ReadonlySet<string> | null;
  readonly zones: ZoneOffsets;
  /** The held time of a contractor that holds no job (with the booked travel). */
  readonly free: HeldTime;
  /** False when the set is the request's (trade, state) bucket: those checks are skipped. */
  readonly checkTradeState: boolean;
  readonly hasPoint: boolean;
  /** The job's place in radians, and the cosine of its latitude. */
  readonly pLat: number;
  readonly pLon: number;
  readonly pCos: number;
  readonly emergency: boolean;
  readonly etaTarget: number;
  readonly rejected: Record<RejectReason, number>;
}

function scanOf(req: MatchRequest, set: CandidateSet, jobs: ArrayLike<number>, booked: Booked): Scan {
  const hasPoint = req.point !== null;
  const pLat = hasPoint ? (req.point as Point).lat * RAD : 0;
  return {
    req,
    set,
    jobs,
    booked,
    barred: req.barred !== undefined && req.barred.size > 0 ? req.barred : null,
    zones: zoneOffsetsFor(req),
    free: booked.travel === FREE.travel ? FREE : { ...FREE, travel: booked.travel },
    checkTradeState: set.only === null || set.only.trade !== req.trade || set.only.state !== req.state,
    hasPoint,
    pLat,
    pLon: hasPoint ? (req.point as Point).lon * RAD : 0,
    pCos: Math.cos(pLat),
    emergency: req.urgency === "emergency",
    etaTarget: ETA_TARGET_MINUTES[req.urgency],
    rejected: {
      inactive: 0,
      excluded: 0,
      do_not_dispatch: 0,
      trade: 0,
      coverage: 0,
      compliance: 0,
      capacity: 0,
      emergency: 0,
      calendar: 0,
    },
  };
}

/** `screen`'s answer for a candidate a filter rejected (a distance is never negative). */
const REJECTED = -1;

/**
 * The hard filters but the calendar, in hardFilter's order, for candidate `i`: REJECTED (the reason
 * counted) when one fails, else its distance in miles (NaN when unknown). A number rather than an
 * object, so that no candidate allocates.
 */
function screen(s: Scan, i: number): number {
  const { set, req, rejected } = s;
  const f = set.flags[i] as number;
  if ((f & FLAG_ACTIVE) === 0) {
    rejected.inactive++;
    return REJECTED;
  }
  if ((f & FLAG_EXCLUDED) !== 0) {
    rejected.excluded++;
    return REJECTED;
  }
  if (s.barred?.has((set.contractors[i] as Contractor).id)) {
    rejected.do_not_dispatch++;
    return REJECTED;
  }
  if (s.checkTradeState) {
    const c = set.contractors[i] as Contractor;
    if (!c.trades.includes(req.trade)) {
      rejected.trade++;
      return REJECTED;
    }
    if (!c.states.includes(req.state)) {
      rejected.coverage++;
      return REJECTED;
    }
  }
  const distance = milesTo(s, i);
  if (distance > (set.radius[i] as number)) {
    // NaN on either side (unknown distance, statewide contractor) compares false: no radius to exceed.
    rejected.coverage++;
    return REJECTED;
  }
  if ((set.compliantThrough[i] as number) < req.today) {
    rejected.compliance++;
    return REJECTED;
  }
  if ((s.jobs[set.slot[i] as number] ?? 0) >= (set.maxJobs[i] as number)) {
    rejected.capacity++;
    return REJECTED;
  }
  if (s.emergency && (f & FLAG_EMERGENCY) === 0) {
    rejected.emergency++;
    return REJECTED;
  }
  return distance;
}

/** Great-circle miles from the job to candidate `i`'s base (haversine); NaN when either place is unknown. */
function milesTo(s: Scan, i: number): number {
  const lat = s.set.latRad[i] as number;
  if (!s.hasPoint || Number.isNaN(lat)) return Number.NaN;
  const dLat = lat - s.pLat;
  const dLon = (s.set.lonRad[i] as number) - s.pLon;
  const h = Math.sin(dLat / 2) ** 2 + s.pCos * (s.set.cosLat[i] as number) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_MILES * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** When candidate `i` (contractor `c`, `miles` away, NaN unknown) can be on site given its calendar and
 * held jobs; null (the reason, calendar or capacity, counted) when the job does not fit. */
function arrivalIn(s: Scan, i: number, c: Contractor, miles: number): Arrival | null {
  const { req, booked, zones } = s;
  const travel = Number.isNaN(miles)
    ? UNKNOWN_TRAVEL_MINUTES
    : baseTravelMinutes(c, req.point, booked.travel);
  const held = booked.held[s.set.slot[i] as number];
  const time: HeldTime =
    held === undefined || held.length === 0 ? s.free : { held, travel: booked.travel, judgeDeadline: true };
  const arrival = arrivalOf(c.calendar, req, s.set.responseMinutes[i] as number, travel, zones, time);
  if (arrival === null) s.rejected[heldReason(c, req, travel, zones, time)]++;
  return arrival;
}

/** An upper bound of candidate `i`'s score (rounded as the score is): the price component taken at its
 * best (1), so that a candidate that cannot enter the top list is never priced. */
function scoreBound(s: Scan, i: number, miles: number, active: number, arrival: Arrival): number {
  const r = s.set.radius[i] as number;
  const reach = Number.isNaN(r) ? STATEWIDE_REACH_MILES : r;
  const fit = Number.isNaN(miles) ? 0.5 : clamp01(1 - miles / reach);
  const eta = clamp01(s.etaTarget / Math.max(1, arrival.lead));
  const bound =
    SCORE_WEIGHTS.fit * fit +
    SCORE_WEIGHTS.eta * eta +
    SCORE_WEIGHTS.quality * clamp01((s.set.rating[i] as number) / 5) +
    SCORE_WEIGHTS.price +
    SCORE_WEIGHTS.load * clamp01(1 - active / Math.max(1, s.set.maxJobs[i] as number));
  return Math.round(bound * 1e6) / 1e6;
}

/** Puts `ranked` into the top list, kept sorted: appended while it is short (`last` undefined), else in
 * place of the last when it ranks before it. */
function enterTop(top: RankedCandidate[], ranked: RankedCandidate, last: RankedCandidate | undefined): void {
  if (!last) {
    top.push(ranked);
    top.sort(compareCandidates);
  } else if (compareCandidates(ranked, last) < 0) {
    top[top.length - 1] = ranked;
    top.sort(compareCandidates);
  }
}
