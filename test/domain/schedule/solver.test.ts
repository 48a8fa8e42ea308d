import { describe, expect, it } from "vitest";
import { rngOf } from "../../../src/domain/random.js";
import { checkSolution } from "../../../src/domain/schedule/check.js";
import {
  euclideanMatrix,
  type Job,
  type Problem,
  type Route,
  type Vehicle,
} from "../../../src/domain/schedule/model.js";
import { parseSolomon } from "../../../src/domain/schedule/solomon.js";
import { solve, twoOptStarMove } from "../../../src/domain/schedule/solver.js";

/** A random small instance: a depot at location 0, `n` jobs, `v` identical vehicles. */
function randomInstance(seed: number, n: number, v: number, capacity: number): Problem {
  const rng = rngOf(seed);
  const points: Array<[number, number]> = [[50, 50]];
  for (let i = 0; i < n; i++) points.push([Math.round(rng() * 100), Math.round(rng() * 100)]);
  const travel = euclideanMatrix(points);
  const jobs: Job[] = Array.from({ length: n }, (_, i) => {
    const out = travel.times[i + 1] as number; // depot to the job
    const ready = Math.round(out + rng() * 150);
    return {
      id: `job_${i}`,
      location: i + 1,
      ready,
      due: ready + 20 + Math.round(rng() * 120),
      service: 10,
      demand: 1 + Math.floor(rng() * 4),
    };
  });
  const vehicles: Vehicle[] = Array.from({ length: v }, (_, k) => ({
    id: `veh_${k}`,
    start: 0,
    end: 0,
    shiftStart: 0,
    shiftEnd: 600,
    capacity,
  }));
  return { vehicles, jobs, travel };
}

/** Cost of one route, or Infinity when infeasible (the brute force's own simulation). */
function routeCost(p: Problem, vehicle: Vehicle, jobs: readonly number[]): number {
  if (jobs.length === 0) return 0;
  const t = (a: number, b: number) => p.travel.times[a * p.travel.size + b] as number;
  let time = vehicle.shiftStart;
  let at = vehicle.start;
  let cost = 0;
  let load = 0;
  for (const j of jobs) {
    const job = p.jobs[j] as Job;
    cost += t(at, job.location);
    time = Math.max(time + t(at, job.location), job.ready);
    if (time > job.due) return Number.POSITIVE_INFINITY;
    time += job.service;
    load += job.demand;
    at = job.location;
  }
  if (load > (vehicle.capacity ?? Number.POSITIVE_INFINITY)) return Number.POSITIVE_INFINITY;
  if (time + t(at, vehicle.end) > vehicle.shiftEnd) return Number.POSITIVE_INFINITY;
  return cost + t(at, vehicle.end);
}

/** The optimum over all ways to deal the jobs into ordered routes of identical vehicles. */
function bruteForce(p: Problem): number {
  const n = p.jobs.length;
  const vehicle = p.vehicles[0] as Vehicle;
  let best = Number.POSITIVE_INFINITY;
  // assign each job a route and a rank: enumerate sequences with separators (-1) between routes
  const used = new Array<boolean>(n).fill(false);
  const routes: number[][] = [[]];
  const visit = (placed: number, partial: number) => {
    if (partial >= best) return;
    const current = routes[routes.length - 1] as number[];
    if (placed === n) {
      const total = partial + routeCost(p, vehicle, current);
      if (total < best) best = total;
      return;
    }
    for (let j = 0; j < n; j++) {
      if (used[j]) continue;
      used[j] = true;
      current.push(j);
      if (routeCost(p, vehicle, current) < Number.POSITIVE_INFINITY) visit(placed + 1, partial);
      current.pop();
      used[j] = false;
    }
    if (current.length > 0 && routes.length < p.vehicles.length) {
      const closed = routeCost(p, vehicle, current);
      routes.push([]);
      visit(placed, partial + closed);
      routes.pop();
    }
  };
  visit(0, 0);
  return best;
}

