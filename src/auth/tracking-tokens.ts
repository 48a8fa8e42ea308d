// Tracking link tokens (operations/tracking/). A token is `<id>.<mac>`: the link row's id (22 base62
// characters, 128 random bits) and 22 base62 characters of HMAC-SHA256(secret, "tracking v1" || 0x00 ||
// id). The row holds the id, never the token, so the store alone opens no page; the secret alone makes
// no token that a row answers. Checking a token compares its mac with the expected one in constant time
// and reads the row whether or not they matched, so a tampered, unknown, revoked or expired token costs
// the same and answers the same 404.
//
// The secret is TRACKING_LINK_SECRET when set, else derived from the audit signing key (as the contractor
// handles' is), so hosts sharing the key share the links. Changing it ends every link.
//
// Revocations are also signalled in process (onRevoked), so the page streams this process holds end at
// once; streams in other processes end at their next check (operations/tracking/tracking-view.ts).

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PART = /^[0-9A-Za-z]{22}$/;

/** base62 of the first 16 bytes, 22 characters (62^22 > 2^128). */
function base62Of(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.subarray(0, 16).toString("hex")}`);
  let out = "";
  for (let i = 0; i < 22; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

export class TrackingTokens {
  private readonly listeners = new Map<string, Set<() => void>>();

  /** `label` keeps one kind of link's macs apart from another's (tracking links; sites' request links,
   * operations/requests/, which also have a secret of their own). */
  constructor(
    private readonly secret: Buffer,
    private readonly label = "tracking v1",
  ) {
    if (secret.length < 32) throw new Error("the tracking link secret must be at least 32 bytes");
  }

  /** A new link's id. */
  newId(): string {
    return base62Of(randomBytes(16));
  }

  private macOf(id: string): string {
    return base62Of(createHmac("sha256", this.secret).update(`${this.label}\u0000${id}`, "utf8").digest());
  }

  /** The token of the link `id`. */
  tokenOf(id: string): string {
    return `${id}.${this.macOf(id)}`;
  }

  /**
   * The link id a token names, and whether its mac is the one this secret makes (compared in constant
   * time). The caller reads the row either way and accepts it only when `valid`; null for a string that
   * is not shaped like a token at all.
   */
  check(token: string): { id: string; valid: boolean } | null {
    const [id, mac, ...rest] = token.split(".");
    if (id === undefined || mac === undefined || rest.length > 0 || !PART.test(id) || !PART.test(mac))
      return null;
    const expected = Buffer.from(this.macOf(id), "utf8");
    return { id, valid: timingSafeEqual(expected, Buffer.from(mac, "utf8")) };
  }

  /** Calls `listener` when the link `id` is revoked in this process; returns the function that stops. */
  onRevoked(id: string, listener: () => void): () => void {
    let set = this.listeners.get(id);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(id, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(id);
      current?.delete(listener);
      if (current?.size === 0) this.listeners.delete(id);
    };
  }

  /** Tells this process's listeners that the link `id` was revoked. */
  revoked(id: string): void {
    for (const listener of [...(this.listeners.get(id) ?? [])]) listener();
  }
}
