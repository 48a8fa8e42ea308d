// The audit log's port: what the audit service, the CLI's checks and the operations need from persistence,
// and the rows it stores (storage/audit-store.ts implements it on both dialects). The log owns these
// shapes; storage only moves them, so the log imports nothing of storage.

import type { Hash, NewNode, NodeRef } from "./merkle.js";

/** An audit record as stored and read back. */
export interface AuditRecordRow {
  seq: number;
  seal: string;
  kind: string;
  account_id: string | null;
  livemode: number;
  order_id: string | null;
  actor: string;
  created_at: string;
  /** The sealed record: canonical JSON (RFC 8785), exactly the bytes its leaf hash covers. */
  record: string;
  /** Version 2: JSON list of the record's disclosures, each with who may see it (audit/redaction.ts). */
  disclosures: string | null;
}

/** A signed checkpoint of the tree as stored. */
export interface AuditCheckpointRow {
  tree_size: number;
  root_hash: string;
  timestamp: string;
  key_id: string;
  signature: string;
}

/** A legal hold: records of the account or order are kept past retention until it is released. */
export interface LegalHoldRow {
  id: string;
  account_id: string | null;
  order_id: string | null;
  reason: string;
  created_at: string;
  released_at: string | null;
}

export interface AuditLookup {
  record: AuditRecordRow | undefined;
  /** Undefined while the record waits in the queue (or, if it has a record, when the log lost it). */
  leaf: { leaf_index: number; leaf_hash: string } | undefined;
}

/** For AuditQuery.accountId: the records of every account (and of none) in the mode. */
export const ALL_ACCOUNTS: unique symbol = Symbol("all accounts");

export interface AuditQuery {
  /** The account whose records to list, or ALL_ACCOUNTS (the dispatch team's and a contractor's views). */
  accountId: string | typeof ALL_ACCOUNTS;
  livemode: boolean;
  orderId?: string | undefined;
  kind?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  /** Keyset cursor: records after this position in log order. */
  after?: number | undefined;
  limit: number;
}

interface PendingLeaf {
  seal: string;
  leaf_hash: string;
}

/** What the sequencer decides for one batch: the tree's new nodes and the checkpoint that signs it. */
interface SequencedBatch {
  nodes: NewNode[];
  checkpoint: AuditCheckpointRow;
}

export type SequencePlan = (head: {
  /** Leaves in the tree. */
  size: number;
  /** The tree size the latest checkpoint signed (0 for none): leaves past it await a signature. */
  signed: number;
  /** The key that signed the latest checkpoint (null for an empty log). */
  keyId: string | null;
  range: Hash[];
  pending: PendingLeaf[];
}) => SequencedBatch;

export interface LeafWithRecord {
  leaf_index: number;
  seal: string;
  leaf_hash: string;
  record: AuditRecordRow | null;
}

/** The audit log's port: what the audit service and the CLI need from persistence. */
export interface AuditPersistence {
  findAudit(seal: string): Promise<AuditLookup>;
  /**
   * A token that changes whenever another connection commits to the store, or null where the store
   * offers none. The log's rows are never changed through this process's own connection (the triggers
   * refuse it, and no code tries), so while the token stands, a record read earlier is still the stored one.
   */
  externalChangeToken(): Promise<number | null>;
  listAudit(q: AuditQuery): Promise<AuditRecordRow[]>;
  orderSeals(orderId: string): Promise<Array<{ seal: string; kind: string; created_at: string }>>;
  latestCheckpoint(): Promise<AuditCheckpointRow | undefined>;
  checkpointAt(size: number): Promise<AuditCheckpointRow | undefined>;
  listCheckpoints(after: number, limit: number): Promise<AuditCheckpointRow[]>;
  /**
   * Runs `read` against one snapshot of the log, read-only: whatever is committed meanwhile, every read
   * through the log it is given sees the store as it was (audit check, beside a running server).
   */
  snapshot<T>(read: (log: AuditPersistence) => Promise<T>): Promise<T>;
  /**
   * Stored perfect subtrees by (level, index), level 0 being the leaf hashes. From "tiles" (the default,
   * what proofs read): nodes below a stored tile's root from its tile, the rest from the rows; from
   * "rows": from audit_leaves and audit_nodes only (audit check compares the two).
   */
  auditNodes(refs: NodeRef[], from?: "tiles" | "rows"): Promise<Map<string, Hash>>;
  pendingAuditCount(): Promise<number>;
  sequenceAudit(plan: SequencePlan, limit: number, wait: boolean): Promise<AuditCheckpointRow | null>;
  leavesWithRecords(from: number, limit: number): Promise<LeafWithRecord[]>;
  purgeAudit(before: string): Promise<number>;
  addLegalHold(row: LegalHoldRow): Promise<void>;
  releaseLegalHold(id: string, at: string): Promise<boolean>;
  listLegalHolds(): Promise<LegalHoldRow[]>;
}
