// The evals' service-level figures from stored timestamps: the on-time arrival rate (Field Nation's rule)
// and the attainment of the service-level clocks per urgency. Pure: the orders' rows and `now` in.
//
// On time (over orders that reached on_site, on_site_at stored, and have a promise):
//   windowed work             on site from 30 minutes before to 15 minutes after the window's start;
//   as-soon-as-possible work  on site by arrive_by.
// Attainment (per urgency, over orders whose every clock has an outcome): an order attains its service
// level when each of its clocks (sla-clocks.ts: respond by respond_by, arrive by arrive_by or the
// window's end) was met, its step done by the deadline. A clock is missed when its step was done after
// the deadline, or not done and either its breach was recorded or the deadline has passed while the order
// is still open. A clock not done whose order closed before its deadline (a cancellation, say) has no
// outcome, nor has one still running: such orders are not in the sample.

import type { Urgency } from "../pricing.js";
import { CLOSED_STATUSES, SLA_COLUMNS, type SlaOrder, slaClocks } from "./sla-clocks.js";

/** Field Nation's on-time check-in: from this long before the window's start ... */
export const ON_TIME_EARLY_MS = 30 * 60_000;
/** ... to this long after it. */
export const ON_TIME_LATE_MS = 15 * 60_000;

export type SlaFigureRow = SlaOrder & { urgency: string };

/** Whether the order arrived on time; null when it is not in the sample. */
export function arrivedOnTime(row: SlaFigureRow): boolean | null {
  if (!row.on_site_at) return null;
  const onSite = Date.parse(row.on_site_at);
  if (row.window_start) {
    const start = Date.parse(row.window_start);
    return onSite >= start - ON_TIME_EARLY_MS && onSite <= start + ON_TIME_LATE_MS;
  }
  if (row.arrive_by) return onSite <= Date.parse(row.arrive_by);
  return null;
}

/** Whether the order attained its service level; null while (or when) it has no outcome. */
export function attainedServiceLevel(row: SlaFigureRow, now: Date): boolean | null {
  // A closed order still has its clocks for this purpose: what happened before it closed counts.
  const clocks = slaClocks({ ...row, status: "accepted" });
  if (clocks.length === 0) return null;
  const closed = CLOSED_STATUSES.includes(row.status);
  let met = true;
  for (const clock of clocks) {
    if (clock.doneAt !== null) {
      if (clock.doneAt > clock.deadline) met = false;
      continue;
    }
    const breached = Boolean(row[SLA_COLUMNS[clock.clock].breached]);
    if (breached || (!closed && now > clock.deadline)) {
      met = false;
      continue;
    }
    return null;
  }
  return met;
}

export interface SlaFigures {
  onTime: { arrived: number; onTime: number };
  attainment: Record<Urgency, { decided: number; met: number }>;
}

export function slaFigures(rows: readonly SlaFigureRow[], now: Date): SlaFigures {
  const figures: SlaFigures = {
    onTime: { arrived: 0, onTime: 0 },
    attainment: {
      emergency: { decided: 0, met: 0 },
      urgent: { decided: 0, met: 0 },
      routine: { decided: 0, met: 0 },
      scheduled: { decided: 0, met: 0 },
    },
  };
  for (const row of rows) {
    const onTime = arrivedOnTime(row);
    if (onTime !== null) {
      figures.onTime.arrived++;
      if (onTime) figures.onTime.onTime++;
    }
    const attained = attainedServiceLevel(row, now);
    const bucket = figures.attainment[row.urgency as Urgency];
    if (attained !== null && bucket) {
      bucket.decided++;
      if (attained) bucket.met++;
    }
  }
  return figures;
}

/** A time before every deadline: the outcome the stored columns alone decide. */
const NO_DEADLINE_PASSED = new Date(-8.64e15);

/**
 * The figures from rolled-up sums (each order's outcome as its stored columns decide it, no deadline
 * passed unless its breach is recorded) corrected to `now` with the orders whose clocks still run: the
 * only ones a passing deadline changes with no write. Equal to `slaFigures` over every row.
 */
export function withRunningClocks(
  rolled: SlaFigures,
  running: readonly SlaFigureRow[],
  now: Date,
): SlaFigures {
  const out: SlaFigures = {
    onTime: { ...rolled.onTime },
    attainment: Object.fromEntries(
      Object.entries(rolled.attainment).map(([u, a]) => [u, { ...a }]),
    ) as SlaFigures["attainment"],
  };
  for (const row of running) {
    const bucket = out.attainment[row.urgency as Urgency];
    if (!bucket) continue;
    const stored = attainedServiceLevel(row, NO_DEADLINE_PASSED);
    const actual = attainedServiceLevel(row, now);
    if (stored === actual) continue;
    if (stored !== null) {
      bucket.decided--;
      if (stored) bucket.met--;
    }
    if (actual !== null) {
      bucket.decided++;
      if (actual) bucket.met++;
    }
  }
  return out;
}
