// `audit verify <seal>`: checks a record's verification from the outside, the way any third party can,
// with node:crypto only: fetches the proof from the service, checks the checkpoint's Ed25519 signature
// with the published (or a pinned) public key, and recomputes the inclusion proof up to the signed root.

import { createPublicKey, type KeyObject } from "node:crypto";
import { verifyInclusion } from "./merkle.js";
import { type Checkpoint, keyIdOf, verifyCheckpoint } from "./signing.js";

export interface RemoteVerification {
  ok: boolean;
  status: string;
  lines: string[];
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    headers: { accept: "application/json" },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new Error(`${url} answered ${res.status} with a body that is not JSON`);
  }
}

export async function verifyRemote(
  baseUrl: string,
  seal: string,
  pinnedKey?: KeyObject,
): Promise<RemoteVerification> {
  const base = baseUrl.replace(/\/+$/, "");
  const { status, body } = await getJson(`${base}/api/attest/verify/${encodeURIComponent(seal)}`);
  if (status === 404)
    return { ok: false, status: "not_found", lines: [`no audit record has the seal ${seal}`] };
  if (status !== 200)
    throw new Error(`verify answered ${status}: ${String(body.detail ?? body.title ?? "")}`);

  let key = pinnedKey;
  const lines: string[] = [];
  if (!key) {
    const keys = await getJson(`${base}/api/attest/keys`);
    const list = (keys.body.keys ?? []) as Array<{ key_id: string; public_key_pem: string }>;
    const published =
      list.find((k) => k.key_id === (body.checkpoint as Checkpoint | null)?.key_id) ?? list[0];
    if (!published) throw new Error("the service publishes no key");
    key = createPublicKey(published.public_key_pem);
    lines.push(`key:        ${keyIdOf(key)} (published at ${base}/api/attest/keys)`);
  } else {
    lines.push(`key:        ${keyIdOf(key)} (pinned)`);
  }

  const checkpoint = body.checkpoint as Checkpoint | null;
  const proof = body.inclusion_proof as { tree_size: number; leaf_index: number; hashes: string[] } | null;
  const leafHash = body.leaf_hash as string | null;
  lines.unshift(
    `seal:       ${seal}`,
    `service:    ${String(body.status)}${body.reason ? ` (${String(body.reason)})` : ""}`,
  );
  if (!checkpoint || !proof || !leafHash) {
    return { ok: false, status: String(body.status), lines: [...lines, "no proof to check"] };
  }
  const signatureOk = verifyCheckpoint(checkpoint, key);
  const root = Buffer.from(checkpoint.root_hash, "hex");
  const proofOk =
    proof.tree_size === checkpoint.tree_size &&
    verifyInclusion(
      Buffer.from(leafHash, "hex"),
      proof.leaf_index,
      proof.tree_size,
      proof.hashes.map((h) => Buffer.from(h, "hex")),
      root,
    );
  lines.push(
    `leaf:       #${proof.leaf_index} ${leafHash}`,
    `checkpoint: size ${checkpoint.tree_size}, root ${checkpoint.root_hash}, ${checkpoint.timestamp}`,
    `signature:  ${signatureOk ? "valid" : "INVALID"}`,
    `inclusion:  ${proofOk ? "proven" : "NOT PROVEN"}`,
  );
  const ok = signatureOk && proofOk && (body.status === "verified" || body.status === "purged");
  return { ok, status: String(body.status), lines };
}
