// Where a server's CPU went while a load was measured: reads the CPU profiles and the measured runs' times
// that `BENCH_AB_PROFILE=DIR node dist/bench/ab.js ...` leaves in DIR (a folder of profiles per build, and
// windows.txt), keeps the main thread's samples that fall inside the load's runs (so the warm-up and, for
// orders, the release traffic between bursts are left out), and prints the self time by source file and
// by function, as shares of the busy (not idle) time.
//
//   node dist/bench/profile-windows.js DIR [functions to list, default 40]

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Profile {
  nodes: Array<{ id: number; callFrame: CallFrame }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const short = (url: string) =>
  url.replace(/^file:\/\/.*?\/(?:dist\/)?(?=src\/|bench\/)/, "").replace(/^.*node_modules\//, "");

function top(totals: Map<string, number>, busy: number, n: number): string[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / busy).toFixed(2).padStart(6)} %  ${k}`);
}

function summarize(file: string, windows: Array<[number, number]>, n: number): string[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let at = profile.startTime;
  let busy = 0;
  let inside = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    // A sample stands for the time until the next one.
    const spent = profile.timeDeltas[i + 1] ?? 0;
    if (!windows.some(([start, end]) => at >= start && at <= end)) continue;
    inside += spent;
    const frame = frames.get(profile.samples[i] as number);
    if (!frame || frame.functionName === "(idle)") continue;
    busy += spent;
    const where = short(frame.url) || frame.functionName;
    byFile.set(where, (byFile.get(where) ?? 0) + spent);
    const fn = `${frame.functionName || "(anonymous)"} ${where}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + spent);
  }
  return [
    `${windows.length} measured runs, ${(inside / 1e6).toFixed(2)} s, of which the main thread was busy ${(busy / 1e6).toFixed(2)} s`,
    "by file:",
    ...top(byFile, busy, 25),
    "by function:",
    ...top(byFunction, busy, n),
  ];
}

function main(): void {
  const dir = process.argv[2];
  const n = Number(process.argv[3] ?? 40);
  if (!dir) {
    process.stderr.write("usage: node dist/bench/profile-windows.js <BENCH_AB_PROFILE directory> [n]\n");
    process.exitCode = 2;
    return;
  }
  const lines = readFileSync(join(dir, "windows.txt"), "utf8").trim().split("\n");
  const windows = new Map<string, { load: string; spans: Array<[number, number]> }>();
  for (const line of lines) {
    const [pid, load, start, end] = line.split(" ");
    if (!pid || !load) continue;
    const w = windows.get(pid) ?? { load, spans: [] };
    w.spans.push([Number(start), Number(end)]);
    windows.set(pid, w);
  }
  for (const build of readdirSync(dir).filter((d) => statSync(join(dir, d)).isDirectory())) {
    // Node names each thread's profile CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile; thread 0 is main.
    for (const name of readdirSync(join(dir, build))) {
      const [, , , pid, thread] = name.split(".");
      if (thread !== "0" || !pid) continue;
      const w = windows.get(pid);
      if (!w) continue;
      process.stdout.write(`\n== ${build} (pid ${pid}), ${w.load}\n`);
      process.stdout.write(`${summarize(join(dir, build, name), w.spans, n).join("\n")}\n`);
    }
  }
}

main();
