// The audit log's public face: verify a record by its seal, read signed checkpoints, prove two tree
// heads consistent, and fetch the public key that signs them. All public: anyone may check the log, and
// none of these returns a record's payload (the account's own records are at GET /api/audit).

import { z } from "zod";
import type { Verification } from "../../audit/audit-log.js";
import { SEAL_PATTERN } from "../../audit/record.js";
import { CHECKPOINT_ORIGIN } from "../../audit/signing.js";
import { ApiError, validationError } from "../../errors.js";
import { defineOperation } from "../kernel/operation.js";

const hex32 = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .describe("SHA-256, lowercase hex.");

export const checkpointSchema = z
  .object({
    origin: z.string().describe("The log's name: the first line of the signed note."),
    tree_size: z.number().int().describe("Number of records in the log at this checkpoint."),
    root_hash: hex32.describe("RFC 9162 Merkle tree hash of the first tree_size records, hex."),
    timestamp: z.iso.datetime().describe("When the checkpoint was signed (UTC)."),
    key_id: z.string().describe("Id of the signing key, as listed at GET /api/attest/keys."),
    signature: z
      .string()
      .describe(
        "Base64 Ed25519 signature over the note `<origin>\\n<tree_size>\\n<root_hash as base64>\\n<timestamp>\\n`.",
      ),
  })
  .meta({ id: "Checkpoint" });

const verifyInput = z.strictObject({
  seal: z.string().max(128).describe("The seal returned with a quote or order (seal_...)."),
});

const verificationSchema = z
  .object({
    seal: z.string(),
    status: z
      .enum(["verified", "mismatch", "purged"])
      .describe(
        "verified: the stored record hashes to its leaf and the leaf is proven in the signed checkpoint; " +
          "mismatch: it does not (see reason); purged: the record is gone and may be, its leaf signed more " +
          "than 7 years ago (the retention period), and the leaf is still proven.",
      ),
    reason: z
      .enum(["record_altered", "record_missing", "not_in_log", "proof_invalid", "signature_invalid"])
      .nullable()
      .describe(
        "Why a mismatch was found; null otherwise. record_missing: the record is gone though its leaf was " +
          "signed less than 7 years ago, so it was deleted, not purged.",
      ),
    leaf_index: z.number().int().nullable().describe("Position of the record in the log (0-based)."),
    leaf_hash: hex32.nullable().describe("SHA-256(0x00 || canonical JSON of the record), hex."),
    inclusion_proof: z
      .object({
        tree_size: z.number().int(),
        leaf_index: z.number().int(),
        hashes: z.array(hex32).describe("RFC 9162 inclusion path, leaf to root."),
      })
      .nullable(),
    checkpoint: checkpointSchema.nullable().describe("The signed checkpoint the proof leads to."),
    public_key_url: z.url().describe("Where the key that signs checkpoints is published."),
  })
  .meta({ id: "Verification" });

// A verification the audit log answers again (frozen, shared) gets the same frozen answer here, so the
// transport serialises it once too.
const answered = new WeakMap<
  object,
  { baseUrl: string; answer: Readonly<Verification & { public_key_url: string }> }
>();

function withKeyUrl(result: Readonly<Verification>, baseUrl: string) {
  const hit = answered.get(result);
  if (hit?.baseUrl === baseUrl) return hit.answer;
  const answer = { ...result, public_key_url: `${baseUrl}/api/attest/keys` };
  if (!Object.isFrozen(result)) return answer;
  Object.freeze(answer);
  answered.set(result, { baseUrl, answer });
  return answer;
}

export const attestVerifyOperation = defineOperation({
  id: "attestVerify",
  name: "attest.verify",
  summary: "Verify an audit record by its seal",
  description:
    "Checks the record behind a seal: that the stored record still hashes to its leaf in the audit log's " +
    "Merkle tree, and that the leaf is included in the latest signed checkpoint. Returns the status, the " +
    "leaf, an RFC 9162 inclusion proof and the checkpoint with its Ed25519 signature, so the result can " +
    "be checked offline with the published key. Never returns the record's contents.",
  access: "public",
  effect: "read",
  limit: "client_ip",
  problems: [503],
  http: { method: "GET", path: "/api/attest/verify/:seal", input: "params" },
  input: verifyInput,
  output: verificationSchema,
  example: { seal: "seal_0VberZOd6WgCpJrtxQl5aL" },
  async handler(ctx, input) {
    const unknown = () => new ApiError("not_found", `No audit record has the seal ${input.seal}.`);
    if (!SEAL_PATTERN.test(input.seal)) throw unknown();
    const result = await ctx.services.audit.verify(input.seal);
    if (!result) throw unknown();
    return withKeyUrl(result, ctx.baseUrl);
  },
});