describe("solver on small instances with a known optimum", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`finds the brute-force optimum (instance ${seed}: 7 jobs, 3 vehicles of capacity 8)`, () => {
      const problem = randomInstance(seed, 7, 3, 8);
      const optimum = bruteForce(problem);
      expect(optimum).toBeLessThan(Number.POSITIVE_INFINITY);
      const solution = solve(problem, { seed: 7, iterations: 300 });
      const check = checkSolution(problem, solution.routes, solution.unassigned);
      expect(check.violations).toEqual([]);
      expect(solution.unassigned).toEqual([]);
      expect(solution.distance).toBeCloseTo(check.distance, 9);
      expect(solution.distance).toBeCloseTo(optimum, 6);
    });
  }

  it("visits a line of jobs in window order even when that is longer than the shortest tour", () => {
    // jobs at x = 10, 20, 30 but the windows force 30 first, then 10, then 20
    const travel = euclideanMatrix([
      [0, 0],
      [10, 0],
      [20, 0],
      [30, 0],
    ]);
    const job = (i: number, ready: number, due: number): Job => ({
      id: `job_${i}`,
      location: i + 1,
      ready,
      due,
      service: 0,
      demand: 0,
    });
    const problem: Problem = {
      travel,
      jobs: [job(0, 50, 55), job(1, 60, 65), job(2, 30, 35)],
      vehicles: [{ id: "veh_0", start: 0, end: 0, shiftStart: 0, shiftEnd: 1000 }],
    };
    const solution = solve(problem, { iterations: 50 });
    expect(solution.routes).toEqual([{ vehicle: 0, jobs: [2, 0, 1] }]);
    expect(solution.distance).toBeCloseTo(30 + 20 + 10 + 20, 9);
  });

  it("leaves a job no vehicle can reach in time unassigned instead of breaking a window", () => {
    const travel = euclideanMatrix([
      [0, 0],
      [100, 0],
      [5, 0],
    ]);
    const problem: Problem = {
      travel,
      jobs: [
        { id: "far", location: 1, ready: 0, due: 50, service: 0, demand: 0 },
        { id: "near", location: 2, ready: 0, due: 50, service: 0, demand: 0 },
      ],
      vehicles: [{ id: "veh_0", start: 0, end: 0, shiftStart: 0, shiftEnd: 1000 }],
    };
    const solution = solve(problem, { iterations: 20 });
    expect(solution.unassigned).toEqual([0]);
    expect(checkSolution(problem, solution.routes, solution.unassigned).feasible).toBe(true);
  });
});

