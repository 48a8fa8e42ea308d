// Preloaded into a benchmark's server process (node --import): the event loop's delay, measured with
// perf_hooks.monitorEventLoopDelay at 1 ms resolution. On SIGWINCH (a signal the service's shutdown does
// not listen to, unlike SIGUSR2) the process writes the figures since the last SIGWINCH to LOOP_DELAY_FILE
// (as JSON, with a sequence number) and starts afresh.

import { writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
let seq = 0;
process.on("SIGWINCH", () => {
  const file = process.env.LOOP_DELAY_FILE;
  if (file) {
    const ms = (ns: number) => ns / 1e6;
    const figures = { seq: ++seq, maxMs: ms(histogram.max), p99Ms: ms(histogram.percentile(99)) };
    writeFileSync(file, JSON.stringify(figures));
  }
  histogram.reset();
});
