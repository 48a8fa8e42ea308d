// The audit log service: sequences sealed records into the Merkle tree and signs checkpoints, and
// answers verification, proofs and checkpoints from the store.
//
// Records are written with the decision they record, in its transaction. On SQLite that transaction also
// appends their leaves to the tree; on PostgreSQL it queues them. The sequencer (every
// AUDIT_SEQUENCE_INTERVAL_MS in every process, one at a time across processes, and on demand when a
// record is verified before its turn) appends the queued leaves and signs the new tree head.
// Stored tree nodes never change, so this process caches them; the latest checkpoint is cached briefly.

import {
  appendLeaves,
  consistencySpans,
  type Hash,
  inclusionSpans,
  type NewNode,
  type NodeRef,
  nodeKey,
  type Span,
  spanHash,
  spanNodes,
  verifyInclusion,
} from "./merkle.js";
import type { AuditPersistence } from "./persistence.js";
import { rowMatchesLeaf } from "./record.js";
import { missingRecordProblem } from "./retention.js";
import { type Checkpoint, type CheckpointSigner, toCheckpoint, verifyCheckpoint } from "./signing.js";

// Records per sequencing transaction: small enough that the order writes waiting behind it on SQLite's
// single connection wait milliseconds, not a second.
const SEQUENCE_BATCH = 500;
const CHECKPOINT_TTL_MS = 1_000;
const NODE_CACHE_MAX = 200_000;
const EDGE_CACHE_MAX = 10_000;
const PROOF_CACHE_MAX = 50_000;
const VERIFIED_CACHE_MAX = 100_000;
// How often the store is asked whether another connection committed (asking costs a read transaction,
// several times the rest of a cached verification): a change made behind the service's back shows in
// verification within this time.
export const EXTERNAL_CHANGE_CHECK_MS = 250;

type VerifyStatus = "verified" | "mismatch" | "purged";
type MismatchReason =
  | "record_altered"
  | "record_missing"
  | "not_in_log"
  | "proof_invalid"
  | "signature_invalid";

export interface Verification {
  seal: string;
  status: VerifyStatus;
  reason: MismatchReason | null;
  leaf_index: number | null;
  leaf_hash: string | null;
  inclusion_proof: { tree_size: number; leaf_index: number; hashes: string[] } | null;
  checkpoint: Checkpoint | null;
}

