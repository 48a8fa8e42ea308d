// Planned-maintenance compliance (issue 34): of the maintenance plans' occurrences whose window ended in
// the report's window (and were not skipped), the share whose order was done by the window's end. An
// occurrence counts by its window's end, not by when its order was received: a visit is due when its
// window closes.

import type { ComplianceCounts } from "../../../domain/maintenance/plan.js";
import { ratio } from "./measures.js";
import type { Entry, Provenance } from "./provenance.js";

export function maintenanceFigures(c: ComplianceCounts) {
  const due = c.ended - c.skipped;
  return {
    occurrences_due: due,
    completed_in_window: c.completed_in_window,
    completed_late: c.completed_late,
    not_done: due - c.completed_in_window - c.completed_late,
    not_generated: c.failed,
    skipped: c.skipped,
    compliance_rate: ratio(c.completed_in_window, due),
  };
}

const SOURCE =
  "plan_occurrences table (live), occurrences whose window ended in the window (window_end), with their orders' status";

export function maintenanceProvenance(
  c: ComplianceCounts,
  p: Entry,
  prefix = "planned_maintenance",
): Provenance {
  const due = c.ended - c.skipped;
  return {
    [`${prefix}.compliance_rate`]: p(
      SOURCE,
      "count(state = completed) / count(state != skipped) over occurrences with window_end in the window",
      due,
      "An occurrence is completed when its order reached completed (or any later status of finished work) by " +
        "its window's end, as the generator found it when the window closed; one done later counts in " +
        "completed_late, not in the rate. Skipped occurrences (an account's decision, with its reason) are not due.",
    ),
    [`${prefix}.occurrences_due`]: p(SOURCE, "count(state != skipped)", due),
    [`${prefix}.completed_late`]: p(
      SOURCE,
      "count(state = generated and the order's status is finished work)",
      due,
    ),
    [`${prefix}.not_generated`]: p(
      SOURCE,
      "count(state = failed): no order could be created for the occurrence's window",
      due,
    ),
  };
}

export const MAINTENANCE_METHODOLOGY =
  "Planned maintenance: compliance_rate = occurrences completed within their window / occurrences due, over " +
  "the maintenance plans' occurrences whose window ended in the report's window (live only). Due: every " +
  "occurrence generated, failed to generate, or completed, but not one the account skipped. Completed within " +
  "the window: its order was in a status of finished work (completed, invoiced or later) when the window " +
  "ended; completed_late: finished after it; not_done: neither yet.";
