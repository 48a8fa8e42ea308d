// `audit check`: recomputes the whole log from the store and compares it with what is stored and signed:
// every record against its leaf, every stored tree node against the one recomputed from the leaves, and
// the root at the latest checkpoint's size against that checkpoint, whose signature is checked with the
// service's key.

import type { KeyObject } from "node:crypto";
import { toCheckpoint } from "./audit-log.js";
import { appendLeaves, type Hash, nodeKey } from "./merkle.js";
import type { AuditPersistence } from "./persistence.js";
import { rowMatchesLeaf } from "./record.js";
import { verifyCheckpoint } from "./signing.js";

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

export async function checkLog(store: AuditPersistence, publicKey: KeyObject): Promise<CheckReport> {
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
  const fail = (message: string, leaf: number | null = null): CheckReport => ({
    ...report,
    mismatch: message,
    failedAtLeaf: leaf,
  });
  if (checkpoint && !verifyCheckpoint(checkpoint, publicKey)) {
    return fail(
      `checkpoint at tree size ${checkpoint.tree_size}: signature does not verify with the service key`,
    );
  }
  // Every stored leaf is checked; the root is taken where the latest checkpoint signed it (leaves
  // appended since then await the next checkpoint).
  const size = checkpoint?.tree_size ?? 0;
  let range: Hash[] = [];
  let signedRoot: Hash | null = null;
  for (let at = 0; ; ) {
    const page = await store.leavesWithRecords(at, at < size ? Math.min(PAGE, size - at) : PAGE);
    if (page.length === 0) {
      if (at < size) return fail(`leaf ${at} is missing from the store`, at);
      break;
    }
    for (const [i, leaf] of page.entries()) {
      if (leaf.leaf_index !== at + i) return fail(`leaf ${at + i} is missing from the store`, at + i);
      if (leaf.record === null) report.purged++;
      else if (!rowMatchesLeaf(leaf.record, leaf.leaf_hash)) {
        return fail(
          `leaf ${leaf.leaf_index} (${leaf.seal}): the stored record does not hash to its leaf`,
          leaf.leaf_index,
        );
      }
      report.leaves++;
    }
    const grown = appendLeaves(
      at,
      range,
      page.map((l) => Buffer.from(l.leaf_hash, "hex")),
    );
    const inner = grown.nodes.filter((n) => n.level > 0);
    const stored = await store.auditNodes(inner);
    for (const n of inner) {
      const s = stored.get(nodeKey(n.level, n.index));
      if (!s?.equals(n.hash)) {
        const first = n.index * 2 ** n.level;
        return fail(
          `tree node ${n.level}/${n.index} (leaves ${first} to ${first + 2 ** n.level - 1}) differs from the one its leaves give`,
          first,
        );
      }
    }
    range = grown.range;
    at += page.length;
    if (at === size) signedRoot = grown.root;
  }
  if (checkpoint && signedRoot && signedRoot.toString("hex") !== checkpoint.root_hash) {
    return fail(`the root of the ${size} stored leaves differs from the signed checkpoint's`);
  }
  return { ...report, ok: true };
}
