// A dispatch day as a routing problem, and its solution as a plan: the jobs of the day (each with the time
// it may be served in, its trade, its place and how long it takes) and the contractors (each with its
// base, trades, states, reach, the hours it works that day and how many jobs it takes at most) become
// the solver's vehicles and jobs; its routes come back as each contractor's stops with their times.
//
// Travel: the service's one travel time (travel-time.ts: great-circle distance times its road factor at
// its average speed, behind a port a routing engine can fill later), the same matching uses. A job may ride a contractor that has its trade, covers its
// state and reaches it (service radius); a job pinned to its contractor (already on the way, kept in
// incremental mode, or named by the dispatcher) rides only that one.
//
// A contractor's breaks (time off inside its shift, a gap between its working hours) split its day into
// the stretches it works: each stretch is a vehicle of its own from its base back to its base, and the
// contractor's stretches share its daily job limit (a capacity group, model.ts). So no job, nor the drive
// to or from one, falls in a break, and the contractor works before and after it. Pure.

import { distanceMiles, type Point } from "../distance.js";
import { greatCircleTravel, type TravelTime } from "../travel-time.js";
import type { Job, Problem, Route, SearchStop, Vehicle } from "./model.js";
import { matrixOnDemand, travelAt } from "./model.js";
import { solve } from "./solver.js";

export { AVERAGE_MPH, ROAD_FACTOR } from "../travel-time.js";

export interface DayJob {
  readonly orderId: string;
  readonly trade: string;
  readonly state: string;
  readonly point: Point;
  /** Service may start from `ready` and no later than `due`. */
  readonly ready: Date;
  readonly due: Date;
  readonly serviceMinutes: number;
  /** The contractor holding or offered the job now (today's plan), if any. */
  readonly contractorId: string | null;
  /** Stays with `contractorId`. */
  readonly pinned: boolean;
  /** Contractors the job's account excludes from its trade (do-not-dispatch): never planned on it. */
  readonly barred?: readonly string[];
}

export interface DayContractor {
  readonly id: string;
  readonly trades: readonly string[];
  readonly states: readonly string[];
  readonly base: Point;
  readonly radiusMiles: number | null;
  readonly shiftStart: Date;
  readonly shiftEnd: Date;
  /** Spans inside the shift it does not work (time off, a gap between its working hours): no job, nor
   * the drive to or from one, falls in them; it is back at its base before each and leaves it after.
   * None when absent. */
  readonly breaks?: ReadonlyArray<{ readonly start: Date; readonly end: Date }>;
  /** Jobs it takes at most in the day. */
  readonly capacity: number;
}

interface PlannedStop {
  readonly orderId: string;
  readonly arriveAt: Date;
  readonly startAt: Date;
  readonly endAt: Date;
  readonly travelMinutes: number;
}

interface PlannedRoute {
  readonly contractorId: string;
  readonly stops: readonly PlannedStop[];
  /** Driving, base to base. */
  readonly travelMinutes: number;
  /** Waiting for a job's window to open. */
  readonly idleMinutes: number;
}

/** time_limit: the time limit passed before the first plan reached the job (never tried). */
type UnplannedReason = "no_contractor" | "contractor_unavailable" | "no_feasible_slot" | "time_limit";

export interface DayPlan {
  readonly routes: readonly PlannedRoute[];
  readonly unassigned: ReadonlyArray<{ orderId: string; reason: UnplannedReason }>;
  readonly travelMinutes: number;
  /** The search's iterations and how it ended (solver.ts): `budget` unless the time cap cut it short. */
  readonly search: { readonly iterations: number; readonly stopped: SearchStop };
}

export interface PlanOptions {
  readonly seed?: number;
  /** A safety cap: stop searching when `now()` reaches `deadline` (ms), and say so. */
  readonly now?: () => number;
  readonly deadline?: number;
  /** The search's budget: with the seed, it decides the plan (solver.ts). */
  readonly iterations?: number;
  /** Travel time between places (the great-circle estimate unless given). */
  readonly travel?: TravelTime;
}

const MINUTE = 60_000;

/** Whether `c` may serve `job` (trade, state, reach); pins aside. */
export function canServe(c: DayContractor, job: DayJob): boolean {
  if (!c.trades.includes(job.trade) || !c.states.includes(job.state)) return false;
  return c.radiusMiles === null || distanceMiles(c.base, job.point) <= c.radiusMiles;
}

