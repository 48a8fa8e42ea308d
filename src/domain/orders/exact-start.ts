// A job placed at an exact start (issue 31, the schedule board): a dispatcher drops an order on a
// contractor's lane at a time. The start is judged twice: against the order's own time (startIssues: 422
// on `start`: in the past, outside the arrival window, after arrive_by) and against the contractor's
// time (placementConflict: outside its working hours, on time off, or overlapping a job it holds,
// counting the drive between the two, as commitments.ts fits jobs). The writer places such a job there
// or nowhere; its reason for "nowhere" is the refusal's (startRefusal: 409 window_unavailable). Pure.

import type { FieldError } from "../../errors.js";
import type { Commitment } from "../commitments.js";
import { type Calendar, formatHours, workingStretches, type ZoneOffsets } from "../time/calendar.js";
import { localDateTime } from "../time/local-time.js";
import type { TravelTime } from "../travel-time.js";
import type { Order, Refusal } from "./order.js";

const MINUTE_MS = 60_000;

/** Why a contractor has no room for a job at an exact start, in words (`detail`) and as a code. */
export type StartConflict =
  | { conflict: "outside_hours" | "time_off"; detail: string }
  | { conflict: "overlap"; orderId: string; detail: string };

/** What of the order an exact start is judged against: its arrival window, or arrive_by. */
type OrderTime = Pick<Order, "window_start" | "window_end" | "arrive_by">;

/** The field errors of an exact start for a job of `order`'s time at `now` (none: it may be tried). */
export function startIssues(start: Date, order: OrderTime, now: Date): FieldError[] {
  const at = start.toISOString();
  const issues: FieldError[] = [];
  if (start.getTime() < now.getTime()) {
    issues.push({ field: "start", code: "start_in_past", message: `${at} is in the past.` });
  }
  if (order.window_start !== null && order.window_end !== null) {
    if (at < order.window_start || at >= order.window_end) {
      issues.push({
        field: "start",
        code: "start_outside_window",
        message: `${at} is outside the order's arrival window, from ${order.window_start} to (before) ${order.window_end}.`,
      });
    }
  } else if (order.arrive_by !== null) {
    if (at > order.arrive_by) {
      issues.push({
        field: "start",
        code: "start_after_arrive_by",
        message: `${at} is after the order's arrive_by, ${order.arrive_by}.`,
      });
    }
  } else {
    issues.push({
      field: "start",
      code: "start_not_schedulable",
      message: "The order states no arrival time (it was made before orders had one): its job holds no time.",
    });
  }
  return issues;
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const two = (n: number) => String(n).padStart(2, "0");

/** A local day and clock, e.g. "Tue 2030-06-04 09:00". */
function local(ms: number, zone: string): { day: string; clock: string } {
  const l = localDateTime(new Date(ms), zone);
  return {
    day: `${DAYS[l.weekday]} ${l.year}-${two(l.month)}-${two(l.day)}`,
    clock: `${two(l.hour)}:${two(l.minute)}`,
  };
}

/** A span in words in `zone`: "Tue 2030-06-04 09:00-11:00", or with both days when it crosses midnight. */
function span(start: number, end: number, zone: string): string {
  const s = local(start, zone);
  const e = local(end, zone);
  return s.day === e.day ? `${s.day} ${s.clock}-${e.clock}` : `${s.day} ${s.clock} to ${e.day} ${e.clock}`;
}

/** What placementConflict judges: the job's block, the contractor's calendar and the blocks it holds. */
export interface ExactPlacement {
  contractorId: string;
  calendar: Calendar;
  block: Commitment;
  held: readonly Commitment[];
  travel: TravelTime;
  zones: ZoneOffsets;
  /** Ignore working hours (emergencies, as the matcher does); time off still holds. */
  anyHours: boolean;
  /** Blocks that ended by now hold nothing back. */
  now: number;
}

/** Why the job cannot take the contractor's time at its block's start; null when it can. */
export function placementConflict(p: ExactPlacement): StartConflict | null {
  const { block, calendar: cal, contractorId } = p;
  const zone = cal.timeZone;
  const job = span(block.start, block.end, zone);
  if (!p.anyHours && cal.weekly !== null) {
    const stretches = workingStretches(cal, block.start, block.end, p.zones);
    const covered = stretches.length === 2 && stretches[0] === block.start && stretches[1] === block.end;
    if (!covered) {
      return {
        conflict: "outside_hours",
        detail:
          `Contractor ${contractorId} is not working at ${job} (its hours are ` +
          `${formatHours(cal.weekly)}, ${zone}).`,
      };
    }
  }
  const off = cal.timeOff;
  for (let i = 0; i < off.length; i += 2) {
    const s = off[i] as number;
    const e = off[i + 1] as number;
    if (s < block.end && e > block.start) {
      return {
        conflict: "time_off",
        detail: `Contractor ${contractorId} is on time off ${span(s, e, zone)} (${zone}): the job at ${job} falls in it.`,
      };
    }
  }
  for (const h of p.held) {
    if (h.orderId === block.orderId || h.end <= p.now) continue;
    // The drive from the held job to this one, and from this one on to the held job.
    const after = Math.round(p.travel.minutes(h.point, block.point));
    const before = Math.round(p.travel.minutes(block.point, h.point));
    if (block.start < h.end + after * MINUTE_MS && block.end + before * MINUTE_MS > h.start) {
      const drive = block.start >= h.end ? after : before;
      const driving = drive > 0 ? `, counting ${drive} minutes' drive between them` : "";
      return {
        conflict: "overlap",
        orderId: h.orderId,
        detail:
          `Contractor ${contractorId} holds order ${h.orderId} ${span(h.start, h.end, zone)} (${zone}): ` +
          `the job at ${job} overlaps it${driving}.`,
      };
    }
  }
  return null;
}

/** The refusal of an exact start the contractor has no room for: 409 window_unavailable naming it and the
 * conflict (and, for an overlap, the order it overlaps). */
export function startRefusal(contractorId: string, why: StartConflict): Refusal {
  return {
    kind: "refused",
    code: "window_unavailable",
    message: `${why.detail} Pick another start or another contractor.`,
    extra: {
      contractor_id: contractorId,
      conflict: why.conflict,
      ...(why.conflict === "overlap" ? { order_id: why.orderId } : {}),
    },
  };
}

/** The refusal of a start that fails the order's time: 422 on `start`. */
export function startIssuesRefusal(issues: readonly FieldError[]): Refusal {
  return {
    kind: "refused",
    code: "validation_failed",
    message: issues.map((i) => `start: ${i.message}`).join("; "),
    errors: [...issues],
  };
}
