// Scheduler benchmark on Solomon's 56 VRPTW instances: solves each with an iteration budget (the same
// solution for a seed and budget on any machine; a time cap only as a safety net, reported when it
// stops a run), checks every route with the independent checker, writes each solution as JSON and
// prints the gap to the best known distance (bks_distance_only.csv), the vehicles against bks.csv and the
// solve time.
//
//   npm run bench:schedule -- [--out <dir>] [--iterations 20000] [--seconds 10] [--only C101,R201]
//     [--seed 1] [--temperature 5,0.05]
//   (data from SOLOMON_DIR, default ../shared/data/solomon relative to the working directory)

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { checkSolution } from "../src/domain/schedule/check.js";
import { parseSolomon } from "../src/domain/schedule/solomon.js";
import { solve } from "../src/domain/schedule/solver.js";

const { values } = parseArgs({
  options: {
    out: { type: "string" },
    iterations: { type: "string", default: "20000" },
    seconds: { type: "string", default: "10" },
    only: { type: "string" },
    seed: { type: "string", default: "1" },
    temperature: { type: "string" },
  },
});
const iterations = Number(values.iterations);
const seconds = Number(values.seconds);
const seed = Number(values.seed);
const [tStart, tEnd] = (values.temperature ?? "").split(",").map(Number);
const temperature = tStart && tEnd ? { start: tStart, end: tEnd } : undefined;
const dir = resolve(process.env.SOLOMON_DIR ?? "../shared/data/solomon");
const only = values.only ? new Set(values.only.split(",").map((s) => s.trim().toUpperCase())) : null;
if (values.out) mkdirSync(values.out, { recursive: true });

function readBks(file: string): Map<string, { vehicles: number; distance: number }> {
  const rows = readFileSync(join(dir, file), "utf8").trim().split(/\r?\n/).slice(1);
  return new Map(
    rows.map((row) => {
      const [name = "", vehicles = "0", distance = "0"] = row.split(",");
      return [name, { vehicles: Number(vehicles), distance: Number(distance) }];
    }),
  );
}
const bks = readBks("bks.csv");
const bksDistance = readBks("bks_distance_only.csv");

const names = readdirSync(join(dir, "instances"))
  .filter((f) => f.endsWith(".txt"))
  .map((f) => f.replace(/\.txt$/, ""))
  .filter((n) => !only || only.has(n.toUpperCase()))
  .sort();

interface Row {
  name: string;
  vehicles: number;
  bksVehicles: number;
  distance: number;
  gap: number;
  seconds: number;
  feasible: boolean;
  capped: boolean;
}
const rows: Row[] = [];
const pad = (s: string | number, w: number) => String(s).padStart(w);
process.stdout.write(
  `${"instance".padEnd(9)}${pad("veh", 5)}${pad("bks", 5)}${pad("distance", 11)}${pad("bks dist", 11)}${pad("gap %", 8)}${pad("s", 7)}  feasible\n`,
);
for (const name of names) {
  const instance = parseSolomon(readFileSync(join(dir, "instances", `${name}.txt`), "utf8"));
  const started = performance.now();
  const solution = solve(instance.problem, {
    seed,
    iterations,
    now: () => performance.now(),
    deadline: started + seconds * 1000,
    ...(temperature ? { temperature } : {}),
  });
  const elapsed = (performance.now() - started) / 1000;
  const check = checkSolution(instance.problem, solution.routes, solution.unassigned);
  const feasible = check.feasible && solution.unassigned.length === 0;
  const best = bksDistance.get(name)?.distance ?? Number.NaN;
  const row: Row = {
    name,
    vehicles: solution.routes.length,
    bksVehicles: bks.get(name)?.vehicles ?? Number.NaN,
    distance: check.distance,
    gap: ((check.distance - best) / best) * 100,
    seconds: elapsed,
    feasible,
    capped: solution.search?.stopped === "time_limit",
  };
  rows.push(row);
  if (values.out) {
    const routes = solution.routes.map((r) => r.jobs.map((j) => instance.customerOf[j]));
    writeFileSync(
      join(values.out, `${name}.json`),
      `${JSON.stringify({ instance: name, routes, distance: check.distance, seconds: elapsed })}\n`,
    );
  }
  process.stdout.write(
    `${name.padEnd(9)}${pad(row.vehicles, 5)}${pad(row.bksVehicles, 5)}${pad(row.distance.toFixed(2), 11)}${pad(best.toFixed(2), 11)}${pad(row.gap.toFixed(2), 8)}${pad(elapsed.toFixed(2), 7)}  ${feasible ? "yes" : `NO ${JSON.stringify(check.violations.slice(0, 3))}`}${row.capped ? `  (time cap after ${solution.search?.iterations} iterations)` : ""}\n`,
  );
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const summary = (label: string, group: Row[]) =>
  `${label.padEnd(9)}${pad(group.length, 4)} instances  gap ${mean(group.map((r) => r.gap)).toFixed(2)} %  vehicles ${group.reduce((s, r) => s + r.vehicles, 0)} (bks ${group.reduce((s, r) => s + r.bksVehicles, 0)})  time ${mean(group.map((r) => r.seconds)).toFixed(2)} s  feasible ${group.filter((r) => r.feasible).length}/${group.length}\n`;
process.stdout.write("\n");
for (const family of ["C1", "C2", "R1", "R2", "RC1", "RC2"]) {
  const group = rows.filter((r) => new RegExp(`^${family}\\d{2}$`).test(r.name));
  if (group.length > 0) process.stdout.write(summary(family, group));
}
process.stdout.write(summary("all", rows));
const capped = rows.filter((r) => r.capped).map((r) => r.name);
process.stdout.write(
  `seed ${seed}, ${iterations} iterations, time cap ${seconds} s: ${capped.length === 0 ? "no run capped" : `capped: ${capped.join(", ")}`}\n`,
);
if (rows.some((r) => !r.feasible)) {
  process.stdout.write("some solutions are INFEASIBLE\n");
  process.exitCode = 1;
}
