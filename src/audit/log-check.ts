// `audit check`: recomputes the whole log from the store and compares it with what is stored and signed:
// every record against its leaf, every stored tree node against the one recomputed from the leaves, and
// the root at the latest checkpoint's size against that checkpoint, whose signature is checked with the
// service's key. Each record's disclosures, stored beside it, must be the ones it commits to by digest
// (redaction.ts). A record may be missing only if its leaf is past retention (retention.ts); any other
// missing record is reported as tampering.

import type { KeyObject } from "node:crypto";
import { appendLeaves, type Hash, type NewNode, nodeKey, tileOf } from "./merkle.js";
import type { AuditPersistence, LeafWithRecord } from "./persistence.js";
import { rowMatchesLeaf } from "./record.js";
import { disclosureProblem } from "./redaction.js";
import { missingRecordProblem } from "./retention.js";
import { toCheckpoint, verifyCheckpoint } from "./signing.js";

const PAGE = 5_000;

export interface CheckReport {
  ok: boolean;
  /** Leaves checked against their records (purged ones included), up to the first problem. */
  leaves: number;
  purged: number;
  pending: number;
  checkpointSize: number | null;
  /** The first problem found, in log order. */
  mismatch: string | null;
  /** The index of the leaf where the check failed (the first leaf under a tree node that differs); null
   * when it passed, or when the failure is not one leaf's (the checkpoint's signature, the root). */
  failedAtLeaf: number | null;
}

type Failure = { message: string; leaf: number | null };

/** Checks the whole log (see above), reading it in one snapshot of the store. */
export function checkLog(
  store: AuditPersistence,
  publicKey: KeyObject,
  now: Date = new Date(),
): Promise<CheckReport> {
  return store.snapshot((log) => checkSnapshot(log, publicKey, now));
}

async function checkSnapshot(store: AuditPersistence, publicKey: KeyObject, now: Date): Promise<CheckReport> {
  const latest = await store.latestCheckpoint();
  const checkpoint = latest ? toCheckpoint(latest) : null;
  const report: CheckReport = {
    ok: false,
    leaves: 0,
    purged: 0,
    pending: await store.pendingAuditCount(),
    checkpointSize: checkpoint?.tree_size ?? null,
    mismatch: null,
    failedAtLeaf: null,
  };
  const fail = ({ message, leaf }: Failure): CheckReport => ({
    ...report,
    mismatch: message,
    failedAtLeaf: leaf,
  });
  if (checkpoint && !verifyCheckpoint(checkpoint, publicKey)) {
    return fail({
      message: `checkpoint at tree size ${checkpoint.tree_size}: signature does not verify with the service key`,
      leaf: null,
    });
  }
  // Every stored leaf is checked; the root is taken where the latest checkpoint signed it (leaves
  // appended since then await the next checkpoint).
  const size = checkpoint?.tree_size ?? 0;
  let range: Hash[] = [];
  let signedRoot: Hash | null = null;
  for (let at = 0; ; ) {
    const page = await store.leavesWithRecords(at, at < size ? Math.min(PAGE, size - at) : PAGE);
    if (page.length === 0) {
      if (at < size) return fail({ message: `leaf ${at} is missing from the store`, leaf: at });
      break;
    }
    const failure = await checkRecords(store, page, at, report, { now, publicKey });
    if (failure) return fail(failure);
    const grown = appendLeaves(at, range, page.map(leafHashOf));
    const nodeFailure = await checkNodes(store, grown.nodes);
    if (nodeFailure) return fail(nodeFailure);
    range = grown.range;
    at += page.length;
    if (at === size) signedRoot = grown.root;
  }
  if (checkpoint && signedRoot && signedRoot.toString("hex") !== checkpoint.root_hash) {
    return fail({
      message: `the root of the ${size} stored leaves differs from the signed checkpoint's`,
      leaf: null,
    });
  }
  return { ...report, ok: true };
}

const leafHashOf = (l: LeafWithRecord) => Buffer.from(l.leaf_hash, "hex");

/**
 * Checks a page of leaves (the first at `at`) against their records, counting them (and the purged ones)
 * in `report`: each stored record hashes to its leaf, and each missing one is past retention. Returns the
 * first failure, in log order.
 */
async function checkRecords(
  store: AuditPersistence,
  page: LeafWithRecord[],
  at: number,
  report: CheckReport,
  retention: { now: Date; publicKey: KeyObject },
): Promise<Failure | null> {
  const missing = await firstMissingInRetention(store, page, retention);
  for (const [i, leaf] of page.entries()) {
    if (leaf.leaf_index !== at + i)
      return { message: `leaf ${at + i} is missing from the store`, leaf: at + i };
    if (leaf.record === null) {
      if (missing?.leaf.leaf_index === leaf.leaf_index) {
        return {
          message: `leaf ${leaf.leaf_index} (${leaf.seal}): ${missing.problem}`,
          leaf: leaf.leaf_index,
        };
      }
      report.purged++;
    } else if (!rowMatchesLeaf(leaf.record, leaf.leaf_hash)) {
      return {
        message: `leaf ${leaf.leaf_index} (${leaf.seal}): the stored record does not hash to its leaf`,
        leaf: leaf.leaf_index,
      };
    } else {
      const problem = disclosureProblem(leaf.record);
      if (problem !== null) {
        return { message: `leaf ${leaf.leaf_index} (${leaf.seal}): ${problem}`, leaf: leaf.leaf_index };
      }
    }
    report.leaves++;
  }
  return null;
}

/**
 * The first leaf of the page whose record is missing though it is not past retention, with why. The
 * leaves' ages only grow towards the start of the log, so when the page's last missing record may be
 * gone, all of them may: one look at the store per page, more only on the way to a failure.
 */
async function firstMissingInRetention(
  store: AuditPersistence,
  page: LeafWithRecord[],
  { now, publicKey }: { now: Date; publicKey: KeyObject },
): Promise<{ leaf: LeafWithRecord; problem: string } | null> {
  const missing = page.filter((l) => l.record === null);
  const last = missing[missing.length - 1];
  if (!last || (await missingRecordProblem(store, last.leaf_index, now, publicKey)) === null) return null;
  for (const leaf of missing) {
    const problem = await missingRecordProblem(store, leaf.leaf_index, now, publicKey);
    if (problem !== null) return { leaf, problem };
  }
  return null;
}

/**
 * Checks the stored tree nodes against `nodes`, the ones a page of leaves gives: the rows of audit_nodes,
 * and the tiles, which hold the lowest 8 levels again and are what proofs read.
 */
async function checkNodes(store: AuditPersistence, nodes: NewNode[]): Promise<Failure | null> {
  const inner = nodes.filter((n) => n.level > 0);
  const low = nodes.filter((n) => tileOf(n) !== null);
  const sources: Array<[NewNode[], Map<string, Hash>, string]> = [
    [inner, await store.auditNodes(inner, "rows"), "tree node"],
    [low, await store.auditNodes(low, "tiles"), "tree node as its tile holds it,"],
  ];
  for (const [expected, stored, what] of sources) {
    for (const n of expected) {
      if (!stored.get(nodeKey(n.level, n.index))?.equals(n.hash)) {
        const first = n.index * 2 ** n.level;
        return {
          message: `${what} ${n.level}/${n.index} (leaves ${first} to ${first + 2 ** n.level - 1}) differs from the one its leaves give`,
          leaf: first,
        };
      }
    }
  }
  return null;
}
