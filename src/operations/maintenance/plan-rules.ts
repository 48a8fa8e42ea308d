// A stored plan's recurrence and window read with the domain's rules (domain/maintenance): what the plan
// operations check on the way in and what the generator and the calendar expand.

import { occurrencesWithin } from "../../domain/maintenance/occurrences.js";
import type { MaintenancePlan } from "../../domain/maintenance/plan.js";
import { parseRecurrence, type Recurrence } from "../../domain/maintenance/recurrence.js";
import { type PreferredWindow, parseWindow } from "../../domain/maintenance/window.js";

/** An occurrence as the plan operations and the generator use it. */
export interface PlannedOccurrence {
  /** The rule's date (YYYY-MM-DD). */
  key: string;
  start: string;
  end: string;
  /** The rule's date when the visit moved to a preferred day. */
  movedFrom: string | null;
}

export interface PlanRule {
  recurrence: Recurrence;
  window: PreferredWindow;
}

/** The plan's rule and window as stored (valid when stored: null only if the rules grew stricter since). */
export function recurrenceOf(
  plan: Pick<MaintenancePlan, "recurrence" | "startsOn" | "exceptions" | "window" | "durationMinutes">,
): PlanRule | null {
  const recurrence = parseRecurrence(plan.recurrence, { start: plan.startsOn, exceptions: plan.exceptions });
  const window = parseWindow(plan.window, plan.durationMinutes);
  if (Array.isArray(recurrence) || Array.isArray(window)) return null;
  return { recurrence, window };
}

/** The occurrences whose window starts in [from, until). */
export function planOccurrences(rule: PlanRule, zone: string, from: Date, until: Date): PlannedOccurrence[] {
  return occurrencesWithin(rule.recurrence, rule.window, zone, from, until).map((o) => ({
    key: o.occurrence_key,
    start: o.start,
    end: o.end,
    movedFrom: o.moved_from,
  }));
}