export const attestCheckpointOperation = defineOperation({
  id: "attestCheckpoint",
  name: "attest.checkpoint",
  summary: "Read the latest signed checkpoint",
  description:
    "The audit log's latest signed tree head. Keep checkpoints you have seen and ask for a consistency " +
    "proof between them to confirm the log only ever grew.",
  access: "public",
  effect: "read",
  limit: "client_ip",
  http: { method: "GET", path: "/api/attest/checkpoint", input: "query" },
  problems: [404, 503],
  input: z.strictObject({}),
  output: checkpointSchema,
  example: {},
  async handler(ctx) {
    const { checkpoint } = await ctx.services.audit.checkpoint();
    if (!checkpoint) throw new ApiError("not_found", "The audit log has no checkpoint yet.");
    return checkpoint;
  },
});

const treeSize = (what: string) =>
  z.coerce
    .number({ error: `${what} must be a whole number` })
    .int({ error: `${what} must be a whole number` })
    .min(1, { error: `${what} must be at least 1` })
    .max(Number.MAX_SAFE_INTEGER, { error: `${what} is too large` });

export const attestCheckpointAtOperation = defineOperation({
  id: "attestCheckpointAt",
  name: "attest.checkpoint_at",
  summary: "Read the checkpoint signed at a tree size",
  description: "The signed checkpoint whose tree has exactly tree_size records, if one was signed.",
  access: "public",
  effect: "read",
  limit: "client_ip",
  problems: [503],
  http: { method: "GET", path: "/api/attest/checkpoints/:tree_size", input: "params" },
  input: z.strictObject({ tree_size: treeSize("tree_size") }),
  output: checkpointSchema,
  example: { tree_size: 42 },
  async handler(ctx, input) {
    const checkpoint = await ctx.services.audit.checkpointAt(input.tree_size);
    if (!checkpoint)
      throw new ApiError("not_found", `No checkpoint was signed at tree size ${input.tree_size}.`);
    return checkpoint;
  },
});

const consistencySchema = z
  .object({
    first: z.number().int(),
    second: z.number().int(),
    hashes: z.array(hex32).describe("RFC 9162 consistency proof from the first tree to the second."),
    second_checkpoint: checkpointSchema
      .nullable()
      .describe("The checkpoint signed at `second` (the latest when `second` was omitted), if any."),
  })
  .meta({ id: "ConsistencyProof" });

export const attestConsistencyOperation = defineOperation({
  id: "attestConsistency",
  name: "attest.consistency",
  summary: "Prove the log only grew between two tree sizes",
  description:
    "An RFC 9162 consistency proof between the tree of `first` records and that of `second` records " +
    "(default: the latest checkpoint). Verify it against the root hashes of the two checkpoints.",
  access: "public",
  effect: "read",
  limit: "client_ip",
  problems: [503],
  http: { method: "GET", path: "/api/attest/consistency", input: "query" },
  input: z.strictObject({ first: treeSize("first"), second: treeSize("second").optional() }),
  output: consistencySchema,
  example: { first: 10, second: 42 },
  async handler(ctx, input) {
    const { audit } = ctx.services;
    const { checkpoint: latest } = await audit.checkpoint(input.second ?? 0);
    const size = latest?.tree_size ?? 0;
    const second = input.second ?? size;
    if (second > size) {
      throw validationError([{ field: "second", message: `must be at most the log's size, ${size}` }]);
    }
    if (input.first > second) {
      throw validationError([{ field: "first", message: `must be at most second (${second})` }]);
    }
    const hashes = await audit.consistency(input.first, second);
    const secondCheckpoint = second === size ? latest : await audit.checkpointAt(second);
    return {
      first: input.first,
      second,
      hashes: hashes.map((h) => h.toString("hex")),
      second_checkpoint: secondCheckpoint,
    };
  },
});

const publishedKeysSchema = z
  .object({
    origin: z.string(),
    keys: z.array(
      z.object({
        key_id: z.string().describe("Hex of the first 8 bytes of SHA-256 over the raw public key."),
        algorithm: z.literal("Ed25519"),
        public_key: z.string().describe("The raw 32-byte public key, base64."),
        public_key_pem: z.string().describe("The same key as an SPKI PEM."),
      }),
    ),
  })
  .meta({ id: "PublishedKeys" });

export const attestKeysOperation = defineOperation({
  id: "attestKeys",
  name: "attest.keys",
  summary: "The public key that signs audit checkpoints",
  description:
    "The Ed25519 public key (with its key id) that signs the audit log's checkpoints. Pin it: a " +
    "checkpoint verifies with this key alone.",
  access: "public",
  effect: "read",
  limit: "client_ip",
  problems: [503],
  http: { method: "GET", path: "/api/attest/keys", input: "query" },
  input: z.strictObject({}),
  output: publishedKeysSchema,
  example: {},
  async handler(ctx) {
    const { signer } = ctx.services.audit;
    return { origin: CHECKPOINT_ORIGIN, keys: [signer.published()] };
  },
});