describe("determinism and time box", () => {
  it("gives the same solution for the same seed and budget", () => {
    const problem = randomInstance(11, 30, 6, 15);
    const a = solve(problem, { seed: 5, iterations: 400 });
    const b = solve(problem, { seed: 5, iterations: 400 });
    expect(a).toEqual(b);
    expect(checkSolution(problem, a.routes, a.unassigned).feasible).toBe(true);
  });

  it("gives the same solution for a seed and budget whatever the clock does under a cap it never hits", () => {
    // The old time box cooled with the clock's progress: a slow and a fast machine then differed.
    const problem = randomInstance(13, 30, 6, 15);
    let slow = 0;
    let fast = 0;
    let reads = 0;
    const c = solve(problem, { seed: 3, iterations: 300, now: () => reads++, deadline: Number.MAX_VALUE });
    // the slow clock ends one step short of its cap after as many reads
    const step = 1200 / (reads + 1);
    const a = solve(problem, { seed: 3, iterations: 300, now: () => (slow += step), deadline: 1200 });
    const b = solve(problem, { seed: 3, iterations: 300, now: () => (fast += 0.001), deadline: 1200 });
    expect(a.search).toEqual({ iterations: 300, stopped: "budget" });
    expect(a).toEqual(b);
    expect(a).toEqual(c);
    expect(a).toEqual(solve(problem, { seed: 3, iterations: 300 }));
  });

  /** A clock that reads 0 for its first `reads` readings and the deadline from then on. */
  function clockPassingAfter(reads: number): { now: () => number; deadline: number; readings: () => number } {
    let n = 0;
    return { now: () => (n++ < reads ? 0 : 1), deadline: 1, readings: () => n };
  }

  it("stops the search when the caller's clock reaches the cap, and says so", () => {
    const problem = randomInstance(12, 30, 6, 15);
    // How often the whole run reads the clock: the cap passes 100 readings before its end, in the
    // ruin-and-recreate loop (read once an iteration) after the first plan.
    const counting = clockPassingAfter(Number.MAX_SAFE_INTEGER);
    solve(problem, { iterations: 300, ...counting });
    const clock = clockPassingAfter(counting.readings() - 100);
    const solution = solve(problem, { iterations: 300, ...clock });
    expect(solution.search?.stopped).toBe("time_limit");
    expect(solution.search?.iterations).toBeLessThan(300);
    expect(solution.unplanned).toBeUndefined();
    expect(checkSolution(problem, solution.routes, solution.unassigned).feasible).toBe(true);
  });

  it("bounds the first construction: the deadline passed after N insertions yields the plan of those N", () => {
    const problem = randomInstance(12, 30, 6, 15);
    const complete = solve(problem, { iterations: 0 });
    for (const steps of [0, 1, 10]) {
      // the construction reads the clock before each job it places
      const clock = clockPassingAfter(steps);
      const partial = solve(problem, { iterations: 1000, ...clock });
      expect(partial.search).toEqual({ iterations: 0, stopped: "time_limit_construction" });
      const planned = partial.routes.reduce((n, r) => n + r.jobs.length, 0);
      expect(planned).toBeLessThanOrEqual(steps);
      expect(partial.unplanned).toHaveLength(30 - steps);
      // the jobs not reached are unassigned too; every job is either on a route or unassigned
      for (const j of partial.unplanned ?? []) expect(partial.unassigned).toContain(j);
      expect(planned + partial.unassigned.length).toBe(30);
      expect(checkSolution(problem, partial.routes, partial.unassigned).feasible).toBe(true);
      // once the deadline has passed nothing reads the clock again
      expect(clock.readings()).toBe(steps + 1);
    }
    expect(complete.unplanned).toBeUndefined();
  });
});

describe("pinned jobs and vehicles with their own base", () => {
  it("keeps a pinned job on its vehicle although another vehicle is nearer", () => {
    // vehicle 0 is based at (0,0), vehicle 1 at (100,0); job 0 sits beside vehicle 0's base but is pinned to vehicle 1
    const travel = euclideanMatrix([
      [0, 0],
      [100, 0],
      [2, 0],
      [98, 0],
      [4, 0],
    ]);
    const job = (i: number, location: number, pinnedTo?: number): Job => ({
      id: `job_${i}`,
      location,
      ready: 0,
      due: 1000,
      service: 1,
      demand: 1,
      ...(pinnedTo === undefined ? {} : { pinnedTo }),
    });
    const problem: Problem = {
      travel,
      jobs: [job(0, 2, 1), job(1, 3), job(2, 4)],
      vehicles: [
        { id: "veh_0", start: 0, end: 0, shiftStart: 0, shiftEnd: 1000 },
        { id: "veh_1", start: 1, end: 1, shiftStart: 0, shiftEnd: 1000 },
      ],
    };
    for (const seed of [1, 2, 3]) {
      const solution = solve(problem, { seed, iterations: 200 });
      const check = checkSolution(problem, solution.routes, solution.unassigned);
      expect(check.violations).toEqual([]);
      const onVehicle1 = solution.routes.find((r) => r.vehicle === 1)?.jobs ?? [];
      expect(onVehicle1).toContain(0);
      // vehicle 1 must drive to (2,0) anyway and passes (4,0) on the way: it takes all three
      expect(solution.routes.map((r) => r.vehicle)).toEqual([1]);
      expect(solution.distance).toBeCloseTo(196, 9);
    }
  });

  it("keeps every pinned job on its vehicle in a larger random instance", () => {
    const base = randomInstance(21, 25, 5, 20);
    const problem: Problem = {
      ...base,
      jobs: base.jobs.map((j, i) => (i % 5 === 0 ? { ...j, pinnedTo: i % 3 } : j)),
    };
    const solution = solve(problem, { seed: 3, iterations: 300 });
    expect(checkSolution(problem, solution.routes, solution.unassigned).violations).toEqual([]);
    for (const route of solution.routes) {
      for (const j of route.jobs) {
        const pin = problem.jobs[j]?.pinnedTo;
        if (pin !== undefined) expect(route.vehicle).toBe(pin);
      }
    }
  });
});

