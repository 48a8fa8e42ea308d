// The published service levels per urgency: how soon an as-soon-as-possible job is responded to (a
// contractor committed) and arrived at, and whether the caller may book a window instead. One table:
// the answers' respond_by / arrive_by come from it, and so do the matcher's arrival targets
// (matching.ts ETA_TARGET_MINUTES).
//
// Anchors: emergency is the contract's headline turnaround (a contractor on site in under 2 hours) with a
// 15-minute response; urgent is the ETA tier same_day (8 hours), its response within the hour an urgent
// quote stays valid; routine is two days (the matcher's routine target), responded to within the 4 hours
// a routine quote stays valid. Scheduled work has no such clock: it is booked into a window.

import type { Urgency } from "../pricing.js";

export interface ServiceLevel {
  /** Minutes from the request to a contractor committed; null for windowed work. */
  readonly respondMinutes: number | null;
  /** Minutes from the request to the contractor on site; null for windowed work. */
  readonly arriveMinutes: number | null;
  /** Whether a caller may give a service window (emergency and urgent are as soon as possible). */
  readonly windowAllowed: boolean;
}

export const SERVICE_LEVELS: Readonly<Record<Urgency, ServiceLevel>> = {
  emergency: { respondMinutes: 15, arriveMinutes: 120, windowAllowed: false },
  urgent: { respondMinutes: 60, arriveMinutes: 480, windowAllowed: false },
  routine: { respondMinutes: 240, arriveMinutes: 2880, windowAllowed: true },
  scheduled: { respondMinutes: null, arriveMinutes: null, windowAllowed: true },
};
