// Maintenance plans (issue 34): planned work at a site (or on one of its assets) that recurs, and its
// occurrences. A plan is a trade, a description, an estimated duration, a recurrence rule (RFC 5545, read
// in the site's zone: recurrence.ts), a preferred window and a horizon; the generator turns each
// occurrence inside the horizon into a scheduled work order, once. An occurrence is identified by its
// plan and its key (the rule's local date, kept when the occurrence is moved), which is what makes
// generation idempotent: the pair is the occurrences table's primary key, claimed in the order's own
// transaction.

/** A plan's preferred window: the days and local hours (in the site's zone) a visit may take place. */
export interface PreferredWindow {
  /** Weekday codes (mon..sun), at least one. */
  days: string[];
  /** Local wall-clock start, "HH:MM". */
  start: string;
  /** Local wall-clock end, "HH:MM" (after start). */
  end: string;
}

export type PlanStatus = "active" | "archived";

export interface MaintenancePlan {
  id: string;
  livemode: boolean;
  accountId: string;
  siteId: string;
  /** The asset the plan maintains, or null for the site as a whole. */
  assetId: string | null;
  trade: string;
  name: string;
  description: string;
  /** A checklist template of the account's (clt_...) its orders get, or null. */
  checklistTemplateId: string | null;
  durationMinutes: number;
  /** The RRULE text, without DTSTART (the plan's startsOn is the rule's first local date). */
  recurrence: string;
  /** Local dates (YYYY-MM-DD) the rule skips. */
  exceptions: string[];
  /** The first local date the rule may land on (YYYY-MM-DD). */
  startsOn: string;
  window: PreferredWindow;
  /** Occurrences whose window starts within this many days are generated. */
  horizonDays: number;
  nteCents: number | null;
  status: PlanStatus;
  /** Increases with every change (the update's version guard). */
  version: number;
  /** The generator has claimed every occurrence whose window starts before this instant (null: none yet;
   * reset when the rule or window changes). Kept by the store: a plan's own writes leave it as stored. */
  generatedUntil: string | null;
  /** When the generator looks at it again (its horizon moved on by a day); null: at once. */
  refreshAt: string | null;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
  /** The seal of the audit record of the plan as it stands. */
  seal: string;
}

/**
 * An occurrence's state: generated (its order exists, its window not yet settled), completed (its order
 * was done by its window's end), skipped (an action with a reason, no order), or failed (generation could
 * not create its order: the reason says why; the generator does not try again on its own, the account
 * moves or skips it). A generated occurrence whose window ended without its order done is overdue
 * (overdueAt) until its order is done or it is skipped.
 */
export type OccurrenceState = "generated" | "completed" | "skipped" | "failed";

export interface PlanOccurrence {
  planId: string;
  /** The rule's local date (YYYY-MM-DD) that produced it: stable when the occurrence moves. */
  key: string;
  livemode: boolean;
  accountId: string;
  siteId: string;
  assetId: string | null;
  windowStart: string;
  windowEnd: string;
  state: OccurrenceState;
  orderId: string | null;
  /** Why it was skipped, moved, or failed to generate. */
  reason: string | null;
  /** Set when it was moved by an action: the window it had before. */
  movedFrom: { start: string; end: string } | null;
  /** When it was found overdue (its window ended without its order done), or null. */
  overdueAt: string | null;
  createdAt: string;
  updatedAt: string;
  seal: string;
}

/** Occurrences whose window ended in a period, by how they ended (the planned-maintenance compliance). */
export interface ComplianceCounts {
  /** Every occurrence acted on whose window ended in the period (skipped ones included). */
  ended: number;
  skipped: number;
  /** Settled as done by their window's end. */
  completed_in_window: number;
  /** Done, after their window's end. */
  completed_late: number;
  /** Their order could not be created. */
  failed: number;
}

/** The reference_id a plan's generated order carries: `<plan_id>/<occurrence_key>`. */
const PLANNED_REFERENCE = /^mpl_[0-9A-Za-z]{1,40}\/\d{4}-\d{2}-\d{2}$/;

/** Whether an order's reference_id is a plan's occurrence (planned work, not reactive). */
export function isPlannedReference(referenceId: string | null | undefined): boolean {
  return typeof referenceId === "string" && PLANNED_REFERENCE.test(referenceId);
}
