// The vehicle routing problem with time windows (VRPTW) that the scheduler solves: vehicles with a
// shift, jobs with a window and a service time, and a travel-time matrix filled by the caller (Euclidean
// for the Solomon benchmark, a routing engine or great-circle distances in the service).

/** Travel times between locations, row-major: `times[from * size + to]`. Also the objective's cost. */
export interface TravelMatrix {
  readonly size: number;
  readonly times: Float64Array;
  /**
   * Present on a matrix filled on demand (matrixOnDemand), whose `times` is then empty: `row(from)` is
   * row `from`, computed the first time it is asked for. Its diagonal is 0. Absent: `times` is complete.
   */
  readonly onDemand?: {
    row(from: number): Float64Array;
    /** At least every entry: what the solver would otherwise read the whole matrix for (its penalty). */
    readonly bound: number;
  };
}

export interface Vehicle {
  readonly id: string;
  /** Location index where the shift starts (a depot or the contractor's own base). */
  readonly start: number;
  /** Location index where the shift ends. */
  readonly end: number;
  /** Earliest departure from `start`. */
  readonly shiftStart: number;
  /** Latest arrival at `end`. */
  readonly shiftEnd: number;
  /** Maximum total demand carried; unlimited when absent. */
  readonly capacity?: number;
  /**
   * Vehicles of one group share one capacity (each states it alike): their loads together stay within
   * it. One contractor's working stretches of a day, each a vehicle of its own (a break between two
   * stretches is time the contractor neither drives nor serves). Alone when absent.
   */
  readonly group?: number;
}

export interface Job {
  readonly id: string;
  readonly location: number;
  /** Service may not start before `ready` (the vehicle waits) nor after `due`. */
  readonly ready: number;
  readonly due: number;
  readonly service: number;
  readonly demand: number;
  /** Index of the vehicle this job must stay on (the dispatcher's incremental mode). */
  readonly pinnedTo?: number;
  /** The vehicles that may serve the job (a contractor with its trade, say); any vehicle when absent. */
  readonly vehicles?: readonly number[];
}

export interface Problem {
  readonly vehicles: readonly Vehicle[];
  readonly jobs: readonly Job[];
  readonly travel: TravelMatrix;
}

/** One vehicle's route: indexes into `problem.jobs`, in visiting order. */
export interface Route {
  readonly vehicle: number;
  readonly jobs: readonly number[];
}

export interface Solution {
  /** One route per vehicle that visits at least one job. */
  readonly routes: readonly Route[];
  /** Jobs no vehicle could take within the constraints, and those the construction did not reach. */
  readonly unassigned: readonly number[];
  /** Of `unassigned`, the jobs the first construction had not reached when the deadline passed (never
   * tried: `stopped` is then "time_limit_construction"). */
  readonly unplanned?: readonly number[];
  /** Total travel cost of the routes. */
  readonly distance: number;
  /** How the search ended: the iterations it ran, and whether it spent its budget or hit its time cap. */
  readonly search?: { readonly iterations: number; readonly stopped: SearchStop };
}

/** `budget`: every iteration asked for ran (the seed and budget decide the solution); `time_limit`: the
 * safety cap stopped it first; `time_limit_construction`: the cap passed before the first plan was
 * complete (the jobs it had not reached are `unplanned`). */
export type SearchStop = "budget" | "time_limit" | "time_limit_construction";

/** A matrix from a cost function over `size` locations. */
function matrixOf(size: number, cost: (from: number, to: number) => number): TravelMatrix {
  const times = new Float64Array(size * size);
  for (let a = 0; a < size; a++) for (let b = 0; b < size; b++) times[a * size + b] = cost(a, b);
  return { size, times };
}

/**
 * A matrix whose rows are computed the first time they are read: a dispatch day has thousands of places
 * (9 million pairs for 3,000 jobs, most of a second to fill), and a search cut short by its time limit
 * reads few of them. `bound` must be at least every entry.
 */
export function matrixOnDemand(
  size: number,
  cost: (from: number, to: number) => number,
  bound: number,
): TravelMatrix {
  // A row at a time, each its own array: one array of the whole matrix (80 MB for 3,000 jobs) would be
  // allocated, zeroed and collected for every plan however little of it is read.
  const rows: Array<Float64Array | undefined> = new Array(size);
  const row = (from: number): Float64Array => {
    const known = rows[from];
    if (known) return known;
    const values = new Float64Array(size);
    for (let to = 0; to < size; to++) values[to] = to === from ? 0 : cost(from, to);
    rows[from] = values;
    return values;
  };
  return { size, times: new Float64Array(0), onDemand: { row, bound } };
}

/** The travel from `a` to `b` (on a matrix filled on demand, its row is computed first). */
export function travelAt(matrix: TravelMatrix, a: number, b: number): number {
  if (matrix.onDemand) return a === b ? 0 : (matrix.onDemand.row(a)[b] as number);
  return matrix.times[a * matrix.size + b] as number;
}

/** A matrix of Euclidean distances between points (the Solomon convention: unrounded, speed 1). */
export function euclideanMatrix(points: ReadonlyArray<readonly [number, number]>): TravelMatrix {
  return matrixOf(points.length, (a, b) => {
    const p = points[a] as readonly [number, number];
    const q = points[b] as readonly [number, number];
    return Math.hypot(p[0] - q[0], p[1] - q[1]);
  });
}
