// The audit log's signing key and signed checkpoints.
//
// A checkpoint commits to the whole log: its tree size, root hash and time, signed with the service's
// Ed25519 key. The signed bytes are a short text note in the style of C2SP's tlog-checkpoint, so a
// verifier can rebuild them from the JSON fields without any canonicalisation:
//
//   <origin>\n<tree size>\n<root hash, base64>\n<timestamp, RFC 3339 UTC>\n
//
// The key comes from AUDIT_SIGNING_KEY (a PKCS#8 PEM) or, on first start, is created under DATA_DIR
// (audit-signing-key.pem, mode 0600). Its key id is the hex of the first 8 bytes of SHA-256 over the raw
// 32-byte public key.

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  sign,
  verify,
} from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AuditCheckpointRow } from "./persistence.js";

export const CHECKPOINT_ORIGIN = "field-dispatch/audit-log";
export const SIGNING_KEY_FILE = "audit-signing-key.pem";

export interface Checkpoint {
  origin: string;
  tree_size: number;
  /** Hex SHA-256. */
  root_hash: string;
  timestamp: string;
  key_id: string;
  /** Base64 Ed25519 signature over `checkpointNote(...)`. */
  signature: string;
}

export interface PublishedKey {
  key_id: string;
  algorithm: "Ed25519";
  /** Base64 of the raw 32-byte public key. */
  public_key: string;
  public_key_pem: string;
}

/** A checkpoint as stored, with the log's origin. */
export function toCheckpoint(row: AuditCheckpointRow): Checkpoint {
  return {
    origin: CHECKPOINT_ORIGIN,
    tree_size: Number(row.tree_size),
    root_hash: row.root_hash,
    timestamp: row.timestamp,
    key_id: row.key_id,
    signature: row.signature,
  };
}

function checkpointNote(c: Pick<Checkpoint, "origin" | "tree_size" | "root_hash" | "timestamp">): string {
  const root = Buffer.from(c.root_hash, "hex").toString("base64");
  return `${c.origin}\n${c.tree_size}\n${root}\n${c.timestamp}\n`;
}

function rawPublicKey(key: KeyObject): Buffer {
  // The SPKI DER of an Ed25519 key is a fixed 12-byte header followed by the 32-byte key.
  const der = key.export({ type: "spki", format: "der" });
  return der.subarray(der.length - 32);
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash("sha256").update(rawPublicKey(publicKey)).digest("hex").slice(0, 16);
}

export class CheckpointSigner {
  readonly publicKey: KeyObject;
  readonly keyId: string;

  constructor(private readonly privateKey: KeyObject) {
    if (privateKey.asymmetricKeyType !== "ed25519") throw new Error("the audit signing key must be Ed25519");
    this.publicKey = createPublicKey(privateKey);
    this.keyId = keyIdOf(this.publicKey);
  }

  sign(head: Pick<Checkpoint, "tree_size" | "root_hash" | "timestamp">): Checkpoint {
    const body = { origin: CHECKPOINT_ORIGIN, ...head };
    const signature = sign(null, Buffer.from(checkpointNote(body)), this.privateKey).toString("base64");
    return { ...body, key_id: this.keyId, signature };
  }

  /**
   * A 32-byte secret derived from the signing key (HKDF-SHA256 over its PKCS#8 bytes) for `purpose`:
   * stable for as long as the key is, shared by every host that shares the key, and unrelated to it.
   */
  deriveSecret(purpose: string): Buffer {
    const ikm = this.privateKey.export({ type: "pkcs8", format: "der" });
    return Buffer.from(hkdfSync("sha256", ikm, Buffer.alloc(0), purpose, 32));
  }

  published(): PublishedKey {
    return {
      key_id: this.keyId,
      algorithm: "Ed25519",
      public_key: rawPublicKey(this.publicKey).toString("base64"),
      public_key_pem: this.publicKey.export({ type: "spki", format: "pem" }).toString(),
    };
  }
}

/** Verifies a checkpoint's signature with a public key alone. */
export function verifyCheckpoint(c: Checkpoint, publicKey: KeyObject): boolean {
  if (keyIdOf(publicKey) !== c.key_id) return false;
  return verify(null, Buffer.from(checkpointNote(c)), publicKey, Buffer.from(c.signature, "base64"));
}

/**
 * The service's signing key: AUDIT_SIGNING_KEY when configured, else the key file under `dataDir`,
 * created (mode 0600) when missing. Several hosts that share one store must share one configured key.
 */
export function loadSigningKey(configured: string | undefined, dataDir: string): CheckpointSigner {
  if (configured) return new CheckpointSigner(createPrivateKey(configured.replace(/\\n/g, "\n")));
  const file = join(dataDir, SIGNING_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    const { privateKey } = generateKeyPairSync("ed25519");
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    try {
      writeFileSync(file, pem, { mode: 0o600, flag: "wx" }); // another process may have won the race
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  return new CheckpointSigner(createPrivateKey(readFileSync(file, "utf8")));
}
