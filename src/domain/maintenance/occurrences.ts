// A maintenance plan's occurrences: the visits its recurrence and preferred window give in a site's zone,
// each keyed by the rule's own date, for the generator (a horizon ahead of now) and for the calendar of
// upcoming visits; and when one is overdue. Pure: the clock is an argument.
//
// The key is the rule's local date `YYYY-MM-DD`, also when the visit moved to a preferred day, so two
// runs (or two processes) over overlapping horizons name each occurrence alike and generation is
// idempotent on (plan, key). Occurrences come in order of key and of window start alike: a moved visit
// never reaches the next occurrence's date. A version ended by splitAt keeps every window it had (its
// last visit may move past the edit's date, as it did before the edit).

import type { LocalDate } from "./local-date.js";
import { addDays, localDateOf } from "./local-date.js";
import { type Recurrence, ruleDates } from "./recurrence.js";
import { occurrenceWindow, type PreferredWindow } from "./window.js";

/** The most occurrences one call returns: ask again from the last one's start (plus 1 ms) for more. */
export const MAX_OCCURRENCES = 400;

export interface Occurrence {
  /** The rule's date: stable whether or not the visit moved. */
  occurrence_key: LocalDate;
  /** The local date of the visit. */
  date: LocalDate;
  /** The window's instants, ISO 8601 UTC. */
  start: string;
  end: string;
  moved_from: LocalDate | null;
  on_preferred_day: boolean;
}

/**
 * Occurrences in order, from rule dates on or after `first` and before the recurrence's end: each may
 * move up to the next date of its rule. That next date is read past the end too, so a version ended by
 * splitAt gives its occurrences the very windows the whole rule gave them.
 */
function* occurrences(
  rec: Recurrence,
  window: PreferredWindow,
  zone: string,
  first: LocalDate,
): Generator<Occurrence> {
  const dates = ruleDates({ ...rec, end: null }, first);
  let current = dates.next();
  while (!current.done && (rec.end === null || current.value < rec.end)) {
    const next = dates.next();
    const w = occurrenceWindow(current.value, window, zone, next.done ? null : next.value);
    yield {
      occurrence_key: current.value,
      date: w.date,
      start: w.start.toISOString(),
      end: w.end.toISOString(),
      moved_from: w.moved_from,
      on_preferred_day: w.on_preferred_day,
    };
    current = next;
  }
}

/** Rule dates from a week before `from`'s local date: a visit moves at most six days on. */
function firstRuleDate(from: Date, zone: string): LocalDate {
  return addDays(localDateOf(from, zone), -7);
}

/**
 * The occurrences whose window starts in [from, until), in order, at most `limit` (MAX_OCCURRENCES at
 * most). Dates further than 30 years after `from` are not looked at.
 */
export function occurrencesWithin(
  rec: Recurrence,
  window: PreferredWindow,
  zone: string,
  from: Date,
  until: Date,
  limit = MAX_OCCURRENCES,
): Occurrence[] {
  const out: Occurrence[] = [];
  const max = Math.min(limit, MAX_OCCURRENCES);
  if (until.getTime() <= from.getTime() || max <= 0) return out;
  const fromIso = from.toISOString();
  const untilIso = until.toISOString();
  for (const o of occurrences(rec, window, zone, firstRuleDate(from, zone))) {
    if (o.start >= untilIso || out.length >= max) break;
    if (o.start >= fromIso) out.push(o);
  }
  return out;
}

/** The next `count` occurrences (MAX_OCCURRENCES at most) whose window starts at or after `from`. */
export function nextOccurrences(
  rec: Recurrence,
  window: PreferredWindow,
  zone: string,
  from: Date,
  count: number,
): Occurrence[] {
  const out: Occurrence[] = [];
  const max = Math.min(count, MAX_OCCURRENCES);
  if (max <= 0) return out;
  const fromIso = from.toISOString();
  for (const o of occurrences(rec, window, zone, firstRuleDate(from, zone))) {
    if (o.start >= fromIso) out.push(o);
    if (out.length >= max) break;
  }
  return out;
}

/**
 * Whether an occurrence is overdue at `now`: its window has ended and it is neither completed nor
 * skipped (`closed`). It stays overdue until it is.
 */
export function isOverdue(windowEnd: Date | string, now: Date, closed: boolean): boolean {
  return !closed && now.getTime() >= new Date(windowEnd).getTime();
}
