// The VRPTW solver: greedy insertion to build, local search (relocate, exchange, 2-opt*, intra-route
// relocate and 2-opt) to polish, and ruin-and-recreate (string removal, greedy insertion with blinks)
// under simulated-annealing acceptance in between. Time windows are checked in O(1) per inter-route move
// from each route's earliest service starts (forward) and latest service starts (backward slack).
// Pure: the caller passes an iteration budget, and may pass a clock and a deadline as a safety cap; the
// same seed and the same budget give the same solution unless the cap cut the search short (reported).
// The cap bounds every phase, the first construction included: it is read before each job the
// construction places, each round (and every 32 jobs) of the local search and each ruin-and-recreate
// iteration, so the solver returns within about one insertion or one iteration of the deadline; jobs the
// construction had not reached by then come back unassigned and listed in `unplanned`.
// Vehicles of one group (model.ts: one contractor's stretches of a day) share their capacity; a move
// between two of a group leaves its load as it is.

import { type Rng, rngOf } from "../random.js";
import type { Problem, Route, SearchStop, Solution, Vehicle } from "./model.js";

/** Ruin-and-recreate iterations when the caller names none. */
const DEFAULT_ITERATIONS = 2_000;

export interface SolveOptions {
  /** Seed of the pseudo-random choices (default 1). */
  readonly seed?: number;
  /** Ruin-and-recreate iterations: the annealing cools over them and the search stops after them
   * (default DEFAULT_ITERATIONS). With the seed, they decide the solution. */
  readonly iterations?: number;
  /** The caller's clock in ms, read only to compare with `deadline`. */
  readonly now?: () => number;
  /** A safety cap, not the budget: stop when `now()` reaches this (same unit as `now`), whatever the
   * phase; the solution then says `stopped: "time_limit"` (the search was cut) or
   * `"time_limit_construction"` (the first plan was: see `unplanned`), and depends on the machine's speed. */
  readonly deadline?: number;
  /** Start and end temperatures, as fractions of the initial solution's mean edge cost. */
  readonly temperature?: { readonly start: number; readonly end: number };
}

/** One vehicle's route with its schedule arrays; positions 0 and k+1 are the vehicle's start and end. */
interface RouteState {
  readonly jobs: readonly number[];
  readonly loc: number[];
  readonly service: number[];
  /** Earliest service start at each position. */
  readonly early: number[];
  /** Latest service start at each position that keeps the rest of the route feasible. */
  readonly late: number[];
  /** Latest service start at each position that keeps the later jobs' windows (not the route's end):
   * with `toLast`, the latest start of a tail moved onto another vehicle's end (2-opt*). */
  readonly lateJobs: number[];
  /** Service and travel from the start of service at each position to the start at the last job. */
  readonly toLast: number[];
  /** Load after serving each position. */
  readonly cumLoad: number[];
  readonly load: number;
  readonly cost: number;
}

const EPS = 1e-9;

/** Solves the problem; expected outcomes (jobs no vehicle can take) come back as `unassigned`. */
export function solve(problem: Problem, options: SolveOptions = {}): Solution {
  const search = new Search(problem, rngOf(options.seed ?? 1), options);
  return search.run(options);
}

/** The routes after one improving 2-opt* move, or null when there is none (for tests: the move's O(1)
 * checks against a full simulation). */
export function twoOptStarMove(problem: Problem, routes: readonly Route[]): Route[] | null {
  return new Search(problem, rngOf(1)).twoOptStarOn(routes);
}

class Search {
  private readonly n: number;
  private readonly size: number;
  private readonly T: Float64Array;
  private readonly jobLoc: Int32Array;
  private readonly ready: Float64Array;
  private readonly due: Float64Array;
  private readonly svc: Float64Array;
  private readonly demand: Float64Array;
  private readonly pinnedTo: Int32Array;
  /** Per job, whether it is restricted to some vehicles (1), and then which: `allowed[j * vehicles + v]`
   * is 1 when vehicle v may serve job j (one array: thousands of small ones cost more to allocate). */
  private readonly restricted: Uint8Array;
  private readonly allowed: Uint8Array;
  private readonly cap: Float64Array;
  /** Per vehicle, its capacity group (Vehicle.group), -1 alone; and the other vehicles of its group. */
  private readonly groupOf: Int32Array;
  private readonly siblings: ReadonlyArray<readonly number[]>;
  private readonly penalty: number;
  /** For each job, the 100 other jobs nearest by travel time, computed when a ruin first starts there
   * (sorting every job's row up front took 4 s of a 3,000-job day). */
  private readonly neighbours: Array<Int32Array | undefined>;
  /** A matrix filled on demand (model.ts): the rows read so far, and how to compute one; null when the
   * matrix is complete (`T`). */
  private readonly rows: Array<Float64Array | undefined> | null;
  private readonly rowOf: (from: number) => Float64Array;
  private readonly clock: (() => number) | null;
  private readonly deadline: number;
  /** The deadline has passed (read once, then kept: every phase winds up from there). */
  private timedOut = false;
  private routes: RouteState[];
  private unassigned: number[] = [];
  private readonly routeOf: Int32Array;
  private readonly posOf: Int32Array;
  // best insertion found by bestInsertion()
  private bestV = -1;
  private bestP = -1;