describe("jobs restricted to some vehicles (a contractor with the job's trade)", () => {
  it("serves each restricted job on a vehicle it allows, leaving it unassigned when none can", () => {
    const base = randomInstance(33, 30, 6, 20);
    // Every job allows two of the six vehicles (two "trades"); job 29 allows none that exists.
    const problem: Problem = {
      ...base,
      jobs: base.jobs.map((j, i) => ({ ...j, vehicles: i === 29 ? [17] : [i % 3, (i % 3) + 3] })),
    };
    for (const seed of [1, 2, 3]) {
      const solution = solve(problem, { seed, iterations: 400 });
      expect(checkSolution(problem, solution.routes, solution.unassigned).violations).toEqual([]);
      for (const route of solution.routes)
        for (const j of route.jobs) expect(problem.jobs[j]?.vehicles).toContain(route.vehicle);
      expect(solution.unassigned).toContain(29);
      // The rest fit: 29 jobs of demand at most 4 on vehicles of capacity 20 with 600 minutes each.
      expect(solution.unassigned.length).toBeLessThan(6);
    }
  });

  it("is caught by the independent check when a route breaks a restriction", () => {
    const base = randomInstance(34, 4, 2, 20);
    const problem: Problem = { ...base, jobs: base.jobs.map((j) => ({ ...j, vehicles: [1] })) };
    const check = checkSolution(problem, [{ vehicle: 0, jobs: [0] }], [1, 2, 3]);
    expect(check.violations).toContainEqual({ kind: "vehicle-not-allowed", vehicle: 0, job: 0 });
  });
});

describe("Solomon instance format", () => {
  it("reads the fleet, the depot's horizon and the customers from a CRLF file", () => {
    const text = [
      "T101",
      "",
      "VEHICLE",
      "NUMBER     CAPACITY",
      "  2         10",
      "",
      "CUSTOMER",
      "CUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE   TIME",
      " ",
      "    0      0         0          0          0       100          0   ",
      "    1      3         4          5         10        20         5   ",
      "    2      0         10         6          0        50         5   ",
      "",
    ].join("\r\n");
    const { name, problem, customerOf } = parseSolomon(text);
    expect(name).toBe("T101");
    expect(problem.vehicles).toHaveLength(2);
    expect(problem.vehicles[0]).toMatchObject({
      start: 0,
      end: 0,
      shiftStart: 0,
      shiftEnd: 100,
      capacity: 10,
    });
    expect(problem.jobs[0]).toMatchObject({ location: 1, demand: 5, ready: 10, due: 20, service: 5 });
    expect(customerOf).toEqual([1, 2]);
    expect(problem.travel.times[1]).toBe(5);
    // capacity 10 forbids carrying both (5 + 6): two routes
    const solution = solve(problem, { iterations: 50 });
    expect(solution.routes).toHaveLength(2);
    expect(checkSolution(problem, solution.routes).feasible).toBe(true);
  });
});

