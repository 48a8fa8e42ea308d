// An independent feasibility check of a VRPTW solution: it simulates each route from scratch and shares
// nothing with the solver's slack bookkeeping, so a solver bug cannot hide behind the same bug here.

import type { Problem, Route } from "./model.js";

type Violation =
  | { kind: "unknown-vehicle"; vehicle: number }
  | { kind: "vehicle-reused"; vehicle: number }
  | { kind: "unknown-job"; job: number }
  | { kind: "duplicate-job"; job: number }
  | { kind: "missing-job"; job: number }
  | { kind: "late-service"; vehicle: number; job: number; start: number; due: number }
  | { kind: "over-capacity"; vehicle: number; load: number; capacity: number }
  | { kind: "over-group-capacity"; group: number; load: number; capacity: number }
  | { kind: "late-return"; vehicle: number; arrival: number; shiftEnd: number }
  | { kind: "wrong-vehicle"; vehicle: number; job: number; pinnedTo: number }
  | { kind: "vehicle-not-allowed"; vehicle: number; job: number };

export interface CheckResult {
  readonly feasible: boolean;
  readonly violations: readonly Violation[];
  /** Total travel over all routes, recomputed from the matrix. */
  readonly distance: number;
}

/**
 * Checks that every job is visited exactly once (unless listed in `unassigned`), that service starts by
 * each job's due time (waiting until ready is allowed), that loads fit, that each vehicle is back by
 * its shift end, that pinned jobs ride their vehicle and that restricted jobs ride one they allow, and
 * that the vehicles of a group (model.ts) carry no more together than their capacity.
 */
export function checkSolution(
  problem: Problem,
  routes: readonly Route[],
  unassigned: readonly number[] = [],
): CheckResult {
  const violations: Violation[] = [];
  const { size, times } = problem.travel;
  const seen = new Array<number>(problem.jobs.length).fill(0);
  const usedVehicles = new Set<number>();
  const groups = new Map<number, { load: number; capacity: number }>();
  let distance = 0;
  for (const route of routes) {
    const vehicle = problem.vehicles[route.vehicle];
    if (!vehicle) {
      violations.push({ kind: "unknown-vehicle", vehicle: route.vehicle });
      continue;
    }
    if (usedVehicles.has(route.vehicle)) violations.push({ kind: "vehicle-reused", vehicle: route.vehicle });
    usedVehicles.add(route.vehicle);
    let time = vehicle.shiftStart;
    let here = vehicle.start;
    let load = 0;
    for (const index of route.jobs) {
      const job = problem.jobs[index];
      if (!job) {
        violations.push({ kind: "unknown-job", job: index });
        continue;
      }
      seen[index] = (seen[index] ?? 0) + 1;
      const leg = times[here * size + job.location] ?? Number.NaN;
      distance += leg;
      const start = Math.max(time + leg, job.ready);
      if (start > job.due) {
        violations.push({ kind: "late-service", vehicle: route.vehicle, job: index, start, due: job.due });
      }
      if (job.pinnedTo !== undefined && job.pinnedTo !== route.vehicle) {
        violations.push({
          kind: "wrong-vehicle",
          vehicle: route.vehicle,
          job: index,
          pinnedTo: job.pinnedTo,
        });
      }
      if (job.vehicles !== undefined && !job.vehicles.includes(route.vehicle)) {
        violations.push({ kind: "vehicle-not-allowed", vehicle: route.vehicle, job: index });
      }
      load += job.demand;
      time = start + job.service;
      here = job.location;
    }
    if (route.jobs.length === 0) continue;
    const back = times[here * size + vehicle.end] ?? Number.NaN;
    distance += back;
    if (time + back > vehicle.shiftEnd) {
      violations.push({
        kind: "late-return",
        vehicle: route.vehicle,
        arrival: time + back,
        shiftEnd: vehicle.shiftEnd,
      });
    }
    if (vehicle.capacity !== undefined && load > vehicle.capacity) {
      violations.push({ kind: "over-capacity", vehicle: route.vehicle, load, capacity: vehicle.capacity });
    }
    if (vehicle.group !== undefined && vehicle.capacity !== undefined) {
      const group = groups.get(vehicle.group) ?? { load: 0, capacity: vehicle.capacity };
      group.load += load;
      groups.set(vehicle.group, group);
    }
  }
  for (const [group, { load, capacity }] of groups) {
    if (load > capacity) violations.push({ kind: "over-group-capacity", group, load, capacity });
  }
  for (const index of unassigned) {
    if (index < 0 || index >= problem.jobs.length) violations.push({ kind: "unknown-job", job: index });
    else seen[index] = (seen[index] ?? 0) + 1;
  }
  seen.forEach((count, job) => {
    if (count === 0) violations.push({ kind: "missing-job", job });
    else if (count > 1) violations.push({ kind: "duplicate-job", job });
  });
  return { feasible: violations.length === 0, violations, distance };
}