/** Plans the day: each contractor's route and the jobs left out, with the reason. */
export function planDay(
  jobs: readonly DayJob[],
  contractors: readonly DayContractor[],
  options: PlanOptions = {},
): DayPlan {
  const origin = Math.min(
    ...jobs.map((j) => j.ready.getTime()),
    ...contractors.map((c) => c.shiftStart.getTime()),
  );
  const { problem, jobOf, unassigned } = problemOf(
    jobs,
    contractors,
    origin,
    options.travel ?? greatCircleTravel,
  );
  const solution =
    problem.jobs.length === 0
      ? { routes: [], unassigned: [], distance: 0, search: { iterations: 0, stopped: "budget" as const } }
      : solve(problem, {
          seed: options.seed ?? 1,
          ...(options.iterations === undefined ? {} : { iterations: options.iterations }),
          ...(options.now && options.deadline !== undefined
            ? { now: options.now, deadline: options.deadline }
            : {}),
        });
  const untried = new Set(solution.unplanned ?? []);
  for (const j of solution.unassigned)
    unassigned.push({
      orderId: (jobOf[j] as DayJob).orderId,
      reason: untried.has(j) ? "time_limit" : "no_feasible_slot",
    });
  // One route per contractor: its stretches' routes (vehicles of one contractor are consecutive, in
  // time order) one after the other.
  const byContractor = new Map<string, PlannedRoute>();
  let total = 0;
  for (const route of [...solution.routes].sort((a, b) => a.vehicle - b.vehicle)) {
    const { planned, drive } = plannedRoute(problem, route, origin);
    total += drive;
    const known = byContractor.get(planned.contractorId);
    byContractor.set(
      planned.contractorId,
      known === undefined
        ? planned
        : {
            contractorId: known.contractorId,
            stops: [...known.stops, ...planned.stops],
            travelMinutes: round1(known.travelMinutes + planned.travelMinutes),
            idleMinutes: round1(known.idleMinutes + planned.idleMinutes),
          },
    );
  }
  const routes = [...byContractor.values()];
  routes.sort((a, b) => (a.contractorId < b.contractorId ? -1 : 1));
  const search = solution.search ?? { iterations: 0, stopped: "budget" as const };
  return { routes, unassigned, travelMinutes: round1(total), search };
}

/** The plan when the time limit passed before the planning began (the reading and preparation of the
 * day spent it): no route, every job untried ("time_limit"), without the work of telling which jobs
 * some contractor could take (a 3,000-job day's is tens of milliseconds). */
export function untriedDay(jobs: readonly DayJob[]): DayPlan {
  return {
    routes: [],
    unassigned: jobs.map((j) => ({ orderId: j.orderId, reason: "time_limit" as const })),
    travelMinutes: 0,
    search: { iterations: 0, stopped: "time_limit_construction" },
  };
}

/** The day as the solver's problem (times in minutes from `origin`), the day's job behind each of its
 * jobs, and the jobs no contractor may take at all. */
function problemOf(
  jobs: readonly DayJob[],
  contractors: readonly DayContractor[],
  origin: number,
  travelTime: TravelTime,
): { problem: Problem; jobOf: DayJob[]; unassigned: Array<{ orderId: string; reason: UnplannedReason }> } {
  const unassigned: Array<{ orderId: string; reason: UnplannedReason }> = [];
  const minutes = (d: Date) => (d.getTime() - origin) / MINUTE;
  const fleet = fleetOf(contractors, minutes);
  const byTrade = contractorsByTrade(contractors);
  // Locations: each contractor's base, then each job's place.
  const points: Point[] = contractors.map((c) => c.base);
  const problemJobs: Job[] = [];
  const jobOf: DayJob[] = [];
  for (const job of jobs) {
    const allowed = allowedVehicles(job, contractors, fleet, byTrade);
    if (typeof allowed === "string") {
      unassigned.push({ orderId: job.orderId, reason: allowed });
      continue;
    }
    problemJobs.push({
      id: job.orderId,
      location: points.length,
      ready: minutes(job.ready),
      due: minutes(job.due),
      service: job.serviceMinutes,
      demand: 1,
      vehicles: allowed,
      // a contractor who works in stretches takes its pinned job in any of them
      ...(job.pinned && allowed.length === 1 ? { pinnedTo: allowed[0] as number } : {}),
    });
    points.push(job.point);
    jobOf.push(job);
  }
  const vehicles = fleet.vehicles;
  // Filled row by row as the solver reads it: the whole matrix of a 3,000-job day is 9 million travel
  // times, most of a second, and a short time limit reads a small part of it.
  const travel = matrixOnDemand(
    points.length,
    (a, b) => (a === b ? 0 : travelTime.minutes(points[a] as Point, points[b] as Point)),
    longestTravel(points, travelTime),
  );
  return { problem: { vehicles, jobs: problemJobs, travel }, jobOf, unassigned };
}

/**
 * At least the travel between any two of the points, without computing every pair: twice the longer
 * diagonal of their latitude/longitude box (a pair inside the box is no farther apart than the box's far
 * corners, within the sphere's curvature, which the factor of two covers).
 */
function longestTravel(points: readonly Point[], travelTime: TravelTime): number {
  if (points.length === 0) return 0;
  let minLat = Number.POSITIVE_INFINITY;
  let maxLat = Number.NEGATIVE_INFINITY;
  let minLon = Number.POSITIVE_INFINITY;
  let maxLon = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    minLat = Math.min(minLat, p.lat);
    maxLat = Math.max(maxLat, p.lat);
    minLon = Math.min(minLon, p.lon);
    maxLon = Math.max(maxLon, p.lon);
  }
  const a = travelTime.minutes({ lat: minLat, lon: minLon }, { lat: maxLat, lon: maxLon });
  const b = travelTime.minutes({ lat: minLat, lon: maxLon }, { lat: maxLat, lon: minLon });
  return 2 * Math.max(a, b);
}