describe("2-opt* with restricted jobs and vehicles of their own base", () => {
  // Vehicle 0 based at (0,0), vehicle 1 at (100,0); each route crosses over to the other side last.
  const points: Array<[number, number]> = [
    [0, 0],
    [100, 0],
    [10, 0],
    [90, 10],
    [90, 0],
    [10, 10],
  ];
  const vehicles: Vehicle[] = [
    { id: "west", start: 0, end: 0, shiftStart: 0, shiftEnd: 1000 },
    { id: "east", start: 1, end: 1, shiftStart: 0, shiftEnd: 1000 },
  ];
  const job = (id: string, location: number, allowed: number[]): Job => ({
    id,
    location,
    ready: 0,
    due: 1000,
    service: 5,
    demand: 1,
    vehicles: allowed,
  });
  const crossed = [
    { vehicle: 0, jobs: [0, 1] },
    { vehicle: 1, jobs: [2, 3] },
  ];

  it("swaps the tails when both may ride the other vehicle, ending each at its own base", () => {
    const problem: Problem = {
      vehicles,
      jobs: [job("w1", 2, [0, 1]), job("e2", 3, [0, 1]), job("e1", 4, [0, 1]), job("w2", 5, [0, 1])],
      travel: euclideanMatrix(points),
    };
    const before = checkSolution(problem, crossed);
    // Every job is restricted (as every job of the service is): 2-opt* used to skip such routes.
    let routes: Route[] = crossed;
    let moves = 0;
    for (let next = twoOptStarMove(problem, routes); next !== null; next = twoOptStarMove(problem, routes)) {
      expect(checkSolution(problem, next).feasible).toBe(true);
      routes = next;
      moves++;
    }
    expect(moves).toBeGreaterThan(0);
    // Neither route crosses over any more: e2 ends on the east vehicle, w2 on the west one.
    expect(routes.find((r) => r.jobs.includes(1))?.vehicle).toBe(1);
    expect(routes.find((r) => r.jobs.includes(3))?.vehicle).toBe(0);
    expect(checkSolution(problem, routes).distance).toBeLessThan(before.distance - 100);
  });

  it("keeps a tail off a vehicle its job may not ride", () => {
    const problem: Problem = {
      vehicles,
      // e2 may ride only the west vehicle: the swap above would break that
      jobs: [job("w1", 2, [0, 1]), job("e2", 3, [0]), job("e1", 4, [0, 1]), job("w2", 5, [0, 1])],
      travel: euclideanMatrix(points),
    };
    const after = twoOptStarMove(problem, crossed);
    expect(after).not.toBeNull();
    expect(after?.find((r) => r.jobs.includes(1))?.vehicle).toBe(0);
    expect(checkSolution(problem, after ?? []).feasible).toBe(true);
  });

  it("refuses a tail that would reach its new base after that vehicle's shift ends", () => {
    const problem: Problem = {
      // the east vehicle must be home by 130: w2's tail (10,10) -> (100,0) is too far after e1
      vehicles: [vehicles[0] as Vehicle, { ...(vehicles[1] as Vehicle), shiftEnd: 130 }],
      jobs: [job("w1", 2, [0, 1]), job("e2", 3, [0, 1]), job("e1", 4, [0, 1]), job("w2", 5, [0, 1])],
      travel: euclideanMatrix(points),
    };
    const routes = [
      { vehicle: 0, jobs: [0, 3, 1] },
      { vehicle: 1, jobs: [2] },
    ];
    expect(checkSolution(problem, routes).feasible).toBe(true);
    const after = twoOptStarMove(problem, routes);
    if (after !== null) expect(checkSolution(problem, after).feasible).toBe(true);
  });

  it("never breaks a window, a shift, a capacity or a restriction on random instances (full simulation)", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rng = rngOf(seed);
      const n = 14;
      const v = 4;
      const pts: Array<[number, number]> = [];
      for (let i = 0; i < v + n; i++) pts.push([Math.round(rng() * 100), Math.round(rng() * 100)]);
      const travel = euclideanMatrix(pts);
      const fleet: Vehicle[] = Array.from({ length: v }, (_, k) => ({
        id: `v${k}`,
        start: k,
        end: k,
        shiftStart: 0,
        shiftEnd: 400 + Math.round(rng() * 300),
        capacity: 6,
      }));
      const jobs: Job[] = Array.from({ length: n }, (_, i) => {
        const ready = Math.round(rng() * 200);
        const allowed = Array.from({ length: v }, (_, k) => k).filter(() => rng() < 0.7);
        return {
          id: `j${i}`,
          location: v + i,
          ready,
          due: ready + 60 + Math.round(rng() * 200),
          service: 10,
          demand: 1 + Math.floor(rng() * 2),
          vehicles: allowed.length > 0 ? allowed : [0],
        };
      });
      const problem: Problem = { vehicles: fleet, jobs, travel };
      // a feasible start: each job appended to the first vehicle it may ride that stays feasible
      let routes = fleet.map((_, k) => ({ vehicle: k, jobs: [] as number[] }));
      const placed: number[] = [];
      for (let j = 0; j < n; j++) {
        for (const k of jobs[j]?.vehicles ?? []) {
          const trial = routes.map((r) => (r.vehicle === k ? { vehicle: k, jobs: [...r.jobs, j] } : r));
          const unplaced = Array.from({ length: n }, (_, u) => u).filter(
            (u) => u > j || (u < j && !placed.includes(u)),
          );
          if (checkSolution(problem, trial, unplaced).feasible) {
            routes = trial;
            placed.push(j);
            break;
          }
        }
      }
      const unassigned = Array.from({ length: n }, (_, u) => u).filter((u) => !placed.includes(u));
      let current: Route[] = routes.filter((r) => r.jobs.length > 0);
      let distance = checkSolution(problem, current, unassigned).distance;
      for (let move = 0; move < 30; move++) {
        const next = twoOptStarMove(problem, current);
        if (next === null) break;
        const check = checkSolution(problem, next, unassigned);
        expect(check.violations, `seed ${seed}, move ${move}`).toEqual([]);
        expect(check.distance).toBeLessThan(distance);
        distance = check.distance;
        current = next;
      }
    }
  });
});

