// Retention of audit records: 7 years (the contract), then purged by the operator's CLI unless a legal
// hold covers them. The database trigger enforces the same rule with its own clock; the application's
// cutoff keeps a day's margin so that a purge never trips over clock skew.

export const RETENTION_YEARS = 7;
const DAY_MS = 86_400_000;

/** The latest `before` a purge may use at `now`: 7 years ago, less a day. */
export function retentionCutoff(now: Date): Date {
  const cutoff = new Date(now.getTime());
  cutoff.setUTCFullYear(cutoff.getUTCFullYear() - RETENTION_YEARS);
  return new Date(cutoff.getTime() - DAY_MS);
}