  constructor(
    private readonly problem: Problem,
    private readonly rng: Rng,
    options: Pick<SolveOptions, "now" | "deadline"> = {},
  ) {
    const { jobs, vehicles, travel } = problem;
    this.n = jobs.length;
    this.size = travel.size;
    this.T = travel.times;
    this.rows = travel.onDemand ? new Array(this.size) : null;
    this.rowOf = travel.onDemand ? travel.onDemand.row : () => this.T;
    const capped = options.now !== undefined && options.deadline !== undefined;
    this.clock = capped ? (options.now as () => number) : null;
    this.deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    this.jobLoc = Int32Array.from(jobs, (j) => j.location);
    this.ready = Float64Array.from(jobs, (j) => j.ready);
    this.due = Float64Array.from(jobs, (j) => j.due);
    this.svc = Float64Array.from(jobs, (j) => j.service);
    this.demand = Float64Array.from(jobs, (j) => j.demand);
    this.pinnedTo = Int32Array.from(jobs, (j) => j.pinnedTo ?? -1);
    const fleet = vehicles.length;
    this.restricted = new Uint8Array(this.n);
    this.allowed = new Uint8Array(jobs.some((j) => j.vehicles !== undefined) ? this.n * fleet : 0);
    jobs.forEach((j, k) => {
      if (j.vehicles === undefined) return;
      this.restricted[k] = 1;
      for (const v of j.vehicles) if (v >= 0 && v < fleet) this.allowed[k * fleet + v] = 1;
    });
    this.cap = Float64Array.from(vehicles, (v) => v.capacity ?? Number.POSITIVE_INFINITY);
    this.groupOf = Int32Array.from(vehicles, (v) => v.group ?? -1);
    const members = new Map<number, number[]>();
    vehicles.forEach((v, i) => {
      if (v.group === undefined) return;
      const list = members.get(v.group);
      if (list) list.push(i);
      else members.set(v.group, [i]);
    });
    this.siblings = vehicles.map((v, i) =>
      v.group === undefined ? [] : (members.get(v.group) as number[]).filter((u) => u !== i),
    );
    let longest = travel.onDemand?.bound ?? 0;
    if (!travel.onDemand) for (const t of this.T) if (Number.isFinite(t) && t > longest) longest = t;
    this.penalty = 10 * (2 * longest + 1);
    this.routeOf = new Int32Array(this.n).fill(-1);
    this.posOf = new Int32Array(this.n).fill(-1);
    this.neighbours = new Array(this.n);
    this.routes = vehicles.map((_, v) => this.build(v, []));
  }

  private t(a: number, b: number): number {
    if (this.rows === null) return this.T[a * this.size + b] as number;
    // the diagonal of a matrix filled on demand is 0: an empty route (base to base) computes no row
    if (a === b) return 0;
    let row = this.rows[a];
    if (row === undefined) {
      row = this.rowOf(a);
      this.rows[a] = row;
    }
    return row[b] as number;
  }

  /** The 100 other jobs nearest to job j by travel time (ties in job order), computed once. */
  private neighboursOf(j: number): Int32Array {
    const known = this.neighbours[j];
    if (known) return known;
    const others = Array.from({ length: this.n }, (_, k) => k).filter((k) => k !== j);
    const from = this.jobLoc[j] as number;
    const far = (k: number) => this.t(from, this.jobLoc[k] as number);
    others.sort((a, b) => far(a) - far(b));
    const nearest = Int32Array.from(others.slice(0, 100));
    this.neighbours[j] = nearest;
    return nearest;
  }

  /** Whether the caller's deadline has passed (never without one). */
  private expired(): boolean {
    if (this.timedOut) return true;
    if (this.clock !== null && this.clock() >= this.deadline) this.timedOut = true;
    return this.timedOut;
  }

  /** The load of vehicle v's capacity group: its route's, and its siblings'. */
  private loadOf(v: number): number {
    let load = (this.routes[v] as RouteState).load;
    for (const u of this.siblings[v] as readonly number[]) load += (this.routes[u] as RouteState).load;
    return load;
  }

