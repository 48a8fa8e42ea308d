// An audit record as it is sealed: canonical JSON (RFC 8785, with the `canonicalize` package by the RFC's
// author) of a small envelope around the decision's data. The leaf hash the Merkle tree commits to is
// SHA-256(0x00 || those bytes); the stored text is exactly those bytes, so anyone holding a record can
// recompute its leaf.
//
// Version 2 (every record sealed since) keeps private parts out of the sealed text: contractor ids, the
// ranked candidates with their prices and scores, the account's contractor handles, and the caller's
// contact details and bookkeeping in an order's creation are committed as salted digests (disclosure.ts, redaction.ts) and stored beside the record, each with the roles it is
// shown to. Version 1 records (sealed before) hold everything in the clear and verify as they always did.

import { randomBase62 } from "../base62.js";
import { canonicalJson } from "../canonical-json.js";
import { timePrefix } from "../ids.js";
import type { AuditKind } from "./kinds.js";
import { leafHash } from "./merkle.js";
import type { AuditRecordRow } from "./persistence.js";
import { type RefOf, redact } from "./redaction.js";

export const SEAL_PATTERN = /^seal_[0-9A-Za-z]{22}$/;

/** Who took a decision: an API key, a contractor, an operator (CLI or dispatcher), or the service. */
export type Actor = `key:${string}` | `operator:${string}` | `contractor:${string}` | `system:${string}`;

export interface AuditInput {
  kind: AuditKind;
  at: string;
  accountId: string | null;
  livemode: boolean;
  orderId?: string | null;
  actor: Actor;
  data: Record<string, unknown>;
  /** The account's contractor handles, for the disclosures shown to the caller (records of an account). */
  refOf?: RefOf | null;
}

/** A record ready to be written: its row (the store numbers it) and its leaf hash (hex). */
export type AuditEntry = Omit<AuditRecordRow, "seq"> & { kind: AuditKind; leaf_hash: string };

/** The envelope that is hashed. Field names are part of the log format: never rename them. */
interface AuditRecord {
  v: 1 | 2;
  seal: string;
  kind: AuditKind;
  at: string;
  account_id: string | null;
  livemode: boolean;
  order_id: string | null;
  actor: string;
  data: Record<string, unknown>;
}

/**
 * A seal: 8 base62 characters of the creation time in milliseconds, then 14 random ones (~83 bits).
 * Time first keeps the indexes on seals append-mostly, which is what lets the store write records at
 * the rate of orders; the random part keeps seals unguessable.
 */
export function newSeal(): string {
  return `seal_${timePrefix()}${randomBase62(14)}`;
}

export function sealRecord(input: AuditInput): AuditEntry {
  const redacted = redact(input.actor, input.data, input.refOf ?? null);
  // Keys in canonical order, so canonicalJson serialises without copying.
  const record: AuditRecord = {
    account_id: input.accountId,
    actor: redacted.actor,
    at: input.at,
    data: redacted.data,
    kind: input.kind,
    livemode: input.livemode,
    order_id: input.orderId ?? null,
    seal: newSeal(),
    v: 2,
  };
  const text = canonicalJson(record);
  return {
    seal: record.seal,
    kind: record.kind,
    account_id: record.account_id,
    livemode: record.livemode ? 1 : 0,
    order_id: record.order_id,
    actor: record.actor,
    created_at: record.at,
    record: text,
    disclosures: redacted.disclosures,
    leaf_hash: leafHash(Buffer.from(text, "utf8")).toString("hex"),
  };
}

/**
 * Whether a stored row still matches the leaf it was sealed under: the text hashes to the leaf, and the
 * queryable columns agree with the sealed envelope (so a record cannot be moved to another account or
 * order without being caught).
 */
export function rowMatchesLeaf(row: Omit<AuditRecordRow, "seq">, leafHashHex: string): boolean {
  if (leafHash(Buffer.from(row.record, "utf8")).toString("hex") !== leafHashHex) return false;
  // The canonical form puts the envelope's keys in a fixed order around `data`, so the columns can be
  // checked against the text without parsing it: verification is a public hot path.
  const s = JSON.stringify;
  const head = `{"account_id":${s(row.account_id)},"actor":${s(row.actor)},"at":${s(row.created_at)},"data":`;
  const tail =
    `,"kind":${s(row.kind)},"livemode":${Number(row.livemode) === 1},"order_id":${s(row.order_id)},` +
    `"seal":${s(row.seal)},"v":`;
  const text = row.record;
  const end = text.length - tail.length - 2;
  return (
    text.startsWith(head) &&
    end > head.length &&
    text.startsWith(tail, end) &&
    (text.endsWith("1}") || text.endsWith("2}"))
  );
}