// One contractor's stretches of a day (a break between them) are vehicles of one group: their loads
// together stay within the capacity they share, whatever the moves (relocate, exchange, 2-opt*, ruin and
// recreate) do.
describe("vehicles sharing one capacity (a group)", () => {
  it("never carries more in a group than its capacity, on random instances (independent check)", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const base = randomInstance(seed, 30, 1, 1);
      // Three contractors, each a morning and an afternoon stretch (a break from 200 to 260) sharing a
      // capacity of 5, and one without a break.
      const vehicles: Vehicle[] = [];
      for (let c = 0; c < 3; c++) {
        vehicles.push({ id: `c${c}`, start: 0, end: 0, shiftStart: 0, shiftEnd: 200, capacity: 5, group: c });
        vehicles.push({
          id: `c${c}`,
          start: 0,
          end: 0,
          shiftStart: 260,
          shiftEnd: 1000,
          capacity: 5,
          group: c,
        });
      }
      vehicles.push({ id: "c3", start: 0, end: 0, shiftStart: 0, shiftEnd: 1000, capacity: 5 });
      const problem: Problem = { ...base, vehicles };
      const solution = solve(problem, { seed, iterations: 300 });
      const check = checkSolution(problem, solution.routes, solution.unassigned);
      expect(check.violations, `seed ${seed}`).toEqual([]);
      // The demands are 1-4, 30 jobs: the fleet's 20 units bind, so the groups are full in most seeds.
      const load = (v: number) =>
        (solution.routes.find((r) => r.vehicle === v)?.jobs ?? []).reduce(
          (n, j) => n + (problem.jobs[j]?.demand ?? 0),
          0,
        );
      for (let c = 0; c < 3; c++) expect(load(2 * c) + load(2 * c + 1)).toBeLessThanOrEqual(5);
    }
  });

  it("is caught by the independent check when a group carries more than its capacity", () => {
    const problem: Problem = {
      travel: euclideanMatrix([
        [0, 0],
        [1, 0],
        [0, 1],
      ]),
      jobs: [
        { id: "j0", location: 1, ready: 0, due: 100, service: 1, demand: 2 },
        { id: "j1", location: 2, ready: 0, due: 300, service: 1, demand: 2 },
      ],
      vehicles: [
        { id: "c", start: 0, end: 0, shiftStart: 0, shiftEnd: 100, capacity: 3, group: 7 },
        { id: "c", start: 0, end: 0, shiftStart: 200, shiftEnd: 300, capacity: 3, group: 7 },
      ],
    };
    const check = checkSolution(problem, [
      { vehicle: 0, jobs: [0] },
      { vehicle: 1, jobs: [1] },
    ]);
    expect(check.violations).toEqual([{ kind: "over-group-capacity", group: 7, load: 4, capacity: 3 }]);
    expect(solve(problem, { seed: 1, iterations: 50 }).unassigned).toHaveLength(1);
  });
});