  /** Whether vehicles a and b share one capacity (a move between them leaves their load as it is). */
  private sameGroup(a: number, b: number): boolean {
    return a === b || ((this.groupOf[a] as number) >= 0 && this.groupOf[a] === this.groupOf[b]);
  }

  /** Whether vehicle v may serve job j (its pin, and the vehicles it is restricted to). */
  private canServe(j: number, v: number): boolean {
    const pin = this.pinnedTo[j] as number;
    if (pin >= 0 && pin !== v) return false;
    return this.restricted[j] !== 1 || this.allowed[j * this.problem.vehicles.length + v] === 1;
  }

  /** The schedule arrays of `jobs` on vehicle `v`. */
  private build(v: number, jobs: readonly number[]): RouteState {
    const vehicle = this.problem.vehicles[v];
    if (!vehicle) throw new Error(`no vehicle ${v}`);
    const k = jobs.length;
    // plain arrays: small typed arrays cost more to allocate than they save here (a profile showed
    // build() and the garbage collector at 40 % of the search)
    const loc: number[] = new Array(k + 2).fill(0);
    const service: number[] = new Array(k + 2).fill(0);
    const early: number[] = new Array(k + 2).fill(0);
    const late: number[] = new Array(k + 2).fill(0);
    const cumLoad: number[] = new Array(k + 2).fill(0);
    const dueAt: number[] = new Array(k + 2).fill(0);
    loc[0] = vehicle.start;
    early[0] = vehicle.shiftStart;
    dueAt[0] = vehicle.shiftEnd;
    for (let i = 1; i <= k; i++) {
      const j = jobs[i - 1] as number;
      loc[i] = this.jobLoc[j] as number;
      service[i] = this.svc[j] as number;
      dueAt[i] = this.due[j] as number;
      cumLoad[i] = (cumLoad[i - 1] as number) + (this.demand[j] as number);
    }
    loc[k + 1] = vehicle.end;
    dueAt[k + 1] = vehicle.shiftEnd;
    cumLoad[k + 1] = cumLoad[k] as number;
    let cost = 0;
    for (let i = 1; i <= k + 1; i++) {
      const leg = this.t(loc[i - 1] as number, loc[i] as number);
      cost += leg;
      const arrival = (early[i - 1] as number) + (service[i - 1] as number) + leg;
      early[i] = i <= k ? Math.max(arrival, this.ready[jobs[i - 1] as number] as number) : arrival;
    }
    late[k + 1] = vehicle.shiftEnd;
    const lateJobs: number[] = new Array(k + 2).fill(Number.POSITIVE_INFINITY);
    const toLast: number[] = new Array(k + 2).fill(0);
    for (let i = k; i >= 0; i--) {
      const leg = this.t(loc[i] as number, loc[i + 1] as number);
      late[i] = Math.min(dueAt[i] as number, (late[i + 1] as number) - (service[i] as number) - leg);
      if (i < k) {
        lateJobs[i] = Math.min(
          dueAt[i] as number,
          (lateJobs[i + 1] as number) - (service[i] as number) - leg,
        );
        toLast[i] = (toLast[i + 1] as number) + (service[i] as number) + leg;
      } else lateJobs[i] = dueAt[i] as number;
    }
    if (k === 0) cost = 0;
    for (let i = 0; i < k; i++) {
      this.routeOf[jobs[i] as number] = v;
      this.posOf[jobs[i] as number] = i;
    }
    return {
      jobs,
      loc,
      service,
      early,
      late,
      lateJobs,
      toLast,
      cumLoad,
      load: cumLoad[k] as number,
      cost,
    };
  }

  /** Cost of `jobs` on vehicle `v`, or Infinity when infeasible: the O(n) check for intra-route moves. */
  private evaluate(v: number, jobs: readonly number[]): number {
    const vehicle = this.problem.vehicles[v];
    if (!vehicle) return Number.POSITIVE_INFINITY;
    let time = vehicle.shiftStart;
    let here = vehicle.start;
    let cost = 0;
    for (const j of jobs) {
      const loc = this.jobLoc[j] as number;
      const leg = this.t(here, loc);
      cost += leg;
      time = Math.max(time + leg, this.ready[j] as number);
      if (time > (this.due[j] as number) + EPS) return Number.POSITIVE_INFINITY;
      time += this.svc[j] as number;
      here = loc;
    }
    const back = this.t(here, vehicle.end);
    if (time + back > vehicle.shiftEnd + EPS) return Number.POSITIVE_INFINITY;
    return jobs.length === 0 ? 0 : cost + back;
  }

  private totalCost(): number {
    let cost = this.unassigned.length * this.penalty;
    for (const r of this.routes) cost += r.cost;
    return cost;
  }

