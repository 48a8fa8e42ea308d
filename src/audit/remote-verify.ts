// `audit verify <seal>`: checks a record's verification from the outside, the way any third party can,
// with node:crypto only: fetches the proof from the service, checks the checkpoint's Ed25519 signature
// with the published (or a pinned) public key, and recomputes the inclusion proof up to the signed root.

import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import { canonicalJson } from "../canonical-json.js";
import { applyDisclosures } from "./disclosure.js";
import { leafHash as leafHashOf, verifyInclusion } from "./merkle.js";
import { type Checkpoint, keyIdOf, verifyCheckpoint } from "./signing.js";

export interface RemoteVerification {
  ok: boolean;
  status: string;
  lines: string[];
}

const TIMEOUT_MS = 10_000;

/** The service did not answer at all (refused, unresolvable, timed out): names the URL and the cause. */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`could not reach ${url}: ${reason}`);
  }
}

/** Why a fetch failed, from undici's `fetch failed` and its cause: "ECONNREFUSED (connect ECONNREFUSED ...)". */
function failureReason(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError")
    return `no answer within ${TIMEOUT_MS / 1000} s`;
  const cause = (error as { cause?: unknown }).cause as
    | { code?: string; message?: string; errors?: Array<{ code?: string; message?: string }> }
    | undefined;
  const inner = cause?.code ? cause : (cause?.errors?.[0] ?? cause);
  if (inner?.code) return inner.message ? `${inner.code} (${inner.message})` : inner.code;
  if (inner?.message) return inner.message;
  return error instanceof Error ? error.message : String(error);
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    text = await res.text();
  } catch (error) {
    throw new UnreachableError(url, failureReason(error));
  }
  try {
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new Error(`${url} answered ${res.status} with a body that is not JSON`);
  }
}

/** A record as a list shows it (GET /api/audit and the dispatch team's and contractors' lists). */
export interface ShownRecord {
  seal?: unknown;
  record?: unknown;
  disclosures?: unknown;
  disclosed?: unknown;
}

/**
 * Checks a record as it was shown against the leaf the service proves: its canonical JSON hashes to the
 * leaf, and each disclosure is committed in it (and, when given, `disclosed` is what they make).
 */
function checkShownRecord(
  shown: ShownRecord,
  seal: string,
  leafHashHex: string,
): { problems: string[]; claims: Record<string, unknown> | null } {
  const problems: string[] = [];
  if (shown.seal !== undefined && shown.seal !== seal)
    problems.push(`the record shown is ${String(shown.seal)}`);
  const record = shown.record as { data?: Record<string, unknown> } | undefined;
  if (typeof record !== "object" || record === null || typeof record.data !== "object")
    return { problems: [...problems, "the file has no record object"], claims: null };
  const leaf = leafHashOf(Buffer.from(canonicalJson(record), "utf8")).toString("hex");
  if (leaf !== leafHashHex) problems.push(`the record hashes to ${leaf}, not to the leaf`);
  const disclosures = shown.disclosures ?? [];
  if (!Array.isArray(disclosures) || disclosures.some((d) => typeof d !== "string"))
    return { problems: [...problems, "disclosures is not a list of strings"], claims: null };
  const checked = applyDisclosures(record.data, disclosures as string[]);
  if (!checked.ok) return { problems: [...problems, checked.reason], claims: null };
  if (shown.disclosed !== undefined && canonicalJson(shown.disclosed) !== canonicalJson(checked.claims))
    problems.push("disclosed is not what the record and its disclosures make");
  return { problems, claims: checked.claims };
}

/** The digests an attachment's record seals (order.attachment_added), and what each is of. */
const SEALED_DIGESTS = [
  ["sha256", "the stored file"],
  ["received_sha256", "the file as it was sent"],
  ["thumbnail_sha256", "the thumbnail"],
] as const;

/** Whether `bytes` are an artifact the record's claims seal: the line to print, and the outcome. */
function checkArtifact(bytes: Buffer, claims: Record<string, unknown> | null): { ok: boolean; line: string } {
  const digest = createHash("sha256").update(bytes).digest("hex");
  const sealed = SEALED_DIGESTS.filter(([field]) => typeof claims?.[field] === "string");
  if (sealed.length === 0)
    return { ok: false, line: `file:       sha256 ${digest}; the record seals no file digest` };
  const match = sealed.find(([field]) => claims?.[field] === digest);
  return match
    ? { ok: true, line: `file:       sha256 ${digest} is the sealed ${match[0]} (${match[1]})` }
    : {
        ok: false,
        line: `file:       sha256 ${digest} MATCHES NO SEALED DIGEST (${sealed.map(([f]) => f).join(", ")})`,
      };
}

export async function verifyRemote(
  baseUrl: string,
  seal: string,
  pinnedKey?: KeyObject,
  shown?: ShownRecord,
  /** An artifact's bytes (a photo, a PDF, a signature) to check against the digest the record seals;
   * needs `shown`, whose disclosures say what the record holds. */
  artifact?: Buffer,
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
  let shownOk = true;
  let artifactOk = true;
  if (shown !== undefined) {
    const { problems, claims } = checkShownRecord(shown, seal, leafHash);
    shownOk = problems.length === 0;
    const count = Array.isArray(shown.disclosures) ? shown.disclosures.length : 0;
    lines.push(
      shownOk
        ? `record:     hashes to the leaf; ${count} disclosure${count === 1 ? "" : "s"} committed in it`
        : `record:     ${problems.join("; ")}`,
    );
    if (artifact !== undefined) {
      const checked = checkArtifact(artifact, shownOk ? claims : null);
      artifactOk = checked.ok;
      lines.push(checked.line);
    }
  }
  const ok =
    signatureOk &&
    proofOk &&
    shownOk &&
    artifactOk &&
    (body.status === "verified" || body.status === "purged");
  return { ok, status: String(body.status), lines };
}