export class AuditLog {
  private readonly nodes = new Map<string, Hash>();
  /** Hashes of proof spans on a tree's right edge (not perfect), by "end:start": fixed for that tree. */
  private readonly edges = new Map<string, Hash>();
  private readonly proofs = new Map<string, string[]>();
  private readonly verifications = new Map<
    string,
    { token: number; treeSize: number; result: Readonly<Verification> }
  >();
  private changeToken: { value: number | null; at: number } | null = null;
  private latest: { checkpoint: Checkpoint | null; signatureOk: boolean; at: number } | null = null;
  private running: Promise<number> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: AuditPersistence,
    readonly signer: CheckpointSigner,
    private readonly options: {
      now?: () => Date;
      logger?: { error(obj: object, msg: string): void };
      onSequenced?: (leaves: number) => void;
      /** See EXTERNAL_CHANGE_CHECK_MS. */
      changeCheckMs?: number;
    } = {},
  ) {}

  /** The service's time in milliseconds: what the caches of checkpoints and external changes age by. */
  private clockMs(): number {
    return (this.options.now?.() ?? new Date()).getTime();
  }

  /**
   * Sequences every queued record and signs the tree's head. With `wait` (on-demand), waits for another
   * process's sequencer instead of skipping. Returns how many queued leaves this call appended.
   */
  sequence(wait = false): Promise<number> {
    // One run at a time in this process; a caller that arrives during a run waits for it, then runs
    // again if it must see its own record sequenced.
    const previous = this.running ?? Promise.resolve(0);
    const run = previous
      .catch(() => 0)
      .then(() => this.sequenceAll(wait))
      .finally(() => {
        if (this.running === run) this.running = null;
      });
    this.running = run;
    return run;
  }

  private async sequenceAll(wait: boolean): Promise<number> {
    let total = 0;
    for (;;) {
      // SQLite answers synchronously, so without this the whole backlog would be sequenced in one turn of
      // the event loop while requests wait: yield between batches.
      await new Promise((resolve) => setImmediate(resolve));
      let appended: NewNode[] = [];
      let newlySigned = 0;
      const checkpoint = await this.store.sequenceAudit(
        ({ size, signed, keyId, range, pending }) => {
          if (keyId !== null && keyId !== this.signer.keyId) {
            // Another key signed the log so far: signing on with this one would break every verifier
            // that pinned the published key. Hosts sharing a store must share AUDIT_SIGNING_KEY.
            throw new Error(
              `audit log is signed with key ${keyId}, this process has ${this.signer.keyId}: not sequencing (set AUDIT_SIGNING_KEY to the log's key)`,
            );
          }
          const grown = appendLeaves(
            size,
            range,
            pending.map((p) => Buffer.from(p.leaf_hash, "hex")),
          );
          appended = grown.nodes;
          newlySigned = grown.size - signed;
          const head = this.signer.sign({
            tree_size: grown.size,
            root_hash: grown.root.toString("hex"),
            timestamp: (this.options.now?.() ?? new Date()).toISOString(),
          });
          const { origin: _origin, ...checkpoint } = head; // the origin is the log's, not stored per row
          return { nodes: grown.nodes, checkpoint };
        },
        SEQUENCE_BATCH,
        wait,
      );
      if (!checkpoint) break;
      // Committed: the new nodes are final and may be cached.
      for (const n of appended) this.cacheNode(nodeKey(n.level, n.index), n.hash);
      const leaves = appended.filter((n) => n.level === 0).length;
      this.latest = { checkpoint: toCheckpoint(checkpoint), signatureOk: true, at: this.clockMs() };
      total += leaves;
      this.options.onSequenced?.(newlySigned);
      if (leaves < SEQUENCE_BATCH) break;
    }
    return total;
  }

  /** Runs the sequencer every `intervalMs` until stop(). */
  start(intervalMs: number): void {
    if (this.timer || intervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.running) return; // still working through a backlog: no need to queue another run
      this.sequence(false).catch((err: unknown) =>
        this.options.logger?.error({ err }, "audit sequencing failed"),
      );
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => 0);
  }

  /** The latest signed checkpoint (cached for a second), or null while the log is empty. */
  async checkpoint(minSize = 0): Promise<{ checkpoint: Checkpoint | null; signatureOk: boolean }> {
    const cached = this.latest;
    if (
      cached &&
      this.clockMs() - cached.at < CHECKPOINT_TTL_MS &&
      (cached.checkpoint?.tree_size ?? 0) >= minSize
    ) {
      return cached;
    }
    const row = await this.store.latestCheckpoint();
    const checkpoint = row ? toCheckpoint(row) : null;
    const signatureOk = checkpoint ? verifyCheckpoint(checkpoint, this.signer.publicKey) : true;
    this.latest = { checkpoint, signatureOk, at: this.clockMs() };
    return this.latest;
  }

  async checkpointAt(size: number): Promise<Checkpoint | null> {
    const row = await this.store.checkpointAt(size);
    return row ? toCheckpoint(row) : null;
  }

  private cacheNode(key: string, hash: Hash): void {
    if (this.nodes.size >= NODE_CACHE_MAX) this.nodes.clear();
    this.nodes.set(key, hash);
  }

  /** Loads stored nodes, from the cache where it has them, the rest in one read. */
  private async fetchNodes(refs: NodeRef[]): Promise<Map<string, Hash>> {
    const found = new Map<string, Hash>();
    const missing = new Map<string, NodeRef>();
    for (const r of refs) {
      const key = nodeKey(r.level, r.index);
      const hit = this.nodes.get(key);
      if (hit) found.set(key, hit);
      else missing.set(key, r);
    }
    if (missing.size > 0) {
      const loaded = await this.store.auditNodes([...missing.values()]);
      // Cached once read: a proof's nodes are fixed once written. The leaf being verified is never
      // taken from here; `verify` reads it from the store every time.
      for (const [key, hash] of loaded) {
        this.cacheNode(key, hash);
        found.set(key, hash);
      }
    }
    return found;
  }

  /**
   * The hashes of a proof's spans. A perfect span is one stored node; a span on the tree's right edge is
   * hashed from the O(log n) perfect subtrees it is made of, once per tree size (every proof against
   * that tree shares the same few edge spans), then kept.
   */
  private async proofOf(spans: Span[]): Promise<Hash[]> {
    const edgeKey = (s: Span) => `${s.end}:${s.start}`;
    const refs: NodeRef[] = [];
    for (const span of spans) if (!this.edges.has(edgeKey(span))) spanNodes(span, refs);
    const found = await this.fetchNodes(refs);
    const get = (level: number, index: number): Hash => {
      const hash = found.get(nodeKey(level, index));
      if (!hash) throw new Error(`audit tree node ${level}/${index} is missing from the store`);
      return hash;
    };
    return spans.map((span) => {
      const key = edgeKey(span);
      const cached = this.edges.get(key);
      if (cached) return cached;
      const hash = spanHash(get, span);
      if (spanNodes(span).length > 1) {
        if (this.edges.size >= EDGE_CACHE_MAX) this.edges.clear();
        this.edges.set(key, hash);
      }
      return hash;
    });
  }

  inclusion(leafIndex: number, treeSize: number): Promise<Hash[]> {
    return this.proofOf(inclusionSpans(leafIndex, treeSize));
  }

  consistency(first: number, second: number): Promise<Hash[]> {
    return this.proofOf(consistencySpans(first, second));
  }

  /**
   * The verification of one record, or null when no record or leaf has this seal. The result is frozen
   * and may be shared: a result stays valid while the latest checkpoint is the one it was proven against
   * and no other connection has committed to the store (the only way a stored row can change), so it is
   * kept and answered again under those two conditions (the second checked every
   * EXTERNAL_CHANGE_CHECK_MS); anything else reads and proves afresh.
   */
  async verify(seal: string): Promise<Readonly<Verification> | null> {
    const token = await this.externalChangeToken();
    if (token !== null) {
      const hit = this.verifications.get(seal);
      if (hit && hit.token === token && (await this.checkpoint()).checkpoint?.tree_size === hit.treeSize) {
        return hit.result;
      }
    }
    const result = await this.verifyFromStore(seal);
    if (token !== null && result?.checkpoint) {
      if (this.verifications.size >= VERIFIED_CACHE_MAX) this.verifications.clear();
      this.verifications.set(seal, {
        token,
        treeSize: result.checkpoint.tree_size,
        result: deepFreeze(result),
      });
    }
    return result;
  }

  private async externalChangeToken(): Promise<number | null> {
    const now = this.clockMs();
    const known = this.changeToken;
    if (known && now - known.at < (this.options.changeCheckMs ?? EXTERNAL_CHANGE_CHECK_MS))
      return known.value;
    const value = await this.store.externalChangeToken();
    this.changeToken = { value, at: now };
    return value;
  }

  private async verifyFromStore(seal: string): Promise<Verification | null> {
    let found = await this.store.findAudit(seal);
    if (!found.leaf && found.record) {
      await this.sequence(true); // verified before the sequencer's turn: sequence it now
      found = await this.store.findAudit(seal);
    }
    if (!found.leaf && !found.record) return null;
    const base: Verification = {
      seal,
      status: "mismatch",
      reason: null,
      leaf_index: null,
      leaf_hash: null,
      inclusion_proof: null,
      checkpoint: null,
    };
    if (!found.leaf) return { ...base, reason: "not_in_log" };

    const { leaf_index, leaf_hash } = found.leaf;
    let { checkpoint, signatureOk } = await this.checkpoint(leaf_index + 1);
    if (!checkpoint || checkpoint.tree_size <= leaf_index) {
      // In the tree but past the latest checkpoint (a leaf appended in its record's own transaction):
      // sign the head now rather than answer that the record is not in the log.
      await this.sequence(true);
      ({ checkpoint, signatureOk } = await this.checkpoint(leaf_index + 1));
    }
    if (!checkpoint || checkpoint.tree_size <= leaf_index)
      return { ...base, leaf_index, leaf_hash, reason: "not_in_log" };
    // A proven (leaf, checkpoint) pair stays proven: keep the proof, keyed by what it proved. The leaf hash
    // read just now is part of the key, so a changed leaf row is proven afresh (and fails).
    const proofKey = `${seal}|${leaf_index}|${leaf_hash}|${checkpoint.tree_size}|${checkpoint.root_hash}`;
    let hashes = this.proofs.get(proofKey);
    let proven = hashes !== undefined;
    if (!hashes) {
      const proof = await this.inclusion(leaf_index, checkpoint.tree_size);
      const root = Buffer.from(checkpoint.root_hash, "hex");
      proven = verifyInclusion(Buffer.from(leaf_hash, "hex"), leaf_index, checkpoint.tree_size, proof, root);
      hashes = proof.map((h) => h.toString("hex"));
      if (proven) {
        if (this.proofs.size >= PROOF_CACHE_MAX) this.proofs.clear();
        this.proofs.set(proofKey, hashes);
      }
    }
    const result: Verification = {
      ...base,
      leaf_index,
      leaf_hash,
      inclusion_proof: { tree_size: checkpoint.tree_size, leaf_index, hashes },
      checkpoint,
    };
    if (!signatureOk) return { ...result, reason: "signature_invalid" };
    if (!proven) return { ...result, reason: "proof_invalid" };
    if (!found.record) {
      // Gone: purged only if its leaf is past retention (retention.ts), else deleted behind the log's back.
      const now = this.options.now?.() ?? new Date();
      const problem = await missingRecordProblem(this.store, leaf_index, now, this.signer.publicKey);
      return problem === null ? { ...result, status: "purged" } : { ...result, reason: "record_missing" };
    }
    if (!rowMatchesLeaf(found.record, leaf_hash)) return { ...result, reason: "record_altered" };
    return { ...result, status: "verified" };
  }
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