  /** Cost increase of inserting job j at its best feasible place (sets bestV, bestP), or Infinity. */
  private bestInsertion(j: number, blink: number): number {
    let best = Number.POSITIVE_INFINITY;
    this.bestV = -1;
    const pin = this.pinnedTo[j] as number;
    const lj = this.jobLoc[j] as number;
    const rj = this.ready[j] as number;
    const dj = this.due[j] as number;
    const sj = this.svc[j] as number;
    const demand = this.demand[j] as number;
    const first = Math.max(pin, 0);
    const last = pin >= 0 ? pin : this.routes.length - 1;
    let triedEmpty = false;
    const restricted = this.restricted[j] === 1;
    const allowedAt = j * this.routes.length;
    for (let v = first; v <= last; v++) {
      if (restricted && this.allowed[allowedAt + v] !== 1) continue;
      const r = this.routes[v] as RouteState;
      const load = (this.groupOf[v] as number) < 0 ? r.load : this.loadOf(v);
      if (load + demand > (this.cap[v] as number)) continue;
      const k = r.jobs.length;
      if (k === 0 && pin < 0 && !restricted) {
        // identical empty vehicles give identical insertions: try the first of each start/end pair only
        if (triedEmpty && this.sameAsEarlierEmpty(v)) continue;
        triedEmpty = true;
      }
      for (let p = 0; p <= k; p++) {
        if (blink > 0 && this.rng() < blink) continue;
        const a = r.loc[p] as number;
        const b = r.loc[p + 1] as number;
        const ta = this.t(a, lj);
        const start = Math.max((r.early[p] as number) + (r.service[p] as number) + ta, rj);
        if (start > dj + EPS) {
          if (p > 0) break; // later positions start later still (under the triangle inequality)
          continue;
        }
        const tb = this.t(lj, b);
        if (start + sj + tb > (r.late[p + 1] as number) + EPS) continue;
        const delta = ta + tb - (k === 0 ? 0 : this.t(a, b));
        if (delta < best - EPS) {
          best = delta;
          this.bestV = v;
          this.bestP = p;
        }
      }
    }
    return best;
  }

  private sameAsEarlierEmpty(v: number): boolean {
    const vs = this.problem.vehicles;
    const me = vs[v];
    if (!me || this.groupOf[v] !== -1) return false;
    for (let u = 0; u < v; u++) {
      const o = vs[u];
      // a vehicle of a group is like no other: its siblings' loads count against its capacity
      if (!o || (this.routes[u] as RouteState).jobs.length !== 0 || this.groupOf[u] !== -1) continue;
      if (
        o.start === me.start &&
        o.end === me.end &&
        o.shiftStart === me.shiftStart &&
        o.shiftEnd === me.shiftEnd &&
        this.cap[u] === this.cap[v]
      )
        return true;
    }
    return false;
  }

  private insertAt(j: number, v: number, p: number): void {
    const r = this.routes[v] as RouteState;
    const jobs = r.jobs.slice();
    jobs.splice(p, 0, j);
    this.routes[v] = this.build(v, jobs);
  }

  /** Inserts the jobs greedily in the given order; those that fit nowhere become unassigned. With
   * `untilDeadline`, stops when the deadline passes and returns the jobs not reached (also unassigned). */
  private recreate(order: readonly number[], blink: number, untilDeadline = false): number[] {
    for (let i = 0; i < order.length; i++) {
      const j = order[i] as number;
      if (untilDeadline && this.expired()) {
        const rest = order.slice(i);
        for (const r of rest) {
          this.unassigned.push(r);
          this.routeOf[r] = -1;
        }
        return rest;
      }
      const delta = this.bestInsertion(j, blink);
      if (delta === Number.POSITIVE_INFINITY || this.bestV < 0) {
        this.unassigned.push(j);
        this.routeOf[j] = -1;
      } else {
        this.insertAt(j, this.bestV, this.bestP);
      }
    }
    return [];
  }

  /** String removal around a random seed job (after Christiaens & Vanden Berghe's SISR). */
  private ruin(meanRemoved: number, maxString: number): number[] {
    const removed: number[] = [];
    if (this.n === 0) return removed;
    let used = 0;
    let jobsInRoutes = 0;
    for (const r of this.routes) {
      if (r.jobs.length > 0) {
        used++;
        jobsInRoutes += r.jobs.length;
      }
    }
    if (used === 0) return removed;
    const lsMax = Math.min(maxString, jobsInRoutes / used);
    const ksMax = (4 * meanRemoved) / (1 + lsMax) - 1;
    const ks = Math.floor(this.rng() * ksMax) + 1;
    const seed = Math.floor(this.rng() * this.n);
    const ruined = new Set<number>();
    const candidates = [seed, ...this.neighboursOf(seed)];
    for (const c of candidates) {
      if (ruined.size >= ks) break;
      const v = this.routeOf[c] as number;
      if (v < 0 || ruined.has(v)) continue;
      const r = this.routes[v] as RouteState;
      const k = r.jobs.length;
      const length = Math.floor(this.rng() * Math.min(lsMax, k)) + 1;
      const pos = this.posOf[c] as number;
      const from = Math.max(0, Math.min(k - length, pos - Math.floor(this.rng() * length)));
      const keep: number[] = [];
      r.jobs.forEach((j, i) => {
        if (i >= from && i < from + length) removed.push(j);
        else keep.push(j);
      });
      ruined.add(v);
      this.routes[v] = this.build(v, keep);
    }
    for (const j of removed) this.routeOf[j] = -1;
    return removed;
  }

