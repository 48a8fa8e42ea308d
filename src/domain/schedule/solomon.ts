// Reads a Solomon VRPTW instance (the published text format, CRLF or LF) into the scheduler's model:
// the fleet's vehicles share one shift at the depot, customers become jobs, travel is Euclidean.

import { euclideanMatrix, type Job, type Problem, type Vehicle } from "./model.js";

export interface SolomonInstance {
  readonly name: string;
  readonly problem: Problem;
  /** Customer number (as in the file) of each job index. */
  readonly customerOf: readonly number[];
}

export function parseSolomon(text: string): SolomonInstance {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const name = lines[0] ?? "";
  const numeric = lines.filter((l) => /^\d+(\s+\d+)*$/.test(l)).map((l) => l.split(/\s+/).map(Number));
  const fleet = numeric[0];
  if (fleet?.length !== 2) throw new Error("no VEHICLE NUMBER/CAPACITY line");
  const [count = 0, capacity = 0] = fleet;
  const rows = numeric.slice(1).filter((r) => r.length === 7);
  const depot = rows[0];
  if (depot?.[0] !== 0) throw new Error("the first customer row must be the depot (0)");
  const points = rows.map((r) => [r[1] ?? 0, r[2] ?? 0] as const);
  const vehicles: Vehicle[] = Array.from({ length: count }, (_, v) => ({
    id: `veh_${v + 1}`,
    start: 0,
    end: 0,
    shiftStart: depot[4] ?? 0,
    shiftEnd: depot[5] ?? 0,
    capacity,
  }));
  const jobs: Job[] = rows.slice(1).map((r, i) => ({
    id: `job_${r[0] ?? i + 1}`,
    location: i + 1,
    demand: r[3] ?? 0,
    ready: r[4] ?? 0,
    due: r[5] ?? 0,
    service: r[6] ?? 0,
  }));
  return {
    name,
    problem: { vehicles, jobs, travel: euclideanMatrix(points) },
    customerOf: rows.slice(1).map((r) => r[0] ?? 0),
  };
}
