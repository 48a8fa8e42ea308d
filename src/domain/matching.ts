// Contractor matching: hard filters, then a documented score, then a deterministic tie-break. Pure.
//
// Hard filters (all must hold): active; not excluded; works the trade; covers the location (works in the
// state and, when both the job and the contractor have coordinates and the contractor has a radius, the
// job is within that radius); has capacity (active jobs < max); emergency-capable when urgency=emergency.
//
// Score = 0.30 fit + 0.25 eta + 0.20 quality + 0.15 price + 0.10 load, each component in [0, 1]:
//   fit     = 1 - distance / reach (reach = radius, or 150 mi for statewide); 0.5 when distance unknown
//   eta     = min(1, target minutes for the urgency / estimated arrival minutes)
//   quality = rating / 5
//   price   = clamp(1.5 - contractor job cost / model job cost, 0, 1); 0 when over the job's NTE
//   load    = 1 - active jobs / max active jobs
// Tie-break: higher score, then lower cost, then lower contractor id.

import type { Contractor } from "./contractor.js";
import { distanceMiles, type Point } from "./geo.js";
import { type JobPrice, priceJob, type Urgency } from "./pricing.js";
import type { StateCode } from "./states.js";
import type { TradeCode } from "./trades.js";

export const SCORE_WEIGHTS = { fit: 0.3, eta: 0.25, quality: 0.2, price: 0.15, load: 0.1 } as const;

/** Arrival targets per urgency, minutes. */
export const ETA_TARGET_MINUTES: Readonly<Record<Urgency, number>> = {
  emergency: 120,
  urgent: 480,
  routine: 2880,
  scheduled: 10080,
};

/** Average travel speed used to turn distance into travel time. */
export const TRAVEL_MPH = 35;
/** Travel time assumed when the job's exact location is unknown. */
export const UNKNOWN_TRAVEL_MINUTES = 45;
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
  price: JobPrice;
  withinNte: boolean | null;
}

export type RejectReason = "inactive" | "excluded" | "trade" | "coverage" | "capacity" | "emergency";

export interface MatchResult {
  /** Best candidate, or null when none passes the hard filters. */
  chosen: RankedCandidate | null;
  /** Eligible candidates, best first (at most `limit`). */
  ranked: RankedCandidate[];
  considered: number;
  eligible: number;
  rejected: Record<RejectReason, number>;
}

export type ActiveJobs = (contractorId: string) => number;

/** Returns why a contractor fails the hard filters, or null when it passes; also returns its distance. */
export function hardFilter(
  c: Contractor,
  req: MatchRequest,
  activeJobs: number,
): { reason: RejectReason | null; distance: number | null } {
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
  if (activeJobs >= c.maxActiveJobs) return { reason: "capacity", distance };
  if (req.urgency === "emergency" && !c.emergencyCapable) return { reason: "emergency", distance };
  return { reason: null, distance };
}

function clamp01(x: number): number {
  return x < 0 ? 0 : Math.min(x, 1);
}

export function scoreCandidate(
  c: Contractor,
  req: MatchRequest,
  activeJobs: number,
  distance: number | null,
): RankedCandidate {
  const reach = c.serviceRadiusMiles ?? STATEWIDE_REACH_MILES;
  const fit = distance === null ? 0.5 : clamp01(1 - distance / reach);
  const travel = distance === null ? UNKNOWN_TRAVEL_MINUTES : (distance / TRAVEL_MPH) * 60;
  const etaMinutes = Math.round(c.responseMinutes + travel);
  const eta = clamp01(ETA_TARGET_MINUTES[req.urgency] / Math.max(1, etaMinutes));
  const quality = clamp01(c.rating / 5);
  const price = priceJob(c.hourlyRateCents, req.laborHours, req.urgency);
  const withinNte = req.nteCents === null ? null : price.total_cents <= req.nteCents;
  const priceScore =
    withinNte === false ? 0 : clamp01(1.5 - price.total_cents / Math.max(1, req.modelPrice.total_cents));
  const load = clamp01(1 - activeJobs / Math.max(1, c.maxActiveJobs));
  const components = { fit, eta, quality, price: priceScore, load };
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

/** Matches a job against candidates; keeps the best `limit` eligible ones, ranked. */
export function match(
  req: MatchRequest,
  candidates: readonly Contractor[],
  activeJobs: ActiveJobs,
  limit = 5,
): MatchResult {
  const rejected: Record<RejectReason, number> = {
    inactive: 0,
    excluded: 0,
    trade: 0,
    coverage: 0,
    capacity: 0,
    emergency: 0,
  };
  const top: RankedCandidate[] = [];
  let eligible = 0;
  for (const c of candidates) {
    const jobs = activeJobs(c.id);
    const { reason, distance } = hardFilter(c, req, jobs);
    if (reason !== null) {
      rejected[reason]++;
      continue;
    }
    eligible++;
    const ranked = scoreCandidate(c, req, jobs, distance);
    // Keep a small sorted top list: O(n * limit) without sorting every candidate.
    if (top.length < limit) {
      top.push(ranked);
      top.sort(compareCandidates);
    } else {
      const last = top[top.length - 1];
      if (last && compareCandidates(ranked, last) < 0) {
        top[top.length - 1] = ranked;
        top.sort(compareCandidates);
      }
    }
  }
  return { chosen: top[0] ?? null, ranked: top, considered: candidates.length, eligible, rejected };
}