  private sortForRecreate(jobs: number[]): void {
    const r = this.rng();
    const key = (j: number): number => {
      if (r < 4 / 13) return 0;
      if (r < 8 / 13) return -(this.demand[j] as number);
      const depot = this.problem.vehicles[0]?.start ?? 0;
      const far = this.t(depot, this.jobLoc[j] as number);
      if (r < 10 / 13) return -far;
      if (r < 11 / 13) return far;
      return (this.due[j] as number) - (this.ready[j] as number);
    };
    // shuffle first so that ties (and the random order) are random
    for (let i = jobs.length - 1; i > 0; i--) {
      const k = Math.floor(this.rng() * (i + 1));
      const tmp = jobs[i] as number;
      jobs[i] = jobs[k] as number;
      jobs[k] = tmp;
    }
    if (r >= 4 / 13) {
      const keys = new Map(jobs.map((j) => [j, key(j)]));
      jobs.sort((a, b) => (keys.get(a) as number) - (keys.get(b) as number));
    }
  }

  // ---- local search ---------------------------------------------------------------------------------

  /** Moves one job to another route where it costs less (first improvement). */
  private relocate(): boolean {
    for (let j = 0; j < this.n; j++) {
      if ((j & 31) === 31 && this.expired()) return false;
      const a = this.routeOf[j] as number;
      if (a < 0) continue;
      const ra = this.routes[a] as RouteState;
      const i = (this.posOf[j] as number) + 1;
      const prev = ra.loc[i - 1] as number;
      const next = ra.loc[i + 1] as number;
      const lj = this.jobLoc[j] as number;
      const bridge = this.t(prev, next);
      if (
        (ra.early[i - 1] as number) + (ra.service[i - 1] as number) + bridge >
        (ra.late[i + 1] as number) + EPS
      )
        continue;
      const gain = ra.jobs.length === 1 ? ra.cost : this.t(prev, lj) + this.t(lj, next) - bridge;
      const pin = this.pinnedTo[j] as number;
      for (let b = 0; b < this.routes.length; b++) {
        if (b === a || (pin >= 0 && b !== pin) || !this.canServe(j, b)) continue;
        const rb = this.routes[b] as RouteState;
        if (!this.sameGroup(a, b) && this.loadOf(b) + (this.demand[j] as number) > (this.cap[b] as number))
          continue;
        const kb = rb.jobs.length;
        for (let p = 0; p <= kb; p++) {
          const x = rb.loc[p] as number;
          const y = rb.loc[p + 1] as number;
          const tx = this.t(x, lj);
          const delta = tx + this.t(lj, y) - (kb === 0 ? 0 : this.t(x, y));
          if (delta >= gain - 1e-7) continue;
          const start = Math.max(
            (rb.early[p] as number) + (rb.service[p] as number) + tx,
            this.ready[j] as number,
          );
          if (start > (this.due[j] as number) + EPS) break;
          if (start + (this.svc[j] as number) + this.t(lj, y) > (rb.late[p + 1] as number) + EPS) continue;
          this.routes[a] = this.build(
            a,
            ra.jobs.filter((x2) => x2 !== j),
          );
          this.insertAt(j, b, p);
          return true;
        }
      }
    }
    return false;
  }

