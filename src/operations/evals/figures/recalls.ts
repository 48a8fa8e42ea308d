// Recalls: of the live jobs completed in the recall window, the share no other order named as its recall
// (first_time_fix_rate) and the share one did (recall_rate), overall and over the contractors that
// completed at least RECALL_MINIMUM_JOBS of them. The recall window is the report's window moved back
// RECALL_WINDOW_DAYS: a recall may be ordered up to 30 days after the job's completion, so a job completed
// since then may still be recalled, and counting it would flatter the rates; every job counted has had
// its whole 30 days.

import { RECALL_WINDOW_DAYS, RECALL_WINDOW_MS } from "../../../domain/orders/recall.js";
import type { RecallCount } from "../../../storage/evals-store.js";
import { ratio, round } from "./measures.js";
import type { Entry, Provenance } from "./provenance.js";

/** A contractor's first-time-fix rate is in the spread once it completed this many jobs in the window. */
export const RECALL_MINIMUM_JOBS = 10;

/** The completions the recall figures count: completed_at in [start, end). */
export interface RecallWindow {
  start: Date;
  end: Date;
}

/** The report's window [start, end] moved back RECALL_WINDOW_DAYS, its end excluded: a job completed at
 * the new end could still be recalled at the report's very time. */
export function recallWindow(start: Date, end: Date): RecallWindow {
  return {
    start: new Date(start.getTime() - RECALL_WINDOW_MS),
    end: new Date(end.getTime() - RECALL_WINDOW_MS),
  };
}

/** The nearest-rank quantile q of sorted values (the value of rank ceil(q * n)); null without values. */
function nearestRank(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(1, Math.ceil(q * sorted.length - 1e-9)) - 1] ?? null;
}

/** Each measured contractor's first-time-fix rate, lowest first. */
function contractorRates(counts: readonly RecallCount[]): number[] {
  return counts
    .filter((c) => c.contractorId !== null && c.completed >= RECALL_MINIMUM_JOBS)
    .map((c) => (c.completed - c.recalled) / c.completed)
    .sort((a, b) => a - b);
}

function totals(counts: readonly RecallCount[]) {
  return counts.reduce(
    (t, c) => ({ completed: t.completed + c.completed, recalled: t.recalled + c.recalled }),
    { completed: 0, recalled: 0 },
  );
}

export function recallFigures(counts: readonly RecallCount[], window: RecallWindow) {
  const { completed, recalled } = totals(counts);
  const rates = contractorRates(counts);
  const spread = (value: number | null) => ({
    value: round(value, 4),
    sample_size: rates.length,
    unit: "ratio",
  });
  return {
    completed_between: { start: window.start.toISOString(), end: window.end.toISOString() },
    jobs_completed: completed,
    jobs_recalled: recalled,
    first_time_fix_rate: ratio(completed - recalled, completed),
    recall_rate: ratio(recalled, completed),
    by_contractor: {
      minimum_jobs: RECALL_MINIMUM_JOBS,
      contractors: counts.filter((c) => c.contractorId !== null).length,
      contractors_measured: rates.length,
      first_time_fix_rate_lowest: spread(rates[0] ?? null),
      first_time_fix_rate_median: spread(nearestRank(rates, 0.5)),
      first_time_fix_rate_highest: spread(rates[rates.length - 1] ?? null),
    },
  };
}

const RECALL_SOURCE =
  "evals_recall_daily (live jobs completed per UTC day of completion and contractor, and how many of them " +
  "an order names as recall_of) for the whole days of recalls.completed_between, the orders table for its " +
  "partial edge days";

export function recallProvenance(counts: readonly RecallCount[], p: Entry): Provenance {
  const { completed } = totals(counts);
  const measured = contractorRates(counts).length;
  const recalledSql = "exists(order r: r.recall_of = o.id)";
  const window = `completed_at in [window.start - ${RECALL_WINDOW_DAYS} d, window.end - ${RECALL_WINDOW_DAYS} d)`;
  return {
    "recalls.first_time_fix_rate": p(
      RECALL_SOURCE,
      `count(not ${recalledSql}) / count(*) over orders o with ${window}`,
      completed,
      `Counts only jobs whose ${RECALL_WINDOW_DAYS} days to be recalled are over: the report's window moved back ${RECALL_WINDOW_DAYS} days. A recall is what the caller names (recall_of): a callback ordered without naming the job it follows is not seen, so the rate is an upper bound.`,
    ),
    "recalls.recall_rate": p(
      RECALL_SOURCE,
      `count(${recalledSql}) / count(*) over orders o with ${window}`,
      completed,
      "1 - first_time_fix_rate: the same sample. A recall counts whatever became of it (cancelled included): the caller called back.",
    ),
    "recalls.jobs_completed": p(RECALL_SOURCE, `count(*) over orders o with ${window}`, completed),
    "recalls.jobs_recalled": p(
      RECALL_SOURCE,
      `count(${recalledSql}) over orders o with ${window}`,
      completed,
    ),
    "recalls.by_contractor": p(
      `${RECALL_SOURCE}; per contractor_id (the contractor holding the job when it was completed)`,
      `per contractor with at least ${RECALL_MINIMUM_JOBS} such jobs: count(not ${recalledSql}) / count(*); the lowest, nearest-rank median and highest of those rates`,
      measured,
      "Contractors are not named (the evals are public): the dispatch team reads each contractor's own figures in the contractor directory's record.",
    ),
  };
}
