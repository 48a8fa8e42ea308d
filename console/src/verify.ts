// Verifies an audit record in the browser, trusting nothing the service says about it: the record as
// shown hashes (RFC 8785 canonical JSON, SHA-256 with the 0x00 leaf prefix) to the leaf the service
// proves; the RFC 9162 inclusion proof leads from that leaf to the checkpoint's root; and the checkpoint's
// Ed25519 signature verifies with the published key. WebCrypto does the hashing and the signature.

import canonicalize from "canonicalize";
import { get } from "./api";

interface Checkpoint {
  origin: string;
  tree_size: number;
  root_hash: string;
  timestamp: string;
  key_id: string;
  signature: string;
}

interface Verification {
  status: string;
  leaf_hash: string | null;
  inclusion_proof: { tree_size: number; leaf_index: number; hashes: string[] } | null;
  checkpoint: Checkpoint | null;
}

export type VerifyResult = { ok: true } | { ok: false; reason: string };

const hexBytes = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
const b64Bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const toHex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
const b64Of = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
}

const nodeHash = (left: Uint8Array, right: Uint8Array) => sha256(Uint8Array.of(1), left, right);

const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** RFC 9162 2.1.3.2: whether the inclusion proof leads from `leaf` to `root`. */
async function inclusionHolds(
  leaf: Uint8Array,
  leafIndex: number,
  treeSize: number,
  proof: Uint8Array[],
  root: Uint8Array,
): Promise<boolean> {
  if (leafIndex >= treeSize) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && same(r, root);
}

/** Verifies the record `record` sealed as `seal`. */
export async function verifyRecord(seal: string, record: unknown): Promise<VerifyResult> {
  const [v, keys] = await Promise.all([
    get<Verification>(`/api/attest/verify/${encodeURIComponent(seal)}`),
    get<{ keys: Array<{ key_id: string; public_key: string }> }>("/api/attest/keys"),
  ]);
  const { checkpoint, inclusion_proof: proof, leaf_hash: leafHex } = v;
  if (!checkpoint || !proof || !leafHex) return { ok: false, reason: "not yet in a signed checkpoint" };
  const text = canonicalize(record);
  if (text === undefined) return { ok: false, reason: "the record has no JSON form" };
  const leaf = await sha256(Uint8Array.of(0), new TextEncoder().encode(text));
  if (toHex(leaf) !== leafHex) return { ok: false, reason: "the record does not hash to its leaf (altered)" };
  const root = hexBytes(checkpoint.root_hash);
  const proven =
    proof.tree_size === checkpoint.tree_size &&
    (await inclusionHolds(leaf, proof.leaf_index, proof.tree_size, proof.hashes.map(hexBytes), root));
  if (!proven) return { ok: false, reason: "the inclusion proof does not lead to the signed root" };
  const published = keys.keys.find((k) => k.key_id === checkpoint.key_id);
  if (!published) return { ok: false, reason: `no published key ${checkpoint.key_id}` };
  const key = await crypto.subtle.importKey(
    "raw",
    b64Bytes(published.public_key),
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  const note = `${checkpoint.origin}\n${checkpoint.tree_size}\n${b64Of(root)}\n${checkpoint.timestamp}\n`;
  const signed = await crypto.subtle.verify(
    { name: "Ed25519" },
    key,
    b64Bytes(checkpoint.signature),
    new TextEncoder().encode(note),
  );
  return signed ? { ok: true } : { ok: false, reason: "the checkpoint's signature does not verify" };
}