  /** Exchanges two jobs of different routes when that costs less. */
  private exchange(): boolean {
    for (let j = 0; j < this.n; j++) {
      if ((j & 31) === 31 && this.expired()) return false;
      const a = this.routeOf[j] as number;
      if (a < 0) continue;
      for (let u = j + 1; u < this.n; u++) {
        const b = this.routeOf[u] as number;
        if (b < 0 || b === a) continue;
        const pj = this.pinnedTo[j] as number;
        const pu = this.pinnedTo[u] as number;
        if ((pj >= 0 && pj !== b) || (pu >= 0 && pu !== a)) continue;
        if (!this.canServe(j, b) || !this.canServe(u, a)) continue;
        const ra = this.routes[a] as RouteState;
        const rb = this.routes[b] as RouteState;
        const i = (this.posOf[j] as number) + 1;
        const q = (this.posOf[u] as number) + 1;
        const dA = this.replaceDelta(ra, i, u);
        if (dA === Number.POSITIVE_INFINITY) continue;
        const dB = this.replaceDelta(rb, q, j);
        if (dB === Number.POSITIVE_INFINITY || dA + dB > -1e-7) continue;
        const du = (this.demand[u] as number) - (this.demand[j] as number);
        if (
          !this.sameGroup(a, b) &&
          (this.loadOf(a) + du > (this.cap[a] as number) || this.loadOf(b) - du > (this.cap[b] as number))
        )
          continue;
        const ja = ra.jobs.slice();
        ja[i - 1] = u;
        const jb = rb.jobs.slice();
        jb[q - 1] = j;
        this.routes[a] = this.build(a, ja);
        this.routes[b] = this.build(b, jb);
        return true;
      }
    }
    return false;
  }

  /** Cost change of putting job u in place of position i of route r, or Infinity when infeasible. */
  private replaceDelta(r: RouteState, i: number, u: number): number {
    const prev = r.loc[i - 1] as number;
    const next = r.loc[i + 1] as number;
    const old = r.loc[i] as number;
    const lu = this.jobLoc[u] as number;
    const tin = this.t(prev, lu);
    const start = Math.max(
      (r.early[i - 1] as number) + (r.service[i - 1] as number) + tin,
      this.ready[u] as number,
    );
    if (start > (this.due[u] as number) + EPS) return Number.POSITIVE_INFINITY;
    const tout = this.t(lu, next);
    if (start + (this.svc[u] as number) + tout > (r.late[i + 1] as number) + EPS)
      return Number.POSITIVE_INFINITY;
    return tin + tout - this.t(prev, old) - this.t(old, next);
  }

  /**
   * Latest service start at position p of route r (1 <= p <= k) when its tail from p rides vehicle w,
   * ending at w's end by w's shift end, or -Infinity when no start does (a wait for a window in the tail
   * ends it too late whenever it starts): O(1) from the route's job-only latest starts, its durations and
   * `fromReady` (readyToLast of r).
   */
  private tailLate(r: RouteState, p: number, w: number, fromReady: readonly number[]): number {
    const k = r.jobs.length;
    const vehicle = this.problem.vehicles[w] as Vehicle;
    const last = r.loc[k] as number;
    const lastBy = vehicle.shiftEnd - this.t(last, vehicle.end) - (r.service[k] as number);
    if ((fromReady[p] as number) > lastBy + EPS) return Number.NEGATIVE_INFINITY;
    return Math.min(r.lateJobs[p] as number, lastBy - (r.toLast[p] as number));
  }

  /**
   * Per position p (1..k) of r, the earliest its last job can start however early service starts at p:
   * the latest of each job's ready time from p on plus the service and travel from it to the last job.
   * A tail's wait for a window that no earlier start shortens: its end on another vehicle, whose shift
   * may end sooner (a contractor's stretch before a break), is no earlier than this.
   */
  private readyToLast(r: RouteState): number[] {
    const k = r.jobs.length;
    const out: number[] = new Array(k + 2).fill(Number.NEGATIVE_INFINITY);
    for (let i = k; i >= 1; i--) {
      const fromHere = (this.ready[r.jobs[i - 1] as number] as number) + (r.toLast[i] as number);
      out[i] = Math.max(out[i + 1] as number, fromHere);
    }
    return out;
  }

  /** The first position (0-based, into r.jobs) from which every job of r may ride vehicle w. */
  private tailFrom(r: RouteState, w: number): number {
    let i = r.jobs.length;
    while (i > 0 && this.canServe(r.jobs[i - 1] as number, w)) i--;
    return i;
  }

