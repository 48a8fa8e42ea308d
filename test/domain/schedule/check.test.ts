import { describe, expect, it } from "vitest";
import { checkSolution } from "../../../src/domain/schedule/check.js";
import { euclideanMatrix, type Problem } from "../../../src/domain/schedule/model.js";

// depot at (0,0); job 0 at (3,4) (5 away), job 1 at (6,8) (5 from job 0, 10 from the depot)
const problem: Problem = {
  travel: euclideanMatrix([
    [0, 0],
    [3, 4],
    [6, 8],
  ]),
  jobs: [
    { id: "job_0", location: 1, ready: 10, due: 20, service: 5, demand: 3 },
    { id: "job_1", location: 2, ready: 0, due: 25, service: 5, demand: 4, pinnedTo: 0 },
  ],
  vehicles: [
    { id: "veh_0", start: 0, end: 0, shiftStart: 0, shiftEnd: 50, capacity: 10 },
    { id: "veh_1", start: 0, end: 0, shiftStart: 0, shiftEnd: 50, capacity: 5 },
  ],
};

describe("feasibility checker", () => {
  it("accepts a feasible solution and computes its distance, waiting until ready", () => {
    // leave 0, arrive job 0 at 5, wait to 10, leave 15, job 1 at 20 (<= 25), leave 25, depot at 35 (<= 50)
    const result = checkSolution(problem, [{ vehicle: 0, jobs: [0, 1] }]);
    expect(result.violations).toEqual([]);
    expect(result.feasible).toBe(true);
    expect(result.distance).toBeCloseTo(20, 12);
  });

  it("reports a service that starts after the due time", () => {
    // job 1 first: start 10, leave 15, job 0 at 20 (<= 20, fine); then a late start elsewhere
    const late: Problem = {
      ...problem,
      jobs: [{ ...(problem.jobs[0] as Problem["jobs"][0]), due: 19 }, problem.jobs[1] as Problem["jobs"][0]],
    };
    const result = checkSolution(late, [{ vehicle: 0, jobs: [1, 0] }]);
    expect(result.violations).toEqual([{ kind: "late-service", vehicle: 0, job: 0, start: 20, due: 19 }]);
  });

  it("reports an overloaded vehicle", () => {
    const unpinned: Problem = { ...problem, jobs: problem.jobs.map(({ pinnedTo: _, ...j }) => j) };
    const result = checkSolution(unpinned, [{ vehicle: 1, jobs: [0, 1] }]);
    expect(result.violations).toEqual([{ kind: "over-capacity", vehicle: 1, load: 7, capacity: 5 }]);
  });

  it("reports a return after the shift end", () => {
    const short: Problem = {
      ...problem,
      vehicles: [{ ...(problem.vehicles[0] as Problem["vehicles"][0]), shiftEnd: 30 }],
    };
    const result = checkSolution(short, [{ vehicle: 0, jobs: [0, 1] }]);
    expect(result.violations).toEqual([{ kind: "late-return", vehicle: 0, arrival: 35, shiftEnd: 30 }]);
  });

  it("reports missing, duplicated and unknown jobs", () => {
    expect(checkSolution(problem, [{ vehicle: 0, jobs: [1] }]).violations).toEqual([
      { kind: "missing-job", job: 0 },
    ]);
    expect(checkSolution(problem, [{ vehicle: 0, jobs: [0, 1] }], [0]).violations).toEqual([
      { kind: "duplicate-job", job: 0 },
    ]);
    expect(checkSolution(problem, [{ vehicle: 0, jobs: [0, 1, 7] }]).violations).toEqual([
      { kind: "unknown-job", job: 7 },
    ]);
  });

  it("reports a pinned job on another vehicle, an unknown vehicle and a vehicle used twice", () => {
    expect(
      checkSolution(problem, [
        { vehicle: 0, jobs: [0] },
        { vehicle: 1, jobs: [1] },
      ]).violations,
    ).toEqual([{ kind: "wrong-vehicle", vehicle: 1, job: 1, pinnedTo: 0 }]);
    expect(checkSolution(problem, [{ vehicle: 5, jobs: [0, 1] }]).violations).toContainEqual({
      kind: "unknown-vehicle",
      vehicle: 5,
    });
    expect(
      checkSolution(problem, [
        { vehicle: 0, jobs: [0] },
        { vehicle: 0, jobs: [1] },
      ]).violations,
    ).toEqual([{ kind: "vehicle-reused", vehicle: 0 }]);
  });
});
