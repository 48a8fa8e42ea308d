// Retention of audit records: 7 years (the contract), then purged by the operator's CLI unless a legal
// hold covers them. The database trigger enforces the same rule with its own clock; the application's
// cutoff keeps a day's margin so that a purge never trips over clock skew.
//
// A record's leaf stays in the tree after the purge, so a missing record is told apart from a deleted one
// by its leaf's age, read where it cannot be forged: the signed timestamp of the first checkpoint whose
// tree holds the leaf (the record was written before it). Only a record whose leaf was signed more than 7
// years ago may be missing; any other missing record was deleted behind the log's back. A purged record's
// account and order went with it, so whether a legal hold covered it is the trigger's to enforce at the
// purge, not something a check can read afterwards.

import type { KeyObject } from "node:crypto";
import type { AuditPersistence } from "./persistence.js";
import { toCheckpoint, verifyCheckpoint } from "./signing.js";

export const RETENTION_YEARS = 7;
const DAY_MS = 86_400_000;

/** The latest `before` a purge may use at `now`: 7 years ago, less a day. */
export function retentionCutoff(now: Date): Date {
  return new Date(retentionStart(now).getTime() - DAY_MS);
}

/** 7 years before `now`: a record whose leaf was signed before this may have been purged. */
function retentionStart(now: Date): Date {
  const start = new Date(now.getTime());
  start.setUTCFullYear(start.getUTCFullYear() - RETENTION_YEARS);
  return start;
}

/**
 * Why the record of leaf `leafIndex`, missing from the store, cannot have been purged within the rules,
 * or null when it may have been: the first checkpoint holding the leaf verifies with `publicKey` and was
 * signed more than 7 years before `now`.
 */
export async function missingRecordProblem(
  log: Pick<AuditPersistence, "listCheckpoints">,
  leafIndex: number,
  now: Date,
  publicKey: KeyObject,
): Promise<string | null> {
  const [row] = await log.listCheckpoints(leafIndex, 1);
  if (!row) return `its record is missing and no signed checkpoint holds leaf ${leafIndex}`;
  const checkpoint = toCheckpoint(row);
  if (!verifyCheckpoint(checkpoint, publicKey)) {
    return `its record is missing and the checkpoint at tree size ${checkpoint.tree_size}, the first to hold it, does not verify`;
  }
  if (Date.parse(checkpoint.timestamp) >= retentionStart(now).getTime()) {
    return `its record is missing, but the leaf was signed at ${checkpoint.timestamp} (checkpoint at tree size ${checkpoint.tree_size}), less than ${RETENTION_YEARS} years ago: records are only purged after ${RETENTION_YEARS} years`;
  }
  return null;
}