  /**
   * Swaps the tails of two routes (2-opt*) when both tails may ride their new vehicle (restrictions and
   * pins) and fit its windows, end place and shift end: checked in O(1) from forward and backward slacks.
   */
  private twoOptStar(): boolean {
    const vs = this.problem.vehicles;
    for (let a = 0; a < this.routes.length; a++) {
      if ((a & 15) === 15 && this.expired()) return false;
      const ra = this.routes[a] as RouteState;
      const va = vs[a];
      if (!va) continue;
      const readyA = this.readyToLast(ra);
      for (let b = a + 1; b < this.routes.length; b++) {
        const rb = this.routes[b] as RouteState;
        const vb = vs[b];
        if (!vb || (ra.jobs.length === 0 && rb.jobs.length === 0)) continue;
        const readyB = this.readyToLast(rb);
        const ka = ra.jobs.length;
        const kb = rb.jobs.length;
        // a's tail from job index i rides b only for i >= fromA; b's from q onto a only for q >= fromB
        const fromA = this.tailFrom(ra, b);
        const fromB = this.tailFrom(rb, a);
        const aLast = ra.loc[ka] as number;
        const bLast = rb.loc[kb] as number;
        // the tails keep their legs but end at the other vehicle's end
        const aTailEnds = this.t(aLast, vb.end) - this.t(aLast, va.end);
        const bTailEnds = this.t(bLast, va.end) - this.t(bLast, vb.end);
        for (let i = fromA; i <= ka; i++) {
          const ai = ra.loc[i] as number;
          const ai1 = ra.loc[i + 1] as number;
          const leaveA = (ra.early[i] as number) + (ra.service[i] as number);
          for (let q = fromB; q <= kb; q++) {
            if ((i === ka && q === kb) || (i === 0 && q === 0)) continue;
            const bq = rb.loc[q] as number;
            const bq1 = rb.loc[q + 1] as number;
            const aTail = i < ka;
            const bTail = q < kb;
            const newA = this.t(ai, bTail ? bq1 : va.end);
            const newB = this.t(bq, aTail ? ai1 : vb.end);
            let delta = newA + newB - this.t(ai, ai1) - this.t(bq, bq1);
            if (aTail) delta += aTailEnds;
            if (bTail) delta += bTailEnds;
            // an emptied route costs nothing: its depot legs disappear
            const aEmpty = i === 0 && q === kb;
            const bEmpty = q === 0 && i === ka;
            // and an empty route's depot-to-depot leg was never paid
            const adj =
              (aEmpty ? -newA : 0) +
              (bEmpty ? -newB : 0) +
              (ka === 0 ? this.t(ai, ai1) : 0) +
              (kb === 0 ? this.t(bq, bq1) : 0);
            if (delta + adj > -1e-7) continue;
            // a's head, then b's tail (or a's end)
            const lateA = bTail ? this.tailLate(rb, q + 1, a, readyB) : va.shiftEnd;
            if (leaveA + newA > lateA + EPS) continue;
            // b's head, then a's tail (or b's end)
            const lateB = aTail ? this.tailLate(ra, i + 1, b, readyA) : vb.shiftEnd;
            if ((rb.early[q] as number) + (rb.service[q] as number) + newB > lateB + EPS) continue;
            // each group's load less the route's own, plus what the route carries after the swap
            const loadA = (ra.cumLoad[i] as number) + rb.load - (rb.cumLoad[q] as number);
            const loadB = (rb.cumLoad[q] as number) + ra.load - (ra.cumLoad[i] as number);
            if (!this.sameGroup(a, b)) {
              if (this.loadOf(a) - ra.load + loadA > (this.cap[a] as number)) continue;
              if (this.loadOf(b) - rb.load + loadB > (this.cap[b] as number)) continue;
            }
            const ja = [...ra.jobs.slice(0, i), ...rb.jobs.slice(q)];
            const jb = [...rb.jobs.slice(0, q), ...ra.jobs.slice(i)];
            this.routes[a] = this.build(a, ja);
            this.routes[b] = this.build(b, jb);
            return true;
          }
        }
      }
    }
    return false;
  }

  twoOptStarOn(routes: readonly Route[]): Route[] | null {
    for (const r of routes) this.routes[r.vehicle] = this.build(r.vehicle, r.jobs);
    if (!this.twoOptStar()) return null;
    return this.routes.flatMap((r, v) => (r.jobs.length > 0 ? [{ vehicle: v, jobs: r.jobs.slice() }] : []));
  }

  /** Or-opt (move a string of 1-3 jobs) and 2-opt (reverse a segment) inside each route, O(n) checks. */
  private intraRoute(): boolean {
    for (let v = 0; v < this.routes.length; v++) {
      if ((v & 15) === 15 && this.expired()) return false;
      const r = this.routes[v] as RouteState;
      const k = r.jobs.length;
      if (k < 2) continue;
      const jobs = r.jobs;
      for (let len = 1; len <= 3; len++) {
        for (let i = 0; i + len <= k; i++) {
          const segment = jobs.slice(i, i + len);
          const rest = [...jobs.slice(0, i), ...jobs.slice(i + len)];
          for (let p = 0; p <= rest.length; p++) {
            if (p === i) continue;
            const candidate = [...rest.slice(0, p), ...segment, ...rest.slice(p)];
            if (this.evaluate(v, candidate) < r.cost - 1e-7) {
              this.routes[v] = this.build(v, candidate);
              return true;
            }
          }
        }
      }
      for (let i = 0; i < k - 1; i++) {
        for (let e = i + 1; e < k; e++) {
          const candidate = [...jobs.slice(0, i), ...jobs.slice(i, e + 1).reverse(), ...jobs.slice(e + 1)];
          if (this.evaluate(v, candidate) < r.cost - 1e-7) {
            this.routes[v] = this.build(v, candidate);
            return true;
          }
        }
      }
    }
    return false;
  }