/** The solver's vehicles of the day's contractors: one per stretch a contractor works (its shift less
 * its breaks), from its base (location index: the contractor's) back to it; and each contractor's. */
interface Fleet {
  readonly vehicles: Vehicle[];
  /** Per contractor (by index), its vehicles in time order; none when its breaks cover its shift. */
  readonly vehiclesOf: ReadonlyArray<readonly number[]>;
  readonly contractorIndex: ReadonlyMap<string, number>;
}

function fleetOf(contractors: readonly DayContractor[], minutes: (d: Date) => number): Fleet {
  const vehicles: Vehicle[] = [];
  const vehiclesOf = contractors.map((c, i) => {
    const stretches = workedStretches(c, minutes);
    const own: number[] = [];
    for (const [shiftStart, shiftEnd] of stretches) {
      own.push(vehicles.length);
      vehicles.push({
        id: c.id,
        start: i,
        end: i,
        shiftStart,
        shiftEnd,
        capacity: c.capacity,
        // the stretches share the contractor's daily job limit
        ...(stretches.length > 1 ? { group: i } : {}),
      });
    }
    return own;
  });
  return { vehicles, vehiclesOf, contractorIndex: new Map(contractors.map((c, i) => [c.id, i])) };
}

/** The stretches `c` works, [start, end] in the solver's minutes: its shift less its breaks. */
function workedStretches(c: DayContractor, minutes: (d: Date) => number): Array<[number, number]> {
  const end = minutes(c.shiftEnd);
  let from = minutes(c.shiftStart);
  if (c.breaks === undefined || c.breaks.length === 0) return from < end ? [[from, end]] : [];
  const stretches: Array<[number, number]> = [];
  const breaks = [...c.breaks].sort((a, b) => a.start.getTime() - b.start.getTime());
  for (const b of breaks) {
    const s = minutes(b.start);
    const e = minutes(b.end);
    if (e <= from) continue;
    if (s >= end) break;
    if (s > from) stretches.push([from, s]);
    from = Math.max(from, e);
  }
  if (from < end) stretches.push([from, end]);
  return stretches;
}

/** The vehicles that may take `job`, or why none may: a pinned job rides only its contractor's (any of
 * its stretches), if that one works the day; another, those of every contractor that can serve it. */
function allowedVehicles(
  job: DayJob,
  contractors: readonly DayContractor[],
  fleet: Fleet,
  byTrade: ReadonlyMap<string, readonly number[]>,
): number[] | UnplannedReason {
  if (job.pinned) {
    const c = job.contractorId === null ? undefined : fleet.contractorIndex.get(job.contractorId);
    const own = c === undefined ? [] : (fleet.vehiclesOf[c] as readonly number[]);
    return own.length === 0 ? "contractor_unavailable" : own.slice();
  }
  const allowed: number[] = [];
  const barred = job.barred;
  for (const i of byTrade.get(job.trade) ?? []) {
    const c = contractors[i] as DayContractor;
    if (canServe(c, job) && (barred === undefined || !barred.includes(c.id))) {
      for (const v of fleet.vehiclesOf[i] as readonly number[]) allowed.push(v);
    }
  }
  return allowed.length === 0 ? "no_contractor" : allowed;
}

/** The contractors' indexes by trade, in index order: a job looks only at those of its trade. */
function contractorsByTrade(contractors: readonly DayContractor[]): Map<string, number[]> {
  const byTrade = new Map<string, number[]>();
  contractors.forEach((c, v) => {
    for (const trade of new Set(c.trades)) {
      const list = byTrade.get(trade);
      if (list) list.push(v);
      else byTrade.set(trade, [v]);
    }
  });
  return byTrade;
}

/** One solver route as a contractor's stops with their times, and its driving (unrounded, base to base). */
function plannedRoute(
  problem: Problem,
  route: Route,
  origin: number,
): { planned: PlannedRoute; drive: number } {
  const { travel } = problem;
  const vehicle = problem.vehicles[route.vehicle] as Vehicle;
  const at = (m: number) => new Date(origin + m * MINUTE);
  let time = vehicle.shiftStart;
  let here = vehicle.start;
  let drive = 0;
  let idle = 0;
  const stops: PlannedStop[] = [];
  for (const j of route.jobs) {
    const job = problem.jobs[j] as Job;
    const leg = travelAt(travel, here, job.location);
    const arrive = time + leg;
    const start = Math.max(arrive, job.ready);
    idle += start - arrive;
    drive += leg;
    stops.push({
      orderId: job.id,
      arriveAt: at(arrive),
      startAt: at(start),
      endAt: at(start + job.service),
      travelMinutes: round1(leg),
    });
    time = start + job.service;
    here = job.location;
  }
  drive += travelAt(travel, here, vehicle.end);
  return {
    planned: { contractorId: vehicle.id, stops, travelMinutes: round1(drive), idleMinutes: round1(idle) },
    drive,
  };
}

const round1 = (x: number) => Math.round(x * 10) / 10;
