// Compliance as a rule: a contractor is offered work only while its insurance and its license are both
// verified through the job's day. Dates are calendar days (YYYY-MM-DD, UTC); a verification is valid
// through its date included, so a date equal to today still counts, and it has expired from the next day
// on. Pure: the caller passes the time (the job's `now`); matching compares precomputed day numbers.

import { EXPIRING_WITHIN_DAYS } from "./contractor-directory.js";

/** Days since 1970-01-01 (UTC) of an instant. */
export function dayOf(now: Date): number {
  return Math.floor(now.getTime() / 86_400_000);
}

/** Day number of a YYYY-MM-DD date; NaN when it is not one. */
export function dayOfDate(date: string): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
}

/** The YYYY-MM-DD date of a day number. */
export function dateOfDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** The last day both verifications hold, for matching; below every real day when either is missing. */
const NOT_VERIFIED_DAY = -2_147_483_648;

export interface Verifications {
  readonly insuranceVerifiedUntil: string | null;
  readonly licenseVerifiedUntil: string | null;
}

/** The last day (day number) on which the contractor is compliant: the earlier of its two dates. */
export function compliantThrough(c: Verifications): number {
  if (!c.insuranceVerifiedUntil || !c.licenseVerifiedUntil) return NOT_VERIFIED_DAY;
  const day = Math.min(dayOfDate(c.insuranceVerifiedUntil), dayOfDate(c.licenseVerifiedUntil));
  return Number.isNaN(day) ? NOT_VERIFIED_DAY : day;
}

const COMPLIANCE_DOCUMENTS = ["insurance", "license"] as const;
type ComplianceDocument = (typeof COMPLIANCE_DOCUMENTS)[number];

/** One document that keeps a contractor from work: expired (with its date) or never verified. */
export interface ComplianceIssue {
  document: ComplianceDocument;
  state: "expired" | "not_verified";
  /** The date it was verified until (it expired the day after); null when never verified. */
  verified_until: string | null;
}

/** What keeps the contractor from work on `today` (day number): nothing when it is compliant. */
export function complianceIssues(c: Verifications, today: number): ComplianceIssue[] {
  const issues: ComplianceIssue[] = [];
  for (const document of COMPLIANCE_DOCUMENTS) {
    const until = document === "insurance" ? c.insuranceVerifiedUntil : c.licenseVerifiedUntil;
    const day = until ? dayOfDate(until) : Number.NaN;
    if (!until || Number.isNaN(day)) issues.push({ document, state: "not_verified", verified_until: null });
    else if (day < today) issues.push({ document, state: "expired", verified_until: until });
  }
  return issues;
}

/** One sentence naming each issue, e.g. "insurance expired (verified until 2026-01-31)". */
export function describeIssues(issues: readonly ComplianceIssue[]): string {
  return issues
    .map((i) =>
      i.state === "expired"
        ? `${i.document} expired (verified until ${i.verified_until}, expired since ${dateOfDay(dayOfDate(i.verified_until as string) + 1)})`
        : `${i.document} not verified`,
    )
    .join("; ");
}

/** How far ahead the daily compliance list looks, in days: the directory's `expiring` window. */
const COMPLIANCE_WARNING_DAYS = EXPIRING_WITHIN_DAYS;

/** One contractor on the day's compliance list: each document with its date and its state on the day. */
export interface ComplianceWatchEntry {
  contractor_id: string;
  insurance_verified_until: string | null;
  license_verified_until: string | null;
  /** not_compliant: kept from work today (expired or not verified); expiring: valid today, but one of its
   * documents runs out within COMPLIANCE_WARNING_DAYS days (today included). */
  status: "not_compliant" | "expiring";
  /** The last day it may be offered work; null when it may not today. */
  compliant_through: string | null;
}

/**
 * The day's compliance list of a pool: its active, not excluded contractors that may not be offered work
 * today, or whose insurance or license runs out within the warning window; sorted by the day they stop
 * being compliant (unverified first), then id.
 */
export function complianceWatchList(
  contractors: ReadonlyArray<Verifications & { id: string; active: boolean; excluded: boolean }>,
  today: number,
): ComplianceWatchEntry[] {
  const entries: Array<ComplianceWatchEntry & { through: number }> = [];
  for (const c of contractors) {
    if (!c.active || c.excluded) continue;
    const through = compliantThrough(c);
    if (through > today + COMPLIANCE_WARNING_DAYS) continue;
    entries.push({
      contractor_id: c.id,
      insurance_verified_until: c.insuranceVerifiedUntil,
      license_verified_until: c.licenseVerifiedUntil,
      status: through < today ? "not_compliant" : "expiring",
      compliant_through: through < today ? null : dateOfDay(through),
      through,
    });
  }
  entries.sort((a, b) => a.through - b.through || (a.contractor_id < b.contractor_id ? -1 : 1));
  return entries.map(({ through: _through, ...e }) => e);
}