  /** Applies improving moves until none is left (a local optimum of all four neighbourhoods), or until
   * the deadline passes. */
  private localSearch(): void {
    for (let rounds = 0; rounds < 10_000; rounds++) {
      if (this.expired()) return;
      if (this.relocate() || this.exchange() || this.twoOptStar() || this.intraRoute()) continue;
      // an unassigned job may fit now
      if (this.unassigned.length > 0 && !this.expired()) {
        const waiting = this.unassigned;
        this.unassigned = [];
        this.recreate(waiting, 0, true);
        if (this.unassigned.length < waiting.length) continue;
      }
      return;
    }
  }

  // ---- the search ----------------------------------------------------------------------------------

  run(options: SolveOptions): Solution {
    const order = Array.from({ length: this.n }, (_, j) => j);
    // construction: hardest (tightest window) first, then farthest
    const depot = this.problem.vehicles[0]?.start ?? 0;
    order.sort(
      (a, b) =>
        (this.due[a] as number) -
          (this.ready[a] as number) -
          ((this.due[b] as number) - (this.ready[b] as number)) ||
        this.t(depot, this.jobLoc[b] as number) - this.t(depot, this.jobLoc[a] as number),
    );
    // The first plan, cut short (the rest unassigned and `unplanned`) when the deadline passes.
    const unplanned = this.recreate(order, 0, true);
    this.localSearch();

    let current = this.totalCost();
    let best = current;
    let bestRoutes = this.routes.map((r) => r.jobs);
    let bestUnassigned = this.unassigned.slice();
    let edges = 0;
    for (const r of this.routes) if (r.jobs.length > 0) edges += r.jobs.length + 1;
    const meanEdge = edges > 0 ? (current - this.unassigned.length * this.penalty) / edges : 1;
    const t0 = (options.temperature?.start ?? 5) * meanEdge;
    const t1 = (options.temperature?.end ?? 0.05) * meanEdge;

    // The cooling and the stop follow the iteration budget only, so a seed and a budget give one
    // solution whatever the machine's speed; the clock is a safety cap, and a run it cuts short says so.
    const limit = Math.max(0, Math.floor(options.iterations ?? DEFAULT_ITERATIONS));
    let it = 0;
    for (; it < limit; it++) {
      if (this.expired()) break;
      const temperature = t0 * (t1 / t0) ** (it / limit);

      const saved = this.routes.slice();
      const savedUnassigned = this.unassigned;
      const removed = this.ruin(10, 10);
      const toInsert = [...removed, ...this.unassigned];
      this.unassigned = [];
      this.sortForRecreate(toInsert);
      this.recreate(toInsert, 0.01);
      const cost = this.totalCost();
      if (cost < current - temperature * Math.log(this.rng())) {
        current = cost;
        if (cost < best - 1e-7) {
          this.localSearch();
          current = this.totalCost();
          best = current;
          bestRoutes = this.routes.map((r) => r.jobs);
          bestUnassigned = this.unassigned.slice();
        }
      } else {
        this.routes = saved;
        this.unassigned = savedUnassigned;
        this.reindex();
      }
    }

    this.routes = bestRoutes.map((jobs, v) => this.build(v, jobs));
    this.unassigned = bestUnassigned;
    // build() indexed the best routes' jobs; the best's unassigned ones may be routed in the current
    // solution, and a move that read their stale place would route one twice and lose another.
    for (const j of this.unassigned) this.routeOf[j] = -1;
    this.localSearch();
    const routes: Route[] = [];
    this.routes.forEach((r, v) => {
      if (r.jobs.length > 0) routes.push({ vehicle: v, jobs: r.jobs.slice() });
    });
    let distance = 0;
    for (const r of this.routes) distance += r.cost;
    const stopped: SearchStop =
      unplanned.length > 0 ? "time_limit_construction" : this.timedOut ? "time_limit" : "budget";
    return {
      routes,
      unassigned: this.unassigned.slice().sort((a, b) => a - b),
      ...(unplanned.length > 0 ? { unplanned: unplanned.slice().sort((a, b) => a - b) } : {}),
      distance,
      search: { iterations: it, stopped },
    };
  }

  private reindex(): void {
    this.routes.forEach((r, v) => {
      r.jobs.forEach((j, i) => {
        this.routeOf[j] = v;
        this.posOf[j] = i;
      });
    });
    for (const j of this.unassigned) this.routeOf[j] = -1;
  }
}
